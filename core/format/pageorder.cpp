// SPDX-License-Identifier: Apache-2.0
#include "pageorder.h"

#include "byteorder.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <span>
#include <tuple>

namespace peaklens {

namespace {

// The b-tree page types of SQLite's file format.
constexpr std::uint8_t kIndexInterior = 2;
constexpr std::uint8_t kTableInterior = 5;
constexpr std::uint8_t kIndexLeaf = 10;
constexpr std::uint8_t kTableLeaf = 13;
constexpr std::size_t kSchemaHeader = 100; // page 1's b-tree header starts after the file's header

// SQLite's variable-length integer at `at`, which moves past it; false where it runs past `end`.
bool readVarint(const std::uint8_t *&at, const std::uint8_t *end, std::uint64_t &value)
{
    value = 0;
    for (int i = 0; i < 9; ++i) {
        if (at >= end)
            return false;
        const std::uint8_t byte = *at++;
        if (i == 8) {
            value = (value << 8) | byte;
            return true;
        }
        value = (value << 7) | (byte & 0x7f);
        if ((byte & 0x80) == 0)
            return true;
    }
    return true;
}

std::vector<ByteRun> inFileOrder(std::uint64_t size)
{
    std::vector<ByteRun> runs;
    for (std::uint64_t offset = 0; offset < size; offset += PageOrder::kMaxRunBytes)
        runs.push_back({offset, std::min(PageOrder::kMaxRunBytes, size - offset)});
    return runs;
}

// What one pass over the file learns of its pages: each b-tree page's children and the
// first overflow page of each of its cells, and every other page's first four bytes
// (an overflow page's next page).
class Layout
{
public:
    struct TreePage
    {
        std::vector<std::uint32_t> children;
        std::vector<std::uint32_t> overflow;
    };

    Layout(std::uint32_t pageSize, std::uint32_t usable, std::uint32_t pages)
        : m_pageSize(pageSize)
        , m_usable(usable)
        , m_pages(pages)
        , m_next(std::size_t(pages) + 1, 0)
        , m_tree(std::size_t(pages) + 1, -1)
    {
    }

    std::uint32_t pages() const { return m_pages; }
    std::uint32_t pageSize() const { return m_pageSize; }
    bool valid(std::uint32_t page) const { return page >= 1 && page <= m_pages; }
    const TreePage *tree(std::uint32_t page) const
    {
        return valid(page) && m_tree[page] >= 0 ? &m_trees[static_cast<std::size_t>(m_tree[page])] : nullptr;
    }
    std::uint32_t next(std::uint32_t page) const { return valid(page) ? m_next[page] : 0; }

    void take(std::uint32_t number, std::span<const std::uint8_t> page)
    {
        const std::size_t header = number == 1 ? kSchemaHeader : 0;
        const auto bytes = std::as_bytes(page);
        if (page.size() >= 4)
            m_next[number] = bigEndian32(bytes, 0);
        if (page.size() < header + 12)
            return;
        const std::uint8_t type = page[header];
        if (type != kIndexInterior && type != kTableInterior && type != kIndexLeaf && type != kTableLeaf)
            return;
        const bool interior = type == kIndexInterior || type == kTableInterior;
        const std::size_t pointers = header + (interior ? 12 : 8);
        const std::size_t usable = std::min<std::size_t>(page.size(), m_usable);
        const std::uint8_t *end = page.data() + usable;
        TreePage parsed;
        const std::uint32_t cells = bigEndian16(bytes, header + 3);
        for (std::uint32_t i = 0; i < cells && pointers + 2 * i + 2 <= usable; ++i) {
            const std::size_t at = bigEndian16(bytes, pointers + 2 * i);
            if (at < pointers || at >= usable)
                continue;
            const std::uint8_t *cell = page.data() + at;
            if (interior) {
                if (end - cell < 4)
                    continue;
                parsed.children.push_back(bigEndian32(bytes, at));
                cell += 4;
                if (type == kTableInterior)
                    continue; // a key alone, no payload
            }
            std::uint64_t payload = 0, rowid = 0;
            if (!readVarint(cell, end, payload) || (type == kTableLeaf && !readVarint(cell, end, rowid)))
                continue;
            const std::uint64_t local = localBytes(payload, type == kTableLeaf);
            if (local < payload && static_cast<std::uint64_t>(end - cell) >= local + 4)
                parsed.overflow.push_back(bigEndian32(bytes, static_cast<std::size_t>(cell - page.data() + local)));
        }
        if (interior)
            parsed.children.push_back(bigEndian32(bytes, header + 8));
        m_tree[number] = static_cast<std::int32_t>(m_trees.size());
        m_trees.push_back(std::move(parsed));
    }

private:
    // How much of a cell's payload of `payload` bytes its page holds (SQLite's file
    // format, "Cell Payload Overflow Pages"); the rest is in overflow pages.
    std::uint64_t localBytes(std::uint64_t payload, bool tableLeaf) const
    {
        const std::uint64_t usable = m_usable;
        const std::uint64_t most = tableLeaf ? usable - 35 : (usable - 12) * 64 / 255 - 23;
        const std::uint64_t least = (usable - 12) * 32 / 255 - 23;
        if (payload <= most)
            return payload;
        const std::uint64_t fitted = least + (payload - least) % (usable - 4);
        return fitted <= most ? fitted : least;
    }

    std::uint32_t m_pageSize;
    std::uint32_t m_usable;
    std::uint32_t m_pages;
    std::vector<std::uint32_t> m_next;
    std::vector<std::int32_t> m_tree; // index into m_trees, -1 for other pages
    std::vector<TreePage> m_trees;
};

// A tree's own pages (root first, each parent before its children, children in key
// order), then the overflow pages of its cells, chain by chain in key order.
struct Walk
{
    std::uint32_t root = 0;
    std::vector<std::uint32_t> pages;
};

Walk walkTree(const Layout &layout, std::uint32_t root, std::vector<bool> &walked)
{
    Walk walk{root, {}};
    std::vector<std::uint32_t> heads;
    std::vector<std::uint32_t> stack{root};
    while (!stack.empty()) {
        const std::uint32_t page = stack.back();
        stack.pop_back();
        const Layout::TreePage *tree = layout.tree(page);
        if (!tree || walked[page])
            continue;
        walked[page] = true;
        walk.pages.push_back(page);
        heads.insert(heads.end(), tree->overflow.begin(), tree->overflow.end());
        stack.insert(stack.end(), tree->children.rbegin(), tree->children.rend());
    }
    for (std::uint32_t page : heads) {
        while (layout.valid(page) && !walked[page] && !layout.tree(page)) {
            walked[page] = true;
            walk.pages.push_back(page);
            page = layout.next(page);
        }
    }
    return walk;
}

std::vector<ByteRun> runsOf(const std::vector<std::uint32_t> &pages, std::uint32_t pageSize, std::uint64_t size)
{
    std::vector<ByteRun> runs;
    for (const std::uint32_t page : pages) {
        const std::uint64_t offset = std::uint64_t(page - 1) * pageSize;
        const std::uint64_t length = std::min<std::uint64_t>(pageSize, size - offset);
        if (!runs.empty() && runs.back().offset + runs.back().length == offset
            && runs.back().length + length <= PageOrder::kMaxRunBytes)
            runs.back().length += length;
        else
            runs.push_back({offset, length});
    }
    return runs;
}

} // namespace

std::vector<ByteRun> PageOrder::of(int fd, std::uint64_t size)
{
    std::array<std::byte, kSchemaHeader> header{};
    if (size < kSchemaHeader || ::pread(fd, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size())
        || std::memcmp(header.data(), "SQLite format 3", 16) != 0)
        return inFileOrder(size);
    const std::uint32_t pageSize = bigEndian16(header, 16) == 1 ? 65536 : bigEndian16(header, 16);
    const auto reserved = std::to_integer<std::uint32_t>(header[20]);
    if (pageSize < 512 || (pageSize & (pageSize - 1)) != 0 || pageSize - reserved < 480)
        return inFileOrder(size);
    const std::uint64_t pageCount = (size + pageSize - 1) / pageSize;
    if (pageCount > UINT32_MAX)
        return inFileOrder(size);
    Layout layout(pageSize, pageSize - reserved, static_cast<std::uint32_t>(pageCount));

    // One pass over the file, a few megabytes at a time.
    std::vector<std::uint8_t> buffer(std::max<std::size_t>(pageSize, std::size_t(4) << 20));
    for (std::uint64_t offset = 0; offset < size;) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), size - offset));
        const ssize_t got = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return inFileOrder(size);
        const auto whole = static_cast<std::size_t>(got) - static_cast<std::size_t>(got) % pageSize;
        const std::size_t taken = whole > 0 ? whole : static_cast<std::size_t>(got); // the last page may be short
        for (std::size_t at = 0; at < taken; at += pageSize) {
            const auto number = static_cast<std::uint32_t>((offset + at) / pageSize + 1);
            layout.take(number, std::span(buffer.data() + at, std::min<std::size_t>(pageSize, taken - at)));
        }
        offset += taken;
    }

    // The roots: tree pages no other tree page points to; the schema's is page 1.
    std::vector<bool> child(std::size_t(layout.pages()) + 1, false);
    for (std::uint32_t page = 1; page <= layout.pages(); ++page) {
        if (const Layout::TreePage *tree = layout.tree(page)) {
            for (const std::uint32_t below : tree->children)
                if (layout.valid(below))
                    child[below] = true;
        }
    }
    std::vector<bool> walked(std::size_t(layout.pages()) + 1, false);
    std::vector<Walk> walks;
    for (std::uint32_t page = 1; page <= layout.pages(); ++page) {
        if (layout.tree(page) && (!child[page] || page == 1))
            walks.push_back(walkTree(layout, page, walked));
    }
    std::stable_sort(walks.begin(), walks.end(), [](const Walk &a, const Walk &b) {
        return std::make_tuple(a.root != 1, a.pages.size()) < std::make_tuple(b.root != 1, b.pages.size());
    });

    std::vector<std::uint32_t> order;
    order.reserve(layout.pages());
    std::vector<bool> placed(std::size_t(layout.pages()) + 1, false);
    const auto place = [&](std::uint32_t page) {
        if (layout.valid(page) && !placed[page]) {
            placed[page] = true;
            order.push_back(page);
        }
    };
    for (std::uint32_t page = 1; std::uint64_t(page - 1) * pageSize < std::min(size, kHeadBytes); ++page)
        place(page);
    for (const Walk &walk : walks)
        for (const std::uint32_t page : walk.pages)
            place(page);
    for (std::uint32_t page = 1; page <= layout.pages(); ++page)
        place(page);
    return runsOf(order, pageSize, size);
}

} // namespace peaklens
