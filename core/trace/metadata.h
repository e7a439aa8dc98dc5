// SPDX-License-Identifier: Apache-2.0
#pragma once
// Well-known keys of a trace's metadata (the meta table of the native file).

#include <string_view>

namespace peaklens::metakey {

inline constexpr std::string_view SourceFormat = "source.format";   // "peaklens", "trace-text", "torch-snapshot", ...
inline constexpr std::string_view SourcePath = "source.path";       // the file it was imported from
inline constexpr std::string_view Description = "description";      // a sentence on what this trace is
inline constexpr std::string_view DeviceName = "device.name";       // "NVIDIA H100 80GB HBM3"
inline constexpr std::string_view AllocatorMode = "allocator.mode"; // exact | async | native
inline constexpr std::string_view AllocatorView = "allocator.view"; // recorded: "tensors", or "segments" (native mode)
inline constexpr std::string_view Command = "command";              // recorded command line, JSON array
inline constexpr std::string_view WorkingDirectory = "cwd";
inline constexpr std::string_view Environment = "env";              // JSON object, the subset needed to relaunch
inline constexpr std::string_view ReplaySpec = "replay.spec";       // JSON model spec of peaklens-replay
inline constexpr std::string_view ReplayOptions = "replay.options"; // JSON: steps, warmup, device, dtype, micro_batches
inline constexpr std::string_view ReplayResult = "replay.result";   // JSON: what peaklens-replay --json printed
inline constexpr std::string_view Checkpoint = "checkpoint";        // comma-separated layer paths toggled on
// A trace rewritten as one rank of a sharded run holds it (plan --shard-degree): a sentence.
inline constexpr std::string_view Sharding = "plan.sharding";
// Comma-separated layer paths of the chain the writer checkpoints (peaklens-replay's), in
// order: the planner's chain when no other is asked for.
inline constexpr std::string_view Chain = "chain";
// JSON object: layer path -> nanoseconds checkpointing it was measured to add to a step
// (peaklens-replay's calibration steps)
inline constexpr std::string_view CheckpointCosts = "checkpoint.costs";
// The same paths -> how far the calibration rounds behind each cost strayed from it: the
// largest distance of a round from the median, in nanoseconds.
inline constexpr std::string_view CheckpointCostSpreads = "checkpoint.cost_spreads";
inline constexpr std::string_view Categories = "categories"; // "lifetime": classify on load (lifetimecategories.h)
inline constexpr std::string_view Rank = "rank";             // recorded traces: RANK, LOCAL_RANK, WORLD_SIZE, pid
inline constexpr std::string_view LocalRank = "local_rank";
inline constexpr std::string_view WorldSize = "world_size";
inline constexpr std::string_view ProcessId = "pid";
inline constexpr std::string_view TorchVersion = "torch.version";     // recorded: the training's PyTorch
inline constexpr std::string_view ImportWarnings = "import.warnings"; // what the import ignored, a sentence a line
inline constexpr std::string_view Window = "import.window"; // opened as a window of a bigger file: which events, a sentence
inline constexpr std::string_view CreatedBy = "created.by"; // "peaklens 0.1.0"
// "none" for a snapshot of the allocator's state at one moment, with no history recorded:
// its blocks are events at time 0, not a timeline.
inline constexpr std::string_view History = "history";
// For such a snapshot, the allocator's own sizes of the blocks allocated at dump time (the
// events hold the sizes asked for): "cuda:0 25513406464", a line a device.
inline constexpr std::string_view BlockBytesAtDump = "allocator.block_bytes_at_dump";
// Files written while a run goes on (TraceWriter's streaming mode): "writing" until the
// writer finishes the file, then "finished"; and "HOST PID" of the writing process, so a
// reader following the file can tell a writer that stopped without finishing it.
inline constexpr std::string_view WriterState = "writer.state";
// The memory the device of the run can hold, in bytes (a GPU's total memory, a CPU
// replay's --memory-limit): what a run followed live is warned against.
inline constexpr std::string_view DeviceMemory = "device.memory";
inline constexpr std::string_view WriterProcess = "writer.process";
// A copy of a file being written on another machine (tracemirror.h): the original's
// writer.process; the copy's own names the process that receives it.
inline constexpr std::string_view WriterSource = "writer.source";

} // namespace peaklens::metakey
