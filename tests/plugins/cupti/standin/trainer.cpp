// SPDX-License-Identifier: Apache-2.0
// peaklens-test-trainer: stands in for `python train.py` under the CUDA stand-ins. It does
// what PyTorch does with the Python helper, through the same interfaces: NVTX ranges
// (step:N, fwd:PATH and bwd:PATH, opt) from the toolkit's nvtx3 headers, device memory
// through the runtime (cudaMalloc, or cudaMallocAsync, or a caching allocator over
// cudaMalloc, by PyTorch's own environment variables), kernels through cuLaunchKernel,
// the backward pass on its own thread, PEAKLENS_CHECKPOINT read with PeakLens's grammar,
// and the helper's manifest beside the trace.
//
//   peaklens-test-trainer [--steps N] [--layers N] [--threads N] [--step-ms MS]
//                         [--fork-worker] [--subscribe-first] [--ranks N] [--stop-file PATH]
//
// The model: layers blocks.0 .. blocks.{N-1} (r<k>.blocks.i for replica k when --threads
// runs K > 1 replicas at once, each forward and backward on threads of its own). Layer i
// holds 2 MiB of weights made before the first step; its forward makes a 256 KiB
// temporary, an activation of (i + 1) MiB saved for the backward and a 512 KiB output the
// next layer saves, as torch.utils.checkpoint would see them: a checkpointed layer frees
// its activation as its forward ends, and its backward runs the forward again first. The backward
// makes a gradient the size of the weights, freed by the optimizer (zero_grad) in the step.
//
// It prints "pid P" first and "step N" after each step. SIGINT ends the run after the
// current step, as Python's KeyboardInterrupt does (exit 130, exit handlers run); SIGTERM
// kills it. --fork-worker forks a data-loader worker after the first step; --subscribe-first
// subscribes to CUPTI before CUDA starts, as a profiler in the process would; --ranks N
// starts N copies with RANK, LOCAL_RANK and WORLD_SIZE set, as torchrun does, and waits.
// --stop-file ends the run normally after the first step that finds PATH existing: a test
// that follows the trace while it grows decides when the run ends, with no sleep to tune.

#include "core/error.h"
#include "core/plan/checkpointstrategy.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kParameterBytes = 2 << 20;
constexpr std::size_t kTemporaryBytes = 256 << 10;
constexpr std::size_t kActivationUnit = 1 << 20;
constexpr std::size_t kOutputBytes = 512 << 10;

std::atomic<bool> g_interrupted{false};

struct Options
{
    int steps = 3;
    int layers = 4;
    int threads = 1;
    int stepMs = 0;
    int ranks = 0;
    bool forkWorker = false;
    bool subscribeFirst = false;
    std::string stopFile;
};

[[noreturn]] void fail(const std::string &message)
{
    std::fprintf(stderr, "peaklens-test-trainer: %s\n", message.c_str());
    std::exit(2);
}

std::string environment(const char *name)
{
    const char *value = std::getenv(name);
    return value ? value : "";
}

// PyTorch's allocator, as its environment variables choose it.
class Allocator
{
public:
    Allocator()
        : m_async(environment("PYTORCH_CUDA_ALLOC_CONF").find("backend:cudaMallocAsync") != std::string::npos)
        , m_caching(!m_async && environment("PYTORCH_NO_CUDA_MEMORY_CACHING") != "1")
    {
    }

    void *allocate(std::size_t bytes)
    {
        void *pointer = nullptr;
        if (m_caching) {
            std::lock_guard lock(m_mutex);
            auto cached = m_cache.find(bytes);
            if (cached != m_cache.end() && !cached->second.empty()) {
                pointer = cached->second.back();
                cached->second.pop_back();
                return pointer;
            }
        }
        const cudaError_t result = m_async ? cudaMallocAsync(&pointer, bytes, nullptr) : cudaMalloc(&pointer, bytes);
        if (result != cudaSuccess)
            fail("out of device memory");
        return pointer;
    }

    void release(void *pointer, std::size_t bytes)
    {
        if (m_caching) {
            std::lock_guard lock(m_mutex);
            m_cache[bytes].push_back(pointer);
        } else if ((m_async ? cudaFreeAsync(pointer, nullptr) : cudaFree(pointer)) != cudaSuccess) {
            fail("a free the driver did not accept");
        }
    }

private:
    bool m_async;
    bool m_caching;
    std::mutex m_mutex;
    std::map<std::size_t, std::vector<void *>> m_cache;
};

void launch(const char *name, unsigned microseconds)
{
    static CUmodule module = [] {
        CUmodule loaded = nullptr;
        cuModuleLoadData(&loaded, "stand-in image");
        return loaded;
    }();
    CUfunction function = nullptr;
    if (cuModuleGetFunction(&function, module, name) != CUDA_SUCCESS
        || cuLaunchKernel(function, microseconds, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) != CUDA_SUCCESS)
        fail(std::string("cannot launch ") + name);
}

struct Layer
{
    std::string path;
    std::size_t activationBytes = 0;
    bool checkpointed = false;
    void *activation = nullptr;
    void *output = nullptr;
    void *gradient = nullptr;
};

struct Replica
{
    std::vector<Layer> layers;
};

class Range
{
public:
    explicit Range(const std::string &name) { nvtxRangePushA(name.c_str()); }
    ~Range() { nvtxRangePop(); }
    Range(const Range &) = delete;
    Range &operator=(const Range &) = delete;
};

// As a layer's forward under autograd: a temporary, the tensors it saves for its backward
// (its activation) and its output, which the next layer saves as its input. A checkpointed
// layer keeps only its input: its activation is freed as its forward ends.
void forward(Allocator &allocator, Replica &replica)
{
    for (Layer &layer : replica.layers) {
        Range range("fwd:" + layer.path);
        void *temporary = allocator.allocate(kTemporaryBytes);
        launch("forward_kernel", 50);
        layer.activation = allocator.allocate(layer.activationBytes);
        layer.output = allocator.allocate(kOutputBytes);
        allocator.release(temporary, kTemporaryBytes);
        if (layer.checkpointed) {
            allocator.release(layer.activation, layer.activationBytes);
            layer.activation = nullptr;
        }
    }
}

void recompute(Allocator &allocator, Layer &layer)
{
    void *temporary = allocator.allocate(kTemporaryBytes);
    launch("forward_kernel", 50);
    layer.activation = allocator.allocate(layer.activationBytes);
    void *output = allocator.allocate(kOutputBytes);
    allocator.release(temporary, kTemporaryBytes);
    allocator.release(output, kOutputBytes);
}

// As autograd's backward, last layer first: a checkpointed layer recomputes its activation,
// the layer makes its weights' gradient, then frees what it saved (its activation and the
// previous layer's output, its input). The last layer's output goes first, with the loss.
void backward(Allocator &allocator, Replica &replica)
{
    std::vector<Layer> &layers = replica.layers;
    for (std::size_t i = layers.size(); i-- > 0;) {
        Layer &layer = layers[i];
        Range range("bwd:" + layer.path);
        if (i + 1 == layers.size())
            allocator.release(layer.output, kOutputBytes);
        if (layer.checkpointed) // the forward again; its output is dropped
            recompute(allocator, layer);
        layer.gradient = allocator.allocate(kParameterBytes);
        launch("backward_kernel", 100);
        allocator.release(layer.activation, layer.activationBytes);
        layer.activation = nullptr;
        if (i > 0)
            allocator.release(layers[i - 1].output, kOutputBytes);
    }
}

// Runs one phase of every replica at once, each on a thread of its own; with one replica
// the forward stays on the calling thread, as in a plain training loop.
template<typename Phase>
void runReplicas(std::vector<Replica> &replicas, bool onCallingThread, Phase phase)
{
    if (onCallingThread && replicas.size() == 1) {
        phase(replicas.front());
        return;
    }
    std::vector<std::thread> threads;
    for (Replica &replica : replicas)
        threads.emplace_back([&phase, &replica] { phase(replica); });
    for (std::thread &thread : threads)
        thread.join();
}

std::vector<Replica> buildModel(const Options &options)
{
    std::vector<Replica> replicas(static_cast<std::size_t>(options.threads));
    std::vector<std::string> chain;
    for (std::size_t k = 0; k < replicas.size(); ++k) {
        const std::string prefix = replicas.size() > 1 ? "r" + std::to_string(k) + "." : "";
        for (int i = 0; i < options.layers; ++i) {
            replicas[k].layers.push_back({prefix + "blocks." + std::to_string(i), std::size_t(i + 1) * kActivationUnit});
            chain.push_back(replicas[k].layers.back().path);
        }
    }
    const std::string text = environment("PEAKLENS_CHECKPOINT");
    try {
        const peaklens::CheckpointStrategy strategy = peaklens::CheckpointStrategy::parse(text);
        const bool segments = strategy.kind() == peaklens::CheckpointStrategy::Kind::Segments
                              || strategy.kind() == peaklens::CheckpointStrategy::Kind::SquareRoot;
        for (const std::string &unit : strategy.isRule() ? std::vector<std::string>{} : strategy.unitTexts()) {
            if (unit.find("..") != std::string::npos)
                fail("PEAKLENS_CHECKPOINT: this trainer checkpoints layers one by one, not segments such as " + unit);
        }
        if (segments)
            fail("PEAKLENS_CHECKPOINT: this trainer checkpoints layers one by one, not segments (" + text + ")");
        const std::vector<bool> toggled = strategy.resolve(chain, chain);
        std::size_t position = 0;
        for (Replica &replica : replicas) {
            for (Layer &layer : replica.layers)
                layer.checkpointed = toggled[position++];
        }
    } catch (const peaklens::Error &error) {
        fail(std::string("PEAKLENS_CHECKPOINT: ") + error.what());
    }
    return replicas;
}

std::string processTag()
{
    std::string tag;
    if (!environment("RANK").empty())
        tag = "rank" + environment("RANK") + "-";
    else if (!environment("LOCAL_RANK").empty())
        tag = "local" + environment("LOCAL_RANK") + "-";
    return tag + "pid" + std::to_string(::getpid());
}

// The Python helper's manifest (docs/recording.md), beside the trace the collector writes.
void writeManifest(const std::vector<Replica> &replicas)
{
    const std::string out = environment("PEAKLENS_OUT");
    if (out.empty())
        return;
    nlohmann::ordered_json modules = nlohmann::ordered_json::array();
    nlohmann::ordered_json chain = nlohmann::ordered_json::array();
    nlohmann::ordered_json checkpoint = nlohmann::ordered_json::array();
    std::size_t total = 0;
    for (const Replica &replica : replicas) {
        for (const Layer &layer : replica.layers) {
            modules.push_back({{"path", layer.path},
                               {"type", "StandinBlock"},
                               {"parameter_bytes", kParameterBytes},
                               {"own_parameter_bytes", kParameterBytes},
                               {"inputs", {{int(layer.activationBytes / 4)}}},
                               {"output", {int(kOutputBytes / 4)}},
                               {"saved_bytes", layer.activationBytes + kOutputBytes}});
            chain.push_back(layer.path);
            if (layer.checkpointed)
                checkpoint.push_back(layer.path);
            total += kParameterBytes;
        }
    }
    const nlohmann::ordered_json model = {
        {"path", ""}, {"type", "StandinModel"}, {"parameter_bytes", total}, {"own_parameter_bytes", 0}};
    modules.insert(modules.begin(), model);
    const nlohmann::ordered_json manifest = {{"format", "peaklens-manifest"}, {"version", 1},   {"torch", "stand-in"},
                                             {"checkpoint", checkpoint},      {"chain", chain}, {"modules", modules}};
    std::ofstream(out + "/" + processTag() + ".manifest.json") << manifest.dump(1);
}

void forkWorker()
{
    const pid_t worker = ::fork();
    if (worker < 0)
        fail("fork failed");
    if (worker == 0) {
        // A data-loader worker: NVTX ranges but no CUDA, and a normal exit with exit handlers.
        nvtxRangePushA("fwd:loader");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        nvtxRangePop();
        std::exit(0);
    }
    int status = 0;
    ::waitpid(worker, &status, 0);
}

void subscribeFirst()
{
    CUpti_SubscriberHandle subscriber = nullptr;
    const auto ignore = [](void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {};
    if (cuptiSubscribe(&subscriber, ignore, nullptr) != CUPTI_SUCCESS)
        fail("could not subscribe to CUPTI first");
}

int train(const Options &options)
{
    std::printf("pid %d\n", static_cast<int>(::getpid()));
    std::fflush(stdout);
    if (options.subscribeFirst)
        subscribeFirst();
    std::vector<Replica> replicas = buildModel(options);
    Allocator allocator;
    std::vector<void *> parameters;
    for (const Replica &replica : replicas) {
        for (std::size_t i = 0; i < replica.layers.size(); ++i)
            parameters.push_back(allocator.allocate(kParameterBytes));
    }
    writeManifest(replicas);
    for (int step = 0; step < options.steps && !g_interrupted; ++step) {
        {
            Range stepRange("step:" + std::to_string(step));
            runReplicas(replicas, true, [&](Replica &replica) { forward(allocator, replica); });
            runReplicas(replicas, false, [&](Replica &replica) { backward(allocator, replica); });
            Range optimizer("opt");
            launch("optimizer_kernel", 20);
            for (Replica &replica : replicas) {
                for (Layer &layer : replica.layers)
                    allocator.release(layer.gradient, kParameterBytes);
            }
        }
        std::printf("step %d\n", step);
        std::fflush(stdout);
        if (step == 0 && options.forkWorker)
            forkWorker();
        if (!options.stopFile.empty() && std::filesystem::exists(options.stopFile))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(options.stepMs));
    }
    if (g_interrupted) {
        std::printf("interrupted\n");
        return 130;
    }
    return 0;
}

// As torchrun: N copies of this program with the launcher's variables, then their worst exit.
int launchRanks(int ranks, char **argv)
{
    std::vector<pid_t> children;
    for (int rank = 0; rank < ranks; ++rank) {
        const pid_t child = ::fork();
        if (child < 0)
            fail("fork failed");
        if (child == 0) {
            ::setenv("RANK", std::to_string(rank).c_str(), 1);
            ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
            ::setenv("WORLD_SIZE", std::to_string(ranks).c_str(), 1);
            std::vector<char *> arguments;
            for (char **argument = argv; *argument; ++argument) {
                if (std::strcmp(*argument, "--ranks") == 0)
                    ++argument; // and its value
                else
                    arguments.push_back(*argument);
            }
            arguments.push_back(nullptr);
            ::execv("/proc/self/exe", arguments.data());
            std::_Exit(127);
        }
        children.push_back(child);
    }
    int worst = 0;
    for (const pid_t child : children) {
        int status = 0;
        ::waitpid(child, &status, 0);
        worst = std::max(worst, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    return worst;
}

Options parseOptions(int argc, char **argv)
{
    Options options;
    const std::map<std::string, int *> numbers = {{"--steps", &options.steps},
                                                  {"--layers", &options.layers},
                                                  {"--threads", &options.threads},
                                                  {"--step-ms", &options.stepMs},
                                                  {"--ranks", &options.ranks}};
    for (int i = 1; i < argc; ++i) {
        const std::string argument = argv[i];
        if (argument == "--fork-worker")
            options.forkWorker = true;
        else if (argument == "--subscribe-first")
            options.subscribeFirst = true;
        else if (argument == "--stop-file" && i + 1 < argc)
            options.stopFile = argv[++i];
        else if (const auto number = numbers.find(argument); number != numbers.end() && i + 1 < argc)
            *number->second = std::atoi(argv[++i]);
        else
            fail("unknown argument " + argument);
    }
    if (options.layers < 1 || options.threads < 1 || options.steps < 0)
        fail("--layers and --threads must be at least 1");
    return options;
}

} // namespace

int main(int argc, char **argv)
{
    const Options options = parseOptions(argc, argv);
    if (options.ranks > 0)
        return launchRanks(options.ranks, argv);
    struct sigaction interrupt = {};
    interrupt.sa_handler = [](int) { g_interrupted = true; };
    ::sigaction(SIGINT, &interrupt, nullptr);
    return train(options);
}
