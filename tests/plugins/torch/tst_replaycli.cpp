// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/peakfinder.h"
#include "core/format/tracefollower.h"
#include "core/format/tracereader.h"
#include "core/import/traceloader.h"
#include "core/plan/replayresult.h"
#include "core/plan/steptimecomparison.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <csignal>

using namespace peaklens;
using test::qs;
using test::ss;

namespace {

const QStringList kSmallGpt = {
    QStringLiteral("--layers"), QStringLiteral("2"), QStringLiteral("--d-model"), QStringLiteral("32"),
    QStringLiteral("--heads"),  QStringLiteral("2"), QStringLiteral("--seq"),     QStringLiteral("32"),
    QStringLiteral("--batch"),  QStringLiteral("4"), QStringLiteral("--steps"),   QStringLiteral("2"),
    QStringLiteral("--warmup"), QStringLiteral("1"), QStringLiteral("--device"),  QStringLiteral("cpu")};

test::ToolRun replay(const QStringList &arguments)
{
    return test::runTool(QStringLiteral("peaklens-replay"), arguments);
}

} // namespace

class tst_ReplayCli : public QObject
{
    Q_OBJECT

private slots:
    void jsonResultAndTrace()
    {
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("run.peaklens"));
        const auto run = replay(QStringList(kSmallGpt) << QStringLiteral("--checkpoint") << QStringLiteral("blocks.1")
                                                       << QStringLiteral("--json") << QStringLiteral("--out") << out);
        QCOMPARE(run.exitCode, 0);
        const QJsonObject result = QJsonDocument::fromJson(run.out).object();
        QVERIFY2(!result.isEmpty(), run.out.constData());
        QCOMPARE(result[QStringLiteral("device")].toString(), QStringLiteral("cpu"));
        QCOMPARE(result[QStringLiteral("checkpoint")].toArray(), QJsonArray({QStringLiteral("blocks.1")}));
        QVERIFY(result[QStringLiteral("oom")].isNull());
        QCOMPARE(result[QStringLiteral("trace")].toString(), out);
        const double peak = result[QStringLiteral("peak_allocated_bytes")].toDouble();
        QVERIFY(peak > 0);
        double highest = 0;
        for (const QJsonValue &step : result[QStringLiteral("step_peaks_bytes")].toArray())
            highest = std::max(highest, step.toDouble());
        QCOMPARE(peak, highest);
        QVERIFY(result[QStringLiteral("step_time_ms")].toDouble() > 0);

        // Progress: one JSON object per stderr line, ending with "done".
        const auto lines = run.err.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 3 + 1); // start, warm-up + 2 steps, done
        for (const QByteArray &line : lines)
            QVERIFY2(QJsonDocument::fromJson(line).isObject(), line.constData());
        QCOMPARE(QJsonDocument::fromJson(lines.last()).object()[QStringLiteral("event")].toString(), QStringLiteral("done"));

        const TracePtr trace = loadTrace(ss(out));
        QCOMPARE(trace->steps.size(), std::size_t(2));
        QCOMPARE(qs(trace->metaValue("checkpoint")), QStringLiteral("blocks.1"));
        // Calibration steps after the measured ones time what checkpointing each other
        // block, and each of its parts, adds; they stay out of the trace.
        const QJsonObject costs = QJsonDocument::fromJson(trace->metaValue("checkpoint.costs").c_str()).object();
        QCOMPARE(costs.keys(),
                 (QStringList{QStringLiteral("blocks.0"), QStringLiteral("blocks.0.attn"), QStringLiteral("blocks.0.ln1"),
                              QStringLiteral("blocks.0.ln2"), QStringLiteral("blocks.0.mlp")}));
        for (const QJsonValue &cost : costs)
            QVERIFY(cost.isDouble() && cost.toDouble() >= 0);
        QCOMPARE(findPeaks(*trace).devices.at(0).allocatedBytes, std::int64_t(peak));
        QVERIFY(trace->findLayer("blocks.1"));
    }

    // --out is written as the run goes: when a measured step's progress line arrives, a
    // reader following the file already holds that step. The run is paused at the first
    // one: steps of about 90 ms and calibration are still to come, and the file says its
    // writer is writing. At the end the follower's trace is the finished file.
    void followedStepByStepWhileItRuns()
    {
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("run.peaklens"));
        QProcess process;
        process.setStandardOutputFile(QProcess::nullDevice());
        process.setReadChannel(QProcess::StandardError); // the progress lines
        process.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-replay"),
                      {QStringLiteral("--layers"), QStringLiteral("4"), QStringLiteral("--d-model"), QStringLiteral("128"),
                       QStringLiteral("--heads"), QStringLiteral("2"), QStringLiteral("--seq"), QStringLiteral("128"),
                       QStringLiteral("--batch"), QStringLiteral("8"), QStringLiteral("--steps"), QStringLiteral("4"),
                       QStringLiteral("--warmup"), QStringLiteral("1"), QStringLiteral("--device"), QStringLiteral("cpu"),
                       QStringLiteral("--out"), out});
        QVERIFY(process.waitForStarted());
        TraceFollower follower(ss(out));
        std::size_t measured = 0;
        QByteArray pending;
        while (process.state() != QProcess::NotRunning || process.bytesAvailable() || pending.contains('\n')) {
            process.waitForReadyRead(50);
            pending += process.readAll();
            const qsizetype newline = pending.indexOf('\n');
            if (newline < 0)
                continue;
            const QJsonObject line = QJsonDocument::fromJson(pending.left(newline)).object();
            pending.remove(0, newline + 1);
            if (line[QStringLiteral("event")].toString() != QStringLiteral("step") || line[QStringLiteral("warmup")].toBool())
                continue;
            if (++measured == 1)
                ::kill(pid_t(process.processId()), SIGSTOP);
            follower.poll();
            const Trace &trace = follower.trace();
            QVERIFY(trace.steps.size() >= measured);
            QCOMPARE(trace.steps[measured - 1].number, line[QStringLiteral("step")].toInteger());
            QVERIFY(trace.events.isSortedByTime());
            if (measured == 1) {
                QCOMPARE(follower.writer(), TraceFollower::Writer::Writing);
                QVERIFY(trace.steps.size() < 4);
                // What the run is comes first, what it measured at its end.
                QVERIFY(!trace.metaValue("replay.spec").empty());
                QVERIFY(trace.metaValue("replay.result").empty());
                ::kill(pid_t(process.processId()), SIGCONT);
            }
        }
        QCOMPARE(process.exitCode(), 0);
        QCOMPARE(measured, std::size_t(4));
        follower.poll();
        QCOMPARE(follower.writer(), TraceFollower::Writer::Finished);
        QVERIFY(follower.trace() == *TraceReader::read(ss(out)));
    }

    // --verify-gradients compares a plain step's gradients with the toggled one's, with
    // dropout, bf16 and micro-batches.
    void verifyGradients_data()
    {
        QTest::addColumn<QStringList>("options");
        QTest::newRow("all, fp32") << QStringList{QStringLiteral("--checkpoint"), QStringLiteral("all")};
        QTest::newRow("every:2, bf16, 2 micro-batches")
            << QStringList{QStringLiteral("--checkpoint"), QStringLiteral("every:2"),         QStringLiteral("--dtype"),
                           QStringLiteral("bf16"),         QStringLiteral("--micro-batches"), QStringLiteral("2")};
        QTest::newRow("sqrt segments") << QStringList{QStringLiteral("--checkpoint"), QStringLiteral("sqrt")};
        QTest::newRow("two levels, bf16, 2 micro-batches")
            << QStringList{QStringLiteral("--checkpoint"),    QStringLiteral("embed..blocks.1(embed,blocks.0)"),
                           QStringLiteral("--dtype"),         QStringLiteral("bf16"),
                           QStringLiteral("--micro-batches"), QStringLiteral("2")};
        QTest::newRow("modules inside layers, bf16, 2 micro-batches")
            << QStringList{QStringLiteral("--checkpoint"),    QStringLiteral("blocks.0.attn,blocks.1.mlp,blocks.1.ln1"),
                           QStringLiteral("--dtype"),         QStringLiteral("bf16"),
                           QStringLiteral("--micro-batches"), QStringLiteral("2")};
    }
    void verifyGradients()
    {
        QFETCH(QStringList, options);
        const auto run = replay(QStringList(kSmallGpt) << options << QStringLiteral("--dropout") << QStringLiteral("0.2")
                                                       << QStringLiteral("--json") << QStringLiteral("--verify-gradients"));
        QCOMPARE(run.exitCode, 0);
        const QJsonObject check = QJsonDocument::fromJson(run.out).object()[QStringLiteral("gradient_check")].toObject();
        QVERIFY2(!check.isEmpty(), run.out.constData());
        QVERIFY(check[QStringLiteral("agree")].toBool());
        QCOMPARE(check[QStringLiteral("max_abs_difference")].toDouble(), 0.0); // the CPU recompute is exact
        QVERIFY(check[QStringLiteral("values")].toDouble() > 10000);
        const auto text = replay(QStringList(kSmallGpt) << options << QStringLiteral("--verify-gradients"));
        QVERIFY2(text.out.contains("Gradients       identical with and without checkpointing"), text.out.constData());
    }

    void outOfMemoryExitsWithThree_data()
    {
        QTest::addColumn<QString>("limit");
        QTest::addColumn<QString>("message");
        QTest::addRow("while building") << QStringLiteral("64KiB") << QStringLiteral("out of memory while building the model");
        QTest::addRow("in a step") << QStringLiteral("1MiB") << QStringLiteral("out of memory in ");
    }

    void outOfMemoryExitsWithThree()
    {
        QFETCH(QString, limit);
        QFETCH(QString, message);
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("oom.peaklens"));
        const auto run = replay(QStringList(kSmallGpt)
                                << QStringLiteral("--memory-limit") << limit << QStringLiteral("--json")
                                << QStringLiteral("--out") << out << QStringLiteral("--progress") << QStringLiteral("none"));
        QCOMPARE(run.exitCode, 3);
        QVERIFY(run.err.isEmpty());
        const QJsonObject oom = QJsonDocument::fromJson(run.out).object()[QStringLiteral("oom")].toObject();
        QVERIFY2(oom[QStringLiteral("message")].toString().startsWith(message), run.out.constData());
        QVERIFY(oom.contains(QStringLiteral("phase")) && oom.contains(QStringLiteral("step")));
        // What was recorded up to the failure is kept, with the failure marked.
        const TracePtr trace = loadTrace(ss(out));
        QCOMPARE(trace->markers.size(), std::size_t(1));
    }

    // --baseline runs each step a second time beside the measured one, by turns first and
    // second. Twelve pairs: two identical runs have every paired change of one sign by chance
    // once in 2^11 reruns, so "within noise" is near certain for them, and can be false.
    void baselineMeasuredBesideTheRun_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::addRow("none against none") << QStringLiteral("none");
        QTest::addRow("all against none") << QStringLiteral("all");
    }
    void baselineMeasuredBesideTheRun()
    {
        QFETCH(QString, checkpoint);
        QTemporaryDir directory;
        const QString out = directory.filePath(QStringLiteral("rerun.peaklens"));
        const auto run =
            replay(QStringList(kSmallGpt) << QStringLiteral("--steps") << QStringLiteral("12") << QStringLiteral("--checkpoint")
                                          << checkpoint << QStringLiteral("--baseline") << QStringLiteral("none")
                                          << QStringLiteral("--json") << QStringLiteral("--out") << out);
        QCOMPARE(run.exitCode, 0);
        const ReplayResult result = ReplayResult::fromJson(run.out.toStdString(), "peaklens-replay --json");
        QCOMPARE(result.stepTimesMs.size(), std::size_t(12));
        QCOMPARE(result.baselineStepTimesMs().size(), std::size_t(12));
        const auto comparison = compareStepTimes(result.baselineStepTimesMs(), result.stepTimesMs);
        QVERIFY(comparison && comparison->paired);
        QVERIFY(result.peakAllocatedBytes && result.baselinePeakAllocatedBytes());
        if (checkpoint == QStringLiteral("none")) {
            QVERIFY2(comparison->withinNoise(), qPrintable(QStringLiteral("%1 %, paired changes %2 % .. %3 %")
                                                               .arg(comparison->changePercent)
                                                               .arg(comparison->lowPercent)
                                                               .arg(comparison->highPercent)));
            QCOMPARE(*result.peakAllocatedBytes, *result.baselinePeakAllocatedBytes());
        } else {
            QVERIFY2(*result.peakAllocatedBytes < *result.baselinePeakAllocatedBytes(),
                     qPrintable(QStringLiteral("all %1, baseline %2")
                                    .arg(*result.peakAllocatedBytes)
                                    .arg(*result.baselinePeakAllocatedBytes())));
        }
        const QJsonObject baseline = QJsonDocument::fromJson(run.out).object()[QStringLiteral("baseline")].toObject();
        QCOMPARE(baseline[QStringLiteral("checkpoint")].toArray(), QJsonArray());
        QCOMPARE(baseline[QStringLiteral("step_peaks_bytes")].toArray().size(), 12);
        QVERIFY(baseline[QStringLiteral("oom")].isNull());

        // Progress counts the pairs: start, a warm-up and 12 measured steps, done.
        const auto lines = run.err.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 13 + 1);
        QVERIFY(QJsonDocument::fromJson(lines[5]).object()[QStringLiteral("baseline_step_time_ms")].toDouble() > 0);

        // The trace holds the run's steps alone: their ranges, and a peak that is the run's,
        // not the baseline's.
        const TracePtr trace = loadTrace(ss(out));
        QCOMPARE(trace->steps.size(), std::size_t(12));
        QCOMPARE(trace->steps.front().number, 1);
        QCOMPARE(findPeaks(*trace).devices.at(0).allocatedBytes, *result.peakAllocatedBytes);
        const std::uint32_t block = *trace->findLayer("blocks.1");
        for (const Step &step : trace->steps) {
            int forward = 0;
            for (const Range &range : trace->ranges) {
                if (range.layer == block && range.phase == Phase::Forward) {
                    forward += range.step == step.number;
                    QVERIFY(range.step >= trace->steps.front().number);
                }
            }
            QCOMPARE(forward, 1);
        }
        std::int64_t live = 0;
        for (std::size_t i = 0; i < trace->events.size(); ++i) {
            live += trace->events.deltaBytes(i);
            QVERIFY(live >= 0);
        }
        QCOMPARE(qs(nlohmann::json::parse(trace->metaValue("replay.options"))["baseline"].get<std::string>()),
                 QStringLiteral("none"));
    }

    // A baseline that does not fit where the run does ends its own steps, not the run.
    void baselineOutOfMemoryIsReported()
    {
        const QStringList arguments = QStringList(kSmallGpt)
                                      << QStringLiteral("--checkpoint") << QStringLiteral("all") << QStringLiteral("--baseline")
                                      << QStringLiteral("none") << QStringLiteral("--json") << QStringLiteral("--progress")
                                      << QStringLiteral("none");
        const auto fits = replay(arguments);
        QCOMPARE(fits.exitCode, 0);
        const ReplayResult both = ReplayResult::fromJson(fits.out.toStdString(), "peaklens-replay --json");
        const qint64 between = (*both.peakAllocatedBytes + *both.baselinePeakAllocatedBytes()) / 2;

        const auto run = replay(QStringList(arguments) << QStringLiteral("--memory-limit") << QString::number(between));
        QCOMPARE(run.exitCode, 0);
        const ReplayResult result = ReplayResult::fromJson(run.out.toStdString(), "peaklens-replay --json");
        QVERIFY(result.outOfMemory().empty());
        QCOMPARE(result.stepTimesMs.size(), std::size_t(2));
        QCOMPARE(result.peakAllocatedBytes, both.peakAllocatedBytes);
        // Every measured baseline step reaches its peak: memory runs out by the first of them.
        QVERIFY(result.baselineStepTimesMs().empty());
        const QJsonObject oom =
            QJsonDocument::fromJson(run.out).object()[QStringLiteral("baseline")].toObject()[QStringLiteral("oom")].toObject();
        QVERIFY2(oom[QStringLiteral("message")].toString().startsWith(QStringLiteral("out of memory in ")), run.out.constData());
        QVERIFY(oom[QStringLiteral("step")].toInt() <= 1); // the first measured step is 1

        const auto text = replay(QStringList(kSmallGpt)
                                 << QStringLiteral("--checkpoint") << QStringLiteral("all") << QStringLiteral("--baseline")
                                 << QStringLiteral("none") << QStringLiteral("--memory-limit") << QString::number(between));
        QVERIFY2(text.out.contains("Baseline        checkpoint nothing, out of memory in "), text.out.constData());
    }

    void badInputExitsWithTwo_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("expected");
        QTest::addRow("missing spec file") << QStringList{QStringLiteral("--model"), QStringLiteral("/nonexistent/spec.json")}
                                           << QStringLiteral("/nonexistent/spec.json: cannot open");
        QTest::addRow("unknown layer") << (QStringList(kSmallGpt) << QStringLiteral("--checkpoint") << QStringLiteral("blocks.7"))
                                       << QStringLiteral(
                                              "\"blocks.7\" is not among the layers that can be checkpointed (embed, blocks.0");
        QTest::addRow("heads do not divide") << (QStringList(kSmallGpt) << QStringLiteral("--heads") << QStringLiteral("5"))
                                             << QStringLiteral("must be a multiple of \"heads\"");
        QTest::addRow("bad memory limit") << (QStringList(kSmallGpt)
                                              << QStringLiteral("--memory-limit") << QStringLiteral("lots"))
                                          << QStringLiteral("--memory-limit");
        QTest::addRow("unknown baseline layer")
            << (QStringList(kSmallGpt) << QStringLiteral("--baseline") << QStringLiteral("blocks.7"))
            << QStringLiteral("--baseline: \"blocks.7\" is not among the layers");
        QTest::addRow("bad out name") << (QStringList(kSmallGpt) << QStringLiteral("--out") << QStringLiteral("run.txt"))
                                      << QStringLiteral("must end in .peaklens");
        QTest::addRow("bad progress fd") << (QStringList(kSmallGpt) << QStringLiteral("--progress") << QStringLiteral("99"))
                                         << QStringLiteral("--progress");
    }

    void badInputExitsWithTwo()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, expected);
        const auto run = replay(arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.out.isEmpty());
        const QString error = QString::fromUtf8(run.err).trimmed();
        QVERIFY2(error.startsWith(QStringLiteral("peaklens-replay: ")) && error.contains(expected), qPrintable(error));
        QVERIFY2(!error.contains(QLatin1Char('\n')), qPrintable(error));
    }

    void brokenTorchScriptBlock()
    {
        QTemporaryDir directory;
        QFile block(directory.filePath(QStringLiteral("block0.pt")));
        QVERIFY(block.open(QIODevice::WriteOnly));
        block.write("this is not a TorchScript archive");
        block.close();
        QFile spec(directory.filePath(QStringLiteral("spec.json")));
        QVERIFY(spec.open(QIODevice::WriteOnly));
        spec.write(R"({"model": "torchscript", "blocks": ["block0.pt"], "input": {"shape": [2, 4]}})");
        spec.close();
        const auto run = replay({QStringLiteral("--model"), spec.fileName(), QStringLiteral("--device"), QStringLiteral("cpu")});
        QCOMPARE(run.exitCode, 2);
        const QString error = QString::fromUtf8(run.err);
        QVERIFY2(error.contains(block.fileName() + QStringLiteral(": cannot load this TorchScript block")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(tst_ReplayCli)
#include "tst_replaycli.moc"
