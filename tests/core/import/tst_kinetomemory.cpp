// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"
#include "tracefiledamage.h"

#include "core/analysis/peakfinder.h"
#include "core/import/traceloader.h"

#include <QTemporaryDir>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

// "[memory]" events as Kineto writes them, one per line of `rows`:
//   tid ts evidx addr bytes total_allocated total_reserved [device_type]
// with "-" for a field the event leaves out.
QByteArray kinetoTrace(const QString &rows, const QString &extraEvents = {})
{
    QStringList events;
    for (const QString &row : rows.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QStringList f = row.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        QStringList args;
        const auto arg = [&](const char *key, const QString &value) {
            if (value != QLatin1String("-"))
                args << QStringLiteral("\"%1\": %2").arg(QLatin1String(key), value);
        };
        arg("Ev Idx", f[2]);
        arg("Addr", f[3]);
        arg("Bytes", f[4]);
        arg("Total Allocated", f[5]);
        arg("Total Reserved", f[6]);
        arg("Device Type", f.size() > 7 ? f[7] : QStringLiteral("1"));
        arg("Device Id", QStringLiteral("0"));
        events << QStringLiteral("{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 1, "
                                 "\"tid\": %1, \"ts\": %2, \"args\": {%3}}")
                      .arg(f[0], f[1], args.join(QStringLiteral(", ")));
    }
    if (!extraEvents.isEmpty())
        events << extraEvents;
    return QStringLiteral("{\"traceEvents\": [%1]}").arg(events.join(QStringLiteral(",\n"))).toUtf8();
}

using Loaded = test::LoadedTrace;

Loaded load(const QByteArray &json)
{
    return test::loadFromBytes(json, QStringLiteral("t.pt.trace.json"));
}

QString printCurve(const Trace &trace)
{
    QStringList points;
    std::int64_t level = 0;
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
        level += trace.events.deltaBytes(i);
        if (i + 1 == trace.events.size() || trace.events.timeNs(i + 1) != trace.events.timeNs(i))
            points << QStringLiteral("%1:%2").arg(trace.events.timeNs(i) / 1000).arg(level);
    }
    return points.join(QLatin1Char(' '));
}

} // namespace

class tst_KinetoMemory : public QObject
{
    Q_OBJECT

private slots:
    void eventsFollowTimeNotFileOrder_data()
    {
        QTest::addColumn<QString>("rows");
        QTest::addColumn<QString>("curve"); // us:bytes after each time
        QTest::addColumn<qint64>("peak");
        QTest::addColumn<qint64>("reservedPeak");
        QTest::addColumn<QString>("totals"); // what import.totals says, in part
        // The autograd thread's events come first in the file but happen later.
        QTest::addRow("threads listed one after the other")
            << QStringLiteral("2 30 3 768 -100 1000 4000\n2 40 4 1024 50 1050 4000\n"
                              "1 10 0 256 200 1200 3000\n1 20 1 768 100 1300 4000\n1 25 2 256 -200 1100 4000")
            << QStringLiteral("10:1200 20:1300 25:1100 30:1000 40:1050") << qint64(1300) << qint64(4000)
            << QStringLiteral("all 5 events agree");
        QTest::addRow("equal times ordered by Ev Idx")
            << QStringLiteral("1 10 1 512 -600 500 2000\n1 10 0 768 100 1100 2000") << QStringLiteral("10:500") << qint64(1100)
            << qint64(2000) << QStringLiteral("all 2 events agree");
        QTest::addRow("a dropped free: the file's totals win")
            << QStringLiteral("1 10 0 256 300 1300 2000\n1 20 1 512 100 1100 2000\n1 30 2 768 50 1150 2000")
            << QStringLiteral("10:1300 20:1100 30:1150") << qint64(1300) << qint64(2000)
            << QStringLiteral("1 of 3 events disagree with the trace's Total Allocated, by 300 B");
        QTest::addRow("a dropped allocation: raised after the event, never above the totals")
            << QStringLiteral("1 10 0 256 300 300 2000\n1 20 1 256 -300 200 2000\n1 30 2 768 50 250 2000")
            << QStringLiteral("10:300 20:200 30:250") << qint64(300) << qint64(2000) << QStringLiteral("1 of 3 events disagree");
        QTest::addRow("AMD GPU (HIP)") << QStringLiteral("1 10 0 256 300 300 1000 6\n1 20 1 256 -300 0 1000 6")
                                       << QStringLiteral("10:300 20:0") << qint64(300) << qint64(1000)
                                       << QStringLiteral("cuda:0: all 2 events agree");
        QTest::addRow("an old trace without addresses or totals")
            << QStringLiteral("1 10 - - -100 - -\n1 20 - - 400 - -\n1 30 - - -400 - -\n1 40 - - 50 - -")
            << QStringLiteral("10:0 20:400 30:0 40:50") << qint64(400) << qint64(-1) << QString();
    }

    void eventsFollowTimeNotFileOrder()
    {
        QFETCH(QString, rows);
        QFETCH(QString, curve);
        QFETCH(qint64, peak);
        QFETCH(qint64, reservedPeak);
        QFETCH(QString, totals);
        const Loaded loaded = load(kinetoTrace(rows));
        QVERIFY2(loaded.trace, qPrintable(loaded.problem));
        QCOMPARE(printCurve(*loaded.trace), curve);
        const PeakReport report = findPeaks(*loaded.trace);
        QCOMPARE(report.devices.at(0).allocatedBytes, peak);
        QCOMPARE(report.devices.at(0).reservedBytes.value_or(-1), reservedPeak);
        QVERIFY2(qs(loaded.trace->metaValue("import.totals")).contains(totals), loaded.trace->metaValue("import.totals").c_str());
        // The blocks live at the peak hold the peak's bytes, synthetic ones included.
        QCOMPARE(report.liveAtPeak->bytes, peak);
    }

    void memoryBeforeProfilingComesFromTheEarliestEvent()
    {
        const Loaded loaded = load(kinetoTrace(QStringLiteral("2 50 1 512 100 5100 8000\n1 10 0 256 100 1100 8000")));
        QVERIFY2(loaded.trace, qPrintable(loaded.problem));
        QCOMPARE(printCurve(*loaded.trace), QStringLiteral("10:1100 50:5100"));
        QCOMPARE(qs(loaded.trace->metaValue("import.preexisting")),
                 QStringLiteral("cuda:0: 1000 B allocated before profiling began"));
        // 3900 B the file's second total shows beyond its events: a disagreement, not memory from before.
        QVERIFY(qs(loaded.trace->metaValue("import.totals"))
                    .contains(QStringLiteral("1 of 2 events disagree with the trace's Total Allocated, by 3.809 KiB")));
    }

    void profilerAnnotationsAreNotLayers()
    {
        const QString spans =
            QStringLiteral("{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"pid\": 1, \"tid\": 1, "
                           "\"ts\": 5, \"dur\": 10},\n"
                           "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"Optimizer.zero_grad#SGD.zero_grad\", "
                           "\"pid\": 1, \"tid\": 1, \"ts\": 25, \"dur\": 10},\n"
                           "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"nn.Module: Linear_0\", \"pid\": 1, "
                           "\"tid\": 1, \"ts\": 40, \"dur\": 10}");
        const Loaded loaded = load(kinetoTrace(QStringLiteral("1 10 0 256 100 100 1000\n1 30 1 256 -100 0 1000\n"
                                                              "1 45 2 512 100 100 1000"),
                                               spans));
        QVERIFY2(loaded.trace, qPrintable(loaded.problem));
        const Trace &trace = *loaded.trace;
        QCOMPARE(trace.layers.size(), std::size_t(1));
        QCOMPARE(trace.layers[0].path, std::string("Linear_0"));
        QCOMPARE(int(trace.events.phase(0)), int(Phase::Other));     // inside nccl:all_reduce
        QCOMPARE(int(trace.events.phase(1)), int(Phase::Optimizer)); // inside zero_grad
        QCOMPARE(int(trace.events.phase(2)), int(Phase::Forward));
        QCOMPARE(trace.events.layer(2), std::uint32_t(0));
        // Each annotation is a stage of its name; the optimizer's is its phase's range as well.
        QStringList stages;
        for (const Range &range : trace.ranges) {
            if (range.stage != kNoStage)
                stages << QStringLiteral("%1 %2..%3 %4")
                              .arg(qs(trace.stageNames[range.stage]))
                              .arg(range.beginNs)
                              .arg(range.endNs)
                              .arg(QString::fromUtf8(phaseName(range.phase)));
        }
        QCOMPARE(stages, QStringList({QStringLiteral("nccl:all_reduce 5000..15000 other"),
                                      QStringLiteral("Optimizer.zero_grad#SGD.zero_grad 25000..35000 optimizer")}));
    }
};

QTEST_GUILESS_MAIN(tst_KinetoMemory)
#include "tst_kinetomemory.moc"
