// SPDX-License-Identifier: Apache-2.0
// The native file's format versions: format 1 and 2 files still open and convert to the
// newest format unchanged; chunks round-trip exactly, keep running totals that agree with their
// events, and damaged chunks get a sentence naming the chunk and the problem.
#include "core/error.h"
#include "core/format/eventchunk.h"
#include "core/format/schema.h"
#include "core/format/sqlitedatabase.h"
#include "core/format/tracereader.h"
#include "core/format/tracewriter.h"
#include "core/import/traceloader.h"
#include "core/trace/tracebuilder.h"
#include "testsupport.h"

#include <QFileInfo>
#include <QRandomGenerator64>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

const QString kFixtures = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/format/");
const QString kRealData = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/");

std::int64_t formatOf(const QString &path)
{
    SqliteDatabase db(ss(path), SQLITE_OPEN_READONLY);
    return db.queryInteger("PRAGMA user_version");
}

// Several chunks of events with extreme values in every column: two devices, streams,
// layers, stacks, addresses across all 64 bits, sizes up to the largest allowed, and
// gaps between times from nanoseconds to a second.
std::shared_ptr<const Trace> extremeTrace(std::size_t count)
{
    TraceBuilder builder;
    const std::uint32_t lanes[] = {builder.lane(Lane{}), builder.lane(Lane{Device{}, 7}),
                                   builder.lane(Lane{Device{DeviceType::Cuda, 3}, 1}),
                                   builder.lane(Lane{Device{DeviceType::Cpu, 0}, 0})};
    std::vector<std::uint32_t> layers{kNoLayer};
    for (int i = 0; i < 300; ++i)
        layers.push_back(builder.layer("model.layers." + std::to_string(i)));
    std::vector<std::uint32_t> stacks{0};
    for (int i = 0; i < 500; ++i)
        stacks.push_back(builder.stacks().internStack({Frame{"f" + std::to_string(i), "a.py", i}}));
    QRandomGenerator64 random(19);
    std::int64_t t = 1'700'000'000'000'000'000;
    for (std::size_t i = 0; i < count; ++i) {
        MemoryEvent event;
        t += static_cast<std::int64_t>(random.bounded(1u << (i % 3 == 0 ? 30 : 8)));
        event.timeNs = t;
        const std::int64_t size =
            i % 1000 == 0 ? TraceBuilder::kMaxEventBytes : static_cast<std::int64_t>(random.bounded(1u << 24));
        event.deltaBytes = i % 2 ? -size : size;
        event.addr = i % 5 == 0 ? random.generate() : 0x7f0000000000 + (i << 9);
        event.lane = lanes[random.bounded(4u)];
        event.layer = layers[random.bounded(static_cast<quint32>(layers.size()))];
        event.stack = stacks[random.bounded(static_cast<quint32>(stacks.size()))];
        event.category = static_cast<Category>(random.bounded(static_cast<quint32>(kCategoryCount)));
        event.phase = static_cast<Phase>(random.bounded(static_cast<quint32>(kPhaseCount)));
        builder.addEvent(event);
    }
    return builder.finish();
}

QString written(const Trace &trace, const QTemporaryDir &dir, const QString &name)
{
    const QString path = dir.filePath(name);
    TraceWriter::writeTrace(trace, ss(path));
    return path;
}

QString loadError(const QString &path)
{
    try {
        loadTrace(ss(path));
    } catch (const ImportError &error) {
        return qs(error.what());
    }
    return {};
}

void execute(const QString &path, const char *sql)
{
    SqliteDatabase db(ss(path), SQLITE_OPEN_READWRITE);
    db.exec(sql);
}

} // namespace

class tst_FormatVersions : public QObject
{
    Q_OBJECT

private slots:
    void fixturesAreTheirVersions_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("version");
        QTest::addRow("format 1") << QStringLiteral("training-step.v1.peaklens") << 1;
        QTest::addRow("format 2") << QStringLiteral("training-step.v2.peaklens") << 2;
        QTest::addRow("format 3") << QStringLiteral("training-step.v3.peaklens") << 3;
        QTest::addRow("format 4") << QStringLiteral("training-step.v4.peaklens") << 4;
        QTest::addRow("format 5") << QStringLiteral("training-step.v5.peaklens") << 5;
    }
    void fixturesAreTheirVersions()
    {
        QFETCH(QString, file);
        QFETCH(int, version);
        QCOMPARE(formatOf(kFixtures + file), std::int64_t(version));
        QCOMPARE(loadTrace(ss(kFixtures + file))->events.size(), std::size_t(8728));
        // Counted from the chunk rows alone, as the app does before choosing how to open it.
        QCOMPARE(TraceReader::eventCount(ss(kFixtures + file)), std::optional<std::uint64_t>(8728));
    }

    void everyVersionHoldsTheSameTrace()
    {
        const auto v1 = loadTrace(ss(kFixtures + QStringLiteral("training-step.v1.peaklens")));
        const auto v2 = loadTrace(ss(kFixtures + QStringLiteral("training-step.v2.peaklens")));
        const auto v3 = loadTrace(ss(kFixtures + QStringLiteral("training-step.v3.peaklens")));
        const auto v4 = loadTrace(ss(kFixtures + QStringLiteral("training-step.v4.peaklens")));
        const auto v5 = loadTrace(ss(kFixtures + QStringLiteral("training-step.v5.peaklens")));
        QVERIFY(*v1 == *v2);
        QVERIFY(*v2 == *v3);
        QVERIFY(*v3 == *v4);
        QVERIFY(*v4 == *v5);
    }

    // `convert` is TraceWriter::writeTrace of what was read: format 1 in, the newest out.
    void convertingUpgradesFormat1()
    {
        QTemporaryDir dir;
        const auto v1 = loadTrace(ss(kFixtures + QStringLiteral("training-step.v1.peaklens")));
        const QString path = written(*v1, dir, QStringLiteral("upgraded.peaklens"));
        QCOMPARE(formatOf(path), std::int64_t(schema::kFormatVersion));
        QVERIFY(*loadTrace(ss(path)) == *v1);
        QVERIFY(QFileInfo(path).size() < QFileInfo(kFixtures + QStringLiteral("training-step.v1.peaklens")).size() / 2);
    }

    void extremeValuesRoundTrip_data()
    {
        QTest::addColumn<int>("events");
        QTest::addRow("one event") << 1;
        QTest::addRow("one chunk less one") << int(schema::kEventsPerChunk - 1);
        QTest::addRow("several chunks, decoded in parallel") << int(3 * schema::kEventsPerChunk + 17);
    }
    void extremeValuesRoundTrip()
    {
        QFETCH(int, events);
        QTemporaryDir dir;
        const auto trace = extremeTrace(static_cast<std::size_t>(events));
        const QString path = written(*trace, dir, QStringLiteral("extreme.peaklens"));
        QVERIFY(*TraceReader::read(ss(path)) == *trace);
        QCOMPARE(TraceReader::eventCount(ss(path)), std::optional<std::uint64_t>(trace->events.size()));
    }

    // The totals kept with each chunk equal sums over its events, recomputed here in file
    // order, per lane and per device.
    void chunkTotalsAgreeWithTheEvents_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addRow("bundled sample") << kFixtures + QStringLiteral("training-step.v2.peaklens");
        QTest::addRow("real snapshot") << kRealData + QStringLiteral("snapshot_cs336_medium_train.pickle.gz");
        QTest::addRow("real Kineto trace") << kRealData + QStringLiteral("kineto_v100_rank1.pt.trace.json.gz");
        QTest::addRow("several chunks, four lanes, three devices") << QString();
    }
    void chunkTotalsAgreeWithTheEvents()
    {
        QFETCH(QString, input);
        QTemporaryDir dir;
        const auto trace = input.isEmpty() ? extremeTrace(3 * schema::kEventsPerChunk + 5) : loadTrace(ss(input));
        const QString path = written(*trace, dir, QStringLiteral("totals.peaklens"));
        const MemoryEvents &events = trace->events;

        std::map<std::uint32_t, std::int64_t> laneBytes;
        std::map<Device, std::int64_t> deviceBytes;
        SqliteDatabase db(ss(path), SQLITE_OPEN_READONLY);
        auto rows = db.prepare("SELECT count, t_first_ns, t_last_ns, t_min_ns, t_max_ns, bytes_allocated, bytes_freed, "
                               "totals FROM events ORDER BY chunk");
        std::size_t at = 0;
        while (rows.step()) {
            const auto count = static_cast<std::size_t>(rows.integer(0));
            const auto blob = rows.blob(7);
            const eventchunk::ChunkTotals stored =
                eventchunk::readTotals({reinterpret_cast<const char *>(blob.data()), blob.size()});
            eventchunk::ChunkTotals expected;
            std::int64_t allocated = 0, freed = 0, lowest = INT64_MAX, highest = INT64_MIN;
            const auto see = [](auto &totals, const auto &key, std::int64_t bytes, std::uint32_t event) {
                const auto [it, first] = totals.try_emplace(key);
                eventchunk::Total &total = it->second;
                if (first || bytes > total.highBytes) {
                    total.highBytes = bytes;
                    total.highEvent = event;
                }
                total.lowBytes = first ? bytes : std::min(total.lowBytes, bytes);
                total.endBytes = bytes;
            };
            for (std::size_t i = at; i < at + count; ++i) {
                const auto event = static_cast<std::uint32_t>(i - at);
                const std::int64_t delta = events.deltaBytes(i);
                if (delta > 0)
                    allocated += delta;
                else
                    freed -= delta;
                lowest = std::min(lowest, events.timeNs(i));
                highest = std::max(highest, events.timeNs(i));
                const std::uint32_t lane = events.lane(i);
                const Device device = trace->lanes[lane].device;
                see(expected.lanes, lane, laneBytes[lane] += delta, event);
                see(expected.devices, device, deviceBytes[device] += delta, event);
            }
            QCOMPARE(rows.integer(1), events.timeNs(at));
            QCOMPARE(rows.integer(2), events.timeNs(at + count - 1));
            QCOMPARE(rows.integer(3), lowest);
            QCOMPARE(rows.integer(4), highest);
            QCOMPARE(rows.integer(5), allocated);
            QCOMPARE(rows.integer(6), freed);
            QVERIFY(stored == expected);
            QVERIFY(!stored.devices.empty());
            at += count;
        }
        QCOMPARE(at, events.size());
    }

    // A long recording's ranges are read in two halves on two cores: they come back whole,
    // in order, and damage in the later half is reported as in the first.
    void manyRangesReadInTwoHalves()
    {
        TraceBuilder builder;
        const std::uint32_t lane = builder.lane(Lane{Device{DeviceType::Cuda, 0}, 0});
        const std::uint32_t layers[] = {builder.layer("model"), builder.layer("model.blocks.0")};
        constexpr std::int64_t kRanges = 300'000;
        for (std::int64_t i = 0; i < kRanges; ++i) {
            builder.addRange(Range{i % 3 == 2 ? kNoLayer : layers[i % 3], i % 2 ? Phase::Backward : Phase::Forward, i / 10,
                                   10 * i, 10 * i + 5 + i % 7, static_cast<std::uint32_t>(i % 4)});
        }
        builder.addEvent(MemoryEvent{0, 512, 0x1000, lane});
        const auto trace = builder.finish();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ranges.peaklens"));
        TraceWriter::writeTrace(*trace, ss(path));
        QCOMPARE(TraceReader::read(ss(path))->ranges, trace->ranges);

        execute(path, "UPDATE ranges SET phase = 9 WHERE rowid = 290000");
        QVERIFY2(loadError(path).contains(QStringLiteral("a range has the unknown phase 9")), qPrintable(loadError(path)));
    }
};

QTEST_GUILESS_MAIN(tst_FormatVersions)
#include "tst_formatversions.moc"
