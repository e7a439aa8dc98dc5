// SPDX-License-Identifier: Apache-2.0
#include "tablereport.h"

#include "core/analysis/allocationsites.h"

#include "jsondump.h"
#include "summaryjson.h"

#include "core/trace/units.h"
#include "core/trace/visibletext.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ostream>
#include <sstream>

namespace peaklens {

namespace {

using json = nlohmann::ordered_json;

std::string milliseconds(std::int64_t ns)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f", static_cast<double>(ns) / 1e6);
    return buffer;
}

std::string joined(const std::vector<std::string> &parts, char separator)
{
    std::string list;
    for (const std::string &part : parts)
        list += (list.empty() ? "" : std::string(1, separator)) + part;
    return list;
}

json planJson(const ReportRun &run, const ReportPlan &plan)
{
    return {{"strategy", plan.name},
            {"feasible", plan.plan.feasible},
            {"checkpoint", toggles(*run.analysed->model, plan.plan)},
            {"predicted_peak_bytes", plan.plan.prediction.peakBytes},
            {"predicted_step_ms", static_cast<double>(plan.plan.prediction.stepTimeNs) / 1e6},
            {"added_ms", static_cast<double>(plan.plan.prediction.addedTimeNs) / 1e6}};
}

} // namespace

std::string csvField(std::string_view text)
{
    // Paths come from the user's file system; names are already shown as visible text.
    std::string value = visibleText(text);
    if (!value.empty() && std::string_view("=+-@\t\r").find(value[0]) != std::string_view::npos)
        value.insert(value.begin(), '\'');
    if (value.find_first_of(",\"\n\r") == std::string::npos)
        return value;
    std::string quoted = "\"";
    quoted.reserve(value.size() + 2);
    for (char c : value) {
        quoted += c;
        if (c == '"')
            quoted += '"';
    }
    return quoted + "\"";
}

void writeCsvReport(const ReportData &data, CsvTable table, std::ostream &out)
{
    switch (table) {
    case CsvTable::Layers:
        out << "trace,layer,kind,parameter_bytes,activation_bytes,self_activation_bytes,forward_ms,backward_ms,forward_calls,"
               "backward_calls\n";
        for (const ReportRun &run : data.runs) {
            for (std::size_t l = 0; l < run.analysed->trace->layers.size(); ++l) {
                const Layer &layer = run.analysed->trace->layers[l];
                const LayerStats &stats = run.analysed->summary.layers[l];
                out << csvField(run.name) + "," + csvField(layer.path) + "," + csvField(layer.kind) + ","
                           + std::to_string(layer.parameterBytes) + "," + std::to_string(stats.activationBytes) + ","
                           + std::to_string(stats.selfActivationBytes) + "," + milliseconds(stats.forwardNs) + ","
                           + milliseconds(stats.backwardNs) + "," + std::to_string(stats.forwardCalls) + ","
                           + std::to_string(stats.backwardCalls) + "\n";
            }
        }
        break;
    case CsvTable::Plans:
        out << "trace,strategy,feasible,checkpoint,predicted_peak_bytes,predicted_step_ms,added_ms\n";
        for (const ReportRun &run : data.runs) {
            for (const ReportPlan &plan : run.plans) {
                out << csvField(run.name) + "," + csvField(plan.name) + "," + (plan.plan.feasible ? "true" : "false") + ","
                           + csvField(joined(toggles(*run.analysed->model, plan.plan), ';')) + ","
                           + std::to_string(plan.plan.prediction.peakBytes) + "," + milliseconds(plan.plan.prediction.stepTimeNs)
                           + "," + milliseconds(plan.plan.prediction.addedTimeNs) + "\n";
            }
        }
        break;
    case CsvTable::Sites:
        out << "trace,site,location,kind,called_from,bytes,blocks\n";
        for (const ReportRun &run : data.runs) {
            if (!run.analysed->summary.peak.liveAtPeak)
                continue;
            const AllocationSites sites(run.analysed->trace->stacks);
            for (const LiveGroup &group : run.analysed->summary.peak.liveAtPeak->bySite) {
                out << csvField(run.name) + "," + csvField(sites.label(group.key)) + "," + csvField(sites.location(group.key))
                           + "," + std::string(siteKindName(sites.site(group.key).kind)) + ","
                           + csvField(joined(sites.callers(group.largestStack, 8), ';')) + "," + std::to_string(group.bytes) + ","
                           + std::to_string(group.blocks) + "\n";
            }
        }
        break;
    case CsvTable::Events:
        out << "trace,time_ns,delta_bytes,address,device,stream,layer,category,phase\n";
        for (const ReportRun &run : data.runs) {
            const Trace &trace = *run.analysed->trace;
            const std::string name = csvField(run.name);
            for (std::size_t i = 0; i < trace.events.size(); ++i) {
                const Lane &lane = trace.lanes[trace.events.lane(i)];
                const std::uint32_t layer = trace.events.layer(i);
                out << name + "," + std::to_string(trace.events.timeNs(i)) + "," + std::to_string(trace.events.deltaBytes(i))
                           + "," + std::to_string(trace.events.addr(i)) + "," + lane.device.toString() + ","
                           + std::to_string(lane.stream) + ","
                           + (layer < trace.layers.size() ? csvField(trace.layers[layer].path) : std::string()) + ","
                           + std::string(categoryName(trace.events.category(i))) + ","
                           + std::string(phaseName(trace.events.phase(i))) + "\n";
            }
        }
        break;
    }
}

std::string renderCsvReport(const ReportData &data, CsvTable table)
{
    std::ostringstream out;
    writeCsvReport(data, table, out);
    return std::move(out).str();
}

std::string renderJsonReport(const ReportData &data)
{
    json runs = json::array();
    for (const ReportRun &run : data.runs) {
        json plans = json::array();
        for (const ReportPlan &plan : run.plans)
            plans.push_back(planJson(run, plan));
        runs.push_back({{"trace", validUtf8(run.name)},
                        {"checkpoint", run.analysed->checkpoint},
                        {"peak_allocated_bytes", run.analysed->peakBytes},
                        {"step_time_ms", static_cast<double>(run.analysed->summary.stepTimeNs) / 1e6},
                        {"summary", json::parse(summaryToJson(*run.analysed->trace, run.analysed->summary, std::nullopt))},
                        {"plans", plans},
                        {"plan_problem", run.analysed->model ? json(nullptr) : json(run.analysed->modelProblem)}});
    }
    json comparisons = json::array();
    for (const ReportComparison &comparison : data.comparisons) {
        const ReportRun &run = data.runs[comparison.run];
        json entry = {{"trace", validUtf8(run.name)},
                      {"checkpoint", run.analysed->checkpoint},
                      {"measured",
                       {{"peak_bytes", run.analysed->peakBytes},
                        {"step_time_ms", static_cast<double>(run.analysed->summary.stepTimeNs) / 1e6}}},
                      {"predicted", nullptr},
                      {"problem", comparison.problem.empty() ? json(nullptr) : json(comparison.problem)}};
        if (comparison.row)
            entry["predicted"] = {{"peak_bytes", comparison.row->predicted.peakBytes},
                                  {"step_time_ms", static_cast<double>(comparison.row->predicted.stepTimeNs) / 1e6}};
        comparisons.push_back(entry);
    }
    json out = {{"format", "peaklens-report"},
                {"version", 1},
                {"budget_bytes", data.budgetBytes ? json(*data.budgetBytes) : json(nullptr)},
                {"runs", runs},
                {"comparisons", comparisons}};
    return dumpJson(out) + "\n";
}

} // namespace peaklens
