// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/plan/replayresult.h"

#include <QTest>

#include <cmath>

using namespace peaklens;

namespace {

// Shaped as peaklens-replay --json --baseline none --verify-gradients --out prints it
// (docs/replay.md).
const char *kRerun = R"({
  "peak_allocated_bytes": 4915200,
  "step_time_ms": 11.5,
  "device": "cpu",
  "device_name": "AMD EPYC 7B13",
  "dtype": "fp32",
  "model": {"model": "gpt", "layers": 2},
  "checkpoint": ["blocks.0", "blocks.1"],
  "oom": null,
  "steps": 3,
  "step_times_ms": [11.5, 12.25, 11.0],
  "step_peaks_bytes": [4915200, 4915200, 4915200],
  "baseline": {"checkpoint": [], "peak_allocated_bytes": 6553600, "step_time_ms": 10.5,
               "step_times_ms": [10.5, 11.0, 10.25], "step_peaks_bytes": [6553600, 6553600, 6553600], "oom": null},
  "trace": "/tmp/run.peaklens",
  "gradient_check": {"max_abs_difference": 0, "max_relative_difference": 0, "worst_parameter": "embed[0]",
                     "values": 45312, "tolerance": 1e-05, "agree": true}
})";

} // namespace

class tst_ReplayResult : public QObject
{
    Q_OBJECT

private slots:
    void rerunWithBaseline()
    {
        const ReplayResult result = ReplayResult::fromJson(kRerun, "rerun");
        QCOMPARE(result.peakAllocatedBytes, std::optional<std::int64_t>(4915200));
        QCOMPARE(result.stepTimesMs, (std::vector<double>{11.5, 12.25, 11.0}));
        QCOMPARE(result.baselinePeakAllocatedBytes(), std::optional<std::int64_t>(6553600));
        QCOMPARE(result.baselineStepTimesMs(), (std::vector<double>{10.5, 11.0, 10.25}));
        QVERIFY(result.gradients);
        QVERIFY(result.gradients->agree);
        QCOMPARE(result.gradients->maxRelativeDifference, 0.0);
        QVERIFY(result.outOfMemory().empty());
        QCOMPARE(QString::fromStdString(result.tracePath), QStringLiteral("/tmp/run.peaklens"));
        QCOMPARE(QString::fromStdString(result.deviceName), QStringLiteral("AMD EPYC 7B13"));
        QCOMPARE(result.baseline->stepPeaksBytes, (std::vector<std::int64_t>{6553600, 6553600, 6553600}));
        QCOMPARE(QString::fromStdString(result.gradients->worstParameter), QStringLiteral("embed[0]"));
        QCOMPARE(result.gradients->values, std::int64_t(45312));
    }

    // What toJson writes, fromJson reads back whole: the one writer and reader of the keys.
    void everyKeyRoundTrips()
    {
        ReplayResult result = ReplayResult::fromJson(kRerun, "rerun");
        result.oom =
            ReplayOutOfMemory{"blocks.1", Phase::Backward, 2, 1 << 20, "out of memory in backward of blocks.1 at step 2"};
        result.gradients->maxRelativeDifference = INFINITY;
        const std::string once = result.toJson();
        const ReplayResult back = ReplayResult::fromJson(once, "again");
        QCOMPARE(QString::fromStdString(back.toJson()), QString::fromStdString(once));
        QCOMPARE(back.checkpoint, result.checkpoint);
        QCOMPARE(back.stepTimeMs, result.stepTimeMs);
        QCOMPARE(back.stepPeaksBytes, result.stepPeaksBytes);
        QCOMPARE(back.oom->phase, Phase::Backward);
        QCOMPARE(back.oom->step, std::optional<std::int64_t>(2));
        QCOMPARE(back.oom->requestedBytes, std::int64_t(1) << 20);
        QCOMPARE(QString::fromStdString(back.outOfMemory()), QString::fromStdString(result.oom->message));
        QCOMPARE(back.baseline->checkpoint, result.baseline->checkpoint);
        QCOMPARE(back.baseline->stepTimeMs, result.baseline->stepTimeMs);
        QVERIFY(std::isinf(back.gradients->maxRelativeDifference));
        QCOMPARE(QString::fromStdString(back.modelJson), QString::fromStdString(result.modelJson));
        QCOMPARE(QString::fromStdString(back.dtype), QStringLiteral("fp32"));
    }

    void results_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<qint64>("peak"); // -1: none
        QTest::addColumn<int>("steps");
        QTest::addColumn<qint64>("baselinePeak"); // -1: none
        QTest::addColumn<int>("baselineSteps");
        QTest::addColumn<QString>("outOfMemory");
        QTest::addColumn<QString>("trace");
        QTest::addColumn<int>("gradients"); // -1 none, 0 differ, 1 agree
        QTest::addRow("without --baseline, trace or check")
            << QStringLiteral(R"({"peak_allocated_bytes": 1024, "step_times_ms": [2.5, 3], "baseline": null, "oom": null,
                                  "trace": null, "gradient_check": null})")
            << qint64(1024) << 2 << qint64(-1) << 0 << QString() << QString() << -1;
        QTest::addRow("older output without the baseline key")
            << QStringLiteral(R"({"peak_allocated_bytes": 1024, "step_times_ms": [2.5], "oom": null})") << qint64(1024) << 1
            << qint64(-1) << 0 << QString() << QString() << -1;
        QTest::addRow("out of memory while building: nothing measured")
            << QStringLiteral(R"({"peak_allocated_bytes": null, "step_time_ms": null, "step_times_ms": [],
                                  "oom": {"layer": null, "phase": "other", "step": null, "requested_bytes": 4096,
                                          "message": "out of memory while building the model"},
                                  "baseline": {"checkpoint": [], "peak_allocated_bytes": null, "step_times_ms": []}})")
            << qint64(-1) << 0 << qint64(-1) << 0 << QStringLiteral("out of memory while building the model") << QString() << -1;
        QTest::addRow("out of memory in a step, one measured before")
            << QStringLiteral(R"({"peak_allocated_bytes": 900, "step_times_ms": [4.0],
                                  "oom": {"layer": "blocks.7", "phase": "backward", "step": 3, "requested_bytes": 4096,
                                          "message": "out of memory in backward of blocks.7 at step 3"},
                                  "trace": "oom.peaklens"})")
            << qint64(900) << 1 << qint64(-1) << 0 << QStringLiteral("out of memory in backward of blocks.7 at step 3")
            << QStringLiteral("oom.peaklens") << -1;
        QTest::addRow("baseline ran out of memory after two steps")
            << QStringLiteral(R"({"peak_allocated_bytes": 500, "step_times_ms": [4, 4, 4], "oom": null,
                                  "baseline": {"peak_allocated_bytes": 900, "step_times_ms": [3, 3],
                                               "oom": {"message": "out of memory in forward of blocks.2 at step 4"}}})")
            << qint64(500) << 3 << qint64(900) << 2 << QString() << QString() << -1;
        QTest::addRow("gradients differ") << QStringLiteral(R"({"peak_allocated_bytes": 1, "step_times_ms": [1],
                                  "gradient_check": {"max_relative_difference": 0.5, "agree": false}})")
                                          << qint64(1) << 1 << qint64(-1) << 0 << QString() << QString() << 0;
    }
    void results()
    {
        QFETCH(QString, json);
        QFETCH(qint64, peak);
        QFETCH(int, steps);
        QFETCH(qint64, baselinePeak);
        QFETCH(int, baselineSteps);
        QFETCH(QString, outOfMemory);
        QFETCH(QString, trace);
        QFETCH(int, gradients);
        const ReplayResult result = ReplayResult::fromJson(json.toStdString(), "rerun");
        QCOMPARE(result.peakAllocatedBytes.value_or(-1), peak);
        QCOMPARE(int(result.stepTimesMs.size()), steps);
        QCOMPARE(result.baselinePeakAllocatedBytes().value_or(-1), baselinePeak);
        QCOMPARE(int(result.baselineStepTimesMs().size()), baselineSteps);
        QCOMPARE(QString::fromStdString(result.outOfMemory()), outOfMemory);
        QCOMPARE(QString::fromStdString(result.tracePath), trace);
        QCOMPARE(result.gradients ? int(result.gradients->agree) : -1, gradients);
    }

    // JSON has no infinity; the replay writes a difference against an all-zero gradient as null.
    void infiniteGradientDifference()
    {
        const ReplayResult result = ReplayResult::fromJson(
            R"({"peak_allocated_bytes": 1, "step_times_ms": [1], "gradient_check": {"max_relative_difference": null, "agree": false}})",
            "rerun");
        QVERIFY(result.gradients && std::isinf(result.gradients->maxRelativeDifference));
    }

    void malformed_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("problem");
        QTest::addRow("not JSON") << QStringLiteral("peaklens-replay: --steps: 0 not in range") << QStringLiteral("not JSON");
        QTest::addRow("cut short") << QString::fromUtf8(kRerun).left(200) << QStringLiteral("not JSON");
        QTest::addRow("empty") << QString() << QStringLiteral("not JSON");
        QTest::addRow("an array") << QStringLiteral("[1, 2]") << QStringLiteral("not a JSON object");
        QTest::addRow("another tool's object") << QStringLiteral(R"({"peak": {"bytes": 10}})")
                                               << QStringLiteral("\"peak_allocated_bytes\" must be a byte count or null");
        QTest::addRow("peak as text") << QStringLiteral(R"({"peak_allocated_bytes": "1 GiB", "step_times_ms": []})")
                                      << QStringLiteral("\"peak_allocated_bytes\" must be");
        QTest::addRow("times not numbers") << QStringLiteral(R"({"peak_allocated_bytes": 1, "step_times_ms": ["fast"]})")
                                           << QStringLiteral("\"step_times_ms\" must be an array of times");
        QTest::addRow("baseline not an object")
            << QStringLiteral(R"({"peak_allocated_bytes": 1, "step_times_ms": [], "baseline": "none"})")
            << QStringLiteral("\"baseline\" must be an object or null");
        QTest::addRow("baseline without times")
            << QStringLiteral(R"({"peak_allocated_bytes": 1, "step_times_ms": [], "baseline": {"peak_allocated_bytes": 2}})")
            << QStringLiteral("\"baseline.step_times_ms\" must be an array of times");
        QTest::addRow("oom without a message")
            << QStringLiteral(R"({"peak_allocated_bytes": null, "step_times_ms": [], "oom": {"layer": null}})")
            << QStringLiteral("\"oom.message\"");
        QTest::addRow("gradient check without agree") << QStringLiteral(
            R"({"peak_allocated_bytes": 1, "step_times_ms": [], "gradient_check": {"max_relative_difference": 0}})")
                                                      << QStringLiteral("\"gradient_check.agree\" must be true or false");
    }
    void malformed()
    {
        QFETCH(QString, json);
        QFETCH(QString, problem);
        try {
            ReplayResult::fromJson(json.toStdString(), "peaklens-replay output");
            QFAIL("no error");
        } catch (const Error &error) {
            const QString message = QString::fromUtf8(error.what());
            QVERIFY2(message.startsWith(QStringLiteral("peaklens-replay output: not a peaklens-replay result: ")),
                     qPrintable(message));
            QVERIFY2(message.contains(problem), qPrintable(message));
        }
    }
};

QTEST_GUILESS_MAIN(tst_ReplayResult)
#include "tst_replayresult.moc"
