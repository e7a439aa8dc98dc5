// SPDX-License-Identifier: Apache-2.0
#include "core/analysis/kernellanes.h"
#include "testsupport.h"

using namespace peaklens;
using peaklens::test::traceFrom;

namespace {

// Stream 7: k1 [0, 40), k2 [30, 60) overlapping it, k3 [100, 110). Stream 9: k4 [50, 150).
// A kernel on the CPU's lane and one on cuda:1 belong to other devices.
const char *const kTrace = "t=0 kernel k1 40 stream=7\n"
                           "t=0 kernel other 500 device=cuda:1 stream=7\n"
                           "t=0 alloc 0x1 10\n"
                           "t=30 kernel k2 30 stream=7\n"
                           "t=50 kernel k4 100 stream=9\n"
                           "t=100 kernel k3 10 stream=7\n";

QString names(const Trace &trace, const std::vector<std::size_t> &kernels)
{
    QStringList out;
    for (std::size_t k : kernels)
        out << QString::fromStdString(trace.kernelNames[trace.kernels[k].name]);
    return out.join(QLatin1Char(' '));
}

} // namespace

class tst_KernelLanes : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void lanesByStream()
    {
        const auto trace = traceFrom(QString::fromLatin1(kTrace));
        const KernelLanes lanes(*trace, Device{DeviceType::Cuda, 0});
        QCOMPARE(lanes.size(), std::size_t(2));
        QCOMPARE(lanes.stream(0), std::uint64_t(7));
        QCOMPARE(lanes.kernelCount(0), std::size_t(3));
        QCOMPARE(lanes.stream(1), std::uint64_t(9));
        QCOMPARE(KernelLanes(*trace, Device{DeviceType::Cuda, 1}).size(), std::size_t(1));
        QVERIFY(KernelLanes(*trace, Device{DeviceType::Cuda, 2}).empty());
    }

    void busy_data()
    {
        QTest::addColumn<int>("lane");
        QTest::addColumn<qint64>("begin");
        QTest::addColumn<qint64>("end");
        QTest::addColumn<QList<float>>("share");
        // Overlapping kernels count once: [0, 60) is busy, then idle until 100.
        QTest::newRow("stream 7, 20 ns columns") << 0 << qint64(0) << qint64(120) << QList<float>{1, 1, 1, 0, 0, 0.5f};
        QTest::newRow("one column") << 0 << qint64(0) << qint64(120) << QList<float>{70.0f / 120};
        QTest::newRow("a window inside k4") << 1 << qint64(60) << qint64(80) << QList<float>{1, 1};
        QTest::newRow("a window after everything") << 1 << qint64(200) << qint64(300) << QList<float>{0, 0};
        QTest::newRow("a window cutting k2") << 0 << qint64(45) << qint64(105) << QList<float>{0.75f, 0, 0.25f};
    }
    void busy()
    {
        QFETCH(int, lane);
        QFETCH(qint64, begin);
        QFETCH(qint64, end);
        QFETCH(QList<float>, share);
        const auto trace = traceFrom(QString::fromLatin1(kTrace));
        const KernelLanes lanes(*trace, Device{DeviceType::Cuda, 0});
        const std::vector<float> got = lanes.busy(std::size_t(lane), begin, end, int(share.size()));
        QCOMPARE(got.size(), std::size_t(share.size()));
        for (qsizetype i = 0; i < share.size(); ++i)
            QVERIFY2(std::abs(got[std::size_t(i)] - share[i]) < 1e-5f,
                     qPrintable(QStringLiteral("column %1: %2, expected %3").arg(i).arg(got[std::size_t(i)]).arg(share[i])));
    }

    void kernelAt_data()
    {
        QTest::addColumn<qint64>("time");
        QTest::addColumn<QString>("kernel");
        QTest::newRow("k1 alone") << qint64(10) << QStringLiteral("k1");
        QTest::newRow("k2 begun last where they overlap") << qint64(35) << QStringLiteral("k2");
        QTest::newRow("k2 after k1 ended") << qint64(45) << QStringLiteral("k2");
        QTest::newRow("end is exclusive") << qint64(60) << QString();
        QTest::newRow("idle") << qint64(80) << QString();
        QTest::newRow("k3") << qint64(100) << QStringLiteral("k3");
        QTest::newRow("before all") << qint64(-5) << QString();
    }
    void kernelAt()
    {
        QFETCH(qint64, time);
        QFETCH(QString, kernel);
        const auto trace = traceFrom(QString::fromLatin1(kTrace));
        const KernelLanes lanes(*trace, Device{DeviceType::Cuda, 0});
        const auto found = lanes.kernelAt(0, time);
        QCOMPARE(found ? names(*trace, {*found}) : QString(), kernel);
    }
};

QTEST_GUILESS_MAIN(tst_KernelLanes)
#include "tst_kernellanes.moc"
