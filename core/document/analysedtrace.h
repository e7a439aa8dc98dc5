// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trace with the analyses every view of it reads, computed once: its summary (peak, live
// set, layer and step figures), its timeline by category on the peak's device, and the
// checkpointing cost model when it has a chain. The app's panes, the Runs table and the
// reports all read these same figures; the object is immutable and shared.

#include "core/analysis/timelineseries.h"
#include "core/analysis/tracesummary.h"
#include "core/plan/costmodel.h"
#include "core/progress.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct AnalysedTrace
{
    std::string path; // where it was read from (or what it is called)
    TracePtr trace;
    TraceSummary summary;
    Device device;              // the device of the primary peak; the timeline shows it
    std::int64_t peakBytes = 0; // allocated at the primary peak
    TimelineSeries byCategory;
    std::optional<CostModel> model;
    std::string modelProblem;            // why there is no model, as a sentence
    ChainSelection chain;                // what the model was built on; default: defaultChain
    std::vector<std::string> checkpoint; // the toggles the trace was recorded with

    // Each step's duration on the peak's device, in step order: what a comparison of step
    // times needs (a single median hides the spread).
    std::vector<double> stepTimesMs() const;
};

using AnalysedTracePtr = std::shared_ptr<const AnalysedTrace>;

// The checkpoint toggles a trace was recorded with, as its metadata lists them.
std::vector<std::string> recordedToggles(const Trace &trace);

// Fills `analysed` from its trace (path, trace and chain set by the caller); the analyses
// are independent and run side by side. Throws Cancelled when progress asks.
void analyseInto(AnalysedTrace &analysed, const Progress &progress = {});

AnalysedTracePtr analyseTrace(std::string path, TracePtr trace, const ChainSelection &chain = {}, const Progress &progress = {});

} // namespace peaklens
