// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Whether the window may open modal dialogs: not on the offscreen platform, where the
// tests and --screenshot run and nobody could close one.

#include <QApplication>

namespace peaklens::gui {

inline bool showsDialogs()
{
    return QApplication::platformName() != QLatin1String("offscreen");
}

} // namespace peaklens::gui
