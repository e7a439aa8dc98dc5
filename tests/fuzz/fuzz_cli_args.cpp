// SPDX-License-Identifier: Apache-2.0
// Fuzzes peaklens-cli in-process: the input is its argument list, split at NUL bytes,
// run in a private folder that holds a few traces. Inputs naming `record` or `rerun` are skipped (they
// launch programs), and so are those naming `query` (without questions it waits on standard
// input; tst_cli runs it) and paths with a '/', so that nothing outside the folder is
// read or written. An argument "\x01" COUNT TEXT stands for TEXT repeated, so that long
// arguments (deep regular expressions, huge numbers) are a few bytes away.
#include "outputcheck.h"
#include "scratchfolder.h"

#include "app/cli/clirunner.h"
#include "core/trace/visibletext.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <sstream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

constexpr std::size_t kMaxArguments = 16;

// The first byte may put a subcommand and a fixture in front of the arguments, so that
// most runs get past the parser to a command.
constexpr const char *kCommands[] = {nullptr, "info", "summary", "convert", "plan", "pareto", "report", "diff"};
constexpr const char *kFixtures[] = {nullptr, "training-step.peaklens", "modelled-step.pltxt", "snapshot.json"};

peaklens::fuzz::ScratchFolder &scratchFolder()
{
    static peaklens::fuzz::ScratchFolder folder(
        {"resources/samples/training-step.peaklens", "tests/data/modelled-step.pltxt", "tests/data/snapshot.json"});
    static const bool entered = ::chdir(folder.path().c_str()) == 0;
    if (!entered) {
        std::perror("chdir");
        std::abort();
    }
    return folder;
}

bool mayRun(std::string_view argument)
{
    std::string lower(argument);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return argument.find('/') == std::string_view::npos && lower.find("record") == std::string::npos
           && lower.find("rerun") == std::string::npos && lower.find("query") == std::string::npos;
}

// "\x01" COUNT TEXT: TEXT (COUNT + 1) * 256 times, at most kMaxArgumentBytes.
std::string expanded(std::string_view argument)
{
    constexpr std::size_t kMaxArgumentBytes = 1 << 16;
    if (argument.size() < 3 || argument[0] != '\x01')
        return std::string(argument);
    const std::size_t count = (static_cast<unsigned char>(argument[1]) + 1u) * 256;
    const std::string_view text = argument.substr(2);
    std::string out;
    for (std::size_t i = 0; i < count && out.size() + text.size() <= kMaxArgumentBytes; ++i)
        out += text;
    return out;
}

std::vector<std::string> argumentsOf(const std::uint8_t *data, std::size_t size)
{
    std::vector<std::string> arguments{"peaklens-cli"};
    if (const char *command = kCommands[data[0] & 7])
        arguments.emplace_back(command);
    if (const char *fixture = kFixtures[(data[0] >> 3) & 3])
        arguments.emplace_back(fixture);
    std::string_view rest(reinterpret_cast<const char *>(data) + 1, size - 1);
    while (!rest.empty() && arguments.size() < kMaxArguments) {
        const std::size_t end = std::min(rest.find('\0'), rest.size());
        arguments.push_back(expanded(rest.substr(0, end)));
        rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    return arguments;
}

// The commands run on a thread with the stack of a worker thread on macOS (512 KiB) plus
// room for the sanitizers: the app runs the same planning and reports in its thread pool,
// so recursion as deep as an argument is long must be found at lengths a fuzzer reaches.
template<typename Work>
void onSmallStack(Work work)
{
    constexpr std::size_t kStackBytes = 1 << 20;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, kStackBytes);
    pthread_t thread;
    const auto run = [](void *task) -> void * {
        (*static_cast<Work *>(task))();
        return nullptr;
    };
    if (pthread_create(&thread, &attributes, run, &work) != 0) {
        std::perror("pthread_create");
        std::abort();
    }
    pthread_join(thread, nullptr);
    pthread_attr_destroy(&attributes);
}

[[noreturn]] void fail(const char *problem, const std::vector<std::string> &arguments, int code, const std::string &out,
                       const std::string &err)
{
    std::fprintf(stderr, "fuzz_cli_args: %s\n  exit code %d, arguments:", problem, code);
    for (const std::string &argument : arguments)
        std::fprintf(stderr, " \"%s\"%s", peaklens::visibleText(argument.substr(0, 200)).c_str(),
                     argument.size() > 200 ? "..." : "");
    std::fprintf(stderr, "\n  stdout: %s\n  stderr: %s\n", peaklens::visibleText(out.substr(0, 2000)).c_str(),
                 peaklens::visibleText(err.substr(0, 2000)).c_str());
    __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    peaklens::fuzz::ScratchFolder &folder = scratchFolder();
    if (size == 0)
        return 0;
    const std::vector<std::string> arguments = argumentsOf(data, size);
    if (!std::all_of(arguments.begin(), arguments.end(), mayRun))
        return -1;                                // not kept in the corpus
    std::vector<std::string> storage = arguments; // the commands may not change ours
    std::vector<char *> argv;
    for (std::string &argument : storage)
        argv.push_back(argument.data());
    argv.push_back(nullptr);

    std::ostringstream out, err;
    int code = -1;
    onSmallStack([&] { code = peaklens::cli::runCli(static_cast<int>(arguments.size()), argv.data(), out, err); });
    folder.restore();

    // The promises of main.cpp's header and of its error handler.
    const std::string printed = out.str(), complaint = err.str();
    if (code != 0 && code != 2)
        fail("an exit code other than 0 and 2", arguments, code, printed, complaint);
    if (code == 2 && !printed.empty())
        fail("a failure printed on stdout", arguments, code, printed, complaint);
    if (complaint.starts_with("peaklens-cli: ")
        && (std::count(complaint.begin(), complaint.end(), '\n') != 1 || complaint.back() != '\n'
            || peaklens::visibleLines(complaint) != complaint))
        fail("an error message that is not one visible line", arguments, code, printed, complaint);
    // Arguments aside, what is printed comes from the fixtures and PeakLens: nothing in it
    // may be invalid UTF-8, a control character or one that reorders text.
    const bool plainArguments =
        std::all_of(arguments.begin(), arguments.end(), [](const std::string &a) { return peaklens::isVisibleText(a); });
    if (plainArguments && peaklens::visibleLines(printed) != printed)
        fail("output that is not visible text", arguments, code, printed, complaint);
    // Text output starts with a file's name or a sentence; what starts like JSON is --json's.
    if (printed.starts_with('{') && !peaklens::fuzz::jsonProblem(printed).empty())
        fail("--json output that is not JSON", arguments, code, printed, complaint);
    return 0;
}
