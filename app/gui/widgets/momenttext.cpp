#include "momenttext.h"

#include "core/analysis/levelofdetail.h"
#include "core/trace/units.h"

#include <QObject>

namespace peaklens::gui {

QString momentText(const TraceDocument &document, const TimelineSeries &series, std::int64_t originNs, std::int64_t timeNs)
{
    const Trace &trace = *document.trace;
    const auto &times = trace.events;
    std::size_t low = 0, high = times.size();
    while (low < high) { // the last event at or before the time
        const std::size_t mid = (low + high) / 2;
        if (times.timeNs(mid) <= timeNs)
            low = mid + 1;
        else
            high = mid;
    }
    QString text = QObject::tr("%1 ms\nallocated %2")
                       .arg(static_cast<double>(timeNs - originNs) / 1e6, 0, 'f', 3)
                       .arg(QString::fromStdString(formatBytes(valueAt(series.allocated, timeNs))));
    if (!series.reserved.empty())
        text += QObject::tr("\nreserved %1").arg(QString::fromStdString(formatBytes(valueAt(series.reserved, timeNs))));
    if (low > 0) {
        const std::size_t event = low - 1;
        const std::uint32_t layer = times.layer(event);
        text += QObject::tr("\n%1 of %2")
                    .arg(QString::fromUtf8(phaseName(times.phase(event))),
                         layer < trace.layers.size() ? QString::fromStdString(trace.layers[layer].path) : QObject::tr("(no layer)"));
        if (times.deltaBytes(event) > 0 && times.stack(event) != StackTable::kEmptyStack)
            text += QObject::tr("\n%1 allocated at %2")
                        .arg(QString::fromStdString(formatBytes(times.deltaBytes(event))),
                             QString::fromStdString(document.sites->label(document.sites->siteOf(times.stack(event)))));
    }
    if (auto step = trace.stepAt(timeNs))
        text += QObject::tr(", step %1").arg(trace.steps[*step].number);
    return text;
}

} // namespace peaklens::gui
