# bash --norc --noprofile complete.bash SCRIPT WORD...: sources the completion script,
# completes the last word as bash does on TAB, through the function `complete` registered
# for peaklens-cli, and prints COMPREPLY one per line. Run in the folder whose files count.
source "$1" || exit 3
shift
registered=$(complete -p peaklens-cli) || exit 4
function=${registered#*-F }
function=${function%% *}
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
"$function" peaklens-cli "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}"
exit 0
