// SPDX-License-Identifier: Apache-2.0
#include "replayresult.h"

#include "core/error.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace peaklens {

namespace {

using json = nlohmann::json;

// Reads the members of one object, naming the object and the key in what it throws.
class Fields
{
public:
    Fields(const json &object, std::string what, const std::string &source)
        : m_object(object)
        , m_what(std::move(what))
        , m_source(source)
    {
    }

    [[noreturn]] void fail(const std::string &key, const char *expected) const
    {
        throw Error(m_source + ": not a peaklens-replay result: \"" + m_what + key + "\" must be " + expected + ".");
    }

    // Null or absent gives nothing.
    const json *find(const std::string &key) const
    {
        const auto found = m_object.find(key);
        return found == m_object.end() || found->is_null() ? nullptr : &*found;
    }

    const json &require(const std::string &key, const char *expected) const
    {
        if (!m_object.contains(key))
            fail(key, expected);
        return m_object[key];
    }

    std::optional<std::int64_t> bytes(const std::string &key) const
    {
        const json &value = require(key, "a byte count or null");
        if (value.is_null())
            return std::nullopt;
        if (!value.is_number_integer())
            fail(key, "a byte count or null");
        return value.get<std::int64_t>();
    }

    std::vector<double> times(const std::string &key) const
    {
        const json &value = require(key, "an array of times in milliseconds");
        std::vector<double> times;
        if (!value.is_array())
            fail(key, "an array of times in milliseconds");
        for (const json &time : value) {
            if (!time.is_number())
                fail(key, "an array of times in milliseconds");
            times.push_back(time.get<double>());
        }
        return times;
    }

    std::string text(const std::string &key) const
    {
        const json *value = find(key);
        if (value && !value->is_string())
            fail(key, "a string or null");
        return value ? value->get<std::string>() : std::string();
    }

    const json *object(const std::string &key) const
    {
        const json *value = find(key);
        if (value && !value->is_object())
            fail(key, "an object or null");
        return value;
    }

private:
    const json &m_object;
    std::string m_what; // "baseline." inside the baseline object
    const std::string &m_source;
};

} // namespace

ReplayResult ReplayResult::fromJson(std::string_view text, const std::string &source)
{
    const json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded())
        throw Error(source + ": not a peaklens-replay result: the text is not JSON.");
    if (!object.is_object())
        throw Error(source + ": not a peaklens-replay result: it is not a JSON object.");
    const Fields fields(object, "", source);
    ReplayResult result;
    result.peakAllocatedBytes = fields.bytes("peak_allocated_bytes");
    result.stepTimesMs = fields.times("step_times_ms");
    if (const json *baseline = fields.object("baseline")) {
        const Fields inner(*baseline, "baseline.", source);
        result.baselinePeakAllocatedBytes = inner.bytes("peak_allocated_bytes");
        result.baselineStepTimesMs = inner.times("step_times_ms");
    }
    if (const json *check = fields.object("gradient_check")) {
        const Fields inner(*check, "gradient_check.", source);
        const json &agree = inner.require("agree", "true or false");
        if (!agree.is_boolean())
            inner.fail("agree", "true or false");
        ReplayGradientCheck gradients;
        gradients.agree = agree.get<bool>();
        // JSON has no infinity: a difference against an all-zero gradient is written as null.
        const json &difference = inner.require("max_relative_difference", "a number or null");
        if (difference.is_number())
            gradients.maxRelativeDifference = difference.get<double>();
        else if (difference.is_null())
            gradients.maxRelativeDifference = INFINITY;
        else
            inner.fail("max_relative_difference", "a number or null");
        result.gradients = gradients;
    }
    if (const json *oom = fields.object("oom")) {
        result.outOfMemory = Fields(*oom, "oom.", source).text("message");
        if (result.outOfMemory.empty())
            Fields(*oom, "oom.", source).fail("message", "the sentence saying where memory ran out");
    }
    result.tracePath = fields.text("trace");
    return result;
}

std::string ReplayResult::toJson() const
{
    const auto bytes = [](const std::optional<std::int64_t> &value) { return value ? json(*value) : json(nullptr); };
    json object = {{"peak_allocated_bytes", bytes(peakAllocatedBytes)},
                   {"step_times_ms", stepTimesMs},
                   {"trace", tracePath.empty() ? json(nullptr) : json(tracePath)}};
    if (baselinePeakAllocatedBytes || !baselineStepTimesMs.empty())
        object["baseline"] = {{"peak_allocated_bytes", bytes(baselinePeakAllocatedBytes)},
                              {"step_times_ms", baselineStepTimesMs}};
    if (gradients) {
        object["gradient_check"] = {{"agree", gradients->agree},
                                    {"max_relative_difference", std::isfinite(gradients->maxRelativeDifference)
                                                                    ? json(gradients->maxRelativeDifference)
                                                                    : json(nullptr)}};
    }
    if (!outOfMemory.empty())
        object["oom"] = {{"message", outOfMemory}};
    // A message from a failed run may hold bytes that are not UTF-8: written replaced.
    return object.dump(2, ' ', false, json::error_handler_t::replace);
}

} // namespace peaklens
