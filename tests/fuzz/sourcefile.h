// SPDX-License-Identifier: Apache-2.0
#pragma once
// Fixtures the fuzzers start from, read from the source tree once: a fuzzer that cannot
// find its seed stops at once rather than fuzzing nothing.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

// `relativePath` inside the source tree (PEAKLENS_SOURCE_DIR, set by tests/fuzz/CMakeLists.txt).
inline std::string sourcePath(const std::string &relativePath)
{
    return std::string(PEAKLENS_SOURCE_DIR) + "/" + relativePath;
}

inline std::vector<unsigned char> readSourceFile(const std::string &relativePath)
{
    std::ifstream file(sourcePath(relativePath), std::ios::binary);
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (bytes.empty()) {
        std::fprintf(stderr, "cannot read the fixture %s\n", sourcePath(relativePath).c_str());
        std::abort();
    }
    return bytes;
}
