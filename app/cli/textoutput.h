// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain-text tables for the terminal: columns padded to their widest cell.

#include <cstdint>
#include <string>
#include <vector>

#include "core/trace/units.h"

namespace peaklens::cli {

class TextTable
{
public:
    // An all-empty header is not printed.
    explicit TextTable(std::vector<std::string> header, std::vector<bool> rightAligned = {});
    void addRow(std::vector<std::string> cells);
    std::string toString(const std::string &indent = "  ") const;

private:
    std::vector<std::vector<std::string>> m_rows;
    std::vector<bool> m_rightAligned;
};

std::string percent(double part, double whole);

} // namespace peaklens::cli
