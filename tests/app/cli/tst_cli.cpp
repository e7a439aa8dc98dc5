// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"
#include "tracefiledamage.h"

#include "core/analysis/blockgroups.h"
#include "core/analysis/peakfinder.h"
#include "core/analysis/stepstats.h"
#include "core/analysis/tracesummary.h"
#include "core/format/schema.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/plan/planner.h"
#include "core/trace/loadbudget.h"
#include "core/trace/tracebuilder.h"
#include "core/trace/units.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLibrary>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <sys/resource.h>

#include <cstdio>

using namespace peaklens;

namespace {

// A trace with known figures (stacks, segments, two steps), read as trace text.
const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt");
// What ./run.sh opens: a real CPU recording by peaklens-replay.
const QString kBundled = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

using Run = test::ToolRun;

Run runCli(const QStringList &arguments)
{
    return test::runTool(QStringLiteral("peaklens-cli"), arguments);
}

// A native trace with one layer keeping 4 KiB for its backward pass, written the way a
// collector writes it, unchecked: the string named by `field` ends in bytes that are not
// UTF-8 ("layer", "kind", "frame", "file", "meta key" or "meta value").
void writeTraceNotUtf8(const QString &path, const QString &field)
{
    const std::string bad = "\xff\xfe caf\xe9";
    const auto text = [&](const char *which, const std::string &fine) {
        return field == QLatin1String(which) ? fine + bad : fine;
    };
    TraceWriter writer(test::ss(path), TraceWriter::Mode::Bulk);
    writer.writeMeta("source.format", "test");
    writer.writeMeta(text("meta key", "note"), text("meta value", "a note"));
    writer.writeLane(0, Lane{Device{DeviceType::Cuda, 0}, 0});
    writer.writeLayer(0, Layer{text("layer", "blocks"), text("kind", "Block"), kNoLayer, 0});
    writer.writeFrame(0, Frame{text("frame", "train_step"), text("file", "train.py"), 61});
    writer.writeStack(1, StackNode{0, 0});
    writer.writeStep(Step{1, 0, 40});
    writer.writeRange(Range{0, Phase::Forward, 1, 0, 10, 0});
    writer.writeRange(Range{0, Phase::Backward, 1, 20, 30, 0});
    writer.writeEvent(MemoryEvent{5, 4096, 1, 0, 0, 1, Category::Activation, Phase::Forward});
    writer.writeEvent(MemoryEvent{25, -4096, 1, 0, 0, 1, Category::Activation, Phase::Backward});
    writer.finish();
}

} // namespace

class tst_Cli : public QObject
{
    Q_OBJECT

private slots:
    void badInputExitsTwoWithOneSentence_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("problem");
        for (const char *command : {"summary", "info"}) {
            QTest::addRow("%s: missing file", command)
                << QString::fromLatin1(command) << QStringLiteral("missing") << QStringLiteral("does not exist");
            QTest::addRow("%s: random bytes", command)
                << QString::fromLatin1(command) << QStringLiteral("random") << QStringLiteral("is not a trace PeakLens can read");
            QTest::addRow("%s: SQLite but not ours", command)
                << QString::fromLatin1(command) << QStringLiteral("foreign") << QStringLiteral("not a PeakLens trace");
            QTest::addRow("%s: newer format", command)
                << QString::fromLatin1(command) << QStringLiteral("newer") << QStringLiteral("newer PeakLens");
            QTest::addRow("%s: missing table", command)
                << QString::fromLatin1(command) << QStringLiteral("droptable") << QStringLiteral("is missing");
            QTest::addRow("%s: truncated", command)
                << QString::fromLatin1(command) << QStringLiteral("half") << QStringLiteral("is truncated");
        }
        QTest::addRow("summary --json: truncated")
            << QStringLiteral("summary --json") << QStringLiteral("half") << QStringLiteral("is truncated");
        // One verdict on damaged chunks and running totals, whichever command reads the file.
        for (const char *command : {"summary", "summary --json", "info", "plan --strategy all"}) {
            QTest::addRow("%s: a chunk numbered -5", command) << QString::fromLatin1(command) << QStringLiteral("chunknegative")
                                                              << QStringLiteral("events chunk -5 has a negative number");
            QTest::addRow("%s: a chunk missing", command)
                << QString::fromLatin1(command) << QStringLiteral("chunkgap") << QStringLiteral("events chunk 0 is missing");
            QTest::addRow("%s: empty running totals", command) << QString::fromLatin1(command) << QStringLiteral("emptytotals")
                                                               << QStringLiteral("its running totals end early");
        }
    }
    void badInputExitsTwoWithOneSentence()
    {
        QFETCH(QString, command);
        QFETCH(QString, damage);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("input.peaklens"));
        test::writeDamagedTrace(path, damage, "alloc a 5\nfree a\n");
        const Run run = runCli(command.split(QLatin1Char(' ')) << path);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.out.isEmpty(), run.out.constData());
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ") + path + QStringLiteral(": ")), qPrintable(err));
        QVERIFY2(err.contains(problem), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
    }

    void pytorchFilesBadAndGood_data()
    {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<bool>("truncate");
        QTest::addColumn<int>("exitCode");
        for (const char *name : {"snapshot_p5.pickle.gz", "snapshot.json", "kineto.pt.trace.json.gz",
                                 "memory_timeline.raw.json.gz", "memory_timeline.json"}) {
            QTest::addRow("%s", name) << QString::fromLatin1(name) << false << 0;
            QTest::addRow("%s cut in half", name) << QString::fromLatin1(name) << true << 2;
        }
    }
    void pytorchFilesBadAndGood()
    {
        QFETCH(QString, fixture);
        QFETCH(bool, truncate);
        QFETCH(int, exitCode);
        QFile source(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/") + fixture);
        QVERIFY(source.open(QIODevice::ReadOnly));
        QByteArray bytes = source.readAll();
        if (truncate)
            bytes = bytes.left(bytes.size() / 2);
        QTemporaryDir dir;
        const QString path = dir.filePath(fixture);
        test::writeBytes(path, bytes);
        const Run run = runCli({QStringLiteral("summary"), QStringLiteral("--json"), path});
        QCOMPARE(run.exitCode, exitCode);
        if (exitCode == 0) {
            QFile expectedFile(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/expected.json"));
            QVERIFY(expectedFile.open(QIODevice::ReadOnly));
            const QJsonObject expected = QJsonDocument::fromJson(expectedFile.readAll()).object()[fixture].toObject();
            const QJsonObject peak = QJsonDocument::fromJson(run.out).object()[QStringLiteral("peak")].toObject();
            QCOMPARE(peak[QStringLiteral("allocated_bytes")].toInteger(), expected[QStringLiteral("peak_bytes")].toInteger());
        } else {
            QVERIFY(run.out.isEmpty());
            QVERIFY2(run.err.contains("truncated"), run.err.constData());
            QCOMPARE(run.err.count('\n'), 1);
        }
    }

    void planFitsTheBudget()
    {
        const Run run = runCli(
            {QStringLiteral("plan"), kSample, QStringLiteral("--budget"), QStringLiteral("1.8GiB"), QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject json = QJsonDocument::fromJson(run.out).object();
        QVERIFY(json[QStringLiteral("feasible")].toBool());
        const QJsonObject predicted = json[QStringLiteral("predicted")].toObject();
        const QJsonObject baseline = json[QStringLiteral("baseline")].toObject();
        QVERIFY(predicted[QStringLiteral("peak_bytes")].toInteger() <= qint64(1.8 * (1 << 30)));
        QVERIFY(predicted[QStringLiteral("step_time_ms")].toDouble() > baseline[QStringLiteral("step_time_ms")].toDouble());
        QVERIFY(predicted[QStringLiteral("step_time_spread_ms")].isDouble());
        QVERIFY(json[QStringLiteral("ranked_within_noise")].isBool());
        const auto trace = loadTrace(test::ss(kSample));
        QCOMPARE(baseline[QStringLiteral("peak_bytes")].toInteger(), findPeaks(*trace).devices.at(0).allocatedBytes);
        const QJsonArray checkpoint = json[QStringLiteral("checkpoint")].toArray();
        QVERIFY(!checkpoint.isEmpty());
        QVERIFY(checkpoint[0].toString().startsWith(QStringLiteral("blocks.")));
    }

    void planAnswersEvenTheImpossible()
    {
        const Run run = runCli(
            {QStringLiteral("plan"), kSample, QStringLiteral("--budget"), QStringLiteral("1KiB"), QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject json = QJsonDocument::fromJson(run.out).object();
        QVERIFY(!json[QStringLiteral("feasible")].toBool());
        const Run text = runCli({QStringLiteral("plan"), kSample, QStringLiteral("--budget"), QStringLiteral("1KiB")});
        QVERIFY(text.out.contains("lowest peak"));
    }

    // Budgets as users write them: a share of the measured peak, and PyTorch's activation
    // budget (1 keeps every activation, 0 frees all checkpointing can).
    void planBudgetForms_data()
    {
        QTest::addColumn<QStringList>("goal");
        QTest::addColumn<double>("share"); // of the measured peak; -1: the activation budget's bounds
        QTest::newRow("80% of the peak") << QStringList{QStringLiteral("--budget"), QStringLiteral("80%")} << 0.8;
        QTest::newRow("activation budget 1") << QStringList{QStringLiteral("--activation-budget"), QStringLiteral("1")} << 1.0;
        QTest::newRow("activation budget 0") << QStringList{QStringLiteral("--activation-budget"), QStringLiteral("0")} << -1.0;
    }
    void planBudgetForms()
    {
        QFETCH(QStringList, goal);
        QFETCH(double, share);
        const Run run = runCli(QStringList{QStringLiteral("plan"), kSample} << goal << QStringLiteral("--json"));
        QCOMPARE(run.exitCode, 0);
        const QJsonObject json = QJsonDocument::fromJson(run.out).object();
        const qint64 measured = json[QStringLiteral("baseline")].toObject()[QStringLiteral("peak_bytes")].toInteger();
        const qint64 peak = json[QStringLiteral("predicted")].toObject()[QStringLiteral("peak_bytes")].toInteger();
        QVERIFY(json[QStringLiteral("feasible")].toBool());
        if (share > 0) {
            QVERIFY(peak <= qint64(share * double(measured)));
        } else {
            const Run lowest = runCli(
                {QStringLiteral("plan"), kSample, QStringLiteral("--budget"), QStringLiteral("1KiB"), QStringLiteral("--json")});
            QCOMPARE(peak, QJsonDocument::fromJson(lowest.out)
                               .object()[QStringLiteral("predicted")]
                               .toObject()[QStringLiteral("peak_bytes")]
                               .toInteger());
        }
    }

    // The largest batch that fits: the sample says nothing of its batch, so --batch tells it.
    void planMaxBatch()
    {
        const Run run =
            runCli({QStringLiteral("plan"), kSample, QStringLiteral("--max-batch"), QStringLiteral("--budget"),
                    QStringLiteral("100%"), QStringLiteral("--batch"), QStringLiteral("8"), QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject fit = QJsonDocument::fromJson(run.out).object()[QStringLiteral("max_batch")].toObject();
        QVERIFY(fit[QStringLiteral("fits")].toBool());
        QCOMPARE(fit[QStringLiteral("traced_batch")].toInt(), 8);
        QVERIFY2(fit[QStringLiteral("batch")].toInt() > 8, run.out.constData()); // checkpointing makes room
        const Run text = runCli(
            {QStringLiteral("plan"), kSample, QStringLiteral("--max-batch"), QStringLiteral("--budget"), QStringLiteral("90%")});
        QVERIFY2(text.out.contains("Largest batch   x"), text.out.constData());
    }

    // One rank of two sharding the traced run: its baseline is the rank's peak, below the
    // run's own, and the plan says what it is for.
    void planShardedRank()
    {
        const QString unsharded = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/fsdp/unsharded.peaklens");
        const QStringList plan{QStringLiteral("plan"), unsharded, QStringLiteral("--strategy"), QStringLiteral("none"),
                               QStringLiteral("--json")};
        const Run whole = runCli(plan);
        const Run rank = runCli(plan + QStringList{QStringLiteral("--shard-degree"), QStringLiteral("2")});
        QCOMPARE(whole.exitCode, 0);
        QCOMPARE(rank.exitCode, 0);
        const QJsonObject a = QJsonDocument::fromJson(whole.out).object(), b = QJsonDocument::fromJson(rank.out).object();
        QVERIFY(a[QStringLiteral("sharding")].isNull());
        QCOMPARE(b[QStringLiteral("sharding")].toObject(),
                 QJsonObject({{QStringLiteral("degree"), 2},
                              {QStringLiteral("zero_stage"), 3},
                              {QStringLiteral("collectives"), QStringLiteral("gloo")}}));
        const auto peak = [](const QJsonObject &o) {
            return o[QStringLiteral("baseline")].toObject()[QStringLiteral("peak_bytes")].toDouble();
        };
        QVERIFY(peak(b) < peak(a));
        // NCCL gathers in place: no copy of a gathered unit beside its buffer, never more.
        const Run nccl = runCli(plan
                                + QStringList{QStringLiteral("--shard-degree"), QStringLiteral("2"),
                                              QStringLiteral("--collectives"), QStringLiteral("nccl")});
        QCOMPARE(nccl.exitCode, 0);
        const QJsonObject c = QJsonDocument::fromJson(nccl.out).object();
        QCOMPARE(c[QStringLiteral("sharding")].toObject()[QStringLiteral("collectives")].toString(), QStringLiteral("nccl"));
        QVERIFY(peak(c) <= peak(b));
        const Run text = runCli({QStringLiteral("plan"), unsharded, QStringLiteral("--budget"), QStringLiteral("80MiB"),
                                 QStringLiteral("--shard-degree"), QStringLiteral("2")});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.startsWith("One rank of 2 sharding the traced run (ZeRO stage 3"), text.out.constData());
        QVERIFY2(text.out.contains("per rank without checkpoints"), text.out.constData());
    }

    // A hand-picked set predicts what the same set chosen by a strategy predicts.
    void planChosenLayers()
    {
        const Run chosen = runCli({QStringLiteral("plan"), kSample, QStringLiteral("--checkpoint"),
                                   QStringLiteral("blocks.0,blocks.2"), QStringLiteral("--json")});
        const Run strategy = runCli(
            {QStringLiteral("plan"), kSample, QStringLiteral("--strategy"), QStringLiteral("every:2"), QStringLiteral("--json")});
        QCOMPARE(chosen.exitCode, 0);
        QCOMPARE(strategy.exitCode, 0);
        const QJsonObject a = QJsonDocument::fromJson(chosen.out).object(), b = QJsonDocument::fromJson(strategy.out).object();
        QCOMPARE(a[QStringLiteral("checkpoint")].toArray(), QJsonArray({QStringLiteral("blocks.0"), QStringLiteral("blocks.2")}));
        QCOMPARE(a[QStringLiteral("predicted")], b[QStringLiteral("predicted")]);
        QVERIFY(a[QStringLiteral("predicted")].toObject()[QStringLiteral("peak_bytes")].toDouble()
                < a[QStringLiteral("baseline")].toObject()[QStringLiteral("peak_bytes")].toDouble());
    }

    void commandErrors_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("problem");
        QTest::addRow("no goal") << QStringList{QStringLiteral("plan"), kSample} << QStringLiteral("Say what to plan for");
        QTest::addRow("bad budget") << QStringList{QStringLiteral("plan"), kSample, QStringLiteral("--budget"),
                                                   QStringLiteral("lots")}
                                    << QStringLiteral("is not a budget");
        QTest::addRow("budget over 100 %%") << QStringList{QStringLiteral("plan"), kSample, QStringLiteral("--budget"),
                                                           QStringLiteral("150%")}
                                            << QStringLiteral("at most 100 %");
        QTest::addRow("activation budget over 1")
            << QStringList{QStringLiteral("plan"), kSample, QStringLiteral("--activation-budget"), QStringLiteral("1.5")}
            << QStringLiteral("share from 0");
        QTest::addRow("max batch without budget") << QStringList{QStringLiteral("plan"), kSample, QStringLiteral("--max-batch")}
                                                  << QStringLiteral("--max-batch needs a budget");
        QTest::addRow("unknown grouping") << QStringList{QStringLiteral("summary"), kSample, QStringLiteral("--group"),
                                                         QStringLiteral("colour")}
                                          << QStringLiteral("give file, regex:PATTERN, compile-context");
        QTest::addRow("grouping with a bad pattern")
            << QStringList{QStringLiteral("diff"), kSample, kSample, QStringLiteral("--group"), QStringLiteral("regex:[a")}
            << QStringLiteral("not a regular expression");
        QTest::addRow("ZeRO stage alone") << QStringList{
            QStringLiteral("plan"), kSample, QStringLiteral("--strategy"), QStringLiteral("none"), QStringLiteral("--zero-stage"),
            QStringLiteral("2")} << QStringLiteral("--zero-stage requires --shard-degree");
        QTest::addRow("sharded without parameter bytes")
            << QStringList{QStringLiteral("plan"),
                           QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/kineto.pt.trace.json"),
                           QStringLiteral("--strategy"),
                           QStringLiteral("none"),
                           QStringLiteral("--shard-degree"),
                           QStringLiteral("2")}
            << QStringLiteral("cannot be sharded: The trace does not say how many parameter bytes");
        QTest::addRow("bad strategy") << QStringList{QStringLiteral("plan"), kSample, QStringLiteral("--strategy"),
                                                     QStringLiteral("every:x")}
                                      << QStringLiteral("is not a strategy");
        QTest::addRow("layer outside the chain")
            << QStringList{QStringLiteral("plan"), kSample, QStringLiteral("--checkpoint"), QStringLiteral("blocks.0,embed")}
            << QStringLiteral("\"embed\" is not among the layers that can be checkpointed (blocks.0, blocks.1");
        QTest::addRow("two goals") << QStringList{QStringLiteral("plan"),         kSample,
                                                  QStringLiteral("--checkpoint"), QStringLiteral("blocks.0"),
                                                  QStringLiteral("--strategy"),   QStringLiteral("all")}
                                   << QStringLiteral("excludes");
        QTest::addRow("unknown extension") << QStringList{QStringLiteral("report"), kBundled, QStringLiteral("-o"),
                                                          QStringLiteral("/tmp/x.pdf")}
                                           << QStringLiteral("must end in .html, .csv or .json");
        const QString snapshot = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/snapshot.json");
        QTest::addRow("onto its input") << QStringList{QStringLiteral("report"), snapshot, QStringLiteral("-o"), snapshot}
                                        << QStringLiteral("is one of the inputs");
        QTest::addRow("bad budget") << QStringList{QStringLiteral("report"),   kBundled,
                                                   QStringLiteral("--budget"), QStringLiteral("lots"),
                                                   QStringLiteral("-o"),       QStringLiteral("/tmp/x.html")}
                                    << QStringLiteral("is not a budget");
        QTest::addRow("missing trace") << QStringList{QStringLiteral("report"), QStringLiteral("/nonexistent.peaklens"),
                                                      QStringLiteral("-o"), QStringLiteral("/tmp/x.html")}
                                       << QStringLiteral("/nonexistent.peaklens");
        QTest::addRow("unwritable") << QStringList{QStringLiteral("report"), kBundled, QStringLiteral("-o"),
                                                   QStringLiteral("/nonexistent/x.html")}
                                    << QStringLiteral("/nonexistent/x.html: cannot be written");
        QTest::addRow("no chain") << QStringList{QStringLiteral("pareto"),
                                                 QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/memory_timeline.json")}
                                  << QStringLiteral("--layers");
        QTest::addRow("bad regex") << QStringList{
            QStringLiteral("plan"), kSample, QStringLiteral("--strategy"), QStringLiteral("all"), QStringLiteral("--layers"),
            QStringLiteral("(")} << QStringLiteral("not a valid regular expression");
        // std::regex would overflow the stack compiling it.
        QTest::addRow("overlong layer pattern")
            << QStringList{QStringLiteral("pareto"), kSample, QStringLiteral("--layers"), QString(100000, QLatin1Char('a'))}
            << QStringLiteral("characters long; PeakLens takes at most 512");
        // 2^53 and more would overflow the search for the largest batch.
        QTest::addRow("batch beyond any machine") << QStringList{QStringLiteral("plan"),
                                                                 kSample,
                                                                 QStringLiteral("--max-batch"),
                                                                 QStringLiteral("--budget"),
                                                                 QStringLiteral("10GiB"),
                                                                 QStringLiteral("--batch"),
                                                                 QStringLiteral("9007199254740993")}
                                                  << QStringLiteral("--batch");
    }
    void commandErrors()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, problem);
        const Run run = runCli(arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.out.isEmpty());
        QVERIFY2(QString::fromUtf8(run.err).contains(problem), run.err.constData());
    }

    void paretoListsTradeOffs()
    {
        const Run run = runCli({QStringLiteral("pareto"), kSample, QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 0);
        const QJsonArray plans = QJsonDocument::fromJson(run.out).object()[QStringLiteral("plans")].toArray();
        QVERIFY(plans.size() >= 2);
        const auto peakOf = [](const QJsonValue &plan) {
            return plan.toObject()[QStringLiteral("predicted")].toObject()[QStringLiteral("peak_bytes")].toInteger();
        };
        QVERIFY(peakOf(plans.first()) < peakOf(plans.last()));
    }

    // With --per-op the sweep's plans may keep some operators' outputs; without, none does.
    void paretoWeighsPerOpPoliciesWhenAsked()
    {
        const QString trace = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/operator-step.pltxt");
        const auto policies = [](const Run &run) {
            int count = 0;
            for (const QJsonValue plan : QJsonDocument::fromJson(run.out).object()[QStringLiteral("plans")].toArray()) {
                for (const QJsonValue unit : plan.toObject()[QStringLiteral("checkpoint")].toArray())
                    count += unit.toString().contains(QStringLiteral("[save:"));
            }
            return count;
        };
        const Run plain = runCli({QStringLiteral("pareto"), trace, QStringLiteral("--json")});
        const Run perOp = runCli({QStringLiteral("pareto"), trace, QStringLiteral("--per-op"), QStringLiteral("--json")});
        QCOMPARE(plain.exitCode, 0);
        QCOMPARE(perOp.exitCode, 0);
        QCOMPARE(policies(plain), 0);
        QVERIFY(policies(perOp) > 0);
        const Run text = runCli({QStringLiteral("pareto"), trace, QStringLiteral("--per-op")});
        QVERIFY2(text.out.contains("per-op"), text.out.constData());
    }

    // plan --per-op plans a policy where it is cheaper, and --json lists each layer's
    // operators as the policy names them, the layer's own output left out.
    void planPerOpAndTheOperatorsItWeighs()
    {
        const QString trace = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/operator-step.pltxt");
        const Run run = runCli({QStringLiteral("plan"), trace, QStringLiteral("--budget"), QStringLiteral("3004KiB"),
                                QStringLiteral("--per-op"), QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject json = QJsonDocument::fromJson(run.out).object();
        QCOMPARE(json[QStringLiteral("checkpoint")].toArray().first().toString(),
                 QStringLiteral("blocks.0[save:aten.add.Tensor+aten.addmm.default+aten.native_layer_norm.default]"));
        QJsonObject addmm;
        const QJsonArray layers = json[QStringLiteral("chain")].toObject()[QStringLiteral("layers")].toArray();
        for (const QJsonValue op : layers[1].toObject()[QStringLiteral("operators")].toArray()) {
            if (op.toObject()[QStringLiteral("operator")].toString() == QStringLiteral("aten.addmm.default"))
                addmm = op.toObject();
        }
        QCOMPARE(addmm[QStringLiteral("output_bytes")].toInteger(), qint64(500 * 1024));
        QCOMPARE(addmm[QStringLiteral("calls")].toInt(), 2);
        QCOMPARE(addmm[QStringLiteral("ms")].toDouble(), 91.0);
        // A rule leaves nothing to weigh.
        QCOMPARE(runCli({QStringLiteral("plan"), trace, QStringLiteral("--strategy"), QStringLiteral("all"),
                         QStringLiteral("--per-op")})
                     .exitCode,
                 2);
    }

    // plan --offload may offload a layer, at the copies' time --host-bandwidth sets;
    // pareto --offload counts the layers offloaded.
    void planOffloadWeighsHostMemory()
    {
        const QString trace = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/operator-step.pltxt");
        const auto planned = [&](const QStringList &more) {
            const Run run = runCli(QStringList{QStringLiteral("plan"), trace, QStringLiteral("--budget"),
                                               QStringLiteral("3004KiB"), QStringLiteral("--json")}
                                   + more);
            return QJsonDocument::fromJson(run.out).object();
        };
        const QJsonObject offloaded = planned({QStringLiteral("--offload")});
        QCOMPARE(offloaded[QStringLiteral("checkpoint")].toArray().first().toString(), QStringLiteral("blocks.0[offload]"));
        // 900 KiB out and back at 25 GB/s, then at 1 GB/s.
        QCOMPARE(offloaded[QStringLiteral("predicted")].toObject()[QStringLiteral("added_time_ms")].toDouble(), 0.073728);
        const QJsonObject slow = planned({QStringLiteral("--offload"), QStringLiteral("--host-bandwidth"), QStringLiteral("1")});
        QCOMPARE(slow[QStringLiteral("predicted")].toObject()[QStringLiteral("added_time_ms")].toDouble(), 1.8432);
        const Run pareto = runCli({QStringLiteral("pareto"), trace, QStringLiteral("--offload")});
        QCOMPARE(pareto.exitCode, 0);
        QVERIFY2(pareto.out.contains("offloaded"), pareto.out.constData());
        QCOMPARE(runCli({QStringLiteral("plan"), trace, QStringLiteral("--checkpoint"), QStringLiteral("blocks.0"),
                         QStringLiteral("--offload")})
                     .exitCode,
                 2);
        QCOMPARE(runCli({QStringLiteral("plan"), trace, QStringLiteral("--budget"), QStringLiteral("3004KiB"),
                         QStringLiteral("--host-bandwidth"), QStringLiteral("0")})
                     .exitCode,
                 2);
    }

    void usageErrorsExitTwo()
    {
        QCOMPARE(runCli({}).exitCode, 2);
        QCOMPARE(runCli({QStringLiteral("summary")}).exitCode, 2);
        QCOMPARE(runCli({QStringLiteral("summary"), kSample, QStringLiteral("--top"), QStringLiteral("0")}).exitCode, 2);
        QCOMPARE(runCli({QStringLiteral("frobnicate")}).exitCode, 2);
    }

    void summaryJsonHasTheDocumentedFigures()
    {
        const Run run = runCli({QStringLiteral("summary"), QStringLiteral("--json"), kSample});
        QCOMPARE(run.exitCode, 0);
        QJsonParseError error;
        const QJsonObject json = QJsonDocument::fromJson(run.out, &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);

        const auto trace = loadTrace(test::ss(kSample));
        const TraceSummary summary = summarize(*trace);
        const DevicePeak &peak = summary.peak.devices.at(*summary.peak.primary);
        QCOMPARE(json[QStringLiteral("events")].toInteger(), qint64(trace->events.size()));
        const QJsonObject jsonPeak = json[QStringLiteral("peak")].toObject();
        QCOMPARE(jsonPeak[QStringLiteral("allocated_bytes")].toInteger(), peak.allocatedBytes);
        QCOMPARE(jsonPeak[QStringLiteral("time_ns")].toInteger(), peak.timeNs);
        QCOMPARE(jsonPeak[QStringLiteral("reserved_bytes")].toInteger(), *peak.reservedBytes);
        QCOMPARE(jsonPeak[QStringLiteral("device")].toString(), QStringLiteral("cuda:0"));

        const QJsonArray layers = json[QStringLiteral("layers")].toArray();
        QVERIFY(!layers.isEmpty());
        for (const QJsonValue &value : layers) {
            const QJsonObject layer = value.toObject();
            const auto index = trace->findLayer(test::ss(layer[QStringLiteral("name")].toString()));
            QVERIFY(index);
            QCOMPARE(layer[QStringLiteral("activation_bytes")].toInteger(), summary.layers[*index].activationBytes);
        }
        const QJsonArray steps = json[QStringLiteral("steps")].toArray();
        QCOMPARE(steps.size(), qsizetype(trace->steps.size()));
        QCOMPARE(steps[1].toObject()[QStringLiteral("peak_allocated_bytes")].toInteger(), summary.steps[1].peakAllocatedBytes);
    }

    // --group on a real snapshot: the groups share out exactly what is live at the peak, as
    // the library groups it, and a diff by the same grouping lists the groups that changed.
    void summaryAndDiffGroupByFileOrPattern_data()
    {
        QTest::addColumn<QString>("grouping");
        QTest::addColumn<QString>("fileA");
        QTest::addColumn<QString>("fileB");
        const QString first = QStringLiteral("snapshot_cs336_first_step.pickle.gz");
        const QString three = QStringLiteral("snapshot_cs336_three_steps.pickle.gz");
        // A CUDA graph's pool, a MemPool and side streams, beside a run in the default pool alone.
        const QString pools = QStringLiteral("snapshot_h200_pools_streams_graph.pickle.gz");
        const QString plain = QStringLiteral("snapshot_h200_gpt_train.pickle.gz");
        QTest::addRow("by source file") << QStringLiteral("file") << first << three;
        QTest::addRow("by a pattern's capture group") << QStringLiteral("regex:/(\\w+)\\.py:") << first << three;
        QTest::addRow("by stage") << QStringLiteral("stage") << pools << plain;
        QTest::addRow("by memory pool") << QStringLiteral("pool") << pools << plain;
        QTest::addRow("by stream") << QStringLiteral("stream") << pools << plain;
    }
    void summaryAndDiffGroupByFileOrPattern()
    {
        QFETCH(QString, grouping);
        QFETCH(QString, fileA);
        QFETCH(QString, fileB);
        const QString a = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/") + fileA;
        const QString b = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/") + fileB;
        const Run run = runCli({QStringLiteral("summary"), a, QStringLiteral("--group"), grouping, QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject live = QJsonDocument::fromJson(run.out).object()[QStringLiteral("live_at_peak")].toObject();
        const QJsonObject byGroup = live[QStringLiteral("by_group")].toObject();
        QCOMPARE(byGroup[QStringLiteral("grouping")].toString(), grouping);
        const auto trace = loadTrace(test::ss(a));
        const TraceSummary summary = summarize(*trace);
        const std::vector<GroupRow> rows = groupBlocks(*trace, AllocationSites(trace->stacks), *summary.peak.liveAtPeak,
                                                       parseBlockGrouping(grouping.toStdString()));
        const QJsonArray groups = byGroup[QStringLiteral("groups")].toArray();
        QCOMPARE(groups.size(), qsizetype(rows.size()));
        QVERIFY(rows.size() > 1);
        qint64 bytes = 0, blocks = 0;
        for (qsizetype i = 0; i < groups.size(); ++i) {
            const QJsonObject group = groups[i].toObject();
            QCOMPARE(group[QStringLiteral("group")].toString(), test::qs(rows[i].key));
            QCOMPARE(group[QStringLiteral("bytes")].toInteger(), rows[i].bytes);
            bytes += group[QStringLiteral("bytes")].toInteger();
            blocks += group[QStringLiteral("blocks")].toInteger();
        }
        QCOMPARE(bytes, live[QStringLiteral("bytes")].toInteger());
        QCOMPARE(blocks, live[QStringLiteral("blocks")].toInteger());
        const Run text = runCli({QStringLiteral("summary"), a, QStringLiteral("--group"), grouping});
        QVERIFY2(text.out.contains(QByteArray::fromStdString(parseBlockGrouping(grouping.toStdString()).title())),
                 text.out.constData());

        const Run diff = runCli({QStringLiteral("diff"), a, b, QStringLiteral("--group"), grouping, QStringLiteral("--json")});
        QCOMPARE(diff.exitCode, 0);
        const QJsonArray changed =
            QJsonDocument::fromJson(diff.out).object()[QStringLiteral("by_group")].toObject()[QStringLiteral("groups")].toArray();
        QVERIFY(!changed.isEmpty());
        for (const QJsonValue &value : changed) {
            const QJsonObject row = value.toObject();
            QCOMPARE(row[QStringLiteral("delta_bytes")].toInteger(),
                     row[QStringLiteral("bytes_b")].toInteger() - row[QStringLiteral("bytes_a")].toInteger());
            const qint64 delta = row[QStringLiteral("delta_bytes")].toInteger();
            QCOMPARE(row[QStringLiteral("change")].toString(),
                     row[QStringLiteral("blocks_a")].toInteger() == 0   ? QStringLiteral("new")
                     : row[QStringLiteral("blocks_b")].toInteger() == 0 ? QStringLiteral("gone")
                     : delta > 0                                        ? QStringLiteral("grew")
                     : delta < 0                                        ? QStringLiteral("shrank")
                                                                        : QStringLiteral("moved"));
        }
        const Run self = runCli({QStringLiteral("diff"), a, a, QStringLiteral("--group"), grouping, QStringLiteral("--json")});
        QVERIFY(QJsonDocument::fromJson(self.out)
                    .object()[QStringLiteral("by_group")]
                    .toObject()[QStringLiteral("groups")]
                    .toArray()
                    .isEmpty());
    }

    // query answers with summary's and diff's own figures, a line per question in order;
    // a bad question gets an error line, the others their answers, and the exit code is 2.
    void queryAnswersAsSummaryAndDiffDo()
    {
        const QString a = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_first_step.pickle.gz");
        const QString b = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_three_steps.pickle.gz");
        const Run run =
            runCli({QStringLiteral("query"), a, QStringLiteral(R"({"id": 1, "ask": "peak"})"),
                    QStringLiteral(R"({"id": 2, "ask": "live", "top": 3, "group": "file"})"),
                    QStringLiteral(R"({"id": "d", "ask": "diff", "against": "%1", "top": 2, "group": "file"})").arg(b)});
        QCOMPARE(run.exitCode, 0);
        const QList<QByteArray> lines = run.out.trimmed().split('\n');
        QCOMPARE(lines.size(), qsizetype(3));
        const auto object = [](const QByteArray &text) { return QJsonDocument::fromJson(text).object(); };
        const QJsonObject summary =
            object(runCli({QStringLiteral("summary"), a, QStringLiteral("--json"), QStringLiteral("--top"), QStringLiteral("3"),
                           QStringLiteral("--group"), QStringLiteral("file")})
                       .out);
        QCOMPARE(object(lines[0])[QStringLiteral("id")].toInt(), 1);
        QCOMPARE(object(lines[0])[QStringLiteral("answer")].toObject(), summary[QStringLiteral("peak")].toObject());
        QCOMPARE(object(lines[1])[QStringLiteral("answer")].toObject(), summary[QStringLiteral("live_at_peak")].toObject());
        const QJsonObject diff = object(runCli({QStringLiteral("diff"), a, b, QStringLiteral("--json"), QStringLiteral("--top"),
                                                QStringLiteral("2"), QStringLiteral("--group"), QStringLiteral("file")})
                                            .out);
        QCOMPARE(object(lines[2])[QStringLiteral("id")].toString(), QStringLiteral("d"));
        QCOMPARE(object(lines[2])[QStringLiteral("answer")].toObject(), diff);

        const Run bad = runCli({QStringLiteral("query"), a, QStringLiteral("not json"), QStringLiteral(R"({"ask": "frob"})"),
                                QStringLiteral(R"({"ask": "live", "top": 0})"), QStringLiteral(R"({"ask": "peak"})")});
        QCOMPARE(bad.exitCode, 2);
        const QList<QByteArray> answers = bad.out.trimmed().split('\n');
        QCOMPARE(answers.size(), qsizetype(4));
        for (int i = 0; i < 3; ++i)
            QVERIFY2(object(answers[i]).contains(QStringLiteral("error")), answers[i].constData());
        QCOMPARE(object(answers[3])[QStringLiteral("answer")].toObject(), summary[QStringLiteral("peak")].toObject());
    }

    // The example script drives query over its standard input, a question at a time.
    void queryDrivenFromAScript()
    {
        const QString trace = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/snapshot_cs336_first_step.pickle.gz");
        QProcess script;
        script.start(QStringLiteral("python3"),
                     {QStringLiteral(PEAKLENS_SOURCE_DIR "/examples/query_trace.py"), QStringLiteral("--cli"),
                      QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli"), QStringLiteral("--top"), QStringLiteral("3"), trace});
        QVERIFY(script.waitForFinished(120000));
        QCOMPARE(script.exitCode(), 0);
        const QByteArray out = script.readAllStandardOutput();
        const auto loaded = loadTrace(test::ss(trace));
        const TraceSummary summary = summarize(*loaded);
        const DevicePeak &peak = summary.peak.devices.at(*summary.peak.primary);
        const QByteArray expected = QByteArray("peak ") + QByteArray::number(peak.allocatedBytes) + QByteArray(" bytes");
        QVERIFY2(out.startsWith(expected), out.constData());
        QCOMPARE(out.count("\n  "), qsizetype(3)); // the three largest source files
        QCOMPARE(out.count("of the way to the peak"), qsizetype(3));
    }

    void reservedIsNullWhenUnknown()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("plain.pltxt"));
        test::writeBytes(path, "alloc a 5\n");
        const Run run = runCli({QStringLiteral("summary"), QStringLiteral("--json"), path});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject peak = QJsonDocument::fromJson(run.out).object()[QStringLiteral("peak")].toObject();
        QCOMPARE(peak[QStringLiteral("allocated_bytes")].toInteger(), qint64(5));
        QVERIFY(peak[QStringLiteral("reserved_bytes")].isNull());
    }

    void convertKeepsTheSummary()
    {
        QTemporaryDir dir;
        const QString text = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt");
        const QString converted = dir.filePath(QStringLiteral("converted.peaklens"));
        QCOMPARE(runCli({QStringLiteral("convert"), text, converted}).exitCode, 0);
        const Run again = runCli({QStringLiteral("convert"), text, converted});
        QCOMPARE(again.exitCode, 2); // never replaces without --force
        QVERIFY(again.err.contains("already exists"));
        const Run fromText = runCli({QStringLiteral("summary"), QStringLiteral("--json"), text});
        const Run fromFile = runCli({QStringLiteral("summary"), QStringLiteral("--json"), converted});
        QCOMPARE(fromFile.exitCode, 0);
        QCOMPARE(fromFile.out, fromText.out);
    }

    void bundledSamplePlans()
    {
        const Run info = runCli({QStringLiteral("info"), kBundled});
        QCOMPARE(info.exitCode, 0);
        QVERIFY2(info.out.contains("replay"), info.out.constData());
        const Run plan = runCli(
            {QStringLiteral("plan"), kBundled, QStringLiteral("--strategy"), QStringLiteral("all"), QStringLiteral("--json")});
        QCOMPARE(plan.exitCode, 0);
        const QJsonObject result = QJsonDocument::fromJson(plan.out).object();
        QVERIFY(result[QStringLiteral("predicted")].toObject()[QStringLiteral("peak_bytes")].toDouble()
                < result[QStringLiteral("baseline")].toObject()[QStringLiteral("peak_bytes")].toDouble());
    }

    void reportWritesEachFormat_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("start");
        QTest::addRow("html") << QStringLiteral("report.html") << QByteArray("<!DOCTYPE html>");
        QTest::addRow("json") << QStringLiteral("report.json") << QByteArray("{");
        QTest::addRow("csv") << QStringLiteral("report.csv") << QByteArray("trace,layer,kind");
    }

    void reportWritesEachFormat()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, start);
        QTemporaryDir dir;
        const QString out = dir.filePath(name);
        const Run run = runCli({QStringLiteral("report"), kBundled, kSample, QStringLiteral("--budget"), QStringLiteral("200MiB"),
                                QStringLiteral("-o"), out});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.startsWith("wrote "));
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().startsWith(start));
    }

    // The HTML report states the figures `summary --json` states: the peak and each layer's activations.
    void reportCarriesTheSummaryFigures()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("report.html"));
        QCOMPARE(runCli({QStringLiteral("report"), kBundled, QStringLiteral("-o"), out}).exitCode, 0);
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray html = file.readAll();
        const Run summary = runCli({QStringLiteral("summary"), QStringLiteral("--json"), kBundled});
        const QJsonObject json = QJsonDocument::fromJson(summary.out).object();
        const qint64 peak = json[QStringLiteral("peak")].toObject()[QStringLiteral("allocated_bytes")].toInteger();
        QVERIFY(html.contains(QByteArray("id=\"peak\">").append(QByteArray::fromStdString(formatBytes(peak)))));
        int checked = 0;
        for (const QJsonValue &layer : json[QStringLiteral("layers")].toArray()) {
            const QString name = layer[QStringLiteral("name")].toString();
            if (name == QStringLiteral("blocks"))
                continue; // a container: the chart shows its blocks
            const qint64 bytes = layer[QStringLiteral("activation_bytes")].toInteger();
            if (bytes == 0)
                continue;
            QVERIFY2(html.contains(name.toUtf8().append("</text>")), qPrintable(name));
            QVERIFY(html.contains(QByteArray::fromStdString(formatBytes(bytes))));
            ++checked;
        }
        QVERIFY(checked >= 6);
    }

    // Names that are not UTF-8 never abort a command (134): each output is written, valid,
    // with the bytes shown as \xHH.
    void namesNotUtf8AreWrittenVisibly_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("output"); // "-" for summary --json on stdout
        QTest::addColumn<bool>("shown");     // whether that output shows that field
        // JSON holds every field; the HTML what a person reads (no metadata it has no row
        // for, no layer's kind; a frame's file is in the flame graph's tooltips); the CSV's
        // layer table layers and kinds.
        const struct
        {
            const char *field;
            bool inHtml, inCsv;
        } fields[] = {{"layer", true, true}, {"kind", false, true},      {"frame", true, false},
                      {"file", true, false}, {"meta key", false, false}, {"meta value", false, false}};
        for (const auto &field : fields) {
            for (const char *output : {"-", "report.json"})
                QTest::addRow("%s, %s", field.field, output)
                    << QString::fromLatin1(field.field) << QString::fromLatin1(output) << true;
            QTest::addRow("%s, report.html", field.field)
                << QString::fromLatin1(field.field) << QStringLiteral("report.html") << field.inHtml;
            QTest::addRow("%s, report.csv", field.field)
                << QString::fromLatin1(field.field) << QStringLiteral("report.csv") << field.inCsv;
        }
    }
    void namesNotUtf8AreWrittenVisibly()
    {
        QFETCH(QString, field);
        QFETCH(QString, output);
        QFETCH(bool, shown);
        QTemporaryDir dir;
        const QString trace = dir.filePath(QStringLiteral("names.peaklens"));
        writeTraceNotUtf8(trace, field);
        const QString out = dir.filePath(output);
        const Run run = output == QLatin1String("-") ? runCli({QStringLiteral("summary"), QStringLiteral("--json"), trace})
                                                     : runCli({QStringLiteral("report"), trace, QStringLiteral("-o"), out});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.err.isEmpty(), run.err.constData());
        QByteArray written = run.out;
        if (output != QLatin1String("-")) {
            QFile file(out);
            QVERIFY(file.open(QIODevice::ReadOnly));
            written = file.readAll();
        }
        QCOMPARE(QString::fromUtf8(written).toUtf8(), written); // valid UTF-8 throughout
        if (output == QLatin1String("-") || output.endsWith(QLatin1String(".json"))) {
            QJsonParseError error;
            QJsonDocument::fromJson(written, &error);
            QCOMPARE(error.error, QJsonParseError::NoError);
            // JSON escapes the backslash of \xFF once more.
            QVERIFY2(written.contains("\\\\xFF\\\\xFE caf\\\\xE9"), written.constData());
        } else {
            if (output.endsWith(QLatin1String(".html")))
                QVERIFY(written.contains("</html>"));
            QCOMPARE(written.contains("\\xFF\\xFE caf\\xE9"), shown);
        }
    }

    // The collector needs a GPU; the torch backend, the default where it is built, does not.
    void recordThroughCuptiWithoutAGpuSaysSo()
    {
        QLibrary driver(QStringLiteral("libcuda.so.1"));
        if (driver.load())
            QSKIP("this machine has an NVIDIA driver; recording is tested where there is a GPU");
        const Run run = runCli({QStringLiteral("record"), QStringLiteral("--backend"), QStringLiteral("cupti"),
                                QStringLiteral("--"), QStringLiteral("python3"), QStringLiteral("train.py")});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.out.isEmpty());
        QVERIFY2(run.err.startsWith("peaklens-cli: record needs a CUDA device"), run.err.constData());
        QCOMPARE(run.err.count('\n'), 1);
    }

    void infoAndTextSummaryNameThePeak()
    {
        const Run info = runCli({QStringLiteral("info"), kSample});
        QCOMPARE(info.exitCode, 0);
        QVERIFY(info.out.contains("memory events"));
        const Run summary = runCli({QStringLiteral("summary"), QStringLiteral("--top"), QStringLiteral("3"), kSample});
        QCOMPARE(summary.exitCode, 0);
        const auto trace = loadTrace(test::ss(kSample));
        const DevicePeak peak = findPeaks(*trace).devices.at(0);
        const std::string line = "Peak allocated  " + formatBytes(peak.allocatedBytes) + " on cuda:0";
        QVERIFY2(summary.out.contains(line.c_str()), summary.out.constData());
        QVERIFY(summary.out.contains("... and "));
    }

    void diffWithItselfSaysNoDifferences_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addRow("trace text") << kSample;
        QTest::addRow("a real snapshot") << QStringLiteral(PEAKLENS_SOURCE_DIR
                                                           "/tests/data/real/snapshot_cs336_medium_train.pickle.gz");
    }
    void diffWithItselfSaysNoDifferences()
    {
        QFETCH(QString, file);
        const Run text = runCli({QStringLiteral("diff"), file, file});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("No differences at the peaks"), text.out.constData());
        const Run json = runCli({QStringLiteral("diff"), QStringLiteral("--json"), file, file});
        QCOMPARE(json.exitCode, 0);
        const QJsonObject object = QJsonDocument::fromJson(json.out).object();
        QVERIFY(object[QStringLiteral("same_peaks")].toBool());
        QCOMPARE(object[QStringLiteral("change")].toObject()[QStringLiteral("peak_allocated_bytes")].toInteger(), qint64(0));
        for (const char *rows : {"by_layer", "by_site", "by_category"})
            QVERIFY(object[QString::fromLatin1(rows)].toArray().isEmpty());
    }

    // A file with more events than a document holds opens as the window around its peak,
    // as in the app: the command says so on stderr, its answer on stdout is unchanged. A
    // small file opens whole, without a word.
    void aWindowOfABigFileSaysSo()
    {
        QTemporaryDir dir;
        const QString big = dir.filePath(QStringLiteral("big.peaklens"));
        TraceBuilder builder;
        const std::uint32_t lane = builder.lane(Lane{Device{DeviceType::Cuda, 0}, 0});
        const std::size_t pairs = 3 * schema::kEventsPerChunk / 2;
        QVERIFY(2 * pairs > LoadBudget::kDocumentEvents);
        std::int64_t t = 0;
        for (std::size_t i = 0; i < pairs; ++i) {
            const std::int64_t bytes = 512 * static_cast<std::int64_t>(1 + i % 64);
            builder.addEvent(MemoryEvent{t += 10, bytes, 0x1000, lane, kNoLayer, 0, Category::Activation, Phase::Forward});
            builder.addEvent(MemoryEvent{t += 10, -bytes, 0x1000, lane, kNoLayer, 0, Category::Activation, Phase::Forward});
        }
        TraceWriter::writeTrace(*builder.finish(), test::ss(big));
        const Run windowed = runCli({QStringLiteral("diff"), big, big});
        QCOMPARE(windowed.exitCode, 0);
        QVERIFY2(windowed.out.contains("No differences at the peaks"), windowed.out.constData());
        QCOMPARE(windowed.err.count("too many to hold at once: showing the"), 2); // A and B
        const QByteArray named = QByteArray("peaklens-cli: ") + big.toUtf8() + ": 196,608 memory events";
        QVERIFY2(windowed.err.startsWith(named), windowed.err.constData());
        // A report of it says which events it covers.
        const QString html = dir.filePath(QStringLiteral("big.html"));
        QCOMPARE(runCli({QStringLiteral("report"), big, QStringLiteral("-o"), html}).exitCode, 0);
        QFile report(html);
        QVERIFY(report.open(QIODevice::ReadOnly));
        QVERIFY(report.readAll().contains("196,608 memory events, too many to hold at once: showing the"));
        const Run whole = runCli({QStringLiteral("diff"), kBundled, kBundled});
        QCOMPARE(whole.exitCode, 0);
        QVERIFY2(whole.err.isEmpty(), whole.err.constData());
    }

    // B keeps 3 MiB more of blocks.1's activations: the layer heads its table, in text and JSON.
    void diffShowsTheLayerThatGrew()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.pltxt")), b = dir.filePath(QStringLiteral("b.pltxt"));
        const QByteArray common = "layer blocks.0\nlayer blocks.1\nbegin step 1\nbegin fwd:blocks.0\nalloc x 2MiB activation\n"
                                  "end fwd:blocks.0\nbegin fwd:blocks.1\n";
        test::writeBytes(a, common + "alloc y 1MiB activation\nend fwd:blocks.1\nend step 1\n");
        test::writeBytes(b, common + "alloc y 4MiB activation\nend fwd:blocks.1\nend step 1\n");
        const Run text = runCli({QStringLiteral("diff"), a, b});
        QCOMPARE(text.exitCode, 0);
        const QList<QByteArray> lines = text.out.split('\n');
        const auto heading = std::find_if(lines.begin(), lines.end(),
                                          [](const QByteArray &line) { return line.startsWith("Live at the peak by layer"); });
        QVERIFY2(heading != lines.end() && heading + 2 < lines.end(), text.out.constData());
        QVERIFY2((heading + 2)->simplified().startsWith("blocks.1 1.000 MiB 4.000 MiB +3.000 MiB grew 1 1"),
                 text.out.constData());
        QVERIFY(text.out.contains("+3.000 MiB (+100.0 %)"));

        const Run json =
            runCli({QStringLiteral("diff"), QStringLiteral("--json"), QStringLiteral("--top"), QStringLiteral("1"), a, b});
        QCOMPARE(json.exitCode, 0);
        QJsonParseError error;
        const QJsonObject object = QJsonDocument::fromJson(json.out, &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        const QJsonArray layers = object[QStringLiteral("by_layer")].toArray();
        QCOMPARE(layers.size(), qsizetype(1));
        QCOMPARE(layers[0].toObject()[QStringLiteral("layer")].toString(), QStringLiteral("blocks.1"));
        QCOMPARE(layers[0].toObject()[QStringLiteral("delta_bytes")].toInteger(), qint64(3 << 20));
        QCOMPARE(object[QStringLiteral("a")].toObject()[QStringLiteral("file")].toString(), a);
        QCOMPARE(object[QStringLiteral("aligned_step")].toObject()[QStringLiteral("step")].toInteger(), qint64(1));
    }

    // One row per file, by the rank in each file's metadata whatever the order given.
    void summaryOfSeveralRanks_data()
    {
        QTest::addColumn<QList<int>>("ranks");
        QTest::addRow("two ranks") << QList<int>{1, 0};
        QTest::addRow("three ranks") << QList<int>{2, 0, 1};
    }
    void summaryOfSeveralRanks()
    {
        QFETCH(QList<int>, ranks);
        QTemporaryDir dir;
        QStringList files;
        for (int rank : ranks) {
            files << dir.filePath(QStringLiteral("rank%1.pltxt").arg(rank));
            test::writeBytes(files.last(),
                             QStringLiteral("meta rank %1\nbegin step 1\nalloc a %2KiB activation @fwd:blocks.0\nend step 1\n")
                                 .arg(rank)
                                 .arg(100 + rank)
                                 .toUtf8());
        }
        const Run text = runCli(QStringList{QStringLiteral("summary")} + files);
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.startsWith(QStringLiteral("%1 ranks: ").arg(ranks.size()).toUtf8()), text.out.constData());
        QCOMPARE(text.out.count(".pltxt"), qsizetype(ranks.size()));
        QVERIFY(text.out.contains("No outliers"));

        const Run json = runCli(QStringList{QStringLiteral("summary"), QStringLiteral("--json")} + files);
        QCOMPARE(json.exitCode, 0);
        const QJsonArray rows = QJsonDocument::fromJson(json.out).object()[QStringLiteral("ranks")].toArray();
        QCOMPARE(rows.size(), qsizetype(ranks.size()));
        for (int i = 0; i < rows.size(); ++i) {
            const QJsonObject row = rows[i].toObject();
            QCOMPARE(row[QStringLiteral("rank")].toInt(), i);
            QCOMPARE(row[QStringLiteral("file")].toString(), dir.filePath(QStringLiteral("rank%1.pltxt").arg(i)));
            QCOMPARE(row[QStringLiteral("peak_allocated_bytes")].toInteger(), qint64((100 + i) * 1024));
            QCOMPARE(row[QStringLiteral("top_layer")].toString(), QStringLiteral("blocks.0"));
        }
    }

    void badFileAmongSeveralIsNamed_data()
    {
        QTest::addColumn<QStringList>("command");
        QTest::addColumn<int>("bad"); // which file of the two or three is damaged
        QTest::addRow("diff, bad B") << QStringList{QStringLiteral("diff")} << 1;
        QTest::addRow("diff, bad A") << QStringList{QStringLiteral("diff"), QStringLiteral("--json")} << 0;
        QTest::addRow("summary of three") << QStringList{QStringLiteral("summary")} << 1;
        QTest::addRow("summary --json of three") << QStringList{QStringLiteral("summary"), QStringLiteral("--json")} << 2;
    }
    void badFileAmongSeveralIsNamed()
    {
        QFETCH(QStringList, command);
        QFETCH(int, bad);
        QTemporaryDir dir;
        QStringList files;
        const int count = command.first() == QLatin1String("diff") ? 2 : 3;
        for (int i = 0; i < count; ++i) {
            files << dir.filePath(QStringLiteral("rank%1.peaklens").arg(i));
            test::writeDamagedTrace(files.last(), i == bad ? QStringLiteral("half") : QStringLiteral("none"),
                                    "alloc a 5\nfree a\n");
        }
        const Run run = runCli(command + files);
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.out.isEmpty());
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ") + files[bad] + QStringLiteral(": ")), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
    }

    // watch follows a run as it is written: a line per step with the step's own peak as the
    // finished file gives it, a warning where a step comes near the capacity, and a last
    // line once the writer finishes.
    void watchFollowsARunWhileItIsWritten()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("live.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {kBundled, out, QStringLiteral("--commit-every"), QStringLiteral("400"),
                                               QStringLiteral("--pause-ms"), QStringLiteral("20")}));
        const Run run = runCli({QStringLiteral("watch"), out, QStringLiteral("--interval"), QStringLiteral("20"),
                                QStringLiteral("--capacity"), QStringLiteral("280MiB")});
        QVERIFY(writer.waitForFinished(60000));
        QCOMPARE(run.exitCode, 0);
        const QStringList lines = QString::fromUtf8(run.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY2(lines.first().contains(QStringLiteral("is writing it")), qPrintable(lines.first()));
        const auto trace = loadTrace(test::ss(out));
        const std::vector<StepStats> steps = computeStepStats(*trace, Device{DeviceType::Cpu, 0});
        QVERIFY(!steps.empty());
        const QStringList stepLines = lines.filter(QRegularExpression(QStringLiteral("^step ")));
        QCOMPARE(stepLines.size(), qsizetype(steps.size()));
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const QString expected = QStringLiteral("step %1  %2  peak %3 on cpu")
                                         .arg(steps[i].number)
                                         .arg(test::qs(formatDuration(steps[i].durationNs())))
                                         .arg(test::qs(formatBytes(steps[i].peakAllocatedBytes)));
            QVERIFY2(stepLines[int(i)].startsWith(expected), qPrintable(stepLines[int(i)] + QStringLiteral(" / ") + expected));
        }
        // 273.8 MiB of 280 MiB: within 5 %.
        QCOMPARE(lines.filter(QStringLiteral("warning: step")).size(), qsizetype(steps.size()));
        // The first warning carries the planner's advice on what was recorded by then; the
        // toggles it names keep the finished run's model within the margin too.
        const qsizetype warned = lines.indexOf(lines.filter(QStringLiteral("warning: step")).first());
        QVERIFY2(lines.value(warned + 1).startsWith(QStringLiteral("advice: ")), qPrintable(lines.value(warned + 1)));
        const QString advice = lines.filter(QStringLiteral("advice: ")).last();
        const QRegularExpressionMatch strategy =
            QRegularExpression(QStringLiteral("Strategy for a rerun: (\\S+) ")).match(advice);
        QVERIFY2(advice.contains(QStringLiteral("checkpointing ")) && strategy.hasMatch(), qPrintable(advice));
        const Plan plan = planForStrategy(buildCostModel(*trace), test::ss(strategy.captured(1)));
        QVERIFY2(plan.prediction.peakBytes <= std::int64_t(280 * 1024 * 1024 * 0.95),
                 qPrintable(test::qs(formatBytes(plan.prediction.peakBytes))));
        QVERIFY2(lines.last().startsWith(QStringLiteral("Done: ")) && lines.last().contains(QStringLiteral("finished it")),
                 qPrintable(lines.last()));
        QVERIFY(lines.last().contains(test::qs(formatCount(std::int64_t(trace->events.size())) + " memory events")));
    }

    void watchSaysWhenTheWriterStopped()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("killed.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {kBundled, out, QStringLiteral("--commit-every"), QStringLiteral("3000"),
                                               QStringLiteral("--die-after"), QStringLiteral("2")}));
        QVERIFY(writer.waitForFinished(60000));
        QCOMPARE(writer.exitCode(), 9);
        const Run run = runCli({QStringLiteral("watch"), out, QStringLiteral("--interval"), QStringLiteral("20")});
        QCOMPARE(run.exitCode, 3);
        QVERIFY2(run.out.contains("stopped without finishing it") && run.out.contains("6,000 memory events"),
                 run.out.constData());
        // Nothing is written beside it: the log stays as the writer left it.
        QVERIFY(QFile::exists(out + QStringLiteral("-wal")));
    }

    // Option errors: one line, "peaklens-cli: ", what is wrong, where the options are
    // listed; numbers as people write them.
    void optionErrorsAreOneLine_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("problem");
        QTest::newRow("--top 0") << QStringList{QStringLiteral("summary"), kSample, QStringLiteral("--top"), QStringLiteral("0")}
                                 << QStringLiteral(
                                        "--top: \"0\" is not a whole number of at least 1; see peaklens-cli summary --help.");
        QTest::newRow("no subcommand") << QStringList{} << QStringLiteral("A subcommand is required; see peaklens-cli --help.");
        QTest::newRow("unknown option") << QStringList{QStringLiteral("info"), kSample, QStringLiteral("--nope")}
                                        << QStringLiteral("--nope; see peaklens-cli info --help.");
        QTest::newRow("watch --for nan") << QStringList{QStringLiteral("watch"), kSample, QStringLiteral("--for"),
                                                        QStringLiteral("nan")}
                                         << QStringLiteral("--for must be a number of seconds, 0 or more.");
        QTest::newRow("watch --for -1") << QStringList{QStringLiteral("watch"), kSample, QStringLiteral("--for=-1")}
                                        << QStringLiteral("--for must be a number of seconds, 0 or more.");
        QTest::newRow("plan --emit cpp") << QStringList{
            QStringLiteral("plan"), kSample, QStringLiteral("--budget"), QStringLiteral("70%"), QStringLiteral("--emit"),
            QStringLiteral("cpp")} << QStringLiteral("--emit: cpp not in {python}; see peaklens-cli plan --help.");
        QTest::newRow("plan --emit with --json") << QStringList{QStringLiteral("plan"),     kSample,
                                                                QStringLiteral("--budget"), QStringLiteral("70%"),
                                                                QStringLiteral("--emit"),   QStringLiteral("python"),
                                                                QStringLiteral("--json")}
                                                 << QStringLiteral("--json excludes --emit; see peaklens-cli plan --help.");
        QTest::newRow("plan --activations with --emit")
            << QStringList{QStringLiteral("plan"),         kSample,
                           QStringLiteral("--budget"),     QStringLiteral("70%"),
                           QStringLiteral("--emit"),       QStringLiteral("python"),
                           QStringLiteral("--activations")}
            << QStringLiteral("--emit excludes --activations; see peaklens-cli plan --help.");
        QTest::newRow("report to PDF") << QStringList{QStringLiteral("report"), kSample, QStringLiteral("-o"),
                                                      QStringLiteral("r.pdf")}
                                       << QStringLiteral("the app writes PDF: peaklens --export-report r.pdf FILE.");
    }
    void optionErrorsAreOneLine()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, problem);
        const Run run = runCli(arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.out.isEmpty());
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ")) && err.endsWith(problem + QLatin1Char('\n')), qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
    }

    // Nothing the user owns is replaced without --force; with it, atomically.
    void reportReplacesOnlyWithForce()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("report.html"));
        test::writeBytes(out, "the user's notes");
        const Run refused = runCli({QStringLiteral("report"), kSample, QStringLiteral("-o"), out});
        QCOMPARE(refused.exitCode, 2);
        QCOMPARE(QString::fromUtf8(refused.err),
                 QStringLiteral("peaklens-cli: ") + out + QStringLiteral(": already exists; pass --force to replace it.\n"));
        QFile kept(out);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("the user's notes"));
        kept.close();
        QCOMPARE(runCli({QStringLiteral("report"), kSample, QStringLiteral("-o"), out, QStringLiteral("--force")}).exitCode, 0);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QVERIFY(kept.readAll().startsWith("<!DOCTYPE html>"));
    }

    // Under a file-size limit: one sentence, exit 2, no partial file, no SIGXFSZ.
    void fileSizeLimitIsOneSentence_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("output");
        QTest::newRow("convert") << QStringList{QStringLiteral("convert"), kBundled} << QStringLiteral("out.peaklens");
        QTest::newRow("report --table events") << QStringList{QStringLiteral("report"), kBundled, QStringLiteral("--table"),
                                                              QStringLiteral("events"), QStringLiteral("-o")}
                                               << QStringLiteral("out.csv");
    }
    void fileSizeLimitIsOneSentence()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, output);
        QTemporaryDir dir;
        QProcess process;
        process.setChildProcessModifier([] {
            const rlimit limit{100 * 1024, 100 * 1024};
            ::setrlimit(RLIMIT_FSIZE, &limit);
        });
        process.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli"), arguments << dir.filePath(output));
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 2);
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ") + dir.filePath(output) + QStringLiteral(": "))
                     && err.endsWith(QStringLiteral("it would pass the largest file this process may write (ulimit -f).\n")),
                 qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
    }

    // Two million rows in one table (steps): summary --json lists every one, within the
    // load budget (512 MiB + 16 bytes per input byte) where no sanitizer inflates memory.
    void millionsOfStepsStayWithinTheLoadBudget()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("steps.peaklens"));
        QVERIFY(QFile::copy(kBundled, path));
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        test::execSql(path, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000) "
                            "INSERT INTO steps SELECT i + 100, i * 1000, i * 1000 + 500 FROM n");
        const Run run =
            test::runTool(QStringLiteral("peaklens-cli"), {QStringLiteral("summary"), QStringLiteral("--json"), path}, 300000);
        QCOMPARE(run.exitCode, 0);
        const QJsonDocument json = QJsonDocument::fromJson(run.out);
        QCOMPARE(json.object()[QStringLiteral("steps")].toArray().size(), qsizetype(2000003));
#if !defined(__SANITIZE_ADDRESS__)
        rusage usage{};
        QCOMPARE(::getrusage(RUSAGE_CHILDREN, &usage), 0);
        const auto budget = LoadBudget::limitFor(std::uint64_t(QFileInfo(path).size()));
        QVERIFY2(std::uint64_t(usage.ru_maxrss) * 1024 <= budget,
                 qPrintable(QStringLiteral("%1 KiB resident, budget %2 KiB").arg(usage.ru_maxrss).arg(budget / 1024)));
#endif
    }

    // A followed file that another is moved over: watch says so and stops, exit 2, rather
    // than merge the two and report the other writer's end.
    void watchNoticesAReplacedFile()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("live.peaklens"));
        QProcess writer;
        QVERIFY(test::startLiveWriter(writer, {kBundled, out, QStringLiteral("--commit-every"), QStringLiteral("200"),
                                               QStringLiteral("--pause-ms"), QStringLiteral("50")}));
        QProcess watch;
        watch.start(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-cli"),
                    {QStringLiteral("watch"), out, QStringLiteral("--interval"), QStringLiteral("20")});
        QVERIFY(watch.waitForReadyRead(30000)); // it has read the file once
        const QString other = dir.filePath(QStringLiteral("other.peaklens"));
        QVERIFY(QFile::copy(kBundled, other));
        QCOMPARE(::rename(qPrintable(other), qPrintable(out)), 0);
        QVERIFY(watch.waitForFinished(10000));
        writer.kill();
        writer.waitForFinished();
        QCOMPARE(watch.exitCode(), 2);
        const QString err = QString::fromUtf8(watch.readAllStandardError());
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ") + out + QStringLiteral(": was replaced by another file")),
                 qPrintable(err));
        QCOMPARE(err.count(QLatin1Char('\n')), 1);
    }

    void watchOnBadInput_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("problem");
        QTest::newRow("missing file") << QStringLiteral("missing") << QStringLiteral("does not exist");
        QTest::newRow("SQLite but not ours") << QStringLiteral("foreign") << QStringLiteral("not a PeakLens trace");
        QTest::newRow("newer format") << QStringLiteral("newer") << QStringLiteral("newer PeakLens");
        QTest::newRow("missing table") << QStringLiteral("droptable") << QStringLiteral("is missing");
    }

    void watchOnBadInput()
    {
        QFETCH(QString, damage);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.peaklens"));
        test::writeDamagedTrace(path, damage, "alloc a 5\nfree a\n");
        const Run run = runCli({QStringLiteral("watch"), path, QStringLiteral("--for"), QStringLiteral("1")});
        QCOMPARE(run.exitCode, 2);
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith(QStringLiteral("peaklens-cli: ") + path) && err.contains(problem), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(tst_Cli)
#include "tst_cli.moc"
