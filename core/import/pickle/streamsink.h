// SPDX-License-Identifier: Apache-2.0
#pragma once
// What lets the unpickler hand the big lists of a pickle to a reader item by item or batch
// by batch, so that their items are read as they are decoded and released, rather than kept
// in a Document.

#include "core/error.h"
#include "value.h"

#include <algorithm>
#include <optional>
#include <span>

namespace peaklens::pickle {

// A pickle laid out in a way a one-pass read cannot follow (a list read as a device's trace
// that ends up elsewhere, a released part referred to again): whoever streamed it reads
// the whole document instead.
class OnePassError : public ImportError
{
public:
    OnePassError(const std::string &path, const std::string &problem, std::optional<std::uint64_t> byteOffset = std::nullopt)
        : ImportError(path, "cannot be read in one pass: " + problem + ".", byteOffset)
    {
    }
};

// The unpickler's stack as a sink sees it when a list is about to grow: values bottom first,
// where the open MARKs are (each the position of the first value after it), and how far
// into its input the unpickler is.
struct StackView
{
    std::span<const Value> values;
    std::span<const std::size_t> marks; // ascending
    std::size_t bytesRead = 0;
    std::size_t bytesTotal = 0;

    bool hasMarkAt(std::size_t position) const { return std::binary_search(marks.begin(), marks.end(), position); }
    // Whether a MARK is open anywhere in [from, to].
    bool hasMarkWithin(std::size_t from, std::size_t to) const
    {
        const auto it = std::lower_bound(marks.begin(), marks.end(), from);
        return it != marks.end() && *it <= to;
    }
};

class StreamSink
{
public:
    virtual ~StreamSink() = default;

    // Before `items` join the list at stack position `target` (APPEND or APPENDS): true when
    // the sink has read them instead, so that the list stays without them. Errors it throws
    // are ImportErrors; the unpickler adds the byte offset.
    virtual bool takeItems(const Document &document, const StackView &stack, std::size_t target,
                           std::span<const Value> items) = 0;

    // Before a MARK opens a batch for the list at stack position `target`: true when the sink
    // reads that list's items as they are decoded (takeEntry), dicts of plain values that
    // are then never made into containers at all. An item the sink cannot read that way goes
    // to takeItems as usual, and so does the rest of its batch.
    virtual bool takesEntriesOf(const Document &document, const StackView &stack, std::size_t target) = 0;
    // One item of that list: its keys and values in turn (as strings, numbers, stand-ins or
    // containers made before). Errors as for takeItems.
    virtual void takeEntry(const Document &document, std::span<const Value> pairs) = 0;

    // After a batch was taken, for each container made since its MARK that the memo still
    // names: what the memo keeps instead (a Frame, Frames or Released stand-in).
    virtual Value standIn(const Value &container) const = 0;
    // The containers from `first` on are gone; ids from there on will be reused.
    virtual void released(std::size_t first) = 0;
};

} // namespace peaklens::pickle
