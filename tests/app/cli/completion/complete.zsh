# zsh -f complete.zsh FOLDER LINE: types LINE into an interactive zsh (in a pseudo-terminal)
# whose $fpath has FOLDER, presses a key bound to complete-word, and prints every match the
# completion functions add, one per line. Exit 3: zsh has no zpty; 4: no answer in time.
zmodload zsh/zpty || exit 3
zpty shell zsh -f -i
zpty -w shell "cd ${(q)PWD}; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w shell 'PS1=""; RPS1=""; zstyle ":completion:*" menu no'
zpty -w shell 'compadd() { local -a m; builtin compadd -O m "$@"; local w; for w in $m; do print -r -- "<""match>$w"; done; builtin compadd "$@" }'
zpty -w shell 'capture() { print; zle complete-word; print "<""done>"; zle send-break }; zle -N capture; bindkey "^T" capture'
zpty -w -n shell "$2"$'\C-t'
local line out
integer deadline=$(( SECONDS + 30 ))
while (( SECONDS < deadline )); do
    if zpty -r -t shell line; then
        out+=$line
        [[ $line == *'<done>'* ]] && break
    else
        sleep 0.05
    fi
done
zpty -d shell
[[ $out == *'<done>'* ]] || exit 4
print -r -- "${out//$'\r'/}" | sed -n 's/^<match>//p'
