// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include <QDirIterator>
#include <QRegularExpression>

// The layers of core/, each of which may include only the layers below it (and files at
// core/'s root: error.h, progress.h): trace < format < import < analysis < plan <
// document < report. record (the collector's side) sits beside analysis, on import.
// core/ includes neither Qt nor app/ nor plugins/.

namespace {

const QStringList kOrder{QStringLiteral("trace"),    QStringLiteral("format"), QStringLiteral("import"),
                         QStringLiteral("analysis"), QStringLiteral("plan"),   QStringLiteral("document"),
                         QStringLiteral("report")};

// The layers `layer` may include ("" is core/'s root).
QStringList allowedBelow(const QString &layer)
{
    QStringList allowed{QString()};
    if (layer == QLatin1String("record"))
        return allowed + kOrder.mid(0, kOrder.indexOf(QLatin1String("import")) + 1) + QStringList{layer};
    const qsizetype rank = kOrder.indexOf(layer);
    return rank < 0 ? allowed : allowed + kOrder.mid(0, rank + 1);
}

QString quoted(const QString &path)
{
    return QStringLiteral("#include \"") + path + QLatin1Char('"');
}

// Why an include line in a file of `layer` breaks the order; empty when it does not.
QString breach(const QString &layer, const QString &line)
{
    static const QRegularExpression include(QStringLiteral("^\\s*#\\s*include\\s*([<\"])([^>\"]+)[>\"]"));
    const QRegularExpressionMatch match = include.match(line);
    if (!match.hasMatch())
        return {};
    const QString path = match.captured(2);
    if (match.captured(1) == QLatin1String("<"))
        return path.startsWith(QLatin1Char('Q')) ? QStringLiteral("Qt in core") : QString();
    if (path.startsWith(QLatin1String("app/")) || path.startsWith(QLatin1String("plugins/")))
        return QStringLiteral("core includes ") + path;
    if (!path.startsWith(QLatin1String("core/")))
        return {}; // beside the file: its own layer
    const QStringList parts = path.split(QLatin1Char('/'));
    const QString target = parts.size() > 2 ? parts[1] : QString();
    if (allowedBelow(layer).contains(target))
        return {};
    return layer + QStringLiteral(" includes ") + path;
}

} // namespace

class tst_LayerOrder : public QObject
{
    Q_OBJECT

private slots:
    void rule_data()
    {
        QTest::addColumn<QString>("layer");
        QTest::addColumn<QString>("line");
        QTest::addColumn<bool>("breaks");
        QTest::addRow("down: plan reads analysis")
            << QStringLiteral("plan") << quoted(QStringLiteral("core/analysis/peakfinder.h")) << false;
        QTest::addRow("the root: error.h") << QStringLiteral("trace") << quoted(QStringLiteral("core/error.h")) << false;
        QTest::addRow("its own layer, beside it") << QStringLiteral("format") << quoted(QStringLiteral("schema.h")) << false;
        QTest::addRow("up: format reads import")
            << QStringLiteral("format") << quoted(QStringLiteral("core/import/kineto.h")) << true;
        QTest::addRow("up: plan reads document")
            << QStringLiteral("plan") << quoted(QStringLiteral("core/document/analysedtrace.h")) << true;
        QTest::addRow("record beside analysis")
            << QStringLiteral("record") << quoted(QStringLiteral("core/analysis/peakfinder.h")) << true;
        QTest::addRow("record on import") << QStringLiteral("record") << quoted(QStringLiteral("core/import/annotationranges.h"))
                                          << false;
        QTest::addRow("Qt") << QStringLiteral("analysis") << QStringLiteral("#include <QString>") << true;
        QTest::addRow("the standard library") << QStringLiteral("analysis") << QStringLiteral("#include <vector>") << false;
        QTest::addRow("the app") << QStringLiteral("report") << quoted(QStringLiteral("app/gui/mainwindow.h")) << true;
    }
    void rule()
    {
        QFETCH(QString, layer);
        QFETCH(QString, line);
        QFETCH(bool, breaks);
        QCOMPARE(!breach(layer, line).isEmpty(), breaks);
    }

    // Every include in core/ keeps the order.
    void theTreeKeepsTheOrder()
    {
        const QString root = QStringLiteral(PEAKLENS_SOURCE_DIR "/core/");
        QStringList breaches;
        int files = 0;
        QDirIterator it(root, {QStringLiteral("*.h"), QStringLiteral("*.cpp")}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            const QString relative = path.mid(root.size());
            const QString layer = relative.contains(QLatin1Char('/')) ? relative.section(QLatin1Char('/'), 0, 0) : QString();
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            ++files;
            int number = 0;
            while (!file.atEnd()) {
                ++number;
                const QString line = QString::fromUtf8(file.readLine());
                if (const QString why = breach(layer, line); !why.isEmpty())
                    breaches << QStringLiteral("core/%1:%2: %3").arg(relative).arg(number).arg(why);
            }
        }
        QVERIFY(files > 100);
        QVERIFY2(breaches.isEmpty(), qPrintable(breaches.join(QLatin1Char('\n'))));
    }
};

QTEST_GUILESS_MAIN(tst_LayerOrder)
#include "tst_layerorder.moc"
