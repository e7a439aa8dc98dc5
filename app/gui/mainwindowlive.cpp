// The main window following a trace while its run writes it: the views grow with each
// commit, the status line and the "Live" badge say how far the run is.

#include "livefollow.h"
#include "mainwindow.h"

#include <QLabel>
#include <QStatusBar>

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
        statusBar()->showMessage(tr("Stopped following: %1").arg(message));
        Q_EMIT liveEnded();
    });
    m_liveBadge->setText(tr("● Live"));
    m_liveBadge->setToolTip(tr("%1 is being written; the views follow it").arg(path));
    m_liveBadge->setStyleSheet(QStringLiteral("QLabel { background: #1b7f3b; color: white; padding: 1px 8px; border-radius: 8px; font-weight: bold; }"));
    m_liveBadge->setVisible(true);
    statusBar()->showMessage(tr("Following %1 while it is written…").arg(path));
}

void MainWindow::stopFollowing()
{
    m_live.reset();
    m_liveBadge->setVisible(false);
}

void MainWindow::showLiveStatus(const LiveStatus &status)
{
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
        m_liveBadge->setStyleSheet(QStringLiteral("QLabel { background: #b35c00; color: white; padding: 1px 8px; border-radius: 8px; font-weight: bold; }"));
        break;
    }
    statusBar()->showMessage(status.text());
}

} // namespace peaklens::gui
