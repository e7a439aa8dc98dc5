// SPDX-License-Identifier: Apache-2.0
// The zsh script of `peaklens-cli --completion zsh`: an _arguments call per subcommand,
// written from the spec, with the subcommands offered through _describe. It works as an
// autoloaded function (a file _peaklens-cli in $fpath) and when sourced.

#include "completionspec.h"

namespace peaklens::cli {

namespace {

using ValueKind = CompletionSpec::ValueKind;

// Text in an _arguments spec, where `special` are the characters that end its part.
std::string escaped(const std::string &text, const std::string &special)
{
    std::string out;
    for (const char c : text) {
        if (c == '\\' || special.find(c) != std::string::npos)
            out += '\\';
        out += c;
    }
    return out;
}

// "MESSAGE:ACTION" for a value; `function` names the script's functions (_peaklens-cli).
std::string valueSpec(const std::string &function, const std::string &message, ValueKind kind,
                      const std::vector<std::string> &choices)
{
    std::string action;
    switch (kind) {
    case ValueKind::Choice: {
        std::vector<std::string> words;
        for (const std::string &choice : choices)
            words.push_back(escaped(choice, " ()"));
        action = "(" + joined(words) + ")";
        break;
    }
    case ValueKind::Number:
        action = " "; // a message, nothing to offer
        break;
    case ValueKind::Command:
        action = function + "_command_line";
        break;
    case ValueKind::None:
    case ValueKind::File:
        action = "_files";
        break;
    }
    return escaped(message, ":") + ":" + action;
}

// One spec per name: (EXCLUDED)NAME[EXPLANATION]:MESSAGE:ACTION.
std::vector<std::string> optionSpecs(const std::string &function, const CompletionSpec::Option &option)
{
    std::vector<std::string> excluded = option.excludes;
    if (option.endsCommandLine) {
        excluded = {"-", ":", "*"};
    } else if (option.names.size() > 1) {
        excluded.insert(excluded.begin(), option.names.begin(), option.names.end());
    }
    const std::string exclusion = excluded.empty() ? std::string() : "(" + joined(excluded) + ")";
    const std::string &longest = option.names.back();
    const std::string message = longest.substr(longest.find_first_not_of('-'));
    std::vector<std::string> specs;
    for (const std::string &name : option.names) {
        std::string spec = exclusion + name;
        if (option.value != ValueKind::None)
            spec += name.starts_with("--") ? "=" : "+"; // --name=VALUE or --name VALUE; -nVALUE or -n VALUE
        spec += "[" + escaped(option.description, "[]") + "]";
        if (option.value != ValueKind::None)
            spec += ":" + valueSpec(function, message, option.value, option.choices);
        specs.push_back(singleQuoted(spec));
    }
    return specs;
}

std::vector<std::string> optionSpecs(const std::string &function, const std::vector<CompletionSpec::Option> &options)
{
    std::vector<std::string> specs;
    for (const auto &option : options) {
        for (std::string &spec : optionSpecs(function, option))
            specs.push_back(std::move(spec));
    }
    return specs;
}

std::string positionalSpec(const std::string &function, const CompletionSpec::Positional &positional)
{
    const std::string value = valueSpec(function, positional.name, positional.value, positional.choices);
    // A command line: the words after it are its own, completed as the shell completes them.
    if (positional.value == ValueKind::Command)
        return singleQuoted("*::" + value);
    return singleQuoted((positional.repeats ? "*:" : ":") + value);
}

// -C: the top level hands on to the subcommand through $state; -S: "--" ends the options.
std::string argumentsCall(const std::string &switches, const std::vector<std::string> &specs, const std::string &indent)
{
    std::string out = "_arguments " + switches;
    for (const std::string &spec : specs)
        out += " \\\n" + indent + "    " + spec;
    return out + " && ret=0\n";
}

} // namespace

std::string zshCompletionScript(const CompletionSpec &spec)
{
    const std::string function = "_" + spec.program;
    std::string out = "#compdef " + spec.program + "\n# Zsh completion for " + spec.program + ", written by `" + spec.program
                      + " --completion zsh` from its own\n# command-line definition.\n\n";

    out += function + "()\n{\n    local curcontext=$curcontext state state_descr line ret=1\n    typeset -A opt_args\n\n    ";
    bool runsCommands = false;
    std::vector<std::string> specs = optionSpecs(function, spec.options);
    specs.push_back(singleQuoted("1: :" + function + "_commands"));
    specs.push_back(singleQuoted("*:: :->command"));
    out += argumentsCall("-C", specs, "    ");
    out += "\n    [[ $state == command ]] || return ret\n"
           "    curcontext=${curcontext%:*:*}:"
           + spec.program
           + "-$words[1]:\n"
             "    case $words[1] in\n";
    for (const auto &command : spec.commands) {
        std::vector<std::string> commandSpecs = optionSpecs(function, command.options);
        for (const auto &positional : command.positionals) {
            commandSpecs.push_back(positionalSpec(function, positional));
            runsCommands = runsCommands || positional.value == ValueKind::Command;
        }
        out += "        (" + escaped(command.name, " ()|") + ")\n            " + argumentsCall("-S", commandSpecs, "            ")
               + "            ;;\n";
    }
    out += "    esac\n    return ret\n}\n\n";

    out += function + "_commands()\n{\n    local -a commands=(\n";
    for (const auto &command : spec.commands)
        out += "        " + singleQuoted(escaped(command.name, ":") + ":" + command.description) + "\n";
    out += "    )\n    _describe -t commands " + singleQuoted(spec.program + " command") + " commands\n}\n\n";

    // The words after a command line's own "--" (which _arguments keeps only when it comes
    // first), completed as if they were typed alone.
    if (runsCommands) {
        out += function
               + "_command_line()\n{\n    if [[ $words[1] == -- ]]; then\n        shift words\n"
                 "        (( CURRENT-- ))\n    fi\n    _normal\n}\n\n";
    }

    // Autoloaded, the file's body is the function's: it defines the functions, then runs.
    out += "if [[ $funcstack[1] == " + function + " ]]; then\n    " + function + " \"$@\"\nelse\n    compdef " + function + " "
           + spec.program + "\nfi\n";
    return out;
}

} // namespace peaklens::cli
