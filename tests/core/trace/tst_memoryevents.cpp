// SPDX-License-Identifier: Apache-2.0
#include "core/trace/memoryevents.h"
#include "testsupport.h"

using namespace peaklens;

class tst_MemoryEvents : public QObject
{
    Q_OBJECT

private slots:
    void packsEveryFieldLosslessly_data()
    {
        QTest::addColumn<quint32>("lane");
        QTest::addColumn<quint32>("layer");
        QTest::addColumn<quint32>("stack");
        QTest::addColumn<int>("category");
        QTest::addColumn<int>("phase");
        QTest::addRow("zeros") << 0u << 0u << 0u << 0 << 0;
        QTest::addRow("no layer") << 3u << kNoLayer << 17u << int(Category::Activation) << int(Phase::Forward);
        QTest::addRow("largest indices") << (MemoryEvents::kMaxLanes - 1) << (kNoLayer - 1) << (MemoryEvents::kMaxStacks - 1)
                                         << int(Category::Unknown) << int(Phase::Optimizer);
        QTest::addRow("backward gradient") << 513u << 123456u << 999999u << int(Category::Gradient) << int(Phase::Backward);
    }
    void packsEveryFieldLosslessly()
    {
        QFETCH(quint32, lane);
        QFETCH(quint32, layer);
        QFETCH(quint32, stack);
        QFETCH(int, category);
        QFETCH(int, phase);
        const MemoryEvent event{
            -5, INT64_MIN + 1, UINT64_MAX, lane, layer, stack, static_cast<Category>(category), static_cast<Phase>(phase)};
        MemoryEvents events;
        events.append(MemoryEvent{});
        events.append(event);
        QVERIFY(events.at(1) == event);
        QVERIFY(events.at(0) == MemoryEvent{});
    }

    void sortIsStableByTime()
    {
        MemoryEvents events;
        const std::int64_t times[] = {30, 10, 20, 10, 30};
        for (std::uint64_t i = 0; i < 5; ++i)
            events.append(MemoryEvent{times[i], 1, i});
        QVERIFY(!events.isSortedByTime());
        events.sortByTime();
        QVERIFY(events.isSortedByTime());
        const std::uint64_t expectedOrder[] = {1, 3, 2, 0, 4};
        for (std::size_t i = 0; i < 5; ++i)
            QCOMPARE(events.addr(i), expectedOrder[i]);
    }
};

QTEST_GUILESS_MAIN(tst_MemoryEvents)
#include "tst_memoryevents.moc"
