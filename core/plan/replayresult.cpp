// SPDX-License-Identifier: Apache-2.0
#include "replayresult.h"

#include "core/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <type_traits>

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

    // Absent or null gives nothing.
    template<typename T>
    std::optional<T> optional(const std::string &key, const char *expected) const
    {
        const json *value = find(key);
        if (!value)
            return std::nullopt;
        if (!holds<T>(*value))
            fail(key, expected);
        return value->get<T>();
    }

    // Absent or null gives an empty list, unless `required`.
    template<typename T>
    std::vector<T> list(const std::string &key, const char *expected, bool required = false) const
    {
        const json *value = required ? &require(key, expected) : find(key);
        if (value && !value->is_array())
            fail(key, expected);
        std::vector<T> items;
        for (const json &item : value ? *value : json::array()) {
            if (!holds<T>(item))
                fail(key, expected);
            items.push_back(item.get<T>());
        }
        return items;
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
    template<typename T>
    static bool holds(const json &value)
    {
        if constexpr (std::is_same_v<T, std::string>)
            return value.is_string();
        else if constexpr (std::is_integral_v<T>)
            return value.is_number_integer();
        else
            return value.is_number();
    }

    const json &m_object;
    std::string m_what; // "baseline." inside the baseline object
    const std::string &m_source;
};

std::optional<ReplayOutOfMemory> outOfMemoryIn(const Fields &fields, const std::string &what, const std::string &source)
{
    const json *object = fields.object("oom");
    if (!object)
        return std::nullopt;
    const Fields oom(*object, what + "oom.", source);
    ReplayOutOfMemory result;
    result.message = oom.text("message");
    if (result.message.empty())
        oom.fail("message", "the sentence saying where memory ran out");
    result.layer = oom.text("layer");
    result.phase = parsePhase(oom.text("phase")).value_or(Phase::Other);
    result.step = oom.optional<std::int64_t>("step", "a step number or null");
    result.requestedBytes = oom.optional<std::int64_t>("requested_bytes", "a byte count").value_or(0);
    return result;
}

// The keys a run and its baseline share.
ReplaySteps stepsIn(const Fields &fields, const std::string &what, const std::string &source)
{
    ReplaySteps steps;
    steps.checkpoint = fields.list<std::string>("checkpoint", "an array of strings");
    steps.peakAllocatedBytes = fields.bytes("peak_allocated_bytes");
    steps.stepTimeMs = fields.optional<double>("step_time_ms", "a time in milliseconds or null");
    steps.stepTimesMs = fields.list<double>("step_times_ms", "an array of times in milliseconds", true);
    steps.stepPeaksBytes = fields.list<std::int64_t>("step_peaks_bytes", "an array of byte counts");
    steps.oom = outOfMemoryIn(fields, what, source);
    steps.tracePath = fields.text("trace");
    return steps;
}

ReplayGradientCheck gradientsIn(const Fields &check)
{
    const json &agree = check.require("agree", "true or false");
    if (!agree.is_boolean())
        check.fail("agree", "true or false");
    ReplayGradientCheck gradients;
    gradients.agree = agree.get<bool>();
    // JSON has no infinity: a difference against an all-zero gradient is written as null.
    const json &difference = check.require("max_relative_difference", "a number or null");
    if (difference.is_number())
        gradients.maxRelativeDifference = difference.get<double>();
    else if (difference.is_null())
        gradients.maxRelativeDifference = INFINITY;
    else
        check.fail("max_relative_difference", "a number or null");
    gradients.maxAbsDifference = check.optional<double>("max_abs_difference", "a number").value_or(0);
    gradients.worstParameter = check.text("worst_parameter");
    gradients.values = check.optional<std::int64_t>("values", "a count").value_or(0);
    gradients.tolerance = check.optional<double>("tolerance", "a number").value_or(0);
    return gradients;
}

using ordered = nlohmann::ordered_json;

template<typename T>
ordered orNull(const std::optional<T> &value)
{
    return value ? ordered(*value) : ordered(nullptr);
}

ordered orNull(const std::string &text)
{
    return text.empty() ? ordered(nullptr) : ordered(text);
}

ordered outOfMemoryJson(const std::optional<ReplayOutOfMemory> &oom)
{
    if (!oom)
        return nullptr;
    return {{"layer", orNull(oom->layer)},
            {"phase", phaseName(oom->phase)},
            {"step", orNull(oom->step)},
            {"requested_bytes", oom->requestedBytes},
            {"message", oom->message}};
}

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
    static_cast<ReplaySteps &>(result) = stepsIn(fields, "", source);
    result.device = fields.text("device");
    result.deviceName = fields.text("device_name");
    result.dtype = fields.text("dtype");
    if (const json *baseline = fields.object("baseline"))
        result.baseline = stepsIn(Fields(*baseline, "baseline.", source), "baseline.", source);
    if (const json *model = fields.object("model"))
        result.modelJson = model->dump();
    if (const json *check = fields.object("gradient_check"))
        result.gradients = gradientsIn(Fields(*check, "gradient_check.", source));
    return result;
}

std::string ReplayResult::toJson() const
{
    const auto steps = [](const ReplaySteps &run, ordered &object) {
        object["checkpoint"] = run.checkpoint;
        object["peak_allocated_bytes"] = orNull(run.peakAllocatedBytes);
        object["step_time_ms"] = orNull(run.stepTimeMs);
        object["oom"] = outOfMemoryJson(run.oom);
        object["step_times_ms"] = run.stepTimesMs;
        object["step_peaks_bytes"] = run.stepPeaksBytes;
        object["trace"] = orNull(run.tracePath);
    };
    ordered object = ordered::object();
    steps(*this, object);
    object["steps"] = stepTimesMs.size();
    object["device"] = device;
    object["device_name"] = deviceName;
    object["dtype"] = dtype;
    object["baseline"] = nullptr;
    if (baseline)
        steps(*baseline, object["baseline"]);
    object["model"] = modelJson.empty() ? ordered(nullptr) : ordered::parse(modelJson, nullptr, false);
    object["gradient_check"] = nullptr;
    if (gradients) {
        object["gradient_check"] = {{"max_abs_difference", gradients->maxAbsDifference},
                                    {"max_relative_difference", std::isfinite(gradients->maxRelativeDifference)
                                                                    ? ordered(gradients->maxRelativeDifference)
                                                                    : ordered(nullptr)},
                                    {"worst_parameter", gradients->worstParameter},
                                    {"values", gradients->values},
                                    {"tolerance", gradients->tolerance},
                                    {"agree", gradients->agree}};
    }
    // A message from a failed run may hold bytes that are not UTF-8: written replaced.
    return object.dump(2, ' ', false, ordered::error_handler_t::replace);
}

} // namespace peaklens
