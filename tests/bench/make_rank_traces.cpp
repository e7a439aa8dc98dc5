// SPDX-License-Identifier: Apache-2.0
// Writes the traces of a synthetic data-parallel training run, one native *.peaklens file
// per rank, for tests/bench/run_ranks_bench.sh: a transformer of 48 blocks (attention and
// MLP each), parameters and, from the first step on, gradients and optimizer state; per
// step saved activations and temporaries in the forward, their frees and temporaries in
// the backward, an optimizer pass; forward and backward ranges per layer, steps, segments
// and call stacks; rank, local_rank and world_size in the metadata. Rank RANKS / 2 holds
// 30 % more activations than the others (a longer sequence), so its peak stands out.
//
//   make_rank_traces DIR RANKS EVENTS     writes DIR/rank000.peaklens ... (DIR must exist)

#include "core/error.h"
#include "core/format/tracewriter.h"
#include "core/trace/metadata.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace peaklens;

namespace {

constexpr int kBlocks = 48;
constexpr int kSaved = 12;      // saved activations per sub-layer and step
constexpr int kTemporaries = 8; // temporaries per sub-layer and phase
constexpr std::int64_t kMiB = 1 << 20;
constexpr std::int64_t kSegmentBytes = std::int64_t(2) << 30;

// Stacks, outermost frame first: the prefix tree written to the file.
enum Stack : std::uint32_t { NoStack = 0, Main, TrainStep, Attention, AttentionLinear, Mlp, MlpLinear, Backward, OptimizerStep };

void writeStacks(TraceWriter &writer)
{
    const Frame frames[] = {
        {"<module>", "/work/train.py", 120},
        {"train_step", "/work/train.py", 88},
        {"forward", "/work/model.py", 42},
        {"forward", "/work/model.py", 77},
        {"linear", "/usr/lib/python3/dist-packages/torch/nn/functional.py", 2380},
        {"backward", "/usr/lib/python3/dist-packages/torch/autograd/graph.py", 825},
        {"step", "/usr/lib/python3/dist-packages/torch/optim/adamw.py", 204},
    };
    for (std::uint32_t i = 0; i < std::size(frames); ++i)
        writer.writeFrame(i, frames[i]);
    // id: {parent, frame}
    writer.writeStack(Main, {NoStack, 0});
    writer.writeStack(TrainStep, {Main, 1});
    writer.writeStack(Attention, {TrainStep, 2});
    writer.writeStack(AttentionLinear, {Attention, 4});
    writer.writeStack(Mlp, {TrainStep, 3});
    writer.writeStack(MlpLinear, {Mlp, 4});
    writer.writeStack(Backward, {TrainStep, 5});
    writer.writeStack(OptimizerStep, {TrainStep, 6});
}

class RankWriter
{
public:
    RankWriter(const std::string &path, int rank, int ranks)
        : m_writer(path, TraceWriter::Mode::Bulk)
        , m_random(0x5eed0000u + static_cast<unsigned>(rank))
        , m_activationScale(rank == ranks / 2 && ranks >= 3 ? 1.3 : 1.0)
    {
        m_writer.writeMeta(metakey::Description, "synthetic data-parallel rank (tests/bench/make_rank_traces)");
        m_writer.writeMeta(metakey::AllocatorMode, "exact");
        m_writer.writeMeta(metakey::Rank, std::to_string(rank));
        m_writer.writeMeta(metakey::LocalRank, std::to_string(rank % 8));
        m_writer.writeMeta(metakey::WorldSize, std::to_string(ranks));
        m_writer.writeLane(0, Lane{Device{DeviceType::Cuda, static_cast<std::int16_t>(rank % 8)}, 7});
        writeStacks(m_writer);
        writeLayers();
    }

    std::uint64_t write(std::uint64_t targetEvents)
    {
        for (std::uint32_t sub = 0; sub < m_subLayers.size(); ++sub) {
            advance(10000);
            allocate(kind(sub) == 0 ? 48 * kMiB : 96 * kMiB, Category::Parameter, m_subLayers[sub], Phase::Other, Main);
        }
        for (std::int64_t step = 0; m_events < targetEvents; ++step)
            writeStep(step);
        m_writer.finish();
        return m_events;
    }

private:
    static int kind(std::uint32_t sub) { return static_cast<int>(sub % 2); } // 0 attention, 1 MLP

    void writeLayers()
    {
        std::uint32_t id = 0;
        m_writer.writeLayer(id++, Layer{"model", "Transformer", kNoLayer, 0});
        for (int b = 0; b < kBlocks; ++b) {
            const std::string block = "model.blocks." + std::to_string(b);
            const std::uint32_t blockId = id++;
            m_blocks.push_back(blockId);
            m_writer.writeLayer(blockId, Layer{block, "Block", 0, 0});
            m_subLayers.push_back(id);
            m_writer.writeLayer(id++, Layer{block + ".attn", "Attention", blockId, 48 * kMiB});
            m_subLayers.push_back(id);
            m_writer.writeLayer(id++, Layer{block + ".mlp", "Mlp", blockId, 96 * kMiB});
        }
    }

    void advance(std::int64_t meanNs)
    {
        m_timeNs += std::uniform_int_distribution<std::int64_t>(meanNs / 2, meanNs * 3 / 2)(m_random);
    }

    std::uint64_t allocate(std::int64_t bytes, Category category, std::uint32_t layer, Phase phase, std::uint32_t stack)
    {
        const std::uint64_t addr = m_nextAddr;
        m_nextAddr += static_cast<std::uint64_t>((bytes + 511) / 512 * 512);
        m_allocated += bytes;
        while (m_allocated > m_reserved) {
            m_writer.writeReserved(ReservedEvent{m_timeNs, kSegmentBytes, 0x100000000000ull + m_segments++ * kSegmentBytes, 0});
            m_reserved += kSegmentBytes;
        }
        m_writer.writeEvent(MemoryEvent{m_timeNs, bytes, addr, 0, layer, stack, category, phase});
        ++m_events;
        return addr;
    }

    void release(std::uint64_t addr, std::int64_t bytes, Category category, std::uint32_t layer, Phase phase, std::uint32_t stack)
    {
        m_allocated -= bytes;
        m_writer.writeEvent(MemoryEvent{m_timeNs, -bytes, addr, 0, layer, stack, category, phase});
        ++m_events;
    }

    void temporaries(std::uint32_t layer, Phase phase, std::uint32_t stack)
    {
        for (int t = 0; t < kTemporaries; ++t) {
            const std::int64_t bytes = std::uniform_int_distribution<std::int64_t>(1, 32)(m_random) * kMiB;
            advance(20000);
            const std::uint64_t addr = allocate(bytes, Category::Temporary, layer, phase, stack);
            advance(20000);
            release(addr, bytes, Category::Temporary, layer, phase, stack);
        }
    }

    void writeStep(std::int64_t step)
    {
        struct Block
        {
            std::uint64_t addr;
            std::int64_t bytes;
        };
        std::vector<std::vector<Block>> saved(m_subLayers.size());
        const std::int64_t stepBegin = m_timeNs;
        for (int b = 0; b < kBlocks; ++b) {
            const std::int64_t blockBegin = m_timeNs;
            for (std::uint32_t sub = 2 * static_cast<std::uint32_t>(b); sub < 2 * static_cast<std::uint32_t>(b) + 2; ++sub) {
                const std::int64_t begin = m_timeNs;
                const std::uint32_t stack = kind(sub) == 0 ? AttentionLinear : MlpLinear;
                for (int s = 0; s < kSaved; ++s) {
                    advance(30000);
                    const auto bytes = static_cast<std::int64_t>(
                        static_cast<double>(std::uniform_int_distribution<std::int64_t>(4, 12)(m_random) * kMiB)
                        * m_activationScale);
                    saved[sub].push_back({allocate(bytes, Category::Activation, m_subLayers[sub], Phase::Forward, stack), bytes});
                }
                temporaries(m_subLayers[sub], Phase::Forward, stack);
                m_writer.writeRange(Range{m_subLayers[sub], Phase::Forward, step, begin, m_timeNs, 0});
            }
            m_writer.writeRange(Range{m_blocks[static_cast<std::size_t>(b)], Phase::Forward, step, blockBegin, m_timeNs, 0});
        }
        for (int b = kBlocks - 1; b >= 0; --b) {
            const std::int64_t blockBegin = m_timeNs;
            for (std::uint32_t sub = 2 * static_cast<std::uint32_t>(b) + 2; sub-- > 2 * static_cast<std::uint32_t>(b);) {
                const std::int64_t begin = m_timeNs;
                if (step == 0) // gradients live from the first backward on
                    allocate(kind(sub) == 0 ? 48 * kMiB : 96 * kMiB, Category::Gradient, m_subLayers[sub], Phase::Backward,
                             Backward);
                temporaries(m_subLayers[sub], Phase::Backward, Backward);
                for (const Block &block : saved[sub]) {
                    advance(30000);
                    release(block.addr, block.bytes, Category::Activation, m_subLayers[sub], Phase::Backward, Backward);
                }
                m_writer.writeRange(Range{m_subLayers[sub], Phase::Backward, step, begin, m_timeNs, 0});
            }
            m_writer.writeRange(Range{m_blocks[static_cast<std::size_t>(b)], Phase::Backward, step, blockBegin, m_timeNs, 0});
        }
        const std::int64_t optimizerBegin = m_timeNs;
        for (std::uint32_t sub = 0; sub < m_subLayers.size(); ++sub) {
            const std::int64_t bytes = kind(sub) == 0 ? 48 * kMiB : 96 * kMiB;
            if (step == 0) { // Adam's two moments
                advance(10000);
                allocate(bytes, Category::OptimizerState, m_subLayers[sub], Phase::Optimizer, OptimizerStep);
                allocate(bytes, Category::OptimizerState, m_subLayers[sub], Phase::Optimizer, OptimizerStep);
            }
            advance(10000);
            const std::uint64_t addr = allocate(bytes, Category::Temporary, kNoLayer, Phase::Optimizer, OptimizerStep);
            advance(10000);
            release(addr, bytes, Category::Temporary, kNoLayer, Phase::Optimizer, OptimizerStep);
        }
        m_writer.writeRange(Range{kNoLayer, Phase::Optimizer, step, optimizerBegin, m_timeNs, 0});
        advance(100000);
        m_writer.writeStep(Step{step, stepBegin, m_timeNs});
    }

    TraceWriter m_writer;
    std::mt19937_64 m_random;
    double m_activationScale;
    std::vector<std::uint32_t> m_blocks, m_subLayers;
    std::int64_t m_timeNs = 1'000'000'000;
    std::uint64_t m_nextAddr = 0x7f0000000000ull;
    std::int64_t m_allocated = 0, m_reserved = 0;
    std::uint64_t m_segments = 0;
    std::uint64_t m_events = 0;
};

} // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: make_rank_traces DIR RANKS EVENTS\n");
        return 2;
    }
    const std::string dir = argv[1];
    const int ranks = std::atoi(argv[2]);
    const auto events = static_cast<std::uint64_t>(std::atoll(argv[3]));
    if (ranks < 1 || events < 1) {
        std::fprintf(stderr, "make_rank_traces: RANKS and EVENTS must be positive\n");
        return 2;
    }
    std::atomic<int> next{0};
    std::atomic<bool> failed{false};
    std::atomic<std::uint64_t> written{0};
    const auto work = [&] {
        for (int rank = next++; rank < ranks && !failed; rank = next++) {
            char name[32];
            std::snprintf(name, sizeof name, "/rank%03d.peaklens", rank);
            try {
                RankWriter writer(dir + name, rank, ranks);
                written += writer.write(events);
            } catch (const Error &error) {
                std::fprintf(stderr, "make_rank_traces: %s\n", error.what());
                failed = true;
            }
        }
    };
    {
        std::vector<std::jthread> workers;
        const unsigned threads = std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, static_cast<unsigned>(ranks));
        for (unsigned t = 0; t < threads; ++t)
            workers.emplace_back(work);
    }
    if (failed)
        return 2;
    std::printf("{\"ranks\": %d, \"events\": %llu, \"high_peak_rank\": %d}\n", ranks,
                static_cast<unsigned long long>(written.load()), ranks >= 3 ? ranks / 2 : -1);
    return 0;
}
