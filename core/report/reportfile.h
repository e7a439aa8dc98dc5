#pragma once
// Writes a report next to the user's files without ever leaving half a file: a temporary
// file in the same folder, flushed, then renamed over the target.

#include <string>

namespace peaklens {

// Throws FileError naming the path when it cannot be written.
void writeFileAtomically(const std::string &path, const std::string &contents);

} // namespace peaklens
