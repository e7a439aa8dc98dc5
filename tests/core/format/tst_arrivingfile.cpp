// SPDX-License-Identifier: Apache-2.0
#include "chunkytrace.h"
#include "core/error.h"
#include "core/format/arrivingfile.h"
#include "core/format/pageorder.h"
#include "core/format/tracereader.h"
#include "testsupport.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <thread>

using namespace peaklens;
using namespace peaklens::test;

namespace {

// Copies `from` into `to` in PageOrder, a run at a time, as a host sends it: `to` has its
// full size from the start, its bytes arrive later. Stops after `runsToSend` runs.
class Feeder
{
public:
    Feeder(const QString &from, const QString &to, std::size_t runsToSend = SIZE_MAX)
        : m_from(::open(qPrintable(from), O_RDONLY | O_CLOEXEC))
        , m_to(::open(qPrintable(to), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644))
    {
        const auto size = static_cast<std::uint64_t>(QFileInfo(from).size());
        m_runs = PageOrder::of(m_from, size);
        if (::ftruncate(m_to, static_cast<off_t>(size)) != 0)
            return;
        arrival = ArrivingFile::begin(ss(to), size);
        m_thread = std::thread([this, runsToSend] {
            std::vector<char> bytes;
            for (std::size_t i = 0; i < m_runs.size() && i < runsToSend; ++i) {
                bytes.resize(m_runs[i].length);
                const auto offset = static_cast<off_t>(m_runs[i].offset);
                if (::pread(m_from, bytes.data(), bytes.size(), offset) != static_cast<ssize_t>(bytes.size())
                    || ::pwrite(m_to, bytes.data(), bytes.size(), offset) != static_cast<ssize_t>(bytes.size()))
                    break;
                arrival->arrived(m_runs[i].offset, m_runs[i].length);
                ++sent;
                std::this_thread::sleep_for(std::chrono::microseconds(300));
            }
            arrival->end();
        });
    }
    ~Feeder()
    {
        if (m_thread.joinable())
            m_thread.join();
        ::close(m_from);
        ::close(m_to);
    }
    std::size_t runs() const { return m_runs.size(); }

    std::shared_ptr<ArrivingFile> arrival;
    std::atomic<std::size_t> sent{0};

private:
    int m_from, m_to;
    std::vector<ByteRun> m_runs;
    std::thread m_thread;
};

} // namespace

class tst_ArrivingFile : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeChunkyTrace(ss(chunky()), 400000);
    }

    // Bytes that arrive in any order are joined into what a read may take.
    void spansJoin_data()
    {
        QTest::addColumn<QList<quint64>>("arrivals"); // offset, length, ...
        QTest::addColumn<quint64>("offset");
        QTest::addColumn<quint64>("length");
        QTest::addColumn<bool>("holds");
        QTest::addRow("one span, inside") << QList<quint64>{0, 100} << quint64(10) << quint64(90) << true;
        QTest::addRow("one span, past its end") << QList<quint64>{0, 100} << quint64(50) << quint64(51) << false;
        QTest::addRow("two apart, across the gap") << QList<quint64>{0, 100, 200, 100} << quint64(50) << quint64(200) << false;
        QTest::addRow("the gap filled last") << QList<quint64>{0, 100, 200, 100, 100, 100} << quint64(0) << quint64(300) << true;
        QTest::addRow("backwards, touching") << QList<quint64>{600, 400, 300, 300, 0, 300} << quint64(0) << quint64(1000) << true;
        QTest::addRow("overlapping") << QList<quint64>{0, 500, 400, 200, 550, 450} << quint64(0) << quint64(1000) << true;
        QTest::addRow("past the file's end counts as there") << QList<quint64>{900, 100} << quint64(950) << quint64(500) << true;
        QTest::addRow("nothing yet") << QList<quint64>{} << quint64(0) << quint64(1) << false;
    }
    void spansJoin()
    {
        QFETCH(QList<quint64>, arrivals);
        QFETCH(quint64, offset);
        QFETCH(quint64, length);
        QFETCH(bool, holds);
        const auto file = ArrivingFile::begin("spans", 1000);
        for (qsizetype i = 0; i + 1 < arrivals.size(); i += 2)
            file->arrived(arrivals[i], arrivals[i + 1]);
        QCOMPARE(file->holds(offset, length), holds);
        file->end();
        QCOMPARE(file->waitFor(offset, length), holds); // once no more come, at once
    }

    // A trace read while its pages arrive in PageOrder reads as the whole file does: each
    // read waited for its bytes, and for a long trace the reading began long before the last
    // arrived (the sample is one run: it is read once it is whole).
    void aTraceIsReadWhileItsPagesArrive_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("early");
        QTest::addRow("the sample") << QFINDTESTDATA("../../../resources/samples/training-step.peaklens") << false;
        QTest::addRow("a trace of many chunks") << chunky() << true;
    }
    void aTraceIsReadWhileItsPagesArrive()
    {
        QFETCH(QString, path);
        QFETCH(bool, early);
        const QString copy = m_dir.filePath(QStringLiteral("copy.peaklens"));
        std::shared_ptr<const Trace> read;
        std::size_t sentAtStart = 0, runs = 0;
        {
            Feeder feeder(path, copy);
            QVERIFY(feeder.arrival);
            runs = feeder.runs();
            QVERIFY(feeder.arrival->waitFor(0, PageOrder::kHeadBytes));
            sentAtStart = feeder.sent;
            read = TraceReader::read(ss(copy));
        }
        const auto whole = TraceReader::read(ss(path));
        QVERIFY2((sentAtStart < runs / 2) == early, qPrintable(QStringLiteral("%1 of %2 runs").arg(sentAtStart).arg(runs)));
        QCOMPARE(read->events.size(), whole->events.size());
        QVERIFY(read->events == whole->events);
    }

    // Bytes that will never come (the connection broke) fail the read at once: no wait
    // without end, and a sentence naming the file.
    void aReadOfBytesThatNeverComeFails()
    {
        const QString copy = m_dir.filePath(QStringLiteral("half.peaklens"));
        Feeder feeder(chunky(), copy, 12);
        QVERIFY(feeder.arrival);
        QVERIFY(feeder.arrival->waitFor(0, PageOrder::kHeadBytes));
        try {
            TraceReader::read(ss(copy));
            QFAIL("a copy of which most never came was read");
        } catch (const FileError &error) {
            QCOMPARE(error.path(), ss(copy));
        }
        QVERIFY(!feeder.arrival->whole());
    }

private:
    QString chunky() const { return m_dir.filePath(QStringLiteral("chunky.peaklens")); }

    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(tst_ArrivingFile)
#include "tst_arrivingfile.moc"
