// SPDX-License-Identifier: GPL-3.0-or-later
// The main window following a trace while its run writes it: the views grow with each
// commit, the status line and the "Live" badge say how far the run is.

#include "livefollow.h"
#include "mainwindow.h"
#include "widgets/timelineview.h"

#include "core/analysis/stepalignment.h"

#include <QAction>
#include <QLabel>
#include <QStatusBar>
#include <QToolButton>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace peaklens::gui {

void MainWindow::followLive(const QString &path)
{
    stopFollowing();
    m_live = std::make_unique<LiveFollow>(path);
    const quint64 session = m_session.id;
    connect(m_live.get(), &LiveFollow::statusChanged, this, &MainWindow::showLiveStatus);
    connect(m_live.get(), &LiveFollow::documentReady, this,
            [this, session](const DocumentPtr &document, const LiveStatus &status) {
                if (session != m_session.id)
                    return;
                m_session.document = document;
                showDocument(document, true);
                showLiveStatus(status);
                Q_EMIT liveUpdated();
            });
    connect(m_live.get(), &LiveFollow::ended, this, [this](const LiveStatus &status) {
        showLiveStatus(status);
        Q_EMIT liveEnded();
    });
    connect(m_live.get(), &LiveFollow::failed, this, [this](const QString &message) {
        m_liveBadge->setVisible(false);
        m_stopRunAction->setEnabled(false);
        statusBar()->showMessage(tr("Stopped following: %1").arg(message));
        updateRerunAction();
        Q_EMIT liveEnded();
    });
    m_liveBadge->setText(tr("● Live"));
    m_liveBadge->setToolTip(tr("%1 is being written; the views follow it").arg(path));
    m_liveBadge->setStyleSheet(
        QStringLiteral("QLabel { background: #1b7f3b; color: white; padding: 1px 8px; border-radius: 8px; font-weight: bold; }"));
    m_liveBadge->setVisible(true);
    statusBar()->showMessage(tr("Following %1 while it is written…").arg(path));
}

void MainWindow::stopFollowing()
{
    m_live.reset();
    m_liveBadge->setVisible(false);
    m_headroomButton->setVisible(false);
    m_stopRunAction->setEnabled(false);
}

QString MainWindow::stopFollowedRun()
{
    if (!m_live || !m_live->isFollowing() || m_live->status().writer != TraceFollower::Writer::Writing)
        return tr("No run is being followed.");
    const std::optional<long> pid = m_live->status().writerPid;
    if (!pid)
        return tr("The run writing %1 is on another machine: stop it there.").arg(m_live->path());
    if (::kill(static_cast<pid_t>(*pid), SIGTERM) != 0)
        return tr("Could not stop process %1: %2").arg(*pid).arg(QString::fromLocal8Bit(std::strerror(errno)));
    m_stopRunAction->setEnabled(false);
    statusBar()->showMessage(tr("Asked process %1 to stop; what it committed stays shown.").arg(*pid));
    return {};
}

void MainWindow::followRerun(const QString &path)
{
    m_rerunLive = std::make_unique<LiveFollow>(path);
    const quint64 session = m_session.id;
    connect(m_rerunLive.get(), &LiveFollow::documentReady, this,
            [this, session](const DocumentPtr &run, const LiveStatus &status) {
                if (session != m_session.id || !document() || !document()->model || !isRerunning())
                    return;
                // The steps measured so far, laid over the baseline's as the finished run will be.
                std::vector<SeriesPoint> curve;
                if (const auto alignment = alignSteps(*run->trace, *document()->trace, document()->model->step))
                    for (const SeriesPoint &point : alignedSeries(run->byCategory.allocated, *alignment))
                        curve.push_back({point.timeNs, point.bytes});
                m_timeline->setComparison(curve, tr("measured (%1, live)").arg(m_rerunLabel));
                statusBar()->showMessage(tr("%1 — %2").arg(m_rerunLabel, status.text()));
                Q_EMIT liveUpdated();
            });
}

void MainWindow::showLiveStatus(const LiveStatus &status)
{
    m_stopRunAction->setEnabled(status.writer == TraceFollower::Writer::Writing && status.writerPid);
    m_stopRunAction->setToolTip(status.writerPid ? tr("Stop process %1, which writes the followed trace").arg(*status.writerPid)
                                                 : tr("The run is written on another machine"));
    updateRerunAction();
    m_headroomButton->setVisible(!status.headroomWarning.isEmpty());
    m_headroomButton->setText(status.headroomStrategy.isEmpty()
                                  ? tr("⚠ Near the device's memory")
                                  : tr("⚠ Near the device's memory: checkpoint %1").arg(status.headroomStrategy));
    m_headroomButton->setToolTip(
        status.headroomWarning + (status.headroomAdvice.isEmpty() ? QString() : QStringLiteral(";\n") + status.headroomAdvice)
        + (status.headroomStrategy.isEmpty() ? QString()
                                             : tr("\n\nClick to tick these toggles, then Rerun once the run has stopped.")));
    switch (status.writer) {
    case TraceFollower::Writer::Waiting:
    case TraceFollower::Writer::Writing:
        break;
    case TraceFollower::Writer::Finished:
        m_liveBadge->setVisible(false);
        break;
    case TraceFollower::Writer::Stopped:
        m_liveBadge->setText(tr("Writer stopped"));
        m_liveBadge->setToolTip(tr("%1. What it committed is shown; nothing more will come.").arg(status.writerText));
        m_liveBadge->setStyleSheet(QStringLiteral(
            "QLabel { background: #b35c00; color: white; padding: 1px 8px; border-radius: 8px; font-weight: bold; }"));
        break;
    }
    statusBar()->showMessage(status.text());
}

} // namespace peaklens::gui
