// SPDX-License-Identifier: Apache-2.0
#include "completionspec.h"

#include <algorithm>

namespace peaklens::cli {

namespace {

// A value typed by hand, with nothing to offer: a number, or text an option names for
// what it is (SIZE, STRATEGY, REGEX...). Only plain TEXT may be a file. The type is the one
// before the checks CLI11 appends to it: "INT:INT in [1 - 9]:POSITIVE" is INT.
bool isTypedValue(const CLI::Option &option)
{
    const std::string type = option.get_type_name();
    const std::string base = type.substr(0, type.find(':'));
    return !base.empty() && base != "TEXT" && base != "FILE";
}

// The words of a CLI::IsMember check, which describes itself as "{a,b,c}". A map's check
// ("{a->1,...}") or any other is no list of words to offer.
std::vector<std::string> choicesOf(CLI::Option &option)
{
    for (int index = 0;; ++index) {
        const CLI::Validator *validator = nullptr;
        try {
            validator = option.get_validator(index);
        } catch (const CLI::OptionNotFound &) {
            return {};
        }
        const std::string description = validator->get_description();
        if (description.size() < 3 || description.front() != '{' || description.back() != '}'
            || description.find("->") != std::string::npos)
            continue;
        std::vector<std::string> choices;
        std::string::size_type begin = 1;
        while (begin < description.size()) {
            const auto end = std::min(description.find(',', begin), description.size() - 1);
            choices.push_back(description.substr(begin, end - begin));
            begin = end + 1;
        }
        return choices;
    }
}

CompletionSpec::ValueKind valueKindOf(CLI::Option &option, const std::vector<std::string> &choices)
{
    if (option.get_items_expected_max() == 0)
        return CompletionSpec::ValueKind::None;
    if (!choices.empty())
        return CompletionSpec::ValueKind::Choice;
    if (isTypedValue(option))
        return CompletionSpec::ValueKind::Number;
    if (option.get_positional() && !option.nonpositional() && option.get_name(true) == "COMMAND")
        return CompletionSpec::ValueKind::Command;
    return CompletionSpec::ValueKind::File;
}

std::string firstName(const CLI::Option &option)
{
    return option.get_snames().empty() ? "--" + option.get_lnames().front() : "-" + option.get_snames().front();
}

// Options and positionals in the order they were defined, which is the order --help shows.
void readOptions(CLI::App &app, std::vector<CompletionSpec::Option> &options,
                 std::vector<CompletionSpec::Positional> &positionals)
{
    const std::vector<CLI::Option *> defined = app.get_options();
    for (CLI::Option *option : defined) {
        if (option->get_group().empty())
            continue;
        const auto choices = choicesOf(*option);
        if (!option->nonpositional()) {
            positionals.push_back({option->get_name(true), option->get_description(), valueKindOf(*option, choices), choices,
                                   option->get_items_expected_max() > 1});
            continue;
        }
        CompletionSpec::Option spec;
        for (const std::string &name : option->get_snames())
            spec.names.push_back("-" + name);
        for (const std::string &name : option->get_lnames())
            spec.names.push_back("--" + name);
        spec.description = option->get_description();
        spec.value = valueKindOf(*option, choices);
        spec.choices = choices;
        spec.endsCommandLine = option == app.get_help_ptr() || option == app.get_version_ptr();
        // CLI11 keeps these in a set ordered by address; definition order keeps the script stable.
        const auto excluded = option->get_excludes();
        for (CLI::Option *other : defined) {
            if (excluded.count(other))
                spec.excludes.push_back(firstName(*other));
        }
        options.push_back(std::move(spec));
    }
}

} // namespace

CompletionSpec completionSpecOf(CLI::App &app)
{
    CompletionSpec spec;
    spec.program = app.get_name();
    std::vector<CompletionSpec::Positional> ignored;
    readOptions(app, spec.options, ignored);
    for (CLI::App *subcommand : app.get_subcommands([](CLI::App *command) { return !command->get_group().empty(); })) {
        CompletionSpec::Command command{subcommand->get_name(), subcommand->get_description(), {}, {}};
        readOptions(*subcommand, command.options, command.positionals);
        spec.commands.push_back(std::move(command));
    }
    return spec;
}

std::string singleQuoted(const std::string &word)
{
    std::string out = "'";
    for (const char c : word)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string joined(const std::vector<std::string> &words, const std::string &separator)
{
    std::string out;
    for (const std::string &word : words)
        out += (out.empty() ? "" : separator) + word;
    return out;
}

} // namespace peaklens::cli
