#include "unpickler.h"

#include "core/error.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace peaklens::pickle {

namespace {

// Opcodes of pickle protocols 0 to 5 (Lib/pickletools.py documents them).
enum Opcode : unsigned char {
    MARK = '(', STOP = '.', POP = '0', POP_MARK = '1', DUP = '2', FLOAT = 'F', INT = 'I', BININT = 'J',
    BININT1 = 'K', LONG = 'L', BININT2 = 'M', NONE = 'N', PERSID = 'P', BINPERSID = 'Q', REDUCE = 'R',
    STRING = 'S', BINSTRING = 'T', SHORT_BINSTRING = 'U', UNICODE = 'V', BINUNICODE = 'X', APPEND = 'a',
    BUILD = 'b', GLOBAL = 'c', DICT = 'd', EMPTY_DICT = '}', APPENDS = 'e', GET = 'g', BINGET = 'h', INST = 'i',
    LONG_BINGET = 'j', LIST = 'l', EMPTY_LIST = ']', OBJ = 'o', PUT = 'p', BINPUT = 'q', LONG_BINPUT = 'r',
    SETITEM = 's', TUPLE = 't', EMPTY_TUPLE = ')', SETITEMS = 'u', BINFLOAT = 'G',
    PROTO = 0x80, NEWOBJ = 0x81, EXT1 = 0x82, EXT2 = 0x83, EXT4 = 0x84, TUPLE1 = 0x85, TUPLE2 = 0x86,
    TUPLE3 = 0x87, NEWTRUE = 0x88, NEWFALSE = 0x89, LONG1 = 0x8a, LONG4 = 0x8b,
    BINBYTES = 'B', SHORT_BINBYTES = 'C',
    SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d, BINBYTES8 = 0x8e, EMPTY_SET = 0x8f, ADDITEMS = 0x90,
    FROZENSET = 0x91, NEWOBJ_EX = 0x92, STACK_GLOBAL = 0x93, MEMOIZE = 0x94, FRAME = 0x95,
    BYTEARRAY8 = 0x96, NEXT_BUFFER = 0x97, READONLY_BUFFER = 0x98,
};

// Memo indices far beyond what has been stored are damage, not data.
constexpr std::uint64_t kMaxMemoGap = 1u << 20;

class Unpickler
{
public:
    Unpickler(Document &document, const std::string &path, const ImportProgress &progress)
        : m_doc(document)
        , m_path(path)
        , m_progress(progress)
        , m_data(document.bytes.data())
        , m_size(document.bytes.size())
    {
    }

    void run()
    {
        // Every value takes at least two bytes of pickle, most far more.
        m_doc.reserveValues(m_size / 2);
        while (true) {
            if ((++m_opcodes & 0xFFFFF) == 0)
                m_progress.tick(m_size ? static_cast<double>(m_pos) / static_cast<double>(m_size) : 1.0);
            m_opcodeStart = m_pos;
            const unsigned char op = static_cast<unsigned char>(read(1)[0]);
            if (op == STOP)
                break;
            execute(op);
        }
        if (m_stack.size() != 1 || !m_marks.empty())
            fail("ends with " + std::to_string(m_stack.size()) + " values on its stack instead of one");
        m_doc.root = m_stack.back();
        m_doc.trailingBytes = m_size - m_pos;
        m_doc.seal();
    }

private:
    [[noreturn]] void fail(const std::string &problem) const
    {
        throw ImportError(m_path, "is not a valid pickle: it " + problem, m_opcodeStart);
    }

    const char *read(std::size_t count)
    {
        if (count > m_size - m_pos)
            throw ImportError(m_path, "is truncated: the pickle ends in the middle of a value", m_opcodeStart);
        const char *at = m_data + m_pos;
        m_pos += count;
        return at;
    }

    template<typename T>
    T readLittleEndian()
    {
        T value;
        std::memcpy(&value, read(sizeof(T)), sizeof(T));
        return value;
    }

    std::string_view readLine()
    {
        const char *start = m_data + m_pos;
        const void *newline = std::memchr(start, '\n', m_size - m_pos);
        if (!newline)
            throw ImportError(m_path, "is truncated: the pickle ends in the middle of a value", m_opcodeStart);
        const auto length = static_cast<std::size_t>(static_cast<const char *>(newline) - start);
        m_pos += length + 1;
        return {start, length};
    }

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

    // Pops everything above the last MARK, and the mark.
    std::size_t popMark()
    {
        if (m_marks.empty())
            fail("has no MARK where one is needed");
        const std::size_t mark = m_marks.back();
        m_marks.pop_back();
        return mark;
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
        if (container.kind != kind)
            fail(std::string(what) + " something that is not a " + (kind == Kind::List ? "list" : "dict"));
        try {
            m_doc.append(container, items);
        } catch (const Error &error) {
            fail(std::string("is too large: ") + error.what());
        }
    }

    void memoPut(std::uint64_t index)
    {
        const Value value = top();
        if (index >= m_memo.size()) {
            if (index - m_memo.size() > kMaxMemoGap)
                fail("stores memo entry " + std::to_string(index) + " far out of sequence");
            m_memo.resize(index + 1);
            m_memoSet.resize(index + 1, 0);
        }
        m_memo[index] = value;
        m_memoSet[index] = 1;
    }

    void memoGet(std::uint64_t index)
    {
        if (index >= m_memo.size() || !m_memoSet[index])
            fail("refers to memo entry " + std::to_string(index) + ", which was never stored");
        m_stack.push_back(m_memo[index]);
    }

    void pushText(Kind kind, std::uint64_t length)
    {
        if (length > UINT32_MAX)
            fail("holds a string longer than 4 GiB");
        const char *text = read(static_cast<std::size_t>(length));
        m_stack.push_back(Value::fromText(kind, text, static_cast<std::uint32_t>(length)));
    }

    // Little-endian two's complement of any length, as LONG1 and LONG4 store it.
    void pushLong(std::size_t length)
    {
        const auto *bytes = reinterpret_cast<const unsigned char *>(read(length));
        if (length == 0) {
            m_stack.push_back(Value::fromInt(0));
            return;
        }
        const bool negative = bytes[length - 1] & 0x80;
        // Bytes above the eighth must only extend the sign (or be the 0 of a large unsigned).
        for (std::size_t i = 8; i < length; ++i) {
            if (bytes[i] != (negative ? 0xFF : 0x00))
                fail("holds an integer of " + std::to_string(length) + " bytes, larger than 64 bits");
        }
        std::uint64_t bits = 0;
        for (std::size_t i = 0; i < std::min<std::size_t>(length, 8); ++i)
            bits |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
        if (length < 8 && negative)
            bits |= ~std::uint64_t(0) << (8 * length);
        if (negative) {
            if (length > 8 && !(bits >> 63))
                fail("holds a negative integer below -2^63");
            m_stack.push_back(Value::fromInt(static_cast<std::int64_t>(bits)));
        } else {
            m_stack.push_back(Value::fromUInt(bits)); // 9 bytes carry addresses of 2^63 and above
        }
    }

    void pushDecimal(std::string_view line)
    {
        if (line.ends_with('L'))
            line.remove_suffix(1);
        if (line == "00" || line == "01") {
            m_stack.push_back(Value::boolean(line == "01"));
            return;
        }
        std::int64_t value = 0;
        auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
        if (ec != std::errc() || end != line.data() + line.size())
            fail("holds an integer that is not one");
        m_stack.push_back(Value::fromInt(value));
    }

    [[noreturn]] void refuse(const char *opcode)
    {
        fail(std::string("asks to run Python code (") + opcode
             + "), which PeakLens never does: memory snapshots hold only plain dicts, lists and numbers");
    }

    void execute(unsigned char op)
    {
        switch (op) {
        case PROTO: {
            const auto version = static_cast<unsigned char>(read(1)[0]);
            if (version > 5)
                fail("uses pickle protocol " + std::to_string(version) + ", newer than the 5 PeakLens knows");
            break;
        }
        case FRAME:
            read(8); // frame length: a hint for buffering, nothing to decode
            break;
        case MARK:
            m_marks.push_back(m_stack.size());
            break;
        case POP:
            if (!m_stack.empty() && m_stack.size() > stackFloor())
                m_stack.pop_back();
            else
                popMark(); // POP on a mark discards it
            break;
        case POP_MARK:
            m_stack.resize(popMark());
            break;
        case DUP:
            m_stack.push_back(top());
            break;
        case NONE:
            m_stack.push_back(Value::none());
            break;
        case NEWTRUE:
        case NEWFALSE:
            m_stack.push_back(Value::boolean(op == NEWTRUE));
            break;
        case BININT:
            m_stack.push_back(Value::fromInt(readLittleEndian<std::int32_t>()));
            break;
        case BININT1:
            m_stack.push_back(Value::fromInt(static_cast<unsigned char>(read(1)[0])));
            break;
        case BININT2:
            m_stack.push_back(Value::fromInt(readLittleEndian<std::uint16_t>()));
            break;
        case LONG1:
            pushLong(static_cast<unsigned char>(read(1)[0]));
            break;
        case LONG4: {
            const auto length = readLittleEndian<std::int32_t>();
            if (length < 0)
                fail("holds an integer of negative length");
            pushLong(static_cast<std::size_t>(length));
            break;
        }
        case INT:
        case LONG:
            pushDecimal(readLine());
            break;
        case BINFLOAT: {
            std::uint64_t bits = 0;
            const auto *bytes = reinterpret_cast<const unsigned char *>(read(8));
            for (int i = 0; i < 8; ++i)
                bits = bits << 8 | bytes[i]; // big-endian
            double value;
            std::memcpy(&value, &bits, sizeof value);
            m_stack.push_back(Value::fromFloat(value));
            break;
        }
        case FLOAT: {
            const std::string_view line = readLine();
            double value = 0;
            if (std::from_chars(line.data(), line.data() + line.size(), value).ec != std::errc())
                fail("holds a float that is not one");
            m_stack.push_back(Value::fromFloat(value));
            break;
        }
        case SHORT_BINUNICODE:
            pushText(Kind::String, static_cast<unsigned char>(read(1)[0]));
            break;
        case BINUNICODE:
            pushText(Kind::String, readLittleEndian<std::uint32_t>());
            break;
        case BINUNICODE8:
            pushText(Kind::String, readLittleEndian<std::uint64_t>());
            break;
        case SHORT_BINBYTES:
        case SHORT_BINSTRING:
            pushText(op == SHORT_BINBYTES ? Kind::Bytes : Kind::String, static_cast<unsigned char>(read(1)[0]));
            break;
        case BINBYTES:
        case BINSTRING:
            pushText(op == BINBYTES ? Kind::Bytes : Kind::String, readLittleEndian<std::uint32_t>());
            break;
        case BINBYTES8:
        case BYTEARRAY8:
            pushText(Kind::Bytes, readLittleEndian<std::uint64_t>());
            break;
        case EMPTY_DICT:
            m_stack.push_back(newContainer(Kind::Dict));
            break;
        case EMPTY_LIST:
            m_stack.push_back(newContainer(Kind::List));
            break;
        case EMPTY_TUPLE:
            m_stack.push_back(newContainer(Kind::Tuple));
            break;
        case TUPLE1:
        case TUPLE2:
        case TUPLE3: {
            const std::size_t count = op - TUPLE1 + 1;
            if (m_stack.size() < stackFloor() + count)
                fail("builds a tuple from an empty stack");
            const Value tuple = newContainer(Kind::Tuple, std::span(m_stack).last(count));
            m_stack.resize(m_stack.size() - count);
            m_stack.push_back(tuple);
            break;
        }
        case TUPLE:
        case LIST:
        case DICT: {
            const std::size_t mark = popMark();
            if (op == DICT && (m_stack.size() - mark) % 2)
                fail("builds a dict from an odd number of values");
            const Value container = newContainer(op == TUPLE ? Kind::Tuple : op == LIST ? Kind::List : Kind::Dict,
                                                 std::span(m_stack).subspan(mark));
            m_stack.resize(mark);
            m_stack.push_back(container);
            break;
        }
        case APPEND: {
            const Value value = pop();
            appendTo(top(), Kind::List, "appends to", std::span(&value, 1));
            break;
        }
        case APPENDS: {
            const std::size_t mark = popMark();
            if (mark == 0 || mark > m_stack.size())
                fail("appends to nothing");
            appendTo(m_stack[mark - 1], Kind::List, "appends to", std::span(m_stack).subspan(mark));
            m_stack.resize(mark);
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
            const std::size_t mark = popMark();
            if (mark == 0 || mark > m_stack.size())
                fail("sets items of nothing");
            if ((m_stack.size() - mark) % 2)
                fail("sets items from an odd number of values");
            appendTo(m_stack[mark - 1], Kind::Dict, "sets items of", std::span(m_stack).subspan(mark));
            m_stack.resize(mark);
            break;
        }
        case MEMOIZE:
            memoPut(m_memo.size());
            break;
        case BINPUT:
            memoPut(static_cast<unsigned char>(read(1)[0]));
            break;
        case LONG_BINPUT:
            memoPut(readLittleEndian<std::uint32_t>());
            break;
        case PUT:
        case GET: {
            const std::string_view line = readLine();
            std::uint64_t index = 0;
            if (std::from_chars(line.data(), line.data() + line.size(), index).ptr != line.data() + line.size())
                fail("holds a memo index that is not a number");
            op == PUT ? memoPut(index) : memoGet(index);
            break;
        }
        case BINGET:
            memoGet(static_cast<unsigned char>(read(1)[0]));
            break;
        case LONG_BINGET:
            memoGet(readLittleEndian<std::uint32_t>());
            break;
        case GLOBAL: refuse("GLOBAL");
        case STACK_GLOBAL: refuse("STACK_GLOBAL");
        case REDUCE: refuse("REDUCE");
        case BUILD: refuse("BUILD");
        case INST: refuse("INST");
        case OBJ: refuse("OBJ");
        case NEWOBJ: refuse("NEWOBJ");
        case NEWOBJ_EX: refuse("NEWOBJ_EX");
        case PERSID: refuse("PERSID");
        case BINPERSID: refuse("BINPERSID");
        case EXT1:
        case EXT2:
        case EXT4: refuse("EXT");
        default: {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", op);
            fail(std::string("holds the opcode ") + hex + ", which plain data never needs");
        }
        }
    }

    Document &m_doc;
    const std::string &m_path;
    const ImportProgress &m_progress;
    const char *m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
    std::size_t m_opcodeStart = 0;
    std::uint64_t m_opcodes = 0;
    std::vector<Value> m_stack;
    std::vector<std::size_t> m_marks;
    std::vector<Value> m_memo;
    std::vector<std::uint8_t> m_memoSet;
};

} // namespace

void unpickle(Document &document, const std::string &path, const ImportProgress &progress)
{
    Unpickler(document, path, progress).run();
}

bool looksLikePickle(std::string_view prefix)
{
    return prefix.size() >= 2 && static_cast<unsigned char>(prefix[0]) == PROTO
           && static_cast<unsigned char>(prefix[1]) >= 2 && static_cast<unsigned char>(prefix[1]) <= 5;
}

} // namespace peaklens::pickle
