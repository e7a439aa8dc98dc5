// SPDX-License-Identifier: Apache-2.0
// peaklens-cli query FILE [QUESTION...]: one trace loaded once, questions answered as JSON
// lines (docs/cli.md#query), for scripts and agents.

#include "command.h"
#include "commandtrace.h"
#include "diffcommand.h"

#include "core/analysis/blockgroups.h"
#include "core/analysis/peakfinder.h"
#include "core/analysis/tracediff.h"
#include "core/report/summaryjson.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

namespace peaklens::cli {

namespace {

using json = nlohmann::ordered_json;

// What a question may say beside "ask": a whole number of at least `low`, or nothing.
std::optional<std::int64_t> wholeField(const json &question, const char *key, std::int64_t low)
{
    const auto found = question.find(key);
    if (found == question.end())
        return std::nullopt;
    if (!found->is_number_integer() || found->get<std::int64_t>() < low)
        throw Error(std::string("\"") + key + "\" must be a whole number of at least " + std::to_string(low));
    return found->get<std::int64_t>();
}

std::optional<std::string> textField(const json &question, const char *key)
{
    const auto found = question.find(key);
    if (found == question.end())
        return std::nullopt;
    if (!found->is_string())
        throw Error(std::string("\"") + key + "\" must be a string");
    return found->get<std::string>();
}

std::optional<BlockGrouping> groupingOf(const json &question)
{
    const auto text = textField(question, "group");
    return text ? std::optional(parseBlockGrouping(*text)) : std::nullopt;
}

// The answer to one question, as summary --json and diff --json give its figures.
json answer(const AnalysedTrace &analysed, const json &question)
{
    if (!question.is_object())
        throw Error("a question is a JSON object, such as {\"ask\": \"peak\"}");
    const Trace &trace = *analysed.trace;
    const auto ask = textField(question, "ask");
    const auto top = wholeField(question, "top", 1);
    const std::optional<std::size_t> limit = top ? std::optional(static_cast<std::size_t>(*top)) : std::nullopt;
    const std::optional<BlockGrouping> grouping = groupingOf(question);
    if (ask == "peak")
        return json::parse(peakToJson(trace, analysed.summary));
    if (ask == "summary")
        return json::parse(summaryToJson(trace, analysed.summary, limit, grouping));
    if (ask == "live") {
        const auto atNs = wholeField(question, "at_ns", INT64_MIN);
        const auto &peak = analysed.summary.peak;
        if (!atNs && !peak.liveAtPeak)
            return nullptr; // nothing allocated, no peak
        const LiveSet live = atNs ? liveSetAt(trace, analysed.device, *atNs) : *peak.liveAtPeak;
        return json::parse(liveSetToJson(trace, live, limit, grouping));
    }
    if (ask == "diff") {
        const auto against = textField(question, "against");
        if (!against)
            throw Error("\"diff\" needs \"against\": the trace to compare with");
        const AnalysedTracePtr other = openForCommand(*against);
        return diffToJson(analysed.path, *against, diffTraces(trace, analysed.summary, *other->trace, other->summary, grouping),
                          limit, grouping);
    }
    throw Error("\"ask\" must be \"peak\", \"live\", \"diff\" or \"summary\"");
}

// One line: the question's id (when it has one), what it asked, and the answer or an error.
bool answerLine(const AnalysedTrace &analysed, const std::string &text)
{
    json line = json::object();
    json question;
    bool answered = false;
    try {
        question = json::parse(text);
        if (question.is_object() && question.contains("id"))
            line["id"] = question["id"];
        if (question.is_object() && question.contains("ask"))
            line["ask"] = question["ask"];
        line["answer"] = answer(analysed, question);
        answered = true;
    } catch (const json::exception &) {
        line["error"] = "not JSON: " + text;
    } catch (const std::exception &error) {
        line.erase("answer");
        line["error"] = error.what();
    }
    std::fputs((line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n").c_str(), stdout);
    std::fflush(stdout);
    return answered;
}

} // namespace

Command addQueryCommand(CLI::App &app)
{
    auto *command = app.add_subcommand(
        "query", "Answer questions about one trace as JSON lines: the peak, what is live at a time, a diff, the summary");
    struct Options
    {
        std::string path;
        std::vector<std::string> questions;
    };
    auto options = std::make_shared<Options>();
    command->add_option("FILE", options->path, "Trace file (any format PeakLens reads: docs/formats.md)")->required();
    command->add_option("QUESTION", options->questions,
                        "A question as a JSON object, such as '{\"ask\": \"live\", \"group\": \"file\", \"top\": 5}' "
                        "(docs/cli.md); without any, one per line from standard input, each answered as it comes");
    return {command, [options]() -> CommandOutput {
                const AnalysedTracePtr analysed = openForCommand(options->path);
                bool all = true;
                if (!options->questions.empty()) {
                    for (const std::string &question : options->questions)
                        all = answerLine(*analysed, question) && all;
                } else {
                    for (std::string line; std::getline(std::cin, line);) {
                        if (line.find_first_not_of(" \t\r") != std::string::npos)
                            all = answerLine(*analysed, line) && all;
                    }
                }
                return {std::string(), all ? 0 : 2};
            }};
}

} // namespace peaklens::cli
