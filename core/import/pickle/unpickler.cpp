// SPDX-License-Identifier: Apache-2.0
#include "unpickler.h"

#include "bytereader.h"
#include "core/error.h"
#include "core/trace/loadbudget.h"
#include "memo.h"
#include "opcodes.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace peaklens::pickle {

namespace {

// Memo indices far beyond what has been stored are damage, not data.
constexpr std::uint64_t kMaxMemoGap = 1u << 20;
// Trace entries have a dozen keys at most.
constexpr std::size_t kMaxDirectPairs = 256;

// The unpickler's stack: pushing, its hottest operation, is one comparison and one store.
class ValueStack
{
public:
    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    Value &back() { return m_values[m_size - 1]; }
    Value &operator[](std::size_t position) { return m_values[position]; }
    std::span<Value> view() { return {m_values.data(), m_size}; }
    void push_back(Value value) // by value: it may be one of ours, and growing moves them
    {
        emplace() = value;
    }
    // A new value on top, to be written in place.
    Value &emplace()
    {
        if (m_size == m_values.size()) [[unlikely]]
            grow();
        return m_values[m_size++];
    }
    void pop_back() { --m_size; }
    void shrink(std::size_t size) { m_size = size; }

private:
    [[gnu::noinline]] void grow()
    {
        const std::size_t more = std::max<std::size_t>(64, m_values.size());
        LoadBudget::charge(more * sizeof(Value), "the pickle's stack"); // a byte of pickle pushes 16
        m_values.resize(m_values.size() + more);
    }

    std::vector<Value> m_values;
    std::size_t m_size = 0;
};

class Unpickler
{
public:
    Unpickler(Document &document, const std::string &path, const Progress &progress, StreamSink *sink)
        : m_doc(document)
        , m_path(path)
        , m_progress(progress)
        , m_sink(sink)
        , m_memo(sink != nullptr)
        , m_in(document.bytes.data(), document.bytes.size(), path)
    {
    }

    void run()
    {
        // Every value takes at least two bytes of pickle, most far more; a sink keeps the
        // document small.
        if (!m_sink)
            m_doc.reserveValues(m_in.size() / 2);
        while (true) {
            countOpcodes(1);
            const unsigned char op = m_in.opcode();
            if (op == STOP)
                break;
            execute(op);
        }
        if (m_stack.size() != 1 || !m_marks.empty())
            fail("ends with " + std::to_string(m_stack.size()) + " values on its stack instead of one");
        if (m_stack.back().isStandIn())
            throw OnePassError(m_path, "it ends with a value read and released before", m_in.opcodeStart());
        m_doc.root = m_stack.back();
        m_doc.trailingBytes = m_in.size() - m_in.position();
        m_doc.seal();
    }

private:
    [[noreturn]] void fail(const std::string &problem) const { m_in.fail(problem); }

    [[gnu::always_inline]] void countOpcodes(std::uint64_t count)
    {
        const std::uint64_t before = m_opcodes;
        m_opcodes += count;
        if ((before ^ m_opcodes) >> 20) [[unlikely]] // another million
            m_progress.tick(m_in.size() ? static_cast<double>(m_in.position()) / static_cast<double>(m_in.size()) : 1.0);
    }

    [[gnu::always_inline]] void push(const Value &value) { m_stack.push_back(value); }

    Value pop()
    {
        if (m_stack.size() <= stackFloor())
            fail("takes a value from an empty stack");
        Value value = m_stack.back();
        m_stack.pop_back();
        return value;
    }

    Value &top()
    {
        if (m_stack.size() <= stackFloor())
            fail("uses a value from an empty stack");
        return m_stack.back();
    }

    std::size_t stackFloor() const { return m_marks.empty() ? 0 : m_marks.back(); }

    // What was made since a MARK: the document and memo as they were, and the oldest
    // container that grew since (if older than the mark, nothing made since may be released).
    struct Region
    {
        Document::Watermark arena;
        Memo::Mark memo;
        std::uint32_t oldestGrown = UINT32_MAX;
    };

    void pushMark()
    {
        if (m_marks.size() == m_marks.capacity()) // a byte of pickle opens a MARK of 64
            LoadBudget::charge(std::max<std::size_t>(64, m_marks.size()) * (sizeof(std::size_t) + sizeof(Region)),
                               "the pickle's marks");
        m_marks.push_back(m_stack.size());
        m_regions.push_back(Region{m_doc.watermark(), m_memo.mark()});
    }

    // Pops the last MARK; the values above it stay for the caller to take.
    Region popMark()
    {
        if (m_marks.empty())
            fail("has no MARK where one is needed");
        m_marks.pop_back();
        const Region region = m_regions.back();
        m_regions.pop_back();
        if (!m_regions.empty())
            m_regions.back().oldestGrown = std::min(m_regions.back().oldestGrown, region.oldestGrown);
        return region;
    }

    Value newContainer(Kind kind, std::span<const Value> items = {})
    {
        try {
            const Value container = m_doc.newContainer(kind);
            m_doc.append(container, items);
            return container;
        } catch (const Error &error) {
            fail(std::string("is too large: ") + error.what());
        }
    }

    void appendTo(const Value &container, Kind kind, const char *what, std::span<const Value> items)
    {
        if (container.isStandIn())
            throw OnePassError(m_path, "it " + std::string(what) + " a container read and released before", m_in.opcodeStart());
        if (container.kind != kind)
            fail(std::string(what) + " something that is not a " + (kind == Kind::List ? "list" : "dict"));
        if (!m_regions.empty())
            m_regions.back().oldestGrown = std::min(m_regions.back().oldestGrown, container.container);
        try {
            m_doc.append(container, items);
        } catch (const Error &error) {
            fail(std::string("is too large: ") + error.what());
        }
    }

    // Stores the value on top of the stack.
    void memoPut(std::uint64_t index)
    {
        if (index > m_memo.size() && index - m_memo.size() > kMaxMemoGap)
            fail("stores memo entry " + std::to_string(index) + " far out of sequence");
        if (!m_memo.put(index, top()))
            fail("is too large: its memo holds more than PeakLens can load");
    }

    [[gnu::always_inline]] void memoGet(std::uint64_t index)
    {
        Value value;
        if (!m_memo.get(index, value)) [[unlikely]]
            fail("refers to memo entry " + std::to_string(index) + ", which was never stored");
        push(value);
    }

    // Errors a sink throws name the byte too.
    template<typename Call>
    auto callSink(Call call)
    {
        try {
            return call();
        } catch (const OnePassError &) {
            throw;
        } catch (const ImportError &error) {
            if (error.byteOffset())
                throw;
            throw ImportError(m_path, error.problem(), m_in.opcodeStart());
        }
    }

    // Offers the items for the list at stack position `target` to the sink; true when taken.
    bool takenBySink(std::size_t target, std::span<const Value> items)
    {
        if (!m_sink || m_stack[target].kind != Kind::List)
            return false;
        return callSink([&] { return m_sink->takeItems(m_doc, stackView(), target, items); });
    }

    StackView stackView() { return StackView{m_stack.view(), m_marks, m_in.position(), m_in.size()}; }

    // After the sink took a batch: what was made for it since its MARK goes, the memo keeping
    // the sink's stand-ins for what it names. Kept whole when something older grew to hold
    // part of it.
    void releaseSince(const Region &region)
    {
        const std::size_t first = region.arena.containers;
        if (region.oldestGrown < first || m_doc.containerCount() == first)
            return;
        m_memo.release(region.memo, first, [this](const Value &container) { return m_sink->standIn(container); });
        m_sink->released(first);
        m_doc.release(region.arena);
    }

    // Just after a MARK before the items of a list the sink reads as they come: reads the
    // items straight from the bytes, each dict of plain values handed over as its pairs, with
    // nothing pushed and no container made (the memo names each such dict as released). True
    // when it read through the batch's APPENDS; false when it stopped before an item it cannot
    // read so, for the usual reading to take it and the rest of the batch.
    bool readItemsDirectly()
    {
        while (true) {
            const std::size_t itemStart = m_in.position();
            const Memo::Mark memo = m_memo.mark();
            bool read = false;
            try {
                const unsigned char op = nextOpcode();
                if (op == APPENDS) {
                    countOpcodes(1);
                    return true;
                }
                read = readDictDirectly(op);
            } catch (const ImportError &) {
                read = false; // the usual reading says what is wrong, where
            }
            if (!read) {
                m_in.rewind(itemStart);
                m_memo.rollBack(memo);
                return false;
            }
            callSink([&] { m_sink->takeEntry(m_doc, m_pairs); });
        }
    }

    // FRAME (protocol 4 and later) falls between any two opcodes: a hint, read past.
    [[gnu::always_inline]] unsigned char nextOpcode()
    {
        unsigned char op = m_in.opcode();
        while (op == FRAME)
            [[unlikely]]
            {
                m_in.read(8);
                op = m_in.opcode();
            }
        return op;
    }
    [[gnu::always_inline]] unsigned char peekOpcode()
    {
        while (m_in.peek() == FRAME)
            [[unlikely]]
            {
                m_in.opcode();
                m_in.read(8);
            }
        return m_in.peek();
    }

    // EMPTY_DICT, its memo entry, MARK, plain keys and values, SETITEMS; false at anything else.
    bool readDictDirectly(unsigned char op)
    {
        if (op != EMPTY_DICT)
            return false;
        std::uint64_t opcodes = 2;
        op = nextOpcode();
        if (isMemoPut(op)) {
            if (!memoPutNext(op, Value::standIn(Kind::Released)))
                return false;
            op = nextOpcode();
            ++opcodes;
        }
        if (op != MARK)
            return false; // an empty dict, or one of a single item
        m_pairs.clear();
        while ((op = nextOpcode()) != SETITEMS) {
            const std::size_t at = m_pairs.size();
            if (at >= 2 * kMaxDirectPairs)
                return false; // not a trace entry: the usual reading, charged to the load
            // Decoded in place: a value copied whole right after being written in halves
            // would wait for the stores to land.
            m_pairs.resize(at + 2);
            if (!readPlainValue(op, m_pairs[at]) || !readPlainValue(nextOpcode(), m_pairs[at + 1]))
                return false;
            opcodes += 2;
        }
        countOpcodes(opcodes);
        return true;
    }

    // A scalar or a memo entry, and the memo entry it may be stored in next.
    [[gnu::always_inline]] bool readPlainValue(unsigned char op, Value &value)
    {
        if (op == BINGET || op == LONG_BINGET) {
            const std::uint64_t index =
                op == BINGET ? static_cast<unsigned char>(*m_in.read(1)) : m_in.readLittleEndian<std::uint32_t>();
            if (!m_memo.get(index, value))
                return false;
        } else if (!m_in.scalar(op, value)) {
            return false;
        }
        return !isMemoPut(peekOpcode()) || memoPutNext(m_in.opcode(), value);
    }

    static bool isMemoPut(unsigned char op) { return op == MEMOIZE || op == BINPUT || op == LONG_BINPUT; }

    // Stores `value` if the opcode names the memo's next entry, so that rolling back undoes it.
    bool memoPutNext(unsigned char op, const Value &value)
    {
        const std::uint64_t index = op == MEMOIZE  ? m_memo.size()
                                    : op == BINPUT ? static_cast<unsigned char>(*m_in.read(1))
                                                   : m_in.readLittleEndian<std::uint32_t>();
        return index == m_memo.size() && m_memo.put(index, value);
    }

    [[noreturn]] void refuse(const char *opcode)
    {
        fail(std::string("asks to run Python code (") + opcode
             + "), which PeakLens never does: memory snapshots hold only plain dicts, lists and numbers");
    }

    void execute(unsigned char op)
    {
        if (m_in.scalar(op, m_stack.emplace())) // decoded in place
            return;
        m_stack.pop_back();
        switch (op) {
        case PROTO: {
            const auto version = static_cast<unsigned char>(*m_in.read(1));
            if (version > 5)
                fail("uses pickle protocol " + std::to_string(version) + ", newer than the 5 PeakLens knows");
            break;
        }
        case FRAME:
            m_in.read(8); // frame length: a hint for buffering, nothing to decode
            break;
        case MARK:
            if (m_sink && !m_stack.empty() && m_stack.back().kind == Kind::List
                && callSink([&] { return m_sink->takesEntriesOf(m_doc, stackView(), m_stack.size() - 1); })
                && readItemsDirectly())
                break;
            pushMark();
            break;
        case POP:
            if (!m_stack.empty() && m_stack.size() > stackFloor())
                m_stack.pop_back();
            else
                popMark(); // POP on a mark discards it
            break;
        case POP_MARK: {
            const std::size_t mark = stackFloor();
            popMark();
            m_stack.shrink(mark);
            break;
        }
        case DUP:
            push(top());
            break;
        case EMPTY_DICT:
            push(newContainer(Kind::Dict));
            break;
        case EMPTY_LIST:
            push(newContainer(Kind::List));
            break;
        case EMPTY_TUPLE:
            push(newContainer(Kind::Tuple));
            break;
        case TUPLE1:
        case TUPLE2:
        case TUPLE3: {
            const std::size_t count = op - TUPLE1 + 1;
            if (m_stack.size() < stackFloor() + count)
                fail("builds a tuple from an empty stack");
            const Value tuple = newContainer(Kind::Tuple, m_stack.view().last(count));
            m_stack.shrink(m_stack.size() - count);
            push(tuple);
            break;
        }
        case TUPLE:
        case LIST:
        case DICT: {
            const std::size_t mark = stackFloor();
            popMark();
            if (op == DICT && (m_stack.size() - mark) % 2)
                fail("builds a dict from an odd number of values");
            const Value container = newContainer(op == TUPLE  ? Kind::Tuple
                                                 : op == LIST ? Kind::List
                                                              : Kind::Dict,
                                                 m_stack.view().subspan(mark));
            m_stack.shrink(mark);
            push(container);
            break;
        }
        case APPEND: {
            const Value value = pop();
            top(); // fails on an empty stack
            // Taken alone, without a MARK: what was made for it stays until the end.
            if (!takenBySink(m_stack.size() - 1, std::span(&value, 1)))
                appendTo(top(), Kind::List, "appends to", std::span(&value, 1));
            break;
        }
        case APPENDS: {
            const std::size_t mark = stackFloor();
            const Region region = popMark();
            if (mark == 0 || mark > m_stack.size())
                fail("appends to nothing");
            if (takenBySink(mark - 1, m_stack.view().subspan(mark))) {
                m_stack.shrink(mark);
                releaseSince(region);
                break;
            }
            appendTo(m_stack[mark - 1], Kind::List, "appends to", m_stack.view().subspan(mark));
            m_stack.shrink(mark);
            break;
        }
        case SETITEM: {
            const Value value = pop();
            const Value key = pop();
            const Value pair[] = {key, value};
            appendTo(top(), Kind::Dict, "sets an item of", pair);
            break;
        }
        case SETITEMS: {
            const std::size_t mark = stackFloor();
            popMark();
            if (mark == 0 || mark > m_stack.size())
                fail("sets items of nothing");
            if ((m_stack.size() - mark) % 2)
                fail("sets items from an odd number of values");
            appendTo(m_stack[mark - 1], Kind::Dict, "sets items of", m_stack.view().subspan(mark));
            m_stack.shrink(mark);
            break;
        }
        case MEMOIZE:
            memoPut(m_memo.size());
            break;
        case BINPUT:
            memoPut(static_cast<unsigned char>(*m_in.read(1)));
            break;
        case LONG_BINPUT:
            memoPut(m_in.readLittleEndian<std::uint32_t>());
            break;
        case PUT:
        case GET: {
            const std::string_view line = m_in.readLine();
            std::uint64_t index = 0;
            if (std::from_chars(line.data(), line.data() + line.size(), index).ptr != line.data() + line.size())
                fail("holds a memo index that is not a number");
            op == PUT ? memoPut(index) : memoGet(index);
            break;
        }
        case BINGET:
            memoGet(static_cast<unsigned char>(*m_in.read(1)));
            break;
        case LONG_BINGET:
            memoGet(m_in.readLittleEndian<std::uint32_t>());
            break;
        case GLOBAL:
            refuse("GLOBAL");
        case STACK_GLOBAL:
            refuse("STACK_GLOBAL");
        case REDUCE:
            refuse("REDUCE");
        case BUILD:
            refuse("BUILD");
        case INST:
            refuse("INST");
        case OBJ:
            refuse("OBJ");
        case NEWOBJ:
            refuse("NEWOBJ");
        case NEWOBJ_EX:
            refuse("NEWOBJ_EX");
        case PERSID:
            refuse("PERSID");
        case BINPERSID:
            refuse("BINPERSID");
        case EXT1:
        case EXT2:
        case EXT4:
            refuse("EXT");
        default: {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", op);
            fail(std::string("holds the opcode ") + hex + ", which plain data never needs");
        }
        }
    }

    Document &m_doc;
    const std::string &m_path;
    const Progress &m_progress;
    StreamSink *m_sink;
    Memo m_memo;
    ByteReader m_in;
    std::uint64_t m_opcodes = 0;
    ValueStack m_stack;
    std::vector<std::size_t> m_marks;
    std::vector<Region> m_regions; // one per open MARK
    std::vector<Value> m_pairs;    // of the dict read directly
};

} // namespace

void unpickle(Document &document, const std::string &path, const Progress &progress, StreamSink *sink)
{
    Unpickler(document, path, progress, sink).run();
}

bool looksLikePickle(std::string_view prefix)
{
    return prefix.size() >= 2 && static_cast<unsigned char>(prefix[0]) == PROTO && static_cast<unsigned char>(prefix[1]) >= 2
           && static_cast<unsigned char>(prefix[1]) <= 5;
}

} // namespace peaklens::pickle
