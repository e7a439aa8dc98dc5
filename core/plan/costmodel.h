// SPDX-License-Identifier: Apache-2.0
#pragma once
// The checkpointing cost model of one training step, measured from a trace: the chain of
// checkpointable layers with what each keeps for backward, frees when checkpointed and
// makes again when recomputed, and the measured memory curve cut into segments by which
// layers' activations are alive. docs/planning.md describes the model and its limits.

#include "chainselection.h"
#include "checkpointschedule.h"
#include "operatoroutputs.h"

#include "core/trace/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peaklens {

struct PeakReport;

// What a unit's forward left for its backward, in the pass savingBytes was taken from:
// the allocating events (indices into the trace's events) of its blocks still live when
// its backward began, in allocation order, and which of them is its output (SIZE_MAX:
// none was live). The activation list shows them block by block.
struct KeptBlocks
{
    std::vector<std::size_t> events;
    std::size_t outputEvent = SIZE_MAX;
};

// A module inside a chain layer (one of its parts) that can be checkpointed on its own
// while the rest of the layer runs plainly, measured as a chain layer is, per pass.
struct ChainPart
{
    std::uint32_t layer = kNoLayer;
    std::string path;
    // d: its forward's blocks, but its output, still live when its backward begins: what
    // checkpointing it frees from the end of its layer's forward until then; less its
    // input, where the measured step had freed that by then and a checkpoint keeps it.
    std::int64_t savingBytes = 0;
    // The most its checkpoint holds in its backward beyond the measured one (regenerated
    // blocks, the recomputed output, the output's gradient).
    std::int64_t heldInBackwardBytes = 0;
    std::int64_t forwardNs = 0;         // its forwards in one step, all passes
    std::int64_t recomputeNs = 0;       // what checkpointing it adds: measured ("checkpoint.costs"), else its forward time
    std::int64_t recomputeSpreadNs = 0; // how far recomputeNs may be off (its calibration rounds' farthest from their median)
    KeptBlocks kept;
    std::vector<std::int64_t> backwardBeginsNs, backwardEndsNs; // per pass
    std::vector<std::int64_t> forwardEndsNs;                    // per pass
};

// The highest measured point of a chain layer's forward after some of its parts' forwards
// ended (a bit each): checkpointed, those parts have freed their saving by then.
struct ForwardPiece
{
    std::uint64_t ended = 0;
    std::int64_t peakBytes = INT64_MIN, peakTimeNs = 0;
};

// A stretch of a chain layer's backward, in one pass, between its parts' backward
// boundaries: which parts' backward has not begun (and so would still be freed) and which
// runs, with the highest measured level, and per running part the highest level plus what
// its checkpoint would hold. Or the top of a part's recompute (recomputeOf set): its
// level as the part's backward begins, less its live blocks, plus its forward's rise.
struct BackwardPiece
{
    std::uint64_t pending = 0, within = 0; // a bit per part
    std::int64_t levelPeakBytes = INT64_MIN, levelPeakTimeNs = 0;
    std::vector<std::pair<std::size_t, std::int64_t>> heldPeakBytes; // (part, bytes)
    std::size_t recomputeOf = SIZE_MAX;
};

// A chain layer's quantities. Memory is measured from the blocks its forward allocates,
// in each pass of the step (a micro-batch's forward and backward); where passes differ,
// the figure that predicts more memory is kept (the highest, or for savingBytes the
// lowest), so a prediction never rests on the most favourable pass.
struct ChainLayer
{
    std::uint32_t layer = kNoLayer;
    std::string path;
    std::int64_t retainedBytes = 0;    // A: allocated in its forward and still live when the forward ends
    std::int64_t outputBytes = 0;      // o: the newest of those, its output, which the next layer keeps either way
    std::int64_t savingBytes = 0;      // d: the rest of A still live when its backward begins; what checkpointing frees
    std::int64_t regeneratedBytes = 0; // x: the part of A already freed when its backward begins, made again by a recompute
    // h: the most its backward holds, when checkpointed, beyond the measured backward: the
    // regenerated blocks, the recomputed output and the output's gradient (kept until
    // the checkpoint's backward returns, where the measured one frees them early).
    std::int64_t heldInBackwardBytes = 0;
    std::int64_t forwardRiseBytes = 0;     // w: the most its forward's own blocks hold at once
    std::int64_t levelAtBackwardBytes = 0; // L: measured allocated bytes as its backward begins
    // B: the part of A still live when the next layer's forward ends: what a segment that
    // holds both frees of it (the output too, when the next layer keeps it for backward).
    std::int64_t keptBytes = 0;
    bool outputKept = false; // its output among them in every pass: the next layer keeps its input for backward
    // Its output still live as its own backward began, in some pass: it keeps it for its
    // backward itself (a block ending in a ReLU saves the ReLU's result).
    bool outputSavedByItself = false;
    // L less A's blocks still live then: where the recompute of a segment ending here starts.
    std::int64_t levelBeforeRecomputeBytes = 0;
    // When it is checkpointed, before what other checkpoints free: the top of its
    // recompute (L - A + w, A's blocks still live at L taken out), and of its backward (the
    // highest of the measured level plus what the checkpoint holds beyond it at that time).
    std::int64_t recomputePeakBytes = 0;
    std::int64_t backwardPeakBytes = 0;
    std::int64_t recomputePeakTimeNs = 0;
    std::int64_t backwardPeakTimeNs = 0;
    // The highest measured level during its backward (what a backward holds when no
    // checkpoint ends at this layer).
    std::int64_t backwardLevelPeakBytes = INT64_MIN;
    std::int64_t backwardLevelPeakTimeNs = 0;
    // The same, run plainly keeping what it saves for backward in host memory
    // (CurvePoint::bytesOffloaded).
    std::int64_t offloadedBackwardPeakBytes = INT64_MIN, offloadedBackwardPeakTimeNs = 0;
    std::int64_t forwardNs = 0; // f: its forwards in one step, all passes
    // What was measured where a layer's forward (backward) stood far above the chain's
    // others, as a fresh process's first call does (a warm-up): forwardNs (backwardNs)
    // then holds the chain's median instead.
    std::optional<std::int64_t> outlierForwardNs, outlierBackwardNs;
    // What checkpointing it adds to a step: measured by peaklens-replay's calibration
    // steps where the trace has them (its "checkpoint.costs"), else f.
    std::int64_t recomputeNs = 0;
    // How far recomputeNs may be off: its calibration rounds' farthest from their median;
    // from forward times, their spread over the steps (at least the chain's, recomputeSpreadNs).
    std::int64_t recomputeSpreadNs = 0;
    std::int64_t backwardNs = 0; // b: its backwards in one step
    KeptBlocks kept;
    // Per operator, the outputs its forward's calls returned and their time (in the pass
    // `kept` is from), its own output left out: what a per-op policy saving that operator
    // keeps, and the share of the recompute it spares.
    OperatorProfile operators;
    std::vector<std::int64_t> backwardBeginsNs; // per pass, where a recompute runs
    // Its parts that can be checkpointed on their own (at most 64), in forward order, and
    // its backward cut at their boundaries, every pass.
    std::vector<ChainPart> parts;
    std::vector<BackwardPiece> backwardPieces;
    // Its segment's forward cut where its parts' forwards end: the highest point before the
    // first ends (its segment's forward peak otherwise), and a piece for each set of parts
    // ended. Empty without parts.
    std::int64_t forwardBeforePartsBytes = INT64_MIN, forwardBeforePartsTimeNs = 0;
    std::vector<ForwardPiece> forwardPieces;
    // What checkpointing these parts (a bit each) frees, and the highest point of its
    // backward then (the parts' recomputes included), with its time. With no parts: the
    // measured backward's highest level.
    std::int64_t partSavingBytes(std::uint64_t parts) const;
    std::pair<std::int64_t, std::int64_t> backwardPeakWithParts(std::uint64_t parts) const;
    // The highest point of its forward after its first part's forward ended, with these
    // parts checkpointed, and its time; INT64_MIN without pieces.
    std::pair<std::int64_t, std::int64_t> forwardPeakWithParts(std::uint64_t parts) const;
    // Checkpointed with a per-op policy saving `ops` (overload names, sorted): what the
    // policy keeps through the forward, and what it changes in the recompute's time (its
    // operators' share of the forward spared, the policy's dispatch added).
    std::int64_t policyKeptBytes(const std::vector<std::string> &ops) const;
    std::int64_t policyNs(const std::vector<std::string> &ops) const;
};

// Host memory's bandwidth to and from the device, for activations kept in host memory, when
// the plan is given none: what pinned copies reach over PCIe 4.0 x16.
inline constexpr double kHostBandwidthBytesPerSecond = 25e9;

inline constexpr std::uint32_t kNoChainLayer = UINT32_MAX;

struct CurvePoint
{
    std::int64_t timeNs = 0;
    std::int64_t bytes = 0;    // measured allocated bytes from this time on
    std::uint32_t segment = 0; // how many chain layers' activations of the running pass are alive
    bool backwardSide = false; // the running pass's backward has reached the chain
    Phase phase = Phase::Other;
    std::uint32_t backwardOf = kNoChainLayer; // the chain layer whose backward runs
    std::int64_t heldBytes = 0;               // in a chain layer's backward: what its checkpoint would hold beyond this
    std::uint64_t partsEnded = 0;             // in a chain layer's forward: those of its parts whose forward has ended
    // In a chain layer's backward: of what its forward left for it (its blocks still live
    // as its backward began, but its output, and its input where still live), what is still
    // live, and what the next release of them frees (what the node running now uses). In a
    // chain layer's forward: of what it leaves for its backward, what it has made, and what
    // the operator running uses.
    std::int64_t movedLiveBytes = 0, movedNextBytes = 0;
    // The level with that layer run plainly, keeping what it leaves in host memory: only
    // what the operator or node running uses is on the device. (Kept in bfloat16, a
    // layer's own forward and backward are taken as measured: the packed copies of views
    // and of tensors several nodes unpack are not in the trace.)
    std::int64_t bytesOffloaded() const { return bytes - movedLiveBytes + movedNextBytes; }
};

struct CostModel
{
    Device device;
    std::optional<std::int64_t> step;
    std::int64_t stepBeginNs = 0;
    std::int64_t stepTimeNs = 0;
    std::int64_t stepTimeSpreadNs = 0; // median absolute deviation of the step times; 0 with one step
    // How far one layer's forward time may be off: the median absolute deviation of the
    // chain layers' forward times (over the steps, where the trace has several). Each
    // layer's and part's own recomputeSpreadNs is what a prediction adds up.
    std::int64_t recomputeSpreadNs = 0;
    std::size_t passes = 1;         // forward and backward passes in the step (micro-batches)
    bool recomputeMeasured = false; // recomputeNs come from calibration steps
    std::vector<ChainLayer> layers; // in forward order
    std::vector<CurvePoint> curve;  // the measured step
    // Per segment p = 0..N, the highest measured point with exactly layers 0..p-1 alive:
    // before the backward reaches them, and after it has (outside any chain layer's
    // backward, which ChainLayer::backwardLevelPeakBytes covers). INT64_MIN: no point.
    std::vector<std::int64_t> forwardPeakBytes, gapPeakBytes;
    std::vector<std::size_t> forwardPeakPoint, gapPeakPoint; // index into curve
    // The same forward peaks with the layer whose forward runs (layer p) run plainly,
    // keeping what it leaves in host memory (CurvePoint::bytesOffloaded).
    std::vector<std::int64_t> offloadedForwardPeakBytes;
    std::vector<std::size_t> offloadedForwardPeakPoint;
    // The highest measured point with layers 0..p-1 alive on the forward side, without
    // layer p's forward after its first part's forward ended (its forwardPieces, which
    // depend on its parts).
    std::int64_t forwardBeforePartsBytes(std::size_t p) const;
    std::int64_t measuredPeakBytes = 0;
    // The trace ranged no backward for some chain layers (imported without PeakLens's
    // helper): their backward spans were estimated from when the blocks their forward
    // left for the backward were freed.
    bool backwardEstimated = false;
    // Of copies between host and device memory (an offload's out in the forward and back in
    // the backward), one way.
    double hostBandwidthBytesPerSecond = kHostBandwidthBytesPerSecond;
    // Chain layer k run plainly, keeping what it saves for backward elsewhere in `form`:
    // what that frees on the device from the end of its forward until the backward reaches
    // it (predictor.cpp says what). `beforeAsMeasured`: the layer before runs as measured
    // (no unit holds it), and so keeps its own output for its backward where it did.
    std::int64_t keptElsewhereSaving(std::size_t k, KeptForm form, bool beforeAsMeasured) const;
    // Offloaded beside layers run as measured: what it frees on the device, the planner's
    // saving for it.
    std::int64_t keptElsewhereBytes(std::size_t k) const { return keptElsewhereSaving(k, KeptForm::Host, true); }
    std::int64_t hostRoundTripNs(std::int64_t bytes) const;
};

// Throws Error with a sentence when the trace has no usable chain.
CostModel buildCostModel(const Trace &trace, const ChainSelection &selection = {});
// The same with the trace's peaks (findPeaks) already found: a pass over every event fewer.
CostModel buildCostModel(const Trace &trace, const ChainSelection &selection, const PeakReport &peaks);

} // namespace peaklens
