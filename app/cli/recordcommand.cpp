// peaklens-cli record [--allocator exact|async|native] [--out DIR] -- CMD ARGS...
// Runs a training command under the CUPTI collector, with the Python helper importable,
// and leaves one trace per process in DIR (docs/recording.md).

#include "command.h"

#include "core/error.h"
#include "core/report/jsondump.h"

#include "installlayout.h"

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

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
        throw Error("record needs a CUDA device, and the NVIDIA driver sees none (cuInit returned " + std::to_string(status) + ").");
}

std::filesystem::path ownDirectory()
{
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::current_path() : self.parent_path();
}

// PEAKLENS_PLUGIN_DIR, else next to peaklens-cli (the build tree), else the installed
// plugin folder relative to it.
std::filesystem::path findCollector()
{
    const char *pluginDir = std::getenv("PEAKLENS_PLUGIN_DIR");
    const std::filesystem::path installed = ownDirectory() / PEAKLENS_PLUGIN_DIR_FROM_BIN;
    for (const std::filesystem::path &directory :
         {pluginDir ? std::filesystem::path(pluginDir) : std::filesystem::path(), ownDirectory(), installed}) {
        if (!directory.empty() && std::filesystem::exists(directory / "libpeaklens_cupti.so"))
            return std::filesystem::weakly_canonical(directory / "libpeaklens_cupti.so");
    }
    throw Error("the CUPTI collector libpeaklens_cupti.so is neither in " + installed.lexically_normal().string()
                + " nor in PEAKLENS_PLUGIN_DIR; install the collector component, built where the CUDA toolkit with CUPTI is installed.");
}

std::filesystem::path findHelper()
{
    const std::filesystem::path installed = ownDirectory() / PEAKLENS_DATA_DIR_FROM_BIN / "python";
    if (!std::filesystem::exists(installed / "peaklens" / "__init__.py"))
        throw Error("the peaklens Python helper is not in " + installed.lexically_normal().string() + "; install the python component.");
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

pid_t g_child = 0;

// Ctrl+C or a stop from the app ends the training command too.
void forwardSignal(int signal)
{
    if (g_child > 0)
        ::kill(g_child, signal);
}

} // namespace

Command addRecordCommand(CLI::App &app)
{
    auto *command = app.add_subcommand("record", "Record a training run under the CUPTI collector: peaklens-cli record -- python train.py");
    struct Options
    {
        std::string allocator = "exact";
        std::string out;
        std::vector<std::string> command;
    };
    auto options = std::make_shared<Options>();
    command->add_option("--allocator", options->allocator,
                        "exact (no caching: every tensor is seen), async (cudaMallocAsync) or native (the caching allocator)")
        ->check(CLI::IsMember({"exact", "async", "native"}));
    command->add_option("--out", options->out, "Folder for the traces (default: peaklens-<pid>)");
    command->add_option("COMMAND", options->command, "The training command, after --")->required();
    return {command, [options]() -> CommandOutput {
                requireCudaDevice();
                const auto collector = findCollector();
                const auto helper = findHelper();
                const std::filesystem::path out = options->out.empty() ? "peaklens-" + std::to_string(::getpid()) : options->out;
                std::error_code ec;
                std::filesystem::create_directories(out, ec);
                if (ec)
                    throw FileError(out.string(), "cannot be created: " + ec.message() + ".");

                setEnvironment("CUDA_INJECTION64_PATH", collector.string());
                routeNvtxToCupti(collector);
                setEnvironment("PEAKLENS_OUT", std::filesystem::absolute(out).string());
                setEnvironment("PEAKLENS_COMMAND", dumpJson(nlohmann::ordered_json(options->command), -1));
                setEnvironment("PEAKLENS_CWD", std::filesystem::current_path().string());
                setEnvironment("PEAKLENS_ALLOCATOR", options->allocator);
                const char *pythonPath = std::getenv("PYTHONPATH");
                setEnvironment("PYTHONPATH", helper.string() + (pythonPath && *pythonPath ? ":" + std::string(pythonPath) : ""));
                if (options->allocator == "exact")
                    setEnvironment("PYTORCH_NO_CUDA_MEMORY_CACHING", "1");
                else if (options->allocator == "async")
                    setEnvironment("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync");

                // Before the fork, so no signal is missed; exec gives the child the defaults back.
                struct sigaction forward = {};
                forward.sa_handler = forwardSignal;
                ::sigaction(SIGTERM, &forward, nullptr);
                ::sigaction(SIGINT, &forward, nullptr);
                const pid_t child = g_child = ::fork();
                if (child < 0)
                    throw Error("cannot start the command: fork failed.");
                if (child == 0) {
                    std::vector<char *> argv;
                    for (std::string &argument : options->command)
                        argv.push_back(argument.data());
                    argv.push_back(nullptr);
                    ::execvp(argv[0], argv.data());
                    std::fprintf(stderr, "peaklens-cli: cannot run %s.\n", argv[0]);
                    ::_exit(127);
                }
                int status = 0;
                while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
                }
                const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                std::size_t traces = 0;
                for (const auto &entry : std::filesystem::directory_iterator(out, ec))
                    traces += entry.path().extension() == ".peaklens";
                return {"recorded " + std::to_string(traces) + " trace file(s) in " + out.string() + "; the command exited with "
                            + std::to_string(code) + "\n",
                        code};
            }};
}

} // namespace peaklens::cli
