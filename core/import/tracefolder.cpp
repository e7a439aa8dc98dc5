// SPDX-License-Identifier: Apache-2.0
#include "tracefolder.h"

#include "core/error.h"
#include "core/format/remotefile.h"

#include <algorithm>
#include <filesystem>

namespace peaklens {

std::vector<std::string> expandTraceFolders(const std::vector<std::string> &paths)
{
    std::vector<std::string> expanded;
    for (const std::string &path : paths) {
        if (const auto remote = parseRemotePath(path)) {
            const auto traces = listRemoteFolder(path, *remote);
            if (traces && traces->empty())
                throw FileError(path, "is a folder with no *.peaklens traces in it; open the folder `peaklens-cli record "
                                      "--out` wrote, or a trace file.");
            if (traces)
                expanded.insert(expanded.end(), traces->begin(), traces->end());
            else
                expanded.push_back(path);
            continue;
        }
        std::error_code ec;
        if (!std::filesystem::is_directory(path, ec)) {
            expanded.push_back(path);
            continue;
        }
        std::vector<std::string> traces;
        for (const auto &entry : std::filesystem::directory_iterator(path, ec)) {
            if (entry.path().extension() == ".peaklens" && entry.is_regular_file(ec))
                traces.push_back(entry.path().string());
        }
        if (ec)
            throw FileError(path, "cannot be listed: " + ec.message() + ".");
        if (traces.empty())
            throw FileError(path,
                            "is a folder with no *.peaklens traces in it; open the folder `peaklens-cli record --out` wrote, "
                            "or a trace file.");
        std::sort(traces.begin(), traces.end());
        expanded.insert(expanded.end(), traces.begin(), traces.end());
    }
    return expanded;
}

} // namespace peaklens
