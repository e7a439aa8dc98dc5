// SPDX-License-Identifier: Apache-2.0
// The bash script of `peaklens-cli --completion bash`: tables of the subcommands, their
// options and how each value completes, written from the spec, and one fixed function that
// reads them. It needs nothing from the bash-completion package, and hands record's
// training command to that package's _command_offset when it is loaded.

#include "completionspec.h"

#include <algorithm>

namespace peaklens::cli {

namespace {

using ValueKind = CompletionSpec::ValueKind;

std::string kindWord(ValueKind kind, const std::vector<std::string> &choices)
{
    switch (kind) {
    case ValueKind::None:
        return "flag";
    case ValueKind::Choice:
        return "choice " + joined(choices);
    case ValueKind::Number:
        return "number";
    case ValueKind::File:
        return "file";
    case ValueKind::Command:
        return "command";
    }
    return "file";
}

// Identifiers cannot hold '-': peaklens-cli's functions are _peaklens_cli_*.
std::string functionPrefix(const std::string &program)
{
    std::string prefix = "_" + program;
    std::replace(prefix.begin(), prefix.end(), '-', '_');
    return prefix;
}

std::string optionsFunction(const CompletionSpec &spec, const std::string &prefix)
{
    const auto namesOf = [](const std::vector<CompletionSpec::Option> &options) {
        std::vector<std::string> names;
        for (const auto &option : options) {
            for (const std::string &name : option.names)
                names.push_back(singleQuoted(name));
        }
        return names;
    };
    std::string out = "# " + prefix + "_options COMMAND: the options COMMAND takes ('' for those before one).\n" + prefix
                      + "_options()\n{\n    case $1 in\n";
    out += "        '') printf '%s\\n' " + joined(namesOf(spec.options)) + " ;;\n";
    for (const auto &command : spec.commands) {
        auto names = namesOf(command.options);
        // "--" ends the options: what follows is the command line to run.
        const bool runsCommand = std::any_of(command.positionals.begin(), command.positionals.end(),
                                             [](const auto &positional) { return positional.value == ValueKind::Command; });
        if (runsCommand)
            names.push_back(singleQuoted("--"));
        out += "        " + singleQuoted(command.name) + ") printf '%s\\n' " + joined(names) + " ;;\n";
    }
    return out + "    esac\n}\n\n";
}

std::string valueFunction(const CompletionSpec &spec, const std::string &prefix)
{
    std::string out = "# " + prefix
                      + "_value COMMAND OPTION: how OPTION's value completes: flag (it takes none),\n"
                        "# choice WORD..., number (nothing to offer) or file.\n"
                      + prefix + "_value()\n{\n    case \"$1 $2\" in\n";
    const auto addCases = [&](const std::string &command, const std::vector<CompletionSpec::Option> &options) {
        for (const auto &option : options) {
            if (option.value == ValueKind::None)
                continue;
            std::vector<std::string> patterns;
            for (const std::string &name : option.names)
                patterns.push_back(singleQuoted(command + " " + name));
            out +=
                "        " + joined(patterns, "|") + ") echo " + singleQuoted(kindWord(option.value, option.choices)) + " ;;\n";
        }
    };
    addCases("", spec.options);
    for (const auto &command : spec.commands)
        addCases(command.name, command.options);
    return out + "        *) echo flag ;;\n    esac\n}\n\n";
}

std::string positionalFunction(const CompletionSpec &spec, const std::string &prefix)
{
    std::string out = "# " + prefix
                      + "_positional COMMAND INDEX: how its positional argument INDEX (from 0)\n"
                        "# completes: file, number, choice WORD... or command (a command line to run).\n"
                      + prefix + "_positional()\n{\n    local -a kinds=()\n    case $1 in\n";
    for (const auto &command : spec.commands) {
        std::vector<std::string> kinds;
        for (const auto &positional : command.positionals)
            kinds.push_back(singleQuoted(kindWord(positional.value, positional.choices)));
        if (!kinds.empty())
            out += "        " + singleQuoted(command.name) + ") kinds=(" + joined(kinds) + ") ;;\n";
    }
    // Past the last one, the last one again: it takes several.
    return out
           + "    esac\n    ((${#kinds[@]})) || kinds=(file)\n"
             "    if (($2 < ${#kinds[@]})); then echo \"${kinds[$2]}\"; else echo \"${kinds[-1]}\"; fi\n}\n\n";
}

// The part that reads the tables; the same for every program but for its name.
const char *const kMainFunction = R"script(# @FN@_files WORD [PREFIX]: the files and folders WORD begins, each after PREFIX.
@FN@_files()
{
    [[ -z $2 ]] && compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$1")
    [[ -n $2 ]] && COMPREPLY=("${COMPREPLY[@]/#/$2}")
}

# @FN@_complete_value KIND WORD [PREFIX]: the values WORD begins, each after PREFIX.
@FN@_complete_value()
{
    case $1 in
        choice\ *) mapfile -t COMPREPLY < <(compgen -P "$3" -W "${1#choice }" -- "$2") ;;
        file) @FN@_files "$2" "$3" ;;
    esac
}

@FN@()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev='' command='' word option='' value='' prefix='' kind words
    local -i i dashes=0 positionals=0 first=0
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()

    # The subcommand, the positionals before the cursor and where "--" is, skipping options'
    # values: --option VALUE, --option=VALUE, and --option = VALUE as bash splits the latter.
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if ((dashes == 0)) && [[ $word == -- && -n $command ]]; then
            dashes=$i
        elif ((dashes == 0)) && [[ $word == -?* ]]; then
            if [[ ${COMP_WORDS[i+1]} == = ]]; then
                ((i += 2))
            elif [[ $word != *=* && $(@FN@_value "$command" "$word") != flag ]]; then
                ((i += 1))
            fi
        elif [[ -z $command ]]; then
            [[ " $@FN@_commands " == *" $word "* ]] && command=$word
        else
            ((first)) || first=$i
            ((positionals += 1))
        fi
    done

    # An option's value.
    if ((dashes == 0)); then
        if [[ $cur == = && $prev == -?* ]]; then
            option=$prev
        elif [[ $prev == = ]] && ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[COMP_CWORD-2]} == -?* ]]; then
            option=${COMP_WORDS[COMP_CWORD-2]} value=$cur
        elif [[ $cur == -?*=* ]]; then
            option=${cur%%=*} value=${cur#*=} prefix=$option=
        elif [[ $prev == -?* && $prev != *=* ]]; then
            option=$prev value=$cur
        fi
        kind=flag
        [[ -n $option ]] && kind=$(@FN@_value "$command" "$option")
        if [[ $kind != flag ]]; then
            @FN@_complete_value "$kind" "$value" "$prefix"
            return
        fi
        # Nothing follows a flag's "=".
        [[ $cur == = || $prev == = || -n $prefix ]] && return
    fi

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then words=$(@FN@_options ''); else words=$@FN@_commands; fi
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
        return
    fi
    if ((dashes == 0)) && [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(@FN@_options "$command")" -- "$cur")
        return
    fi
    kind=$(@FN@_positional "$command" "$positionals")
    if [[ $kind == command ]]; then
        ((first)) || first=$COMP_CWORD
        if declare -F _command_offset >/dev/null; then
            _command_offset "$first"
        elif ((first == COMP_CWORD)); then
            mapfile -t COMPREPLY < <(compgen -c -- "$cur")
        else
            @FN@_files "$cur"
        fi
        return
    fi
    @FN@_complete_value "$kind" "$cur"
}

complete -F @FN@ @PROGRAM@
)script";

std::string replaced(std::string text, const std::string &from, const std::string &to)
{
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

} // namespace

std::string bashCompletionScript(const CompletionSpec &spec)
{
    const std::string prefix = functionPrefix(spec.program);
    std::vector<std::string> commands;
    for (const auto &command : spec.commands)
        commands.push_back(command.name);
    std::string out = "# Bash completion for " + spec.program + ", written by `" + spec.program
                      + " --completion bash` from its own\n# command-line definition.\n\n";
    out += prefix + "_commands=" + singleQuoted(joined(commands)) + "\n\n";
    out += optionsFunction(spec, prefix) + valueFunction(spec, prefix) + positionalFunction(spec, prefix);
    out += replaced(replaced(kMainFunction, "@FN@", prefix), "@PROGRAM@", spec.program);
    return out;
}

} // namespace peaklens::cli
