// SPDX-License-Identifier: Apache-2.0
#include "textoutput.h"

#include <algorithm>
#include <cstdio>

namespace peaklens::cli {

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> rightAligned)
    : m_rightAligned(std::move(rightAligned))
{
    m_rightAligned.resize(header.size(), false);
    m_rows.push_back(std::move(header));
}

void TextTable::addRow(std::vector<std::string> cells)
{
    cells.resize(m_rows.front().size());
    m_rows.push_back(std::move(cells));
}

std::string TextTable::toString(const std::string &indent) const
{
    std::vector<std::size_t> widths(m_rows.front().size(), 0);
    for (const auto &row : m_rows) {
        for (std::size_t c = 0; c < row.size(); ++c)
            widths[c] = std::max(widths[c], row[c].size());
    }
    std::string out;
    const bool hasHeader =
        std::any_of(m_rows.front().begin(), m_rows.front().end(), [](const std::string &cell) { return !cell.empty(); });
    for (std::size_t r = hasHeader ? 0 : 1; r < m_rows.size(); ++r) {
        const auto &row = m_rows[r];
        std::string line = indent;
        for (std::size_t c = 0; c < row.size(); ++c) {
            const std::string padding(widths[c] - row[c].size(), ' ');
            line += m_rightAligned[c] ? padding + row[c] : row[c] + padding;
            if (c + 1 < row.size())
                line += "  ";
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string percent(double part, double whole)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f %%", whole > 0 ? 100.0 * part / whole : 0.0);
    return buffer;
}

} // namespace peaklens::cli
