// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The open trace followed while its run writes it: the LiveFollow, the "Live" badge, the
// warning near the device's memory and the action that stops the writer. The window places
// the widgets and shows each grown document; this says how far the run is.

#include "livefollow.h"

#include <QObject>

#include <memory>

class QAction;
class QLabel;
class QStatusBar;
class QToolButton;
class QWidget;

namespace peaklens::gui {

class LiveController final : public QObject
{
    Q_OBJECT

public:
    // The badge, the button and the action are made as children of `parent`; messages go
    // to `status`.
    LiveController(QStatusBar *status, QWidget *parent);
    ~LiveController() override;

    void follow(const QString &path);
    void stop();
    // Asks the followed trace's writer to stop (SIGTERM to its process, on this machine).
    // Returns why it cannot, or empty once asked.
    QString stopRun();
    // The trace being followed, or null.
    LiveFollow *following() const { return m_live.get(); }
    // Whether the followed run may still write: what a rerun waits for.
    bool isWriting() const;

    QLabel *badge() const { return m_badge; }
    QToolButton *headroomButton() const { return m_headroomButton; }
    QAction *stopAction() const { return m_stopAction; }

Q_SIGNALS:
    // A document of the followed trace, grown (after its status is shown).
    void grown(const peaklens::gui::DocumentPtr &document);
    // The run's state changed (writing, stopped, finished): the rerun action follows it.
    void changed();
    void ended();
    // The headroom warning's toggles, clicked.
    void strategyChosen(const QString &strategy);

private:
    void showStatus(const LiveStatus &status);

    QStatusBar *m_status;
    QWidget *m_parent;
    std::unique_ptr<LiveFollow> m_live;
    QLabel *m_badge;
    QToolButton *m_headroomButton;
    QAction *m_stopAction;
};

} // namespace peaklens::gui
