// SPDX-License-Identifier: Apache-2.0
#include "chunkytrace.h"
#include "core/format/pageorder.h"
#include "core/format/sqlitedatabase.h"
#include "testsupport.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <map>

using namespace peaklens;
using namespace peaklens::test;

namespace {

std::vector<ByteRun> orderOf(const QString &path)
{
    const int fd = ::open(qPrintable(path), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return {};
    const auto size = static_cast<std::uint64_t>(QFileInfo(path).size());
    auto runs = PageOrder::of(fd, size);
    ::close(fd);
    return runs;
}

} // namespace

class tst_PageOrder : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeChunkyTrace(ss(chunky()), 400000);
        QFile whole(chunky());
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        writeFile(QStringLiteral("cut.peaklens"), bytes.left(bytes.size() * 2 / 3 + 100));
        QByteArray scrambled = bytes;
        for (qsizetype at = 4096; at < scrambled.size(); at += 4096 * 3) // every third page's type byte
            scrambled[at] = char(13);
        writeFile(QStringLiteral("scrambled.peaklens"), scrambled);
        writeFile(QStringLiteral("odd-page-size.db"), QByteArray("SQLite format 3\0", 16) + QByteArray(84, '\x07'));
        writeFile(QStringLiteral("text.pltxt"), QByteArray("alloc a 100\nfree a\n").repeated(200000));
        writeFile(QStringLiteral("empty"), {});
    }

    // Whatever the file, the runs are each byte once: together, the file.
    void everyByteOnce_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addRow("the sample") << QFINDTESTDATA("../../../resources/samples/training-step.peaklens");
        QTest::addRow("a trace of many chunks") << chunky();
        QTest::addRow("a trace cut short") << m_dir.filePath(QStringLiteral("cut.peaklens"));
        QTest::addRow("a trace with damaged pages") << m_dir.filePath(QStringLiteral("scrambled.peaklens"));
        QTest::addRow("an SQLite header with a page size SQLite never writes")
            << m_dir.filePath(QStringLiteral("odd-page-size.db"));
        QTest::addRow("trace text") << m_dir.filePath(QStringLiteral("text.pltxt"));
        QTest::addRow("an empty file") << m_dir.filePath(QStringLiteral("empty"));
    }
    void everyByteOnce()
    {
        QFETCH(QString, path);
        const auto size = static_cast<std::uint64_t>(QFileInfo(path).size());
        std::vector<ByteRun> runs = orderOf(path);
        // The head first, in file order.
        std::uint64_t head = 0;
        const std::uint64_t wanted = std::min(size, PageOrder::kHeadBytes);
        for (std::size_t i = 0; i < runs.size() && runs[i].offset == head && head < wanted; ++i)
            head += runs[i].length;
        QVERIFY(head >= wanted);
        std::sort(runs.begin(), runs.end(), [](const ByteRun &a, const ByteRun &b) { return a.offset < b.offset; });
        std::uint64_t next = 0;
        for (const ByteRun &run : runs) {
            QCOMPARE(run.offset, next);
            QVERIFY(run.length > 0 && run.length <= PageOrder::kMaxRunBytes);
            next += run.length;
        }
        QCOMPARE(next, size);
    }

    // Checked against SQLite's own account of the file's pages (its dbstat table): each
    // table's b-tree before the overflow pages of its rows, every other table before the
    // events, so a reader reads the small tables and the chunk index first, then each chunk
    // in turn, as its pages arrive.
    void aReaderFindsItsPagesInTheOrderItReadsThem()
    {
        const std::vector<ByteRun> runs = orderOf(chunky());
        SqliteDatabase db(ss(chunky()), SQLITE_OPEN_READONLY);
        const auto pageSize = static_cast<std::uint64_t>(db.queryInteger("PRAGMA page_size"));
        std::map<std::uint64_t, std::size_t> position; // page number -> when it is sent
        for (const ByteRun &run : runs)
            for (std::uint64_t offset = run.offset; offset < run.offset + run.length; offset += pageSize)
                position.emplace(offset / pageSize + 1, position.size());
        const std::uint64_t headPages = PageOrder::kHeadBytes / pageSize;
        struct Span
        {
            std::size_t first = SIZE_MAX, last = 0;
            void add(std::size_t at) { first = std::min(first, at), last = std::max(last, at); }
        };
        std::map<std::string, Span> tree, overflow;
        auto pages = db.prepare("SELECT name, pageno, pagetype FROM dbstat");
        std::size_t eventsOverflow = 0;
        while (pages.step()) {
            const auto page = static_cast<std::uint64_t>(pages.integer(1));
            if (page <= headPages)
                continue; // sent first, whatever it holds
            const std::size_t at = position.at(page);
            (pages.text(2) == "overflow" ? overflow : tree)[pages.text(0)].add(at);
            eventsOverflow += pages.text(0) == "events" && pages.text(2) == "overflow";
        }
        QVERIFY2(eventsOverflow > 100, "the events' chunks fill overflow pages");
        QVERIFY(tree.contains("events") && tree.contains("figures"));
        for (const auto &[name, span] : tree) {
            if (overflow.contains(name))
                QVERIFY2(span.last < overflow[name].first, name.c_str());
        }
        const std::size_t eventsBegin = std::min(tree["events"].first, overflow["events"].first);
        for (const auto &spans : {tree, overflow})
            for (const auto &[name, span] : spans)
                if (name != "events")
                    QVERIFY2(span.last < eventsBegin, name.c_str());
    }

private:
    QString chunky() const { return m_dir.filePath(QStringLiteral("chunky.peaklens")); }
    void writeFile(const QString &name, const QByteArray &bytes)
    {
        QFile file(m_dir.filePath(name));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(bytes);
    }

    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(tst_PageOrder)
#include "tst_pageorder.moc"
