// SPDX-License-Identifier: Apache-2.0
// peaklens-cli record [--backend auto|torch|cupti] [--allocator exact|async|native]
//                     [--out DIR] -- CMD ARGS...
// Runs a training command with the Python helper importable, recorded through PyTorch's
// own allocator (torch: libpeaklens_torch.so, any machine) or the CUPTI collector (cupti:
// libpeaklens_cupti.so, a GPU), and leaves one trace per process in DIR (docs/recording.md).

#include "childprocess.h"
#include "command.h"
#include "tracestream.h"

#include "core/document/summaryfigures.h"
#include "core/error.h"
#include "core/report/jsondump.h"

#include "installlayout.h"

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

namespace peaklens::cli {

namespace {

// Whether the NVIDIA driver sees a GPU, asked through the driver API without linking it.
void requireCudaDevice()
{
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver)
        throw Error("record needs a CUDA device, and this machine has none: the NVIDIA driver (libcuda.so.1) is not installed.");
    using Init = int (*)(unsigned);
    using Count = int (*)(int *);
    const auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
    const auto count = reinterpret_cast<Count>(dlsym(driver, "cuDeviceGetCount"));
    int devices = 0;
    const int status = init ? init(0) : -1;
    if (status != 0 || !count || count(&devices) != 0 || devices == 0)
        throw Error("record needs a CUDA device, and the NVIDIA driver sees none (cuInit returned " + std::to_string(status)
                    + ").");
}

constexpr const char *kCollector = "libpeaklens_cupti.so";
constexpr const char *kTorchRecorder = "libpeaklens_torch.so";

std::filesystem::path installedPluginDirectory()
{
    return ownDirectory() / PEAKLENS_PLUGIN_DIR_FROM_BIN;
}

// A plugin library: in PEAKLENS_PLUGIN_DIR, else next to peaklens-cli (the build tree),
// else in the installed plugin folder relative to it.
std::optional<std::filesystem::path> findPlugin(const char *file)
{
    const char *pluginDir = std::getenv("PEAKLENS_PLUGIN_DIR");
    for (const std::filesystem::path &directory :
         {pluginDir ? std::filesystem::path(pluginDir) : std::filesystem::path(), ownDirectory(), installedPluginDirectory()}) {
        if (!directory.empty() && std::filesystem::exists(directory / file))
            return std::filesystem::weakly_canonical(directory / file);
    }
    return std::nullopt;
}

std::filesystem::path requirePlugin(const char *file, const std::string &install)
{
    if (auto found = findPlugin(file))
        return *found;
    throw Error(std::string(file) + " is neither in " + installedPluginDirectory().lexically_normal().string()
                + " nor in PEAKLENS_PLUGIN_DIR; " + install);
}

std::filesystem::path findCollector()
{
    return requirePlugin(kCollector, "install the collector component, built where the CUDA toolkit with CUPTI is installed.");
}

std::filesystem::path findTorchRecorder()
{
    return requirePlugin(kTorchRecorder, "install the replay component, built against the PyTorch the training runs.");
}

std::filesystem::path findHelper()
{
    const std::filesystem::path installed = ownDirectory() / PEAKLENS_DATA_DIR_FROM_BIN / "python";
    if (!std::filesystem::exists(installed / "peaklens" / "__init__.py"))
        throw Error("the peaklens Python helper is not in " + installed.lexically_normal().string()
                    + "; install the python component.");
    return std::filesystem::weakly_canonical(installed);
}

void setEnvironment(const char *name, const std::string &value)
{
    ::setenv(name, value.c_str(), 1);
}

// NVTX hands its calls to the library NVTX_INJECTION64_PATH names; pointing it at the
// libcupti the collector links means ranges pushed before CUDA starts are seen too.
void routeNvtxToCupti(const std::filesystem::path &collector)
{
    if (std::getenv("NVTX_INJECTION64_PATH"))
        return;
    void *handle = dlopen(collector.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!handle)
        return; // the collector sets it itself once loaded
    Dl_info info{};
    if (void *symbol = dlsym(handle, "cuptiSubscribe"); symbol && dladdr(symbol, &info) && info.dli_fname)
        setEnvironment("NVTX_INJECTION64_PATH", info.dli_fname);
    dlclose(handle);
}

// The backend `auto` stands for: the CUPTI collector when an allocator mode is asked for
// (only it has them), else PyTorch's own allocator reports wherever the torch recorder is
// installed (any machine, the caching allocator left as it is), else the collector.
std::string chooseBackend(const std::string &asked, const std::string &allocator)
{
    if (asked != "auto")
        return asked;
    return allocator.empty() && findPlugin(kTorchRecorder) ? "torch" : "cupti";
}

// Sets the environment the chosen backend reads in the training process.
void prepareBackend(const std::string &backend, std::string allocator, const std::filesystem::path &helper)
{
    std::string pythonPath = helper.string();
    if (backend == "torch") {
        if (!allocator.empty() && allocator != "native")
            throw Error("--allocator " + allocator
                        + " applies to --backend cupti: the torch backend records PyTorch's "
                          "caching allocator as it is.");
        setEnvironment("PEAKLENS_TORCH_RECORDER", findTorchRecorder().string());
        // Its sitecustomize starts the recorder once the process imports torch.
        pythonPath += ":" + (helper / "peaklens" / "_autostart").string();
        allocator = "native";
    } else {
        requireCudaDevice();
        const auto collector = findCollector();
        setEnvironment("CUDA_INJECTION64_PATH", collector.string());
        routeNvtxToCupti(collector);
        if (allocator.empty())
            allocator = "exact";
        if (allocator == "exact")
            setEnvironment("PYTORCH_NO_CUDA_MEMORY_CACHING", "1");
        else if (allocator == "async")
            setEnvironment("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync");
    }
    setEnvironment("PEAKLENS_ALLOCATOR", allocator);
    const char *outer = std::getenv("PYTHONPATH");
    setEnvironment("PYTHONPATH", pythonPath + (outer && *outer ? ":" + std::string(outer) : ""));
}

// The trace files in a folder.
std::set<std::filesystem::path> tracesIn(const std::filesystem::path &folder)
{
    std::set<std::filesystem::path> traces;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(folder, ec)) {
        if (entry.path().extension() == ".peaklens")
            traces.insert(entry.path());
    }
    return traces;
}

struct RecordOptions
{
    std::string backend = "auto";
    std::string allocator;
    std::string out;
    std::string directory;
    std::string host;
    bool send = false;
    std::vector<std::string> command;
};

// A run that failed with next to no space left where it wrote (less than a trace's commit
// needs) most likely failed for that: said, with what is kept. Empty otherwise.
std::string fullDisk(const std::filesystem::path &out)
{
    static constexpr std::uint64_t kFullBelowBytes = 1 << 20;
    struct statvfs space
    { };
    if (::statvfs(out.c_str(), &space) != 0)
        return {};
    const std::uint64_t left = std::uint64_t(space.f_bavail) * space.f_frsize;
    if (left >= kFullBelowBytes)
        return {};
    std::error_code ec;
    return "; the disk it wrote to is full (" + std::to_string(left) + " bytes left in "
           + std::filesystem::absolute(out, ec).string() + "): each trace is kept as far as its last commit; free space "
           + "there and record again";
}

// The traces a run left in `out` that were not there `before`: their summary figures
// stored, and the sentence record ends with.
std::string finishRecording(const std::set<std::filesystem::path> &before, const std::filesystem::path &out,
                            const std::string &backend, int code)
{
    const std::set<std::filesystem::path> after = tracesIn(out);
    for (const std::filesystem::path &trace : after) {
        if (before.contains(trace))
            continue;
        // The figures a summary shows, stored in the traces this run wrote and finished. One
        // whose process was killed mid-file is left as it is: readable up to its last
        // commit, summarized from its events.
        try {
            storeSummaryFigures(trace.string());
        } catch (const Error &) {
        }
    }
    const std::size_t traces = after.size();
    // The torch recorder starts in a process once it imports torch and allocates.
    const std::string why = traces == 0 && backend == "torch" ? ": no process of it imported torch and allocated memory" : "";
    return "recorded " + std::to_string(traces) + " trace file(s) in " + out.string() + "; the command exited with "
           + std::to_string(code) + why + (code != 0 ? fullDisk(out) : std::string());
}

// The folder a recording goes to when none is named, here or on a host.
std::string defaultOut()
{
    return "peaklens-" + std::to_string(::getpid());
}

// `record --host`: the same command run there by `record --send`, its traces copied here
// as they grow, then replaced by the finished files.
CommandOutput recordOnHost(const RecordOptions &options)
{
    if (options.host.empty() || options.host.starts_with('-'))
        throw Error("--host needs an SSH destination (user@host, or an alias from ~/.ssh/config).");
    // On the host, a folder of its own in the working directory (or home), named for when.
    const std::string remoteOut = hostFolderName("peaklens");
    const std::filesystem::path localOut =
        options.out.empty() ? "peaklens-" + options.host + remoteOut.substr(std::string_view("peaklens").size()) : options.out;
    std::vector<std::string> arguments{"record", "--send", "--backend", RemoteCommand::quoted(options.backend)};
    if (!options.allocator.empty())
        arguments.insert(arguments.end(), {"--allocator", RemoteCommand::quoted(options.allocator)});
    if (!options.directory.empty())
        arguments.insert(arguments.end(), {"--directory", RemoteCommand::quoted(options.directory)});
    arguments.insert(arguments.end(), {"--out", RemoteCommand::quoted(remoteOut), "--"});
    for (const std::string &word : options.command)
        arguments.push_back(RemoteCommand::quoted(word));
    RemoteCommand remote(options.host, options.host, arguments, RemoteCommand::Input::Pipe);
    const Received received = receiveTraces(remote, localOut, remoteOut);
    if (!received.complete) {
        std::fputs(("peaklens-cli: " + received.last + "\n").c_str(), stderr);
        return CommandOutput("", received.code);
    }
    // Each copy knows where its original lies, for a rerun there.
    for (const std::filesystem::path &copy : received.traces) {
        const std::string inside = std::filesystem::relative(copy, localOut).string();
        writeOrigin(copy.string(), std::string(kRemoteScheme) + options.host + received.remoteFolder + "/" + inside);
    }
    return CommandOutput(options.host + ": " + received.last + "; copied to " + localOut.string() + "\n", received.code);
}

CommandOutput record(const RecordOptions &options)
{
    if (!options.host.empty())
        return recordOnHost(options);
    const auto helper = findHelper();
    const std::string backend = chooseBackend(options.backend, options.allocator);
    prepareBackend(backend, options.allocator, helper);
    if (!options.directory.empty()) {
        std::error_code ec;
        std::filesystem::current_path(options.directory, ec);
        if (ec)
            throw FileError(options.directory, "cannot be entered: " + ec.message() + ".");
    }
    const std::filesystem::path out = options.out.empty() ? defaultOut() : options.out;
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec)
        throw FileError(out.string(), "cannot be created: " + ec.message() + ".");

    setEnvironment("PEAKLENS_OUT", std::filesystem::absolute(out).string());
    setEnvironment("PEAKLENS_COMMAND", dumpJson(nlohmann::ordered_json(options.command), -1));
    setEnvironment("PEAKLENS_CWD", std::filesystem::current_path().string());

    const std::set<std::filesystem::path> before = tracesIn(out);
    if (!options.send) {
        const int code = runChild({options.command, {}, {}, {}, {}, false});
        return {finishRecording(before, out, backend, code) + "\n", code};
    }
    // For `record --host` on another machine: the run's output and its traces as frames.
    int output[2] = {-1, -1};
    if (::pipe2(output, O_CLOEXEC) != 0)
        throw Error(std::string("record --send: no pipe for the command's output (") + std::strerror(errno) + ").");
    ChildProcess child{options.command, {}, {}, {}, {}, false};
    child.outputFd = output[1];
    const pid_t pid = startChild(child);
    ::close(output[1]);
    const int code =
        sendWhileRunning(pid, output[0], out, [&](int ended) { return finishRecording(before, out, backend, ended); });
    return CommandOutput("", code);
}

} // namespace

Command addRecordCommand(CLI::App &app)
{
    auto *command = app.add_subcommand("record", "Record a training run: peaklens-cli record -- python train.py");
    auto options = std::make_shared<RecordOptions>();
    command
        ->add_option("--backend", options->backend,
                     "torch (PyTorch's own allocator reports, any machine), cupti (the CUDA driver's view, a GPU) "
                     "or auto (the default: cupti when --allocator is given, else torch where its recorder is installed)")
        ->check(CLI::IsMember({"auto", "torch", "cupti"}));
    command
        ->add_option("--allocator", options->allocator,
                     "With --backend cupti: exact (no caching: every tensor is seen; the default), async "
                     "(cudaMallocAsync) or native (the caching allocator's segments)")
        ->check(CLI::IsMember({"exact", "async", "native"}));
    command->add_option("--out", options->out, "Folder for the traces (default: peaklens-<pid>)");
    command->add_option("--directory", options->directory, "Run the command in this folder (on the host, with --host)");
    command
        ->add_option("--host", options->host,
                     "Record on this SSH destination (user@host, an alias from ~/.ssh/config): the traces are copied "
                     "into --out here as they are written")
        ->type_name("HOST");
    // What --host runs on the host; not for people.
    command->add_flag("--send", options->send)->group("");
    command->add_option("COMMAND", options->command, "The training command, after --")->required();
    return {command, [options] { return record(*options); }};
}

} // namespace peaklens::cli
