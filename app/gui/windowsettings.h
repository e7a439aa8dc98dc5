// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the window keeps in QSettings from one session to the next: the files opened last,
// as the Open Recent menu, and the window's geometry and splitter sizes.

#include <QObject>

class QMainWindow;
class QMenu;

namespace peaklens::gui {

class RecentFiles final : public QObject
{
    Q_OBJECT

public:
    // Fills `menu` (and keeps it filled) with the files opened last, newest first.
    explicit RecentFiles(QMenu *menu);

    // Puts `path` first, once.
    void remember(const QString &path);

Q_SIGNALS:
    void chosen(const QString &path);

private:
    void rebuild();

    QMenu *m_menu;
};

// The geometry and the sizes of every named splitter, as the last window left them.
void restoreWindowState(QMainWindow &window);
void saveWindowState(const QMainWindow &window);

} // namespace peaklens::gui
