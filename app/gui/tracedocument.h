// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A trace opened in the app: the analyses every view and report reads (AnalysedTrace),
// plus what only the window draws — the timeline by layer, the allocation sites of its
// stacks, the level-of-detail blocks of its curves, its blocks as intervals and its kernel
// lanes — all computed once, off the UI thread.

#include "core/analysis/allocationsites.h"
#include "core/analysis/blockindex.h"
#include "core/analysis/kernellanes.h"
#include "core/analysis/levelofdetail.h"
#include "core/document/analysedtrace.h"

#include <QStringList>

#include <memory>

namespace peaklens::gui {

struct TraceDocument : AnalysedTrace
{
    std::shared_ptr<const AllocationSites> sites; // of trace->stacks
    // A band per repeated block (blockDepth), or per innermost layer; its allocated and
    // reserved series are byCategory's, shared (regroupTimeline).
    TimelineSeries byLayer;
    // A band per memory pool and per stream, each with its reserved bytes, where the device
    // has more than one (groupsLanes); otherwise without groups.
    TimelineSeries byPool;
    TimelineSeries byStream;
    SeriesBlocks allocatedBlocks; // of the allocated series (the same in both groupings)
    SeriesBlocks reservedBlocks;
    // The blocks of the timeline's device, for the block under the cursor, and the kernels
    // of that device by stream.
    std::shared_ptr<const BlockIndex> blocks;
    std::shared_ptr<const KernelLanes> kernels;

    // The timeline in that grouping; byCategory's for a pool or stream grouping it lacks.
    const TimelineSeries &timeline(GroupBy groupBy) const;
    bool hasGrouping(GroupBy groupBy) const;

    // The file's name as the app shows and reopens it.
    QString filePath() const;
    // Time zero of every time the window shows: the first memory event or step, whichever
    // comes first; 0 for a trace with neither.
    std::int64_t originNs() const;
};

using DocumentPtr = std::shared_ptr<const TraceDocument>;

// A document of analyses already made (a run followed live: GrowingAnalysis), with what
// only the window draws added.
DocumentPtr completeDocument(const QString &path, AnalysedTrace analysed, TimelineSeries byLayer);

// What the status line says of an opened document: its memory events, layers and steps
// (its blocks, for a snapshot of the state only), and what a recording of segments lacks.
QString statusText(const TraceDocument &document);
// A snapshot of the state only has no timeline: what its state says instead, device by
// device, or that it holds nothing.
QStringList stateOnlyNotes(const TraceDocument &document);

// Throws peaklens::Error (ImportError naming the file) or Cancelled.
DocumentPtr loadDocument(const QString &path, const Progress &progress = {});
// The analyses of a trace already read (after an edit of its layers, or another chain).
DocumentPtr analyseDocument(const QString &path, TracePtr trace, const ChainSelection &chain = {}, const Progress &progress = {});

} // namespace peaklens::gui
