// SPDX-License-Identifier: Apache-2.0
#include "activitydecoder.h"

#include <QTest>

#include <cstring>

using namespace peaklens::cupti;

Q_DECLARE_METATYPE(MemoryRecord)
Q_DECLARE_METATYPE(MarkerRecord::Kind)

namespace {

template<typename Record>
Record zeroed()
{
    Record record;
    std::memset(static_cast<void *>(&record), 0, sizeof(record));
    return record;
}

template<typename Record>
std::optional<ActivityRecord> decode(const Record &record)
{
    return decodeActivity(reinterpret_cast<const CUpti_Activity &>(record));
}

CUpti_ActivityMemory4 memoryRecord(CUpti_ActivityMemoryOperationType operation, CUpti_ActivityMemoryKind kind)
{
    auto memory = zeroed<CUpti_ActivityMemory4>();
    memory.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    memory.memoryOperationType = operation;
    memory.memoryKind = kind;
    memory.correlationId = 77;
    memory.address = 0x7f0000200000;
    memory.bytes = 3 << 20;
    memory.timestamp = 1'700'000'000'123'456'789ull;
    memory.deviceId = 1;
    memory.streamId = 7;
    return memory;
}

} // namespace

class tst_ActivityDecoder : public QObject
{
    Q_OBJECT

private slots:
    void memory_data()
    {
        QTest::addColumn<int>("operation");
        QTest::addColumn<int>("memoryKind");
        QTest::addColumn<int>("poolType");
        QTest::addColumn<bool>("decoded");
        QTest::addColumn<bool>("allocation");

        QTest::newRow("cudaMalloc") << int(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
                                    << int(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) << int(CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID)
                                    << true << true;
        QTest::newRow("cudaFree") << int(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) << int(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
                                  << int(CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) << true << false;
        QTest::newRow("cudaMallocAsync") << int(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
                                         << int(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) << int(CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL)
                                         << true << true;
        QTest::newRow("pinned host memory") << int(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
                                            << int(CUPTI_ACTIVITY_MEMORY_KIND_PINNED)
                                            << int(CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) << false << true;
        QTest::newRow("unknown operation") << int(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID)
                                           << int(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
                                           << int(CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) << false << true;
    }

    void memory()
    {
        QFETCH(int, operation);
        QFETCH(int, memoryKind);
        QFETCH(int, poolType);
        QFETCH(bool, decoded);
        QFETCH(bool, allocation);

        auto record = memoryRecord(CUpti_ActivityMemoryOperationType(operation), CUpti_ActivityMemoryKind(memoryKind));
        record.memoryPoolConfig.memoryPoolType = CUpti_ActivityMemoryPoolType(poolType);
        const auto result = decode(record);
        QCOMPARE(result.has_value(), decoded);
        if (!decoded)
            return;
        const auto *memory = std::get_if<MemoryRecord>(&*result);
        QVERIFY(memory);
        QCOMPARE(memory->allocation, allocation);
        QCOMPARE(memory->address, std::uint64_t(0x7f0000200000));
        QCOMPARE(memory->bytes, std::int64_t(3 << 20));
        QCOMPARE(memory->timeNs, std::int64_t(1'700'000'000'123'456'789));
        QCOMPARE(memory->device, 1u);
        QCOMPARE(memory->stream, 7u);
        QCOMPARE(memory->correlation, 77u);
        QCOMPARE(memory->fromPool, poolType != int(CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID));
    }

    void marker_data()
    {
        QTest::addColumn<int>("flags");
        QTest::addColumn<bool>("named");
        QTest::addColumn<bool>("onThread");
        QTest::addColumn<MarkerRecord::Kind>("kind");

        QTest::newRow("push") << int(CUPTI_ACTIVITY_FLAG_MARKER_START) << true << true << MarkerRecord::Kind::Start;
        QTest::newRow("pop") << int(CUPTI_ACTIVITY_FLAG_MARKER_END) << false << true << MarkerRecord::Kind::End;
        QTest::newRow("mark") << int(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) << true << false << MarkerRecord::Kind::Instant;
    }

    void marker()
    {
        QFETCH(int, flags);
        QFETCH(bool, named);
        QFETCH(bool, onThread);
        QFETCH(MarkerRecord::Kind, kind);

        auto record = zeroed<CUpti_ActivityMarker2>();
        record.kind = CUPTI_ACTIVITY_KIND_MARKER;
        record.flags = CUpti_ActivityFlag(flags);
        record.timestamp = 5'000'000'000ull;
        record.id = 12;
        record.objectKind = onThread ? CUPTI_ACTIVITY_OBJECT_THREAD : CUPTI_ACTIVITY_OBJECT_PROCESS;
        record.objectId.pt.processId = 4242;
        record.objectId.pt.threadId = 4243;
        record.name = named ? "fwd:blocks.0.attn" : nullptr;
        const auto result = decode(record);
        QVERIFY(result);
        const auto *marker = std::get_if<MarkerRecord>(&*result);
        QVERIFY(marker);
        QCOMPARE(marker->kind, kind);
        QCOMPARE(marker->id, 12u);
        QCOMPARE(marker->name, named ? std::string("fwd:blocks.0.attn") : std::string());
        QCOMPARE(marker->thread, onThread ? 4243u : 0u);
        QCOMPARE(marker->timeNs, std::int64_t(5'000'000'000));
    }

    void markerWithoutFlagsIsSkipped()
    {
        auto record = zeroed<CUpti_ActivityMarker2>();
        record.kind = CUPTI_ACTIVITY_KIND_MARKER;
        QVERIFY(!decode(record));
    }

    void kernel_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<bool>("named");
        QTest::newRow("concurrent kernel") << int(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) << true;
        QTest::newRow("serial kernel") << int(CUPTI_ACTIVITY_KIND_KERNEL) << true;
        QTest::newRow("no name") << int(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) << false;
    }

    void kernel()
    {
        QFETCH(int, kind);
        QFETCH(bool, named);
        auto record = zeroed<CUpti_ActivityKernel10>();
        record.kind = CUpti_ActivityKind(kind);
        record.start = 1000;
        record.end = 4500;
        record.deviceId = 2;
        record.streamId = 13;
        record.correlationId = 99;
        record.name = named ? "ampere_sgemm_128x64_nn" : nullptr;
        const auto result = decode(record);
        QVERIFY(result);
        const auto *kernel = std::get_if<KernelRecord>(&*result);
        QVERIFY(kernel);
        QCOMPARE(kernel->name, named ? std::string("ampere_sgemm_128x64_nn") : std::string("(unnamed kernel)"));
        QCOMPARE(kernel->beginNs, std::int64_t(1000));
        QCOMPARE(kernel->endNs, std::int64_t(4500));
        QCOMPARE(kernel->device, 2u);
        QCOMPARE(kernel->stream, 13u);
        QCOMPARE(kernel->correlation, 99u);
    }

    void api_data()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("runtime") << int(CUPTI_ACTIVITY_KIND_RUNTIME);
        QTest::newRow("driver") << int(CUPTI_ACTIVITY_KIND_DRIVER);
    }

    void api()
    {
        QFETCH(int, kind);
        auto record = zeroed<CUpti_ActivityAPI>();
        record.kind = CUpti_ActivityKind(kind);
        record.correlationId = 77;
        record.threadId = 31337;
        record.start = 10;
        record.end = 20;
        const auto result = decode(record);
        QVERIFY(result);
        const auto *api = std::get_if<ApiRecord>(&*result);
        QVERIFY(api);
        QCOMPARE(api->correlation, 77u);
        QCOMPARE(api->thread, 31337u);
        QCOMPARE(api->beginNs, std::int64_t(10));
        QCOMPARE(api->endNs, std::int64_t(20));
    }

    void pool_data()
    {
        QTest::addColumn<int>("operation");
        QTest::addColumn<bool>("decoded");
        QTest::addColumn<qint64>("bytes");
        QTest::newRow("created") << int(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED) << true << qint64(64 << 20);
        QTest::newRow("trimmed") << int(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED) << true << qint64(64 << 20);
        QTest::newRow("destroyed") << int(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED) << true << qint64(0);
        QTest::newRow("invalid") << int(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_INVALID) << false << qint64(0);
    }

    void pool()
    {
        QFETCH(int, operation);
        QFETCH(bool, decoded);
        QFETCH(qint64, bytes);
        auto record = zeroed<CUpti_ActivityMemoryPool3>();
        record.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
        record.memoryPoolOperationType = CUpti_ActivityMemoryPoolOperationType(operation);
        record.address = 0x7f1000000000;
        record.size = 64 << 20;
        record.timestamp = 777;
        record.deviceId = 3;
        const auto result = decode(record);
        QCOMPARE(result.has_value(), decoded);
        if (!decoded)
            return;
        const auto *pool = std::get_if<PoolRecord>(&*result);
        QVERIFY(pool);
        QCOMPARE(pool->address, std::uint64_t(0x7f1000000000));
        QCOMPARE(pool->bytes, std::int64_t(bytes));
        QCOMPARE(pool->timeNs, std::int64_t(777));
        QCOMPARE(pool->device, 3u);
    }

    void otherKindsAreSkipped()
    {
        auto record = zeroed<CUpti_ActivityAPI>();
        record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        QVERIFY(!decode(record));
    }
};

QTEST_GUILESS_MAIN(tst_ActivityDecoder)
#include "tst_activitydecoder.moc"
