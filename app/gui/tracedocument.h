#pragma once
// A trace opened in the app, with everything its views show computed once, off the UI
// thread: summary (peak, live set, layer and step figures), timelines grouped by category
// and by layer, and the checkpointing cost model when the trace has a chain.

#include "core/analysis/allocationsites.h"
#include "core/analysis/levelofdetail.h"
#include "core/analysis/timelineseries.h"
#include "core/analysis/tracesummary.h"
#include "core/import/importprogress.h"
#include "core/plan/costmodel.h"

#include <QString>

#include <memory>
#include <optional>

namespace peaklens::gui {

struct TraceDocument
{
    QString path;
    TracePtr trace;
    TraceSummary summary;
    std::shared_ptr<const AllocationSites> sites; // of trace->stacks
    Device device;                 // the device of the primary peak; the timeline shows it
    TimelineSeries byCategory;
    TimelineSeries byLayer;        // a band per repeated block (blockDepth), or per innermost layer
    SeriesBlocks allocatedBlocks;  // of the allocated series (the same in both groupings)
    SeriesBlocks reservedBlocks;
    std::optional<CostModel> costModel;
    QString costModelProblem;      // why there is none, for the what-if bar
    ChainSelection chain;          // the chain the cost model was built on; default: defaultChain
};

using DocumentPtr = std::shared_ptr<const TraceDocument>;

// Throws peaklens::Error (ImportError naming the file) or ImportCancelled.
DocumentPtr loadDocument(const QString &path, const ImportProgress &progress = {});
// The analyses of a trace already read (after an edit of its layers, or another chain).
DocumentPtr analyseDocument(const QString &path, TracePtr trace, const ChainSelection &chain = {},
                            const ImportProgress &progress = {});

} // namespace peaklens::gui
