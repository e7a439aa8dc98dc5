// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The caching allocator's state at the peak or a clicked time (as memory_viz's segment
// view): every reserved segment as a bar, its blocks coloured by category and its free runs
// blank, with reserved, allocated, free and the largest free block, the share of reserved
// memory a request as large as the largest live block could not use, and why each
// out-of-memory failure happened: fragmentation or a full GPU. Computed off the UI thread.

#include "jobs.h"
#include "tracedocument.h"

#include "core/analysis/allocatorstate.h"
#include "core/plan/predictor.h"

#include <QWidget>

#include <optional>

class QLabel;

namespace peaklens::gui {

class SegmentMap;

class AllocatorPane final : public QWidget
{
    Q_OBJECT

public:
    explicit AllocatorPane(QWidget *parent = nullptr);
    ~AllocatorPane() override;

    void showAt(const DocumentPtr &document, std::optional<std::int64_t> timeNs);
    // The figures and verdicts shown, as text (empty while they are computed).
    QString text() const;

Q_SIGNALS:
    // The state for the last showAt is shown.
    void shown();
    // The largest free block over the document's time, once computed (empty when the
    // trace does not say where its segments lie).
    void largestFreeReady(const peaklens::gui::DocumentPtr &document, const std::vector<peaklens::SeriesPoint> &curve);

private:
    struct Result
    {
        AllocatorState state;
        std::vector<OomAnalysis> ooms;
        std::int64_t largestLiveBytes = 0;
    };
    void present(const Result &result);

    DocumentPtr m_document;
    QLabel *m_figures;
    QLabel *m_ooms;
    SegmentMap *m_map;
    Jobs m_stateJobs;  // the state at a moment
    Jobs m_seriesJobs; // the largest free block over time
};

} // namespace peaklens::gui
