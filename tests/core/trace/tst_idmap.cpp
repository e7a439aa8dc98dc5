// SPDX-License-Identifier: Apache-2.0
#include "core/trace/idmap.h"
#include "testsupport.h"

#include <random>
#include <unordered_map>

using namespace peaklens;

class tst_IdMap : public QObject
{
    Q_OBJECT

private slots:
    // Whatever the keys (ones that share their low or high bits, as a stack node's parent
    // and frame do, or random ones), each keeps the first id it was given, as
    // std::unordered_map::try_emplace keeps it, through every growth of the table.
    void keepsTheFirstId_data()
    {
        QTest::addColumn<int>("pattern");
        QTest::addColumn<int>("count");
        QTest::addRow("parent << 32 | frame") << 0 << 200000;
        QTest::addRow("one parent, many frames") << 1 << 100000;
        QTest::addRow("multiples of 2^20") << 2 << 50000;
        QTest::addRow("random, with repeats") << 3 << 300000;
        QTest::addRow("key 0 and the largest key") << 4 << 2;
    }
    void keepsTheFirstId()
    {
        QFETCH(int, pattern);
        QFETCH(int, count);
        std::mt19937_64 random(7);
        const auto keyOf = [&](int i) -> std::uint64_t {
            switch (pattern) {
            case 0:
                return std::uint64_t(i / 7) << 32 | std::uint64_t(i % 7 * 1000 + i / 3);
            case 1:
                return std::uint64_t(5) << 32 | std::uint64_t(i);
            case 2:
                return std::uint64_t(i) << 20;
            case 3:
                return random() % std::uint64_t(count / 2); // half of them repeat
            default:
                return i == 0 ? 0 : UINT64_MAX;
            }
        };
        IdMap map;
        std::unordered_map<std::uint64_t, std::uint32_t> reference;
        for (int i = 0; i < count; ++i) {
            const std::uint64_t key = keyOf(i);
            const auto [id, inserted] = map.tryEmplace(key, std::uint32_t(i));
            const auto [it, expectedInserted] = reference.try_emplace(key, std::uint32_t(i));
            if (id != it->second || inserted != expectedInserted)
                QFAIL(qPrintable(QStringLiteral("key %1 at %2: id %3, expected %4").arg(key).arg(i).arg(id).arg(it->second)));
        }
        QCOMPARE(map.size(), reference.size());
        for (const auto &[key, id] : reference)
            QCOMPARE(map.tryEmplace(key, 0).first, id);
    }
};

QTEST_GUILESS_MAIN(tst_IdMap)
#include "tst_idmap.moc"
