// SPDX-License-Identifier: GPL-3.0-or-later
#include "livecontroller.h"

#include <QAction>
#include <QLabel>
#include <QMessageBox>
#include <QStatusBar>
#include <QToolButton>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace peaklens::gui {

namespace {

QString badgeStyle(const char *background)
{
    return QStringLiteral("QLabel, QToolButton { background: %1; color: white; padding: 1px 8px; border-radius: 8px; "
                          "font-weight: bold; }")
        .arg(QLatin1String(background));
}

} // namespace

LiveController::LiveController(QStatusBar *status, QWidget *parent)
    : QObject(parent)
    , m_status(status)
    , m_parent(parent)
    , m_badge(new QLabel(parent))
    , m_headroomButton(new QToolButton(parent))
    , m_stopAction(new QAction(tr("&Stop the Followed Run…"), parent))
{
    m_badge->setObjectName(QStringLiteral("liveBadge"));
    m_badge->setVisible(false);
    // Near the device's memory: the planner's toggles, ticked with a click.
    m_headroomButton->setObjectName(QStringLiteral("headroomButton"));
    m_headroomButton->setAutoRaise(true);
    m_headroomButton->setStyleSheet(badgeStyle("#b35c00"));
    m_headroomButton->setVisible(false);
    connect(m_headroomButton, &QToolButton::clicked, this, [this] {
        if (m_live && !m_live->status().headroomStrategy.isEmpty())
            Q_EMIT strategyChosen(m_live->status().headroomStrategy);
    });
    m_stopAction->setObjectName(QStringLiteral("stopRun"));
    m_stopAction->setEnabled(false);
    connect(m_stopAction, &QAction::triggered, this, [this] {
        if (!m_live || !m_live->status().writerPid)
            return;
        const auto answer = QMessageBox::question(
            m_parent, tr("Stop the run"),
            tr("Stop process %1, which is writing %2?\n\nIt gets SIGTERM: a recording finishes its file, and "
               "everything committed so far stays readable. Pick toggles on what was recorded, then Rerun.")
                .arg(*m_live->status().writerPid)
                .arg(m_live->path()));
        if (answer == QMessageBox::Yes)
            if (const QString problem = stopRun(); !problem.isEmpty())
                m_status->showMessage(problem);
    });
}

LiveController::~LiveController() = default;

void LiveController::follow(const QString &path)
{
    stop();
    m_live = std::make_unique<LiveFollow>(path);
    connect(m_live.get(), &LiveFollow::statusChanged, this, &LiveController::showStatus);
    connect(m_live.get(), &LiveFollow::documentReady, this, [this](const DocumentPtr &document, const LiveStatus &status) {
        showStatus(status);
        Q_EMIT grown(document);
    });
    connect(m_live.get(), &LiveFollow::ended, this, [this](const LiveStatus &status) {
        showStatus(status);
        Q_EMIT ended();
    });
    connect(m_live.get(), &LiveFollow::failed, this, [this](const QString &message) {
        m_badge->setVisible(false);
        m_stopAction->setEnabled(false);
        m_status->showMessage(tr("Stopped following: %1").arg(message));
        Q_EMIT changed();
        Q_EMIT ended();
    });
    m_badge->setText(tr("● Live"));
    m_badge->setToolTip(tr("%1 is being written; the views follow it").arg(path));
    m_badge->setStyleSheet(badgeStyle("#1b7f3b"));
    m_badge->setVisible(true);
    m_status->showMessage(tr("Following %1 while it is written…").arg(path));
}

void LiveController::stop()
{
    m_live.reset();
    m_badge->setVisible(false);
    m_headroomButton->setVisible(false);
    m_stopAction->setEnabled(false);
}

bool LiveController::isWriting() const
{
    return m_live && m_live->isFollowing() && m_live->status().writer != TraceFollower::Writer::Stopped
           && m_live->status().writer != TraceFollower::Writer::Finished;
}

QString LiveController::stopRun()
{
    if (!m_live || !m_live->isFollowing() || m_live->status().writer != TraceFollower::Writer::Writing)
        return tr("No run is being followed.");
    const std::optional<long> pid = m_live->status().writerPid;
    if (!pid)
        return tr("The run writing %1 is on another machine: stop it there.").arg(m_live->path());
    if (::kill(static_cast<pid_t>(*pid), SIGTERM) != 0)
        return tr("Could not stop process %1: %2").arg(*pid).arg(QString::fromLocal8Bit(std::strerror(errno)));
    m_stopAction->setEnabled(false);
    m_status->showMessage(tr("Asked process %1 to stop; what it committed stays shown.").arg(*pid));
    return {};
}

void LiveController::showStatus(const LiveStatus &status)
{
    m_stopAction->setEnabled(status.writer == TraceFollower::Writer::Writing && status.writerPid);
    m_stopAction->setToolTip(status.writerPid ? tr("Stop process %1, which writes the followed trace").arg(*status.writerPid)
                                              : tr("The run is written on another machine"));
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
        m_badge->setVisible(false);
        break;
    case TraceFollower::Writer::Stopped:
        m_badge->setText(tr("Writer stopped"));
        m_badge->setToolTip(tr("%1. What it committed is shown; nothing more will come.").arg(status.writerText));
        m_badge->setStyleSheet(badgeStyle("#b35c00"));
        break;
    }
    m_status->showMessage(status.text());
    Q_EMIT changed();
}

} // namespace peaklens::gui
