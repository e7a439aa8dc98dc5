// SPDX-License-Identifier: Apache-2.0
// The real collector, end to end, on a machine without a GPU: `peaklens-cli record` runs
// peaklens-test-trainer with the libcuda.so.1, libcudart and libcupti stand-ins first on
// the library path (build/standin), so the driver stand-in injects the real
// libpeaklens_cupti.so and CUPTI's contract is kept by the CUPTI stand-in. Each trace is
// checked against what the trainer did (its schedule is documented in
// standin/trainer.cpp): per-layer activation bytes, phases, steps, kernels, metadata and
// the manifest. A follower reads two of them while they are written, as `watch` and the
// app do, and must gather what a plain read of the file holds.

#include "standinenvironment.h"
#include "testsupport.h"

#include "core/analysis/layerstats.h"
#include "core/analysis/peakfinder.h"
#include "core/analysis/stepstats.h"
#include "core/analysis/tracesummary.h"
#include "core/document/filesummary.h"
#include "core/format/tracefollower.h"
#include "core/format/tracereader.h"
#include "core/plan/checkpointstrategy.h"
#include "core/plan/costmodel.h"
#include "core/plan/predictor.h"
#include "core/report/summaryjson.h"
#include "core/trace/metadata.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <csignal>
#include <memory>
#include <set>

using namespace peaklens;
using namespace peaklens::test;

namespace {

constexpr std::int64_t kMiB = 1 << 20;
constexpr std::int64_t kParameterBytes = 2 * kMiB;
constexpr std::int64_t kOutputBytes = kMiB / 2;
constexpr std::int64_t kTemporaryBytes = kMiB / 4;
constexpr std::int64_t kDeviceBytes = std::int64_t(80) << 30; // the stand-in driver's GPU (standin/cuda.cpp)

const QString kCli = QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli");
const QString kTrainer = QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-test-trainer");
const QString kCollector = QStringLiteral(PEAKLENS_BIN_DIR "/libpeaklens_cupti.so");

QProcessEnvironment standinEnvironment()
{
    return peaklens::test::standinEnvironment(QStringLiteral(PEAKLENS_STANDIN_DIR));
}

// `peaklens-cli record --out DIR [--allocator MODE] -- peaklens-test-trainer ARGS`, running.
class Recording
{
public:
    Recording(const QString &out, const QStringList &trainerArguments, const QString &allocator = QStringLiteral("exact"),
              const QProcessEnvironment &extra = {})
    {
        QProcessEnvironment environment = standinEnvironment();
        for (const QString &key : extra.keys())
            environment.insert(key, extra.value(key));
        m_process.setProcessEnvironment(environment);
        m_process.start(kCli, QStringList{QStringLiteral("record"), QStringLiteral("--allocator"), allocator,
                                          QStringLiteral("--out"), out, QStringLiteral("--"), kTrainer}
                                  + trainerArguments);
    }

    // Waits until the trainer printed a line starting with `prefix`; returns that line.
    QString waitForLine(const QString &prefix, int timeoutMs = 60000)
    {
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < timeoutMs) {
            m_out += m_process.readAllStandardOutput();
            for (const QString &line : QString::fromUtf8(m_out).split(u'\n')) {
                if (line.startsWith(prefix))
                    return line;
            }
            if (m_process.state() == QProcess::NotRunning)
                break;
            m_process.waitForReadyRead(100);
        }
        return {};
    }

    qint64 trainerPid() { return waitForLine(QStringLiteral("pid ")).mid(4).toLongLong(); }
    qint64 recordPid() const { return m_process.processId(); }
    // Whether `record` still runs, after waiting up to `waitMs` for it to end.
    bool running(int waitMs = 20) { return !m_process.waitForFinished(waitMs) && m_process.state() != QProcess::NotRunning; }

    // Waits for `record` to end; its exit code, or -1.
    int finish(int timeoutMs = 120000)
    {
        if (m_process.state() != QProcess::NotRunning && !m_process.waitForFinished(timeoutMs))
            return -1;
        if (m_process.exitStatus() != QProcess::NormalExit)
            return -1;
        m_out += m_process.readAllStandardOutput();
        m_err = m_process.readAllStandardError();
        return m_process.exitCode();
    }

    QString out() const { return QString::fromUtf8(m_out); }
    // The lines the collector wrote ("peaklens: ...").
    QStringList collectorLines() const
    {
        QStringList lines;
        for (const QString &line : QString::fromUtf8(m_err).split(u'\n')) {
            if (line.startsWith(QStringLiteral("peaklens: ")))
                lines << line;
        }
        return lines;
    }
    QString err() const { return QString::fromUtf8(m_err); }

private:
    QProcess m_process;
    QByteArray m_out;
    QByteArray m_err;
};

QStringList tracesIn(const QString &directory)
{
    QStringList paths;
    for (const QString &name : QDir(directory).entryList({QStringLiteral("*.peaklens")}, QDir::Files, QDir::Name))
        paths << QDir(directory).filePath(name);
    return paths;
}

std::int64_t activationBytes(const Trace &trace, const std::vector<LayerStats> &stats, const std::string &path)
{
    const auto layer = trace.findLayer(path);
    return layer ? stats[*layer].activationBytes : -1;
}

std::int64_t kernelsNamed(const Trace &trace, const std::string &name)
{
    return std::count_if(trace.kernels.begin(), trace.kernels.end(),
                         [&](const Kernel &kernel) { return trace.kernelNames[kernel.name] == name; });
}

// What every complete step of the trainer leaves, for layers `paths` (in order), of which
// `checkpointed` are toggled: layer i keeps its (i + 1) MiB activation for the backward
// unless toggled, and its 512 KiB output, which the next layer saves, either way.
// A trace cut short (`complete` false) may end inside a step whose ranges were committed
// before the step itself ended, and lack memory records of its last half second that
// waited for the API records of their calls: there the figures may only be higher.
void verifyLayers(const Trace &trace, const std::vector<std::string> &paths, const std::set<std::string> &checkpointed = {},
                  bool complete = true)
{
    const auto steps = std::int64_t(trace.steps.size());
    const std::vector<LayerStats> stats = computeLayerStats(trace);
    for (std::size_t i = 0; i < paths.size(); ++i) {
        const std::int64_t expected = (checkpointed.count(paths[i]) ? 0 : std::int64_t(i % 4 + 1) * kMiB) + kOutputBytes;
        const std::int64_t measured = activationBytes(trace, stats, paths[i]);
        QVERIFY2(measured == expected || (!complete && measured > expected),
                 qPrintable(qs(paths[i]) + u' ' + QString::number(activationBytes(trace, stats, paths[i]))));
        const auto layer = *trace.findLayer(paths[i]);
        for (const std::int64_t calls : {stats[layer].forwardCalls, stats[layer].backwardCalls})
            QVERIFY2(calls == steps || (!complete && calls == steps + 1),
                     qPrintable(QStringLiteral("%1 calls in %2 steps").arg(calls).arg(steps)));
    }
    // Every allocation in a step is made inside a layer's forward or backward; only the
    // weights, made before the first step, have none.
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        const MemoryEvent event = trace.events.at(i);
        if (event.deltaBytes <= 0)
            continue;
        if (event.timeNs < trace.steps.front().beginNs) {
            QCOMPARE(event.deltaBytes, kParameterBytes);
            QCOMPARE(trace.events.category(i), Category::Parameter);
            continue;
        }
        if (!trace.stepAt(event.timeNs))
            continue; // between steps: none are made there
        QVERIFY2(event.layer != kNoLayer, qPrintable(QStringLiteral("allocation %1 has no layer").arg(i)));
        const std::string &path = trace.layers[event.layer].path;
        const bool inBackward = trace.events.phase(i) == Phase::Backward;
        QVERIFY(inBackward || trace.events.phase(i) == Phase::Forward);
        if (inBackward && event.deltaBytes == kParameterBytes && !checkpointed.count(path))
            QCOMPARE(trace.events.category(i), Category::Gradient);
    }
}

// Every whole step of a plain run of `layers` layers: it begins with the weights, makes a
// temporary, an activation, an output and a gradient per layer, and peaks at the first
// gradient, with one output gone with the loss.
void verifySteps(const Trace &trace, int layers)
{
    std::int64_t activations = 0;
    for (int i = 0; i < layers; ++i)
        activations += (i + 1) * kMiB;
    auto steps = computeStepStats(trace, trace.devices().front());
    QVERIFY(steps.size() >= 2);
    for (const StepStats &step : steps) {
        QCOMPARE(step.startBytes, layers * kParameterBytes);
        QVERIFY2(
            step.allocations == 4 * layers,
            qPrintable(QStringLiteral("step %1 of %2: %3 allocations").arg(step.number).arg(steps.size()).arg(step.allocations)));
        QCOMPARE(step.allocatedBytes, activations + layers * (kTemporaryBytes + kOutputBytes + kParameterBytes));
        QCOMPARE(step.peakAllocatedBytes, layers * kParameterBytes + activations + (layers - 1) * kOutputBytes + kParameterBytes);
        QCOMPARE(step.peakPhase, Phase::Backward);
    }
}

// The rows of a trace's event columns, one struct each, to compare them row by row.
std::vector<MemoryEvent> eventRows(const MemoryEvents &events)
{
    std::vector<MemoryEvent> rows;
    rows.reserve(events.size());
    for (std::size_t i = 0; i < events.size(); ++i)
        rows.push_back(events.at(i));
    return rows;
}

template<typename Row>
QString tableDifference(const char *table, const std::vector<Row> &followed, const std::vector<Row> &read)
{
    if (followed.size() != read.size())
        return QStringLiteral("%1: %2 rows followed, %3 read").arg(QLatin1String(table)).arg(followed.size()).arg(read.size());
    const auto mismatch = std::mismatch(followed.begin(), followed.end(), read.begin());
    if (mismatch.first == followed.end())
        return {};
    return QStringLiteral("%1: row %2 of %3 differs")
        .arg(QLatin1String(table))
        .arg(mismatch.first - followed.begin())
        .arg(followed.size());
}

// Where what a follower gathered poll by poll differs from a plain read of the same file,
// as a sentence; empty when they hold the same. The writer.* keys say how the file was
// being written when each was read, not what it holds.
QString followedDifference(const Trace &followed, const Trace &read)
{
    const auto contents = [](const Trace &trace) {
        auto meta = trace.meta;
        std::erase_if(meta, [](const auto &entry) { return entry.first.starts_with("writer."); });
        return meta;
    };
    if (contents(followed) != contents(read))
        return QStringLiteral("the metadata differs");
    const std::vector<MemoryEvent> followedEvents = eventRows(followed.events);
    const std::vector<MemoryEvent> readEvents = eventRows(read.events);
    const auto [event, readEvent] =
        std::mismatch(followedEvents.begin(), followedEvents.end(), readEvents.begin(), readEvents.end());
    if (event != followedEvents.end() || readEvent != readEvents.end()) {
        if (followedEvents.size() != readEvents.size())
            return QStringLiteral("events: %1 followed, %2 read").arg(followedEvents.size()).arg(readEvents.size());
        return QStringLiteral("event %1 of %2 differs: category %3 followed, %4 read; time %5, %6")
            .arg(event - followedEvents.begin())
            .arg(followedEvents.size())
            .arg(int(event->category))
            .arg(int(readEvent->category))
            .arg(event->timeNs)
            .arg(readEvent->timeNs);
    }
    for (const QString &difference :
         {tableDifference("steps", followed.steps, read.steps), tableDifference("ranges", followed.ranges, read.ranges),
          tableDifference("kernels", followed.kernels, read.kernels),
          tableDifference("kernel names", followed.kernelNames, read.kernelNames),
          tableDifference("reserved", followed.reserved, read.reserved), tableDifference("layers", followed.layers, read.layers),
          tableDifference("lanes", followed.lanes, read.lanes), tableDifference("markers", followed.markers, read.markers)}) {
        if (!difference.isEmpty())
            return difference;
    }
    return followed.stacks == read.stacks ? QString() : QStringLiteral("the stacks differ");
}

struct PartialTrace
{
    std::size_t steps = 0;
    QString problem;
};

// Polls `follower` while `recording` runs, until the writer has committed a trace with
// memory events and a whole step: that trace's step count, or what went wrong. Every poll
// must leave the events in time order.
PartialTrace followToAPartialTrace(TraceFollower &follower, Recording &recording)
{
    QElapsedTimer clock;
    clock.start();
    while (recording.running()) {
        if (clock.elapsed() > 60000)
            return {0, QStringLiteral("no partial trace within a minute")};
        follower.poll();
        const Trace &trace = follower.trace();
        if (!trace.events.isSortedByTime())
            return {0, QStringLiteral("the events are out of time order after a poll")};
        if (follower.writer() == TraceFollower::Writer::Writing && !trace.events.empty() && !trace.steps.empty())
            return {trace.steps.size(), {}};
    }
    return {0, QStringLiteral("the run ended before a partial trace was seen")};
}

std::vector<std::string> blocks(int layers, const std::string &prefix = {})
{
    std::vector<std::string> paths;
    for (int i = 0; i < layers; ++i)
        paths.push_back(prefix + "blocks." + std::to_string(i));
    return paths;
}

} // namespace

class TestCollectorInjection : public QObject
{
    Q_OBJECT

private slots:
    void exportsOnlyItsEntryPoint();
    void recordsARun_data();
    void recordsARun();
    void appliesTheToggles();
    void stopsOnASignal_data();
    void stopsOnASignal();
    void survivesSigkill();
    void followedWhileItRecords();
    void forkedWorkerWritesNothing();
    void anotherSubscriberLeavesTrainingAlone();
    void fullDiskStopsRecordingOnly();
    void eightThreadsAtOnce();
    void twoRanksAtOnce();
    void srunTasksOnTwoNodes();
};

// The collector runs inside someone else's process: only its entry point may be visible.
void TestCollectorInjection::exportsOnlyItsEntryPoint()
{
    QProcess nm;
    nm.start(QStringLiteral("nm"), {QStringLiteral("-D"), QStringLiteral("--defined-only"), kCollector});
    if (!nm.waitForStarted())
        QSKIP("nm (binutils) is not installed");
    QVERIFY(nm.waitForFinished());
    QCOMPARE(nm.exitCode(), 0);
    QStringList symbols;
    for (const QString &line : QString::fromUtf8(nm.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts))
        symbols << line.section(u' ', -1);
    QCOMPARE(symbols, QStringList{QStringLiteral("InitializeInjection")});
}

void TestCollectorInjection::recordsARun_data()
{
    QTest::addColumn<QString>("allocator");
    QTest::newRow("exact: every tensor a cudaMalloc") << QStringLiteral("exact");
    QTest::newRow("async: every tensor a cudaMallocAsync") << QStringLiteral("async");
}

void TestCollectorInjection::recordsARun()
{
    QFETCH(QString, allocator);
    QTemporaryDir out;
    Recording recording(
        out.path(), {QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--layers"), QStringLiteral("4")}, allocator);
    const qint64 pid = recording.trainerPid();
    QCOMPARE(recording.finish(), 0);
    QVERIFY2(recording.out().contains(QStringLiteral("recorded 1 trace file(s)")), qPrintable(recording.out()));
    QCOMPARE(recording.collectorLines().size(), 1); // "wrote ..."
    QVERIFY(recording.collectorLines().front().contains(QStringLiteral("wrote ")));

    const QStringList traces = tracesIn(out.path());
    QCOMPARE(traces, QStringList{out.filePath(QStringLiteral("pid%1.peaklens").arg(pid))});
    const TracePtr trace = TraceReader::read(ss(traces.front()));

    QCOMPARE(qs(trace->metaValue(metakey::AllocatorMode)), allocator);
    QCOMPARE(qs(trace->metaValue(metakey::ProcessId)), QString::number(pid));
    QVERIFY(qs(trace->metaValue(metakey::Command)).contains(QStringLiteral("peaklens-test-trainer")));
    QCOMPARE(qs(trace->metaValue(metakey::WorkingDirectory)), QDir::currentPath());
    QCOMPARE(trace->metaValue(metakey::TorchVersion), std::string("stand-in")); // from the manifest
    QCOMPARE(trace->metaValue(metakey::Checkpoint), std::string());
    QCOMPARE(trace->metaValue(metakey::Rank), std::string());
    QCOMPARE(trace->metaValue(metakey::DeviceMemory), std::to_string(kDeviceBytes)); // from the driver

    QCOMPARE(trace->steps.size(), std::size_t(3));
    for (std::size_t i = 0; i < 3; ++i)
        QCOMPARE(trace->steps[i].number, std::int64_t(i));
    // `record` stored the figures of its summary in the finished file: the same as its
    // events give.
    const FileSummary stored = summarizeFile(ss(traces.front()));
    QVERIFY(stored.stored);
    QCOMPARE(summaryToJson(*stored.trace, stored.summary, std::nullopt), summaryToJson(*trace, summarize(*trace), std::nullopt));
    for (const std::string &path : blocks(4)) {
        const auto layer = trace->findLayer(path);
        QVERIFY(layer);
        QCOMPARE(trace->layers[*layer].kind, std::string("StandinBlock"));
        QCOMPARE(trace->layers[*layer].parameterBytes, kParameterBytes);
    }
    verifyLayers(*trace, blocks(4));
    verifySteps(*trace, 4);

    // 4 forward, 4 backward and 1 optimizer kernel a step, one after another on the
    // default stream.
    QCOMPARE(kernelsNamed(*trace, "forward_kernel"), 12);
    QCOMPARE(kernelsNamed(*trace, "backward_kernel"), 12);
    QCOMPARE(kernelsNamed(*trace, "optimizer_kernel"), 3);
    for (std::size_t i = 1; i < trace->kernels.size(); ++i)
        QVERIFY(trace->kernels[i].beginNs >= trace->kernels[i - 1].endNs);

    // The peak: 8 MiB of weights, 1+2+3+4 MiB of activations, three outputs (the last one
    // went with the loss) and the first gradient, in the backward of the last layer.
    const PeakReport peaks = findPeaks(*trace);
    QVERIFY(peaks.primary);
    const DevicePeak &peak = peaks.devices[*peaks.primary];
    QCOMPARE(peak.allocatedBytes, 8 * kMiB + 10 * kMiB + 3 * kOutputBytes + kParameterBytes);
    QCOMPARE(trace->events.phase(*peak.eventIndex), Phase::Backward);
    QCOMPARE(trace->layers[trace->events.layer(*peak.eventIndex)].path, std::string("blocks.3"));
}

// PEAKLENS_CHECKPOINT reaches the training script, the manifest says what it applied, and
// the planner's prediction from the plain run does not promise less than the toggled run
// measures.
void TestCollectorInjection::appliesTheToggles()
{
    QTemporaryDir plainOut;
    Recording plain(plainOut.path(), {QStringLiteral("--steps"), QStringLiteral("3")});
    QCOMPARE(plain.finish(), 0);
    const TracePtr baseline = TraceReader::read(ss(tracesIn(plainOut.path()).front()));

    QTemporaryDir toggledOut;
    QProcessEnvironment toggles;
    toggles.insert(QStringLiteral("PEAKLENS_CHECKPOINT"), QStringLiteral("blocks.1,blocks.3"));
    Recording toggled(toggledOut.path(), {QStringLiteral("--steps"), QStringLiteral("3")}, QStringLiteral("exact"), toggles);
    QCOMPARE(toggled.finish(), 0);
    const TracePtr trace = TraceReader::read(ss(tracesIn(toggledOut.path()).front()));
    QCOMPARE(trace->metaValue(metakey::Checkpoint), std::string("blocks.1,blocks.3"));
    verifyLayers(*trace, blocks(4), {"blocks.1", "blocks.3"});

    const CostModel model = buildCostModel(*baseline);
    std::vector<std::string> chain;
    for (const ChainLayer &layer : model.layers)
        chain.push_back(layer.path);
    const Prediction predicted = predict(model, CheckpointStrategy::parse("blocks.1,blocks.3").schedule(chain, chain));
    const PeakReport measured = findPeaks(*trace);
    // Checkpointing blocks.3 gives nothing back (its recompute peaks where its activation
    // stood), blocks.1 is recomputed later: 8 + 1 + 3 + 3 * 0.5 MiB before the backward,
    // then blocks.3's recompute and its gradient.
    QCOMPARE(measured.devices[*measured.primary].allocatedBytes, 19 * kMiB + kMiB / 2);
    QVERIFY2(predicted.peakBytes >= measured.devices[*measured.primary].allocatedBytes,
             qPrintable(QStringLiteral("predicted %1, measured %2")
                            .arg(predicted.peakBytes)
                            .arg(measured.devices[*measured.primary].allocatedBytes)));
}

void TestCollectorInjection::stopsOnASignal_data()
{
    QTest::addColumn<int>("signal");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<bool>("finished");
    // Ctrl+C: the script stops after its step and exits through its exit handlers, so the
    // collector finishes the file (manifest applied).
    QTest::newRow("SIGINT") << int(SIGINT) << 130 << true;
    // A stop from the app or the batch system: the script dies at once; the file holds
    // what the collector committed (about every half second).
    QTest::newRow("SIGTERM") << int(SIGTERM) << 128 + SIGTERM << false;
}

void TestCollectorInjection::stopsOnASignal()
{
    QFETCH(int, signal);
    QFETCH(int, exitCode);
    QFETCH(bool, finished);
    QTemporaryDir out;
    Recording recording(out.path(),
                        {QStringLiteral("--steps"), QStringLiteral("100000"), QStringLiteral("--step-ms"), QStringLiteral("10")});
    QVERIFY(!recording.waitForLine(QStringLiteral("step 150")).isEmpty()); // > 1.5 s: commits have happened
    ::kill(static_cast<pid_t>(recording.recordPid()), signal);
    QCOMPARE(recording.finish(), exitCode);
    QVERIFY(recording.out().contains(QStringLiteral("the command exited with %1").arg(exitCode)));
    const TracePtr trace = TraceReader::read(ss(tracesIn(out.path()).front()));
    QVERIFY(trace->steps.size() >= 3);
    verifyLayers(*trace, blocks(4), {}, finished);
    if (finished)
        verifySteps(*trace, 4);
    QCOMPARE(trace->layers[*trace->findLayer("blocks.0")].kind == "StandinBlock", finished);
    if (finished)
        QVERIFY(recording.out().contains(QStringLiteral("interrupted")));
}

// SIGKILL: no exit handler, no last flush; everything up to the last commit is readable,
// and a follower of the run says it stopped, holding just that.
void TestCollectorInjection::survivesSigkill()
{
    QTemporaryDir out;
    Recording recording(out.path(),
                        {QStringLiteral("--steps"), QStringLiteral("100000"), QStringLiteral("--step-ms"), QStringLiteral("10")});
    const qint64 pid = recording.trainerPid();
    const QString path = out.filePath(QStringLiteral("pid%1.peaklens").arg(pid));
    QVERIFY(QTest::qWaitFor([&] { return QFile::exists(path); }, 60000));
    TraceFollower follower(ss(path));
    const PartialTrace partial = followToAPartialTrace(follower, recording);
    QVERIFY2(partial.problem.isEmpty(), qPrintable(partial.problem));
    QVERIFY(!recording.waitForLine(QStringLiteral("step 150")).isEmpty());
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    QCOMPARE(recording.finish(), 128 + SIGKILL);
    QCOMPARE(recording.collectorLines(), QStringList{});
    follower.poll();
    QCOMPARE(follower.writer(), TraceFollower::Writer::Stopped);
    const TracePtr trace = TraceReader::read(ss(path));
    QVERIFY(trace->steps.size() >= 2);
    QVERIFY(!summarizeFile(ss(path)).stored); // left as the killed run left it
    verifyLayers(*trace, blocks(4), {}, false);
    // Categories included: once the writer is gone, the follower works them out from
    // lifetimes as a plain read does.
    const QString difference = followedDifference(follower.trace(), *trace);
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
    QVERIFY(!follower.poll().changedAnything());
}

// `peaklens-cli watch` and the app follow a recording while it trains: a follower sees
// the run grow from its first commits on, warned against the GPU's memory from the
// start, and what it gathered poll by poll is what a plain read of the finished file
// holds. The test ends the run (--stop-file) only once a partial trace has been seen.
void TestCollectorInjection::followedWhileItRecords()
{
    QTemporaryDir out;
    const QString stop = out.filePath(QStringLiteral("stop"));
    Recording recording(out.path(), {QStringLiteral("--steps"), QStringLiteral("100000"), QStringLiteral("--step-ms"),
                                     QStringLiteral("10"), QStringLiteral("--stop-file"), stop});
    const qint64 pid = recording.trainerPid();
    const QString path = out.filePath(QStringLiteral("pid%1.peaklens").arg(pid));
    QVERIFY(QTest::qWaitFor([&] { return QFile::exists(path); }, 60000));
    TraceFollower follower(ss(path));
    const PartialTrace partial = followToAPartialTrace(follower, recording);
    QVERIFY2(partial.problem.isEmpty(), qPrintable(partial.problem));
    const std::size_t partialSteps = partial.steps;
    QCOMPARE(follower.trace().metaValue(metakey::DeviceMemory), std::to_string(kDeviceBytes));
    QVERIFY(follower.trace().metaValue(metakey::Command).find("peaklens-test-trainer") != std::string::npos);

    // One more step has ended when the trainer prints its number: the finished trace holds
    // more steps than the partial one.
    QVERIFY(!recording.waitForLine(QStringLiteral("step %1").arg(partialSteps)).isEmpty());
    QVERIFY(QFile(stop).open(QIODevice::WriteOnly));
    while (recording.running()) {
        follower.poll();
        QVERIFY(follower.trace().events.isSortedByTime());
    }
    QCOMPARE(recording.finish(), 0);
    QVERIFY2(recording.out().contains(QStringLiteral("recorded 1 trace file(s)")), qPrintable(recording.out()));

    follower.poll();
    QCOMPARE(follower.writer(), TraceFollower::Writer::Finished);
    const TracePtr whole = TraceReader::read(ss(path));
    QVERIFY2(partialSteps < whole->steps.size(),
             qPrintable(QStringLiteral("%1 steps followed, %2 in the end").arg(partialSteps).arg(whole->steps.size())));
    const QString difference = followedDifference(follower.trace(), *whole);
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
    QVERIFY(!follower.poll().changedAnything());
    verifyLayers(follower.trace(), blocks(4));
    verifySteps(follower.trace(), 4);
}

// A data-loader worker forked from the training process inherits the collector, its exit
// handler and CUPTI, and must write nothing: one trace, the parent's, complete.
void TestCollectorInjection::forkedWorkerWritesNothing()
{
    QTemporaryDir out;
    Recording recording(out.path(), {QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--fork-worker")});
    const qint64 pid = recording.trainerPid();
    QCOMPARE(recording.finish(), 0);
    QCOMPARE(tracesIn(out.path()), QStringList{out.filePath(QStringLiteral("pid%1.peaklens").arg(pid))});
    QCOMPARE(recording.collectorLines().size(), 1);
    const TracePtr trace = TraceReader::read(ss(tracesIn(out.path()).front()));
    QVERIFY(!trace->findLayer("loader"));
    QCOMPARE(trace->steps.size(), std::size_t(3));
    verifyLayers(*trace, blocks(4));
}

// A profiler already subscribed (Nsight Systems, torch.profiler): one line, no trace, and
// the training runs to its end.
void TestCollectorInjection::anotherSubscriberLeavesTrainingAlone()
{
    QTemporaryDir out;
    Recording recording(out.path(), {QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--subscribe-first")});
    QCOMPARE(recording.finish(), 0);
    QVERIFY(recording.out().contains(QStringLiteral("step 2")));
    QCOMPARE(recording.collectorLines().size(), 1);
    QVERIFY2(recording.collectorLines().front().contains(QStringLiteral("another CUPTI client")), qPrintable(recording.err()));
    QCOMPARE(tracesIn(out.path()), QStringList{});
}

// The disk fills up mid-run (a 512 KiB tmpfs in a mount namespace of its own): one line,
// recording stops, the training goes on, and what was committed stays readable.
void TestCollectorInjection::fullDiskStopsRecordingOnly()
{
    const QString unshare = QStandardPaths::findExecutable(QStringLiteral("unshare"));
    if (unshare.isEmpty())
        QSKIP("unshare (util-linux) is not installed");
    QTemporaryDir mountPoint;
    QTemporaryDir kept;
    const QString script =
        QStringLiteral("mount -t tmpfs -o size=512k tmpfs \"$1\" || exit 99\n"
                       "\"$2\" record --backend cupti --out \"$1\" -- \"$3\" --steps 1000 --layers 2 --step-ms 5\n"
                       "code=$?\n"
                       "cp \"$1\"/*.peaklens* \"$4\"/\n"
                       "exit $code\n");
    QProcess process;
    process.setProcessEnvironment(standinEnvironment());
    process.start(unshare, {QStringLiteral("--map-root-user"), QStringLiteral("--mount"), QStringLiteral("sh"),
                            QStringLiteral("-c"), script, QStringLiteral("sh"), mountPoint.path(), kCli, kTrainer, kept.path()});
    QVERIFY(process.waitForFinished(120000));
    if (process.exitCode() == 99 || (process.exitCode() != 0 && process.readAllStandardError().contains("unshare")))
        QSKIP("this machine does not allow a private tmpfs mount (user and mount namespaces)");
    QCOMPARE(process.exitCode(), 0);
    const QString out = QString::fromUtf8(process.readAllStandardOutput());
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QVERIFY(out.contains(QStringLiteral("step 999"))); // the training ran to its end
    const QStringList lines = err.split(u'\n').filter(QRegularExpression(QStringLiteral("^peaklens: ")));
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines.front().startsWith(QStringLiteral("peaklens: recording stopped")), qPrintable(err));
    const TracePtr trace = TraceReader::read(ss(tracesIn(kept.path()).front()));
    QVERIFY(trace->steps.size() >= 2);
    verifyLayers(*trace, blocks(2), {}, false);
}

// Eight model replicas run their forward and backward passes at the same time, each on
// threads of its own: every allocation still lands in the layer of its own thread.
void TestCollectorInjection::eightThreadsAtOnce()
{
    QTemporaryDir out;
    Recording recording(out.path(), {QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--layers"),
                                     QStringLiteral("4"), QStringLiteral("--threads"), QStringLiteral("8")});
    QCOMPARE(recording.finish(), 0);
    const TracePtr trace = TraceReader::read(ss(tracesIn(out.path()).front()));
    std::vector<std::string> paths;
    for (int k = 0; k < 8; ++k) {
        const auto replica = blocks(4, "r" + std::to_string(k) + ".");
        paths.insert(paths.end(), replica.begin(), replica.end());
    }
    verifyLayers(*trace, paths);
    QCOMPARE(kernelsNamed(*trace, "forward_kernel"), 3 * 8 * 4);
}

// Two ranks started at once, as torchrun starts them: one trace each, named and tagged by
// rank, each complete.
void TestCollectorInjection::twoRanksAtOnce()
{
    QTemporaryDir out;
    Recording recording(out.path(),
                        {QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--ranks"), QStringLiteral("2")});
    QCOMPARE(recording.finish(), 0);
    const QStringList traces = tracesIn(out.path());
    QCOMPARE(traces.size(), 2);
    for (int rank = 0; rank < 2; ++rank) {
        QVERIFY(QFileInfo(traces[rank]).fileName().startsWith(QStringLiteral("rank%1-pid").arg(rank)));
        const TracePtr trace = TraceReader::read(ss(traces[rank]));
        QCOMPARE(trace->metaValue(metakey::Rank), std::to_string(rank));
        QCOMPARE(trace->metaValue(metakey::LocalRank), std::to_string(rank));
        QCOMPARE(trace->metaValue(metakey::WorldSize), std::string("2"));
        QCOMPARE(trace->steps.size(), std::size_t(3));
        verifyLayers(*trace, blocks(4));
    }
}

// srun starts `peaklens-cli record` once per task, on several nodes writing to one shared
// folder, with Slurm's variables instead of torchrun's: the traces are named and tagged by
// the task's global rank, so no two collide.
void TestCollectorInjection::srunTasksOnTwoNodes()
{
    constexpr int kTasks = 4;
    QTemporaryDir out;
    std::vector<std::unique_ptr<Recording>> tasks;
    for (int task = 0; task < kTasks; ++task) {
        QProcessEnvironment slurm;
        slurm.insert(QStringLiteral("SLURM_PROCID"), QString::number(task));
        slurm.insert(QStringLiteral("SLURM_LOCALID"), QString::number(task % 2));
        slurm.insert(QStringLiteral("SLURM_NTASKS"), QString::number(kTasks));
        tasks.push_back(std::make_unique<Recording>(out.path(), QStringList{QStringLiteral("--steps"), QStringLiteral("2")},
                                                    QStringLiteral("exact"), slurm));
    }
    for (auto &task : tasks)
        QCOMPARE(task->finish(), 0);
    const QStringList traces = tracesIn(out.path());
    QCOMPARE(traces.size(), kTasks);
    for (int task = 0; task < kTasks; ++task) {
        QVERIFY(QFileInfo(traces[task]).fileName().startsWith(QStringLiteral("rank%1-pid").arg(task)));
        const TracePtr trace = TraceReader::read(ss(traces[task]));
        QCOMPARE(trace->metaValue(metakey::Rank), std::to_string(task));
        QCOMPARE(trace->metaValue(metakey::LocalRank), std::to_string(task % 2));
        QCOMPARE(trace->metaValue(metakey::WorldSize), std::to_string(kTasks));
        QCOMPARE(trace->steps.size(), std::size_t(2));
        verifyLayers(*trace, blocks(4));
    }
}

QTEST_GUILESS_MAIN(TestCollectorInjection)
#include "tst_collectorinjection.moc"
