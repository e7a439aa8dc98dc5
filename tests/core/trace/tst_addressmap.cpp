// SPDX-License-Identifier: Apache-2.0
#include "core/trace/addressmap.h"
#include "testsupport.h"

#include <random>
#include <unordered_map>

using namespace peaklens;

class tst_AddressMap : public QObject
{
    Q_OBJECT

private slots:
    // Keys that share their low or high bits (a stack node's parent and frame, aligned
    // addresses) or random ones; blocks coming and going as a trace's do. After every
    // operation the map holds what std::unordered_map holds, through every growth of the
    // table and every run shifted back by an erase.
    void holdsWhatUnorderedMapHolds_data()
    {
        QTest::addColumn<int>("pattern");
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("erasePercent");
        QTest::addRow("parent << 32 | frame, never erased") << 0 << 200000 << 0;
        QTest::addRow("one parent, many frames") << 1 << 100000 << 0;
        QTest::addRow("aligned addresses, half freed") << 2 << 200000 << 50;
        QTest::addRow("few addresses reused, mostly freed") << 3 << 300000 << 45;
        QTest::addRow("random keys, a third freed") << 4 << 200000 << 33;
        QTest::addRow("key 0 and the largest key") << 5 << 6 << 50;
    }
    void holdsWhatUnorderedMapHolds()
    {
        QFETCH(int, pattern);
        QFETCH(int, count);
        QFETCH(int, erasePercent);
        std::mt19937_64 random(7);
        const auto keyOf = [&](int i) -> std::uint64_t {
            switch (pattern) {
            case 0:
                return std::uint64_t(i / 7) << 32 | std::uint64_t(i % 7 * 1000 + i / 3);
            case 1:
                return std::uint64_t(5) << 32 | std::uint64_t(i);
            case 2:
                return 0x7f0000000000ull + (random() % 4096) * 512;
            case 3:
                return 0x10000 + (random() % 64) * 64;
            case 4:
                return random();
            default:
                return i % 2 ? 0 : UINT64_MAX;
            }
        };
        AddressMap<std::uint32_t> map;
        std::unordered_map<std::uint64_t, std::uint32_t> reference;
        for (int i = 0; i < count; ++i) {
            const std::uint64_t key = keyOf(i);
            if (int(random() % 100) < erasePercent) {
                std::uint32_t *held = map.find(key);
                const auto expected = reference.find(key);
                if ((held != nullptr) != (expected != reference.end()))
                    QFAIL(qPrintable(QStringLiteral("key %1 at %2: found %3").arg(key).arg(i).arg(held != nullptr)));
                if (held) {
                    QCOMPARE(*held, expected->second);
                    map.erase(held);
                    reference.erase(expected);
                }
            } else if (i % 3 == 0) {
                map.insertOrAssign(key, std::uint32_t(i));
                reference.insert_or_assign(key, std::uint32_t(i));
            } else {
                const auto [held, inserted] = map.tryEmplace(key, std::uint32_t(i));
                const auto [it, expectedInserted] = reference.try_emplace(key, std::uint32_t(i));
                if (*held != it->second || inserted != expectedInserted)
                    QFAIL(qPrintable(QStringLiteral("key %1 at %2: %3, expected %4").arg(key).arg(i).arg(*held).arg(it->second)));
            }
            QCOMPARE(map.size(), reference.size());
        }
        for (const auto &[key, value] : reference) {
            const std::uint32_t *held = map.find(key);
            QVERIFY(held);
            QCOMPARE(*held, value);
        }
    }
};

QTEST_GUILESS_MAIN(tst_AddressMap)
#include "tst_addressmap.moc"
