#include "testsupport.h"
#include "core/analysis/timelineseries.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::traceFrom;

namespace {

QString printPoints(const std::vector<SeriesPoint> &points)
{
    QStringList parts;
    for (const SeriesPoint &point : points)
        parts << QStringLiteral("%1:%2").arg(point.timeNs).arg(point.bytes);
    return parts.join(QLatin1Char(' '));
}

QString printGroups(const TimelineSeries &series)
{
    QStringList parts;
    for (const GroupSeries &group : series.groups)
        parts << qs(group.label) + QStringLiteral(" [") + printPoints(group.points) + QLatin1Char(']');
    return parts.join(QLatin1Char(' '));
}

const char *const kTrace = "t=0 reserve s 1000\n"
                           "t=0 alloc p 100 parameter @other:net.b0.fc\n"
                           "t=1 alloc a 300 activation @fwd:net.b0.fc\n"
                           "t=1 alloc c 50 activation @fwd:net.b1\n"
                           "t=2 alloc t 20 temporary\n"
                           "t=3 free a @bwd:net.b0.fc\n"
                           "t=4 alloc x 5 device=cpu\n";

} // namespace

class tst_TimelineSeries : public QObject
{
    Q_OBJECT

private slots:
    void groupsAndTotals_data()
    {
        QTest::addColumn<int>("groupBy");
        QTest::addColumn<int>("depth");
        QTest::addColumn<QString>("groups");
        QTest::addRow("by category") << int(GroupBy::Category) << 0
                                     << QStringLiteral("activation [1:350 3:50] parameter [0:100] temporary [2:20]");
        QTest::addRow("by innermost layer") << int(GroupBy::Layer) << 0
                                            << QStringLiteral("net.b0.fc [0:100 1:400 3:100] net.b1 [1:50] (no layer) [2:20]");
        QTest::addRow("by second-level layer") << int(GroupBy::Layer) << 2
                                               << QStringLiteral("net.b0 [0:100 1:400 3:100] net.b1 [1:50] (no layer) [2:20]");
        QTest::addRow("by top-level layer") << int(GroupBy::Layer) << 1
                                            << QStringLiteral("net [0:100 1:450 3:150] (no layer) [2:20]");
    }
    void groupsAndTotals()
    {
        QFETCH(int, groupBy);
        QFETCH(int, depth);
        QFETCH(QString, groups);
        const auto trace = traceFrom(QString::fromUtf8(kTrace));
        const TimelineSeries series = buildTimeline(*trace, Device{}, static_cast<GroupBy>(groupBy), depth);
        // Events at the same time merge into one point; the CPU allocation is another device's.
        QCOMPARE(printPoints(series.allocated), QStringLiteral("0:100 1:450 2:470 3:170"));
        QCOMPARE(printPoints(series.reserved), QStringLiteral("0:1000"));
        QCOMPARE(printGroups(series), groups);
    }

    void unknownDeviceIsEmpty()
    {
        const auto trace = traceFrom(QString::fromUtf8(kTrace));
        const TimelineSeries series = buildTimeline(*trace, *Device::parse("cuda:3"), GroupBy::Category);
        QVERIFY(series.allocated.empty());
        QVERIFY(series.groups.empty());
    }
};

QTEST_GUILESS_MAIN(tst_TimelineSeries)
#include "tst_timelineseries.moc"
