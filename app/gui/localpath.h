// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// File names are bytes; QString is text. A name that is not valid UTF-8 (a Latin-1 name
// from an old archive) would lose its bytes in Qt's conversion and could not be opened.
// These two keep them: each byte that is not part of valid UTF-8 travels as one lone
// surrogate U+DC80..U+DCFF inside the QString, and comes back as the same byte.

#include <QString>

#include <string>

namespace peaklens::gui {

// Bytes of a file name (argv, a path from core) to the app's QString, losing nothing.
QString fromLocalPath(const std::string &bytes);
// And back, for opening or writing the file.
std::string localPath(const QString &path);

} // namespace peaklens::gui
