// SPDX-License-Identifier: Apache-2.0
#pragma once
// Allocation sites: every call stack named by the first frame of the user's own code, so
// the top sites are distinct places in the user's program rather than the unwinder, the
// caching allocator and the dispatcher that every stack starts with. Stacks without user
// code are named by their first library or PyTorch Python frame, else by the operator
// and the autograd node that allocated ("aten::bmm in BmmBackward0"), else by their first
// frame that is not shared machinery, else by their outermost frame.

#include "core/trace/frameclassifier.h"
#include "core/trace/stacktable.h"

#include <cstdint>
#include <string>
#include <vector>

namespace peaklens {

enum class SiteKind : std::uint8_t {
    None,     // the empty stack
    User,     // a frame of the user's code
    Library,  // a Python frame of a library
    Torch,    // a Python frame of PyTorch
    Operator, // no Python frame: the operator (and autograd node) that allocated
    Other,    // the first frame that is not shared machinery
};

// "none", "user", "library", "torch", "operator", "other".
std::string_view siteKindName(SiteKind kind);

struct AllocationSite
{
    static constexpr std::uint32_t kNoFrame = UINT32_MAX;

    SiteKind kind = SiteKind::None;
    std::uint32_t frame = kNoFrame; // the frame that names the site
    std::uint32_t node = kNoFrame;  // Operator sites: the autograd node's frame, if any

    bool operator==(const AllocationSite &) const = default;
};

class AllocationSites
{
public:
    static constexpr std::uint32_t kNoSite = 0; // the site of the empty stack

    explicit AllocationSites(const StackTable &stacks);

    std::uint32_t siteOf(std::uint32_t stack) const;
    const AllocationSite &site(std::uint32_t id) const { return m_sites.at(id); }
    std::size_t size() const { return m_sites.size(); }

    // "forward (model.py:39)", "aten::bmm in BmmBackward0", "(no stack)".
    std::string label(std::uint32_t site) const;
    // The site's naming frame with its full path: "forward (/home/me/model.py:39)".
    std::string location(std::uint32_t site) const;
    // Who called the site, within `stack`: the next user frames outward, as labels.
    std::vector<std::string> callers(std::uint32_t stack, std::size_t most) const;

    FrameKind kindOfFrame(std::uint32_t frame) const { return m_frameKinds.at(frame); }
    const StackTable &stacks() const { return m_stacks; }

private:
    std::uint32_t intern(const AllocationSite &site);

    const StackTable &m_stacks;
    std::vector<FrameKind> m_frameKinds;
    std::vector<AllocationSite> m_sites;
    std::vector<std::uint32_t> m_siteOfStack;
    std::vector<std::uint32_t> m_siteFrameOfStack; // the stack node whose frame names its site
};

// "function (file:line)", the file by its base name or in full.
std::string frameLabel(const Frame &frame, bool fullPath = false);

struct StackLine
{
    FrameKind kind;
    std::string text; // the frame with its full path
};
// A call stack innermost first, each frame with its kind. Without `machinery`, frames of
// the allocator, dispatcher, interpreter and system are left out.
std::vector<StackLine> describeStack(const StackTable &stacks, const AllocationSites &sites, std::uint32_t stack, bool machinery);

} // namespace peaklens
