#pragma once
// The checks every reader makes before it looks inside a file.

#include <string>

namespace peaklens {

// Throws ImportError when the path does not exist, is a directory, or cannot be opened.
void requireReadableFile(const std::string &path);

} // namespace peaklens
