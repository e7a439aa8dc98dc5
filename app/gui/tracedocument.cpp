#include "tracedocument.h"

#include "core/error.h"
#include "core/import/traceloader.h"

namespace peaklens::gui {

DocumentPtr loadDocument(const QString &path, const ImportProgress &progress)
{
    auto document = std::make_shared<TraceDocument>();
    document->path = path;
    // Reading is most of the work; the analysis takes the last tenth of the bar.
    ImportProgress reading = progress;
    reading.report = [&progress](double fraction) { progress.tick(fraction * 0.9); };
    document->trace = loadTrace(path.toStdString(), reading);
    const Trace &trace = *document->trace;
    document->summary = summarize(trace);
    progress.tick(0.95);
    const auto &peak = document->summary.peak;
    if (peak.primary)
        document->device = peak.devices[*peak.primary].device;
    else if (!trace.lanes.empty())
        document->device = trace.lanes.front().device;
    document->byCategory = buildTimeline(trace, document->device, GroupBy::Category);
    document->byLayer = buildTimeline(trace, document->device, GroupBy::Layer);
    try {
        document->costModel = buildCostModel(trace);
    } catch (const Error &error) {
        document->costModelProblem = QString::fromStdString(error.what());
    }
    progress.tick(1.0);
    return document;
}

} // namespace peaklens::gui
