// SPDX-License-Identifier: Apache-2.0
#pragma once
// The checks every reader makes before it looks inside a file.

#include <string>

namespace peaklens {

// Throws ImportError when the path does not exist, is not a regular file, or cannot be
// opened. Streams (pipes, FIFOs, devices) are read through InputFile instead.
void requireReadableFile(const std::string &path);

} // namespace peaklens
