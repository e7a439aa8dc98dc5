// SPDX-License-Identifier: Apache-2.0
#pragma once
// What shell completion needs to know of a command line, read from its CLI11 definition,
// and the bash and zsh scripts written from it (`peaklens-cli --completion bash|zsh`).

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace peaklens::cli {

struct CompletionSpec
{
    // How a value completes: a flag takes none; a value with a CLI::IsMember check is one
    // of its choices; a number, or text whose type names what it is (SIZE, STRATEGY,
    // REGEX), offers nothing; plain text is a file name. A positional
    // named COMMAND is a command line to run (record's, after --).
    enum class ValueKind { None, Choice, Number, File, Command };

    struct Option
    {
        std::vector<std::string> names; // "-o", "--output"
        std::string description;
        ValueKind value = ValueKind::None;
        std::vector<std::string> choices;
        std::vector<std::string> excludes; // the first name of each option it excludes
        bool endsCommandLine = false;      // --help, --version: nothing else is read
    };

    struct Positional
    {
        std::string name;
        std::string description;
        ValueKind value = ValueKind::File;
        std::vector<std::string> choices;
        bool repeats = false;
    };

    struct Command
    {
        std::string name;
        std::string description;
        std::vector<Option> options;
        std::vector<Positional> positionals;
    };

    std::string program;
    std::vector<Option> options; // before the subcommand
    std::vector<Command> commands;
};

// Hidden options and subcommands (CLI11 group "") are left out.
CompletionSpec completionSpecOf(CLI::App &app);

// Shared by the two scripts: a word in the shell's single quotes, and words joined.
std::string singleQuoted(const std::string &word);
std::string joined(const std::vector<std::string> &words, const std::string &separator = " ");

std::string bashCompletionScript(const CompletionSpec &spec);
std::string zshCompletionScript(const CompletionSpec &spec);

} // namespace peaklens::cli
