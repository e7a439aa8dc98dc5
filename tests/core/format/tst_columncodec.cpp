// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/format/columncodec.h"
#include "core/format/eventchunk.h"
#include "testsupport.h"

#include <limits>
#include <vector>

using namespace peaklens;
namespace codec = peaklens::columncodec;

namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// The Error a read gives, or an empty string.
template<typename Read>
QString problemOf(Read read)
{
    try {
        read();
    } catch (const Error &error) {
        return QString::fromStdString(error.what());
    }
    return {};
}

} // namespace

class tst_ColumnCodec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void differencesRoundTrip_data()
    {
        QTest::addColumn<QList<qint64>>("values");
        QTest::addColumn<qint64>("previous");
        QTest::addColumn<int>("bytes");
        QTest::newRow("empty") << QList<qint64>{} << qint64(0) << 0;
        // Steps of 0, +1 and +2 from 1000: zigzag 0, 2 and 4, one byte each.
        QTest::newRow("sorted times") << QList<qint64>{1000, 1001, 1003} << qint64(1000) << 3;
        QTest::newRow("a step of 64 takes two bytes") << QList<qint64>{64} << qint64(0) << 2;
        QTest::newRow("a step of -64 takes one") << QList<qint64>{-64} << qint64(0) << 1;
        QTest::newRow("the extremes") << QList<qint64>{kMin, kMax, kMin, 0, kMax} << qint64(kMax) << -1;
        QTest::newRow("epoch nanoseconds") << QList<qint64>{1752839461731456483, 1752839461731456983} << qint64(0) << -1;
    }
    void differencesRoundTrip()
    {
        QFETCH(QList<qint64>, values);
        QFETCH(qint64, previous);
        QFETCH(int, bytes);
        const std::vector<std::int64_t> column(values.begin(), values.end());
        std::string encoded;
        codec::putDifferences(std::span<const std::int64_t>(column), previous, encoded);
        if (bytes >= 0)
            QCOMPARE(int(encoded.size()), bytes);
        std::vector<std::int64_t> decoded(column.size());
        codec::getDifferences(encoded, std::int64_t(previous), std::span<std::int64_t>(decoded));
        QCOMPARE(decoded, column);
    }

    void addressesRoundTrip()
    {
        const std::vector<std::uint64_t> addresses{0x7f0000000000, 0x7f0000200000, 0x7f0000100000, 0, UINT64_MAX, 1};
        std::string encoded;
        codec::putDifferences(std::span<const std::uint64_t>(addresses), std::uint64_t(0x7f0000000000), encoded);
        std::vector<std::uint64_t> decoded(addresses.size());
        codec::getDifferences(encoded, std::uint64_t(0x7f0000000000), std::span<std::uint64_t>(decoded));
        QCOMPARE(decoded, addresses);
        // The first three: 0, +2 MiB and -1 MiB from the base, 1 + 4 + 3 bytes.
        std::string near;
        codec::putDifferences(std::span<const std::uint64_t>(addresses).first(3), std::uint64_t(0x7f0000000000), near);
        QCOMPARE(near.size(), std::size_t(1 + 4 + 3));
    }

    void signedAndUnsignedRoundTrip()
    {
        const std::vector<std::int64_t> sizes{512, -512, 1 << 20, -(1 << 20), kMin, kMax, 0};
        std::string encoded;
        codec::putSigned(sizes, encoded);
        std::vector<std::int64_t> decodedSizes(sizes.size());
        codec::getSigned(encoded, decodedSizes);
        QCOMPARE(decodedSizes, sizes);
        // The same without being told how many: a list that does not store its length.
        QCOMPARE(codec::getAllSigned(encoded), sizes);
        QVERIFY(codec::getAllSigned("").empty());
        QVERIFY_THROWS_EXCEPTION(Error, codec::getAllSigned(encoded.substr(0, encoded.size() - 1) + "\x80"));

        const std::vector<std::uint32_t> ids{0, 127, 128, 300, UINT32_MAX};
        std::string idBytes;
        codec::putUnsigned(ids, idBytes);
        QCOMPARE(idBytes.size(), std::size_t(1 + 1 + 2 + 2 + 5));
        std::vector<std::uint32_t> decodedIds(ids.size());
        codec::getUnsigned(idBytes, decodedIds);
        QCOMPARE(decodedIds, ids);

        // Runs of one-byte values, read eight at a time, broken by longer ones at every offset.
        std::vector<std::uint32_t> mixed;
        for (std::uint32_t i = 0; i < 300; ++i)
            mixed.push_back(i % 23 == 0 ? 1000 + i : i % 128);
        std::string mixedBytes;
        codec::putUnsigned(mixed, mixedBytes);
        std::vector<std::uint32_t> decodedMixed(mixed.size());
        codec::getUnsigned(mixedBytes, decodedMixed);
        QCOMPARE(decodedMixed, mixed);
    }

    void damageIsAnError_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("count");
        QTest::addColumn<QString>("problem");
        QTest::newRow("no bytes for one value") << QByteArray() << 1 << QStringLiteral("ends after 0 of its 1 values");
        QTest::newRow("cut inside a varint") << QByteArray("\x05\x80", 2) << 2 << QStringLiteral("ends after 1 of its 2 values");
        QTest::newRow("bytes left over") << QByteArray("\x01\x02\x03", 3) << 2
                                         << QStringLiteral("holds 1 bytes after its 2 values");
        QTest::newRow("eleven bytes") << QByteArray(10, '\xff') + QByteArray(1, '\x01') << 1
                                      << QStringLiteral("runs past 64 bits");
        QTest::newRow("a tenth byte past bit 63")
            << QByteArray(9, '\xff') + QByteArray(1, '\x02') << 1 << QStringLiteral("runs past 64 bits");
        QTest::newRow("an index past 32 bits")
            << QByteArray("\x80\x80\x80\x80\x10", 5) << 1 << QStringLiteral("more than an index can be");
        // Runs of one-byte values are read eight at a time: the same checks at their ends.
        QTest::newRow("a run of small values, then too few")
            << QByteArray(17, '\x03') << 18 << QStringLiteral("ends after 17 of its 18 values");
        QTest::newRow("a run of small values, then bytes left")
            << QByteArray(17, '\x03') << 16 << QStringLiteral("holds 1 bytes after its 16 values");
        QTest::newRow("a run of small values, then a cut varint")
            << QByteArray(16, '\x03') + QByteArray(1, '\x80') << 17 << QStringLiteral("ends after 16 of its 17 values");
    }
    void damageIsAnError()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(int, count);
        QFETCH(QString, problem);
        const std::string_view view(bytes.constData(), std::size_t(bytes.size()));
        std::vector<std::uint32_t> ids(static_cast<std::size_t>(count));
        const QString got = problemOf([&] { codec::getUnsigned(view, ids); });
        QVERIFY2(got.contains(problem), qPrintable(got));
        if (!problem.contains(QLatin1String("index"))) { // the same damage in a signed column
            std::vector<std::int64_t> values(static_cast<std::size_t>(count));
            QVERIFY(problemOf([&] { codec::getSigned(view, values); }).contains(problem));
        }
    }

    // Every cut of a valid column is an error or a shorter valid one, never a read past it.
    void everyTruncationIsCaught()
    {
        std::vector<std::int64_t> times;
        for (std::int64_t t = 0; t < 200; ++t)
            times.push_back(1752839461731456483 + t * t * 997);
        std::string encoded;
        codec::putDifferences(std::span<const std::int64_t>(times), std::int64_t(0), encoded);
        std::vector<std::int64_t> decoded(times.size());
        for (std::size_t cut = 0; cut < encoded.size(); ++cut) {
            const std::string truncated = encoded.substr(0, cut);
            QVERIFY(!problemOf([&] {
                         codec::getDifferences(truncated, std::int64_t(0), std::span<std::int64_t>(decoded));
                     }).isEmpty());
        }
    }

    // A chunk round-trips through encode and decode, an empty one too: its columns have
    // no storage at all, which a copy must not touch (found by fuzz_native_sql).
    void chunkRoundTrips_data()
    {
        QTest::addColumn<int>("events");
        QTest::newRow("empty") << 0;
        QTest::newRow("one event") << 1;
        QTest::newRow("large enough to compress") << 5000;
    }
    void chunkRoundTrips()
    {
        QFETCH(int, events);
        eventchunk::Columns columns;
        for (int i = 0; i < events; ++i) {
            columns.timeNs.push_back(1752839461731456483 + std::int64_t(i) * 1000);
            columns.deltaBytes.push_back(i % 2 ? -4096 : 4096);
            columns.addr.push_back(0x7f0000000000 + std::uint64_t(i / 2) * 4096);
            columns.lane.push_back(std::uint32_t(i % 3));
            columns.layer.push_back(std::uint32_t(i % 7));
            columns.stack.push_back(std::uint32_t(i % 5));
            columns.tags.push_back(eventchunk::tagOf(Category::Activation, Phase::Forward));
        }
        const eventchunk::Stored stored = eventchunk::encode(columns);
        eventchunk::Columns decoded;
        const auto n = std::size_t(events);
        decoded.timeNs.resize(n);
        decoded.deltaBytes.resize(n);
        decoded.addr.resize(n);
        decoded.lane.resize(n);
        decoded.layer.resize(n);
        decoded.stack.resize(n);
        decoded.tags.resize(n);
        std::string scratch;
        eventchunk::decode(
            stored.codec, stored.plainBytes, stored.bytes, events ? columns.timeNs.front() : 0,
            {decoded.timeNs, decoded.deltaBytes, decoded.addr, decoded.lane, decoded.layer, decoded.stack, decoded.tags},
            scratch);
        QCOMPARE(decoded.timeNs, columns.timeNs);
        QCOMPARE(decoded.deltaBytes, columns.deltaBytes);
        QCOMPARE(decoded.addr, columns.addr);
        QCOMPARE(decoded.lane, columns.lane);
        QCOMPARE(decoded.layer, columns.layer);
        QCOMPARE(decoded.stack, columns.stack);
        QCOMPARE(decoded.tags, columns.tags);
        QCOMPARE(stored.codec, events >= 5000 ? eventchunk::Codec::Zstd : eventchunk::Codec::Plain);
    }
};

QTEST_GUILESS_MAIN(tst_ColumnCodec)
#include "tst_columncodec.moc"
