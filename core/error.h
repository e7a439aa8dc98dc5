// SPDX-License-Identifier: Apache-2.0
#pragma once
// Typed errors thrown by core and caught at the edge (CLI main, GUI action).
// Messages are sentences for a user: what was wrong, where, and what to do.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace peaklens {

class Error : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// A problem with one file: the message starts with the file's path.
class FileError : public Error
{
public:
    FileError(const std::string &path, const std::string &problem)
        : Error(path + ": " + problem)
        , m_path(path)
        , m_problem(problem)
    {
    }
    const std::string &path() const { return m_path; }
    const std::string &problem() const { return m_problem; }

private:
    std::string m_path;
    std::string m_problem;
};

// Bad input in a trace file that an importer or the native reader rejected.
class ImportError : public FileError
{
public:
    ImportError(const std::string &path, const std::string &problem, std::optional<std::uint64_t> byteOffset = std::nullopt)
        : FileError(path, byteOffset ? problem + " (at byte " + std::to_string(*byteOffset) + ")" : problem)
        , m_byteOffset(byteOffset)
    {
    }
    std::optional<std::uint64_t> byteOffset() const { return m_byteOffset; }

private:
    std::optional<std::uint64_t> m_byteOffset;
};

// A line of PeakLens trace text that could not be understood.
class TraceTextError : public Error
{
public:
    TraceTextError(int line, const std::string &problem)
        : Error("line " + std::to_string(line) + ": " + problem)
        , m_line(line)
    {
    }
    int line() const { return m_line; }

private:
    int m_line;
};

} // namespace peaklens
