// SPDX-License-Identifier: Apache-2.0
#pragma once
// A folder given where traces are expected stands for the traces in it: the one file per
// rank or process that `peaklens-cli record --out DIR` leaves there.

#include <string>
#include <vector>

namespace peaklens {

// `paths` with each folder replaced by its *.peaklens files, sorted by name; a folder
// holding none throws FileError naming it. A folder on another machine (ssh://HOST/DIR)
// is listed there (listRemoteFolder).
std::vector<std::string> expandTraceFolders(const std::vector<std::string> &paths);

} // namespace peaklens
