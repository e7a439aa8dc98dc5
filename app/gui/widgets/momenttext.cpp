// SPDX-License-Identifier: GPL-3.0-or-later
#include "momenttext.h"

#include "core/analysis/allocationsites.h"
#include "core/analysis/blockindex.h"
#include "core/analysis/levelofdetail.h"
#include "core/trace/units.h"

#include <QObject>

#include <algorithm>

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
    // By pool or stream: each one's blocks and segments, and what its segments hold free.
    for (const ReservedGroup &group : series.reservedGroups) {
        const auto band =
            std::find_if(series.groups.begin(), series.groups.end(), [&](const GroupSeries &g) { return g.key == group.key; });
        const std::int64_t allocated = band != series.groups.end() ? valueAt(band->points, timeNs) : 0;
        const std::int64_t reserved = valueAt(group.points, timeNs);
        text += QObject::tr("\n%1: %2 allocated of %3 reserved, %4 free in its segments")
                    .arg(QString::fromStdString(group.label), QString::fromStdString(formatBytes(allocated)),
                         QString::fromStdString(formatBytes(reserved)),
                         QString::fromStdString(formatBytes(std::max<std::int64_t>(reserved - allocated, 0))));
    }
    if (low > 0) {
        const std::size_t event = low - 1;
        const std::uint32_t layer = times.layer(event);
        text +=
            QObject::tr("\n%1 of %2")
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

QString blockText(const TraceDocument &document, std::size_t block, std::int64_t originNs, std::size_t frames)
{
    const Trace &trace = *document.trace;
    const MemoryEvents &events = trace.events;
    const BlockIndex &index = *document.blocks;
    const std::size_t alloc = index.allocation(block);
    const auto ms = [originNs](std::int64_t ns) { return QString::number(static_cast<double>(ns - originNs) / 1e6, 'f', 3); };
    const auto where = [&](std::size_t event) {
        QString text = QString::fromUtf8(phaseName(events.phase(event)));
        const std::uint32_t layer = events.layer(event);
        text += layer < trace.layers.size() ? QObject::tr(" of %1").arg(QString::fromStdString(trace.layers[layer].path))
                                            : QObject::tr(", no layer");
        if (auto step = trace.stepAt(events.timeNs(event)))
            text += QObject::tr(", step %1").arg(trace.steps[*step].number);
        return text;
    };
    QStringList lines;
    lines << QObject::tr("%1 %2 block at 0x%3")
                 .arg(QString::fromStdString(formatBytes(events.deltaBytes(alloc))),
                      QString::fromUtf8(categoryName(events.category(alloc))))
                 .arg(events.addr(alloc), 0, 16);
    lines << QObject::tr("allocated at %1 ms, %2").arg(ms(events.timeNs(alloc)), where(alloc));
    if (const std::size_t freed = index.freeEvent(block); freed != BlockIndex::kNeverFreed)
        lines << QObject::tr("freed at %1 ms, %2; lived %3")
                     .arg(ms(events.timeNs(freed)), where(freed),
                          QString::fromStdString(formatDuration(events.timeNs(freed) - events.timeNs(alloc))));
    else
        lines << QObject::tr("never freed in the trace");
    const std::uint32_t stack = events.stack(alloc);
    if (stack != StackTable::kEmptyStack) {
        const AllocationSites &sites = *document.sites;
        lines << QObject::tr("allocated by %1").arg(QString::fromStdString(sites.label(sites.siteOf(stack))));
        const auto shown = describeStack(trace.stacks, sites, stack, false);
        for (std::size_t f = 0; f < std::min(frames, shown.size()); ++f)
            lines << QStringLiteral("  ") + QString::fromStdString(shown[f].text);
        if (frames > 0 && shown.size() > frames)
            lines << QObject::tr("  … %1 more frames").arg(shown.size() - frames);
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace peaklens::gui
