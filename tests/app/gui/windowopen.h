// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Opening a trace in a window under test, and waiting for it.

#include "mainwindow.h"

#include <QSignalSpy>
#include <QTest>

namespace peaklens::test {

// Opens `path` in `window`; true once it is shown, false when it failed or a minute passed.
inline bool openInWindow(gui::MainWindow &window, const QString &path)
{
    QSignalSpy loaded(&window, &gui::MainWindow::documentLoaded);
    QSignalSpy failed(&window, &gui::MainWindow::loadFailed);
    window.openFile(path);
    return QTest::qWaitFor([&] { return loaded.count() + failed.count() > 0; }, 60000) && loaded.count() == 1;
}

} // namespace peaklens::test
