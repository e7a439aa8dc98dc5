// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The main window's menu bar, File, View and Run: each item does what the window's public
// interface offers (open, compare, export, stack by layer, rerun, …), nothing more.

#include "core/analysis/timelineseries.h"

#include <array>
#include <utility>

class QAction;

namespace peaklens::gui {

class MainWindow;
class RecentFiles;

// The items the window enables, checks or places elsewhere too.
struct WindowActions
{
    QAction *open;
    QAction *record;
    QAction *rerun;
    // View > Stack by category, layer, memory pool, stream: checkable, one checked.
    std::array<std::pair<QAction *, GroupBy>, 4> stackBy;
    QAction *loadWindow; // enabled while the document is a window of a bigger file
    RecentFiles *recent;
};

// Fills the window's menu bar. The items call the window only when chosen, so the window
// may build its panes after.
WindowActions addMenus(MainWindow &window);

} // namespace peaklens::gui
