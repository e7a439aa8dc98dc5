// SPDX-License-Identifier: Apache-2.0
// Checks the files that put PeakLens on a Linux desktop (resources/desktop/): the launcher
// entry, its icon and the file types, with the freedesktop.org tools a distribution runs.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QMimeDatabase>
#include <QPainter>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <algorithm>

namespace {

const QString kDesktopDir = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/desktop");
const QString kDesktopEntry = kDesktopDir + QStringLiteral("/peaklens.desktop");
const QString kIcon = kDesktopDir + QStringLiteral("/peaklens.svg");
const QString kMimePackage = kDesktopDir + QStringLiteral("/peaklens.xml");

const QString kSampleTrace = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
const QString kKinetoTrace = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/kineto.pt.trace.json");
const QString kKinetoTraceGz = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/kineto.pt.trace.json.gz");
const QString kSnapshot = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/snapshot_p4.pickle");
const QString kSnapshotGz = QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/snapshot_p5.pickle.gz");

// Where the SQLite header keeps PRAGMA application_id.
constexpr qint64 kApplicationIdOffset = 68;

struct ProgramRun
{
    int exitCode = -1; // -1: did not start, crashed or ran past the time
    QByteArray out;
    QByteArray err;
};

ProgramRun runProgram(const QString &program, const QStringList &arguments,
                      const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment())
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(program, arguments);
    ProgramRun run;
    if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit)
        return run;
    run.exitCode = process.exitCode();
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

// The key=value lines of the [Desktop Entry] group.
QHash<QString, QString> readDesktopEntry(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        return {};
    QHash<QString, QString> entries;
    bool inMainGroup = false;
    while (!file.atEnd()) {
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(u'#'))
            continue;
        if (line.startsWith(u'[')) {
            inMainGroup = line == QLatin1String("[Desktop Entry]");
            continue;
        }
        const qsizetype equals = line.indexOf(u'=');
        if (inMainGroup && equals > 0)
            entries.insert(line.left(equals).trimmed(), line.mid(equals + 1).trimmed());
    }
    return entries;
}

QStringList sorted(QStringList list)
{
    std::sort(list.begin(), list.end());
    return list;
}

// The types a shared-mime-info package defines, in file order.
QStringList typesDefinedBy(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QStringList types;
    QXmlStreamReader xml(&file);
    while (xml.readNextStartElement()) {
        if (xml.name() == QLatin1String("mime-info"))
            continue;
        if (xml.name() == QLatin1String("mime-type"))
            types.append(xml.attributes().value(QLatin1String("type")).toString());
        xml.skipCurrentElement();
    }
    return xml.hasError() ? QStringList{xml.errorString()} : types;
}

bool copyTo(const QString &source, const QString &target)
{
    return QFile::copy(source, target) && QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner);
}

// A copy of `source` whose SQLite header carries no application id: still a valid SQLite
// database, just not marked as a PeakLens trace.
bool copyWithoutApplicationId(const QString &source, const QString &target)
{
    if (!copyTo(source, target))
        return false;
    QFile file(target);
    return file.open(QIODevice::ReadWrite) && file.seek(kApplicationIdOffset) && file.write(QByteArray(4, '\0')) == 4;
}

// A file the tests make, the type a reader of the shared MIME database should give it, and
// which readers are asked.
enum Reader { ByXdgMime = 1, ByQt = 2, ByBoth = ByXdgMime | ByQt };

struct TypedFile
{
    const char *what;
    const char *fileName;
    const char *type;
    Reader readers;
};

const TypedFile kTypedFiles[] = {
    {"native trace by name", "training-step.peaklens", "application/x-peaklens", ByBoth},
    {"native trace named .db, by content", "trace.db", "application/x-peaklens", ByBoth},
    {"native trace with no extension, by content", "trace", "application/x-peaklens", ByBoth},
    // Qt trusts a name that only one type's pattern matches and reads no content then.
    {"native trace named .sqlite3, content over name", "trace.sqlite3", "application/x-peaklens", ByXdgMime},
    {"same database without the PKLS id", "x.db", "application/vnd.sqlite3", ByBoth},
    {"Kineto trace by name", "run.pt.trace.json", "application/x-kineto-trace", ByBoth},
    {"gzipped Kineto trace by name", "run.pt.trace.json.gz", "application/x-kineto-trace", ByBoth},
    {"Kineto content with a plain JSON name", "events.json", "application/json", ByBoth},
    {"memory snapshot by name", "memory_snapshot.pickle", "application/x-pytorch-memory-snapshot", ByBoth},
    // File::MimeInfo, behind xdg-mime, tries *.gz before any pattern that is not a plain
    // extension.
    {"gzipped memory snapshot by name", "memory_snapshot.pickle.gz", "application/x-pytorch-memory-snapshot", ByQt},
};

// Where the package's types sit in the XDG data folders.
enum class Layout {
    System, // next to the freedesktop.org types in one database, as a distribution package installs
    User,   // in XDG_DATA_HOME, over the system's database
};

} // namespace

Q_DECLARE_METATYPE(Layout)

class tst_DesktopIntegration : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // Everything must be set before this process first asks QMimeDatabase anything.
        const QString baseTypes =
            QStandardPaths::locate(QStandardPaths::GenericDataLocation, QStringLiteral("mime/packages/freedesktop.org.xml"));
        if (!baseTypes.isEmpty())
            m_baseDataDir = QDir::cleanPath(QFileInfo(baseTypes).absolutePath() + QStringLiteral("/../.."));

        QVERIFY(m_scratch.isValid());
        const QDir scratch(m_scratch.path());
        for (const char *folder : {"system/mime/packages", "user/mime/packages", "home", "runtime", "files"})
            QVERIFY(scratch.mkpath(QString::fromLatin1(folder)));

        QVERIFY(copyTo(kSampleTrace, file(QStringLiteral("training-step.peaklens"))));
        QVERIFY(copyTo(kSampleTrace, file(QStringLiteral("trace.db"))));
        QVERIFY(copyTo(kSampleTrace, file(QStringLiteral("trace"))));
        QVERIFY(copyTo(kSampleTrace, file(QStringLiteral("trace.sqlite3"))));
        QVERIFY(copyWithoutApplicationId(kSampleTrace, file(QStringLiteral("x.db"))));
        QVERIFY(copyTo(kKinetoTrace, file(QStringLiteral("run.pt.trace.json"))));
        QVERIFY(copyTo(kKinetoTraceGz, file(QStringLiteral("run.pt.trace.json.gz"))));
        QVERIFY(copyTo(kKinetoTrace, file(QStringLiteral("events.json"))));
        QVERIFY(copyTo(kSnapshot, file(QStringLiteral("memory_snapshot.pickle"))));
        QVERIFY(copyTo(kSnapshotGz, file(QStringLiteral("memory_snapshot.pickle.gz"))));

        m_updateMimeDatabase = QStandardPaths::findExecutable(QStringLiteral("update-mime-database"));
        if (m_updateMimeDatabase.isEmpty() || m_baseDataDir.isEmpty())
            return;
        // Only the freedesktop.org types beside ours, whatever else this machine has installed.
        QVERIFY(copyTo(baseTypes, dataDir(Layout::System) + QStringLiteral("/mime/packages/freedesktop.org.xml")));
        for (const Layout layout : {Layout::System, Layout::User}) {
            QVERIFY(copyTo(kMimePackage, dataDir(layout) + QStringLiteral("/mime/packages/peaklens.xml")));
            m_databaseBuilds[int(layout)] =
                runProgram(m_updateMimeDatabase, {dataDir(layout) + QStringLiteral("/mime")}, environment(layout));
        }

        // Qt's reader is only asked about the system layout: Qt 6.4 lets the last data
        // folder's magic match win over an earlier folder's, whatever their priorities.
        const QProcessEnvironment system = environment(Layout::System);
        qputenv("XDG_DATA_HOME", system.value(QStringLiteral("XDG_DATA_HOME")).toLocal8Bit());
        qputenv("XDG_DATA_DIRS", system.value(QStringLiteral("XDG_DATA_DIRS")).toLocal8Bit());
    }

    void desktopEntryIsValid()
    {
        const QString validator = QStandardPaths::findExecutable(QStringLiteral("desktop-file-validate"));
        if (validator.isEmpty())
            QSKIP("desktop-file-validate is not installed (Debian: desktop-file-utils)");
        const ProgramRun run = runProgram(validator, {kDesktopEntry});
        QCOMPARE(run.out + run.err, QByteArray());
        QCOMPARE(run.exitCode, 0);
    }

    void desktopEntryNamesTheIconAndTheTypes()
    {
        const QHash<QString, QString> entry = readDesktopEntry(kDesktopEntry);
        QCOMPARE(entry.value(QStringLiteral("Icon")), QFileInfo(kIcon).completeBaseName());
        QCOMPARE(entry.value(QStringLiteral("Exec")), QStringLiteral("peaklens %F"));

        const QStringList defined = typesDefinedBy(kMimePackage);
        QCOMPARE(defined.size(), 3);
        const QStringList claimed = entry.value(QStringLiteral("MimeType")).split(u';', Qt::SkipEmptyParts);
        QCOMPARE(sorted(claimed), sorted(defined));
    }

    void iconIsAScalableSquare()
    {
        // Qt SVG warns about what it cannot draw; an icon must need none of it.
        QTest::failOnWarning(QRegularExpression(QStringLiteral(".*")));
        QSvgRenderer renderer(kIcon);
        QVERIFY(renderer.isValid());
        const QRectF viewBox = renderer.viewBoxF();
        QVERIFY(!viewBox.isEmpty());
        QCOMPARE(viewBox.width(), viewBox.height());

        QImage image(32, 32, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        renderer.render(&painter);
        painter.end();
        int opaque = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                opaque += qAlpha(image.pixel(x, y)) == 255;
        QVERIFY2(opaque > image.width() * image.height() / 2,
                 qPrintable(QStringLiteral("only %1 of 1024 pixels drawn").arg(opaque)));
    }

    void mimePackageBuilds_data()
    {
        QTest::addColumn<Layout>("layout");
        QTest::addRow("beside the system types") << Layout::System;
        QTest::addRow("in the user's data folder") << Layout::User;
    }

    void mimePackageBuilds()
    {
        QFETCH(Layout, layout);
        skipWithoutMimeDatabase();
        const ProgramRun &build = m_databaseBuilds[int(layout)];
        QCOMPARE(build.out + build.err, QByteArray());
        QCOMPARE(build.exitCode, 0);
        QVERIFY(QFile::exists(dataDir(layout) + QStringLiteral("/mime/mime.cache")));
    }

    void xdgMimeDetectsFileTypes_data()
    {
        QTest::addColumn<Layout>("layout");
        QTest::addColumn<QString>("fileName");
        QTest::addColumn<QString>("expectedType");
        for (const auto &[layout, where] : {std::pair{Layout::System, "system"}, std::pair{Layout::User, "user"}}) {
            for (const TypedFile &typed : kTypedFiles)
                if (typed.readers & ByXdgMime)
                    QTest::addRow("%s: %s", where, typed.what)
                        << layout << QString::fromLatin1(typed.fileName) << QString::fromLatin1(typed.type);
        }
    }

    void xdgMimeDetectsFileTypes()
    {
        QFETCH(Layout, layout);
        QFETCH(QString, fileName);
        QFETCH(QString, expectedType);
        skipWithoutMimeDatabase();
        const QString xdgMime = QStandardPaths::findExecutable(QStringLiteral("xdg-mime"));
        if (xdgMime.isEmpty())
            QSKIP("xdg-mime is not installed (Debian: xdg-utils)");
        // Outside a desktop session xdg-mime asks `mimetype`; without it, it falls back to
        // `file`, which knows no types but its own.
        if (QStandardPaths::findExecutable(QStringLiteral("mimetype")).isEmpty())
            QSKIP("mimetype is not installed (Debian: libfile-mimeinfo-perl); xdg-mime's fallback, file, cannot read "
                  "shared-mime-info");
        QCOMPARE(m_databaseBuilds[int(layout)].exitCode, 0);

        QProcessEnvironment asked = environment(layout);
        // Its debug output names the program it ran.
        asked.insert(QStringLiteral("XDG_UTILS_DEBUG_LEVEL"), QStringLiteral("1"));
        const ProgramRun run = runProgram(xdgMime, {QStringLiteral("query"), QStringLiteral("filetype"), file(fileName)}, asked);
        QVERIFY2(run.err.contains("Running mimetype"), run.err.constData());
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(QString::fromUtf8(run.out.trimmed()), expectedType);
    }

    void qtDetectsFileTypes_data()
    {
        QTest::addColumn<QString>("fileName");
        QTest::addColumn<QString>("expectedType");
        for (const TypedFile &typed : kTypedFiles)
            if (typed.readers & ByQt)
                QTest::addRow("%s", typed.what) << QString::fromLatin1(typed.fileName) << QString::fromLatin1(typed.type);
    }

    void qtDetectsFileTypes()
    {
        QFETCH(QString, fileName);
        QFETCH(QString, expectedType);
        skipWithoutMimeDatabase();
        QCOMPARE(m_databaseBuilds[int(Layout::System)].exitCode, 0);
        QCOMPARE(QMimeDatabase().mimeTypeForFile(file(fileName)).name(), expectedType);
    }

private:
    QString dataDir(Layout layout) const
    {
        return m_scratch.path() + (layout == Layout::System ? QStringLiteral("/system") : QStringLiteral("/user"));
    }

    QString file(const QString &name) const { return m_scratch.path() + QStringLiteral("/files/") + name; }

    // The scratch database in the XDG data folders and no desktop session, so that xdg-mime
    // takes its generic path whatever session runs the test.
    QProcessEnvironment environment(Layout layout) const
    {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        for (const char *session :
             {"KDE_FULL_SESSION", "KDE_SESSION_VERSION", "GNOME_DESKTOP_SESSION_ID", "MATE_DESKTOP_SESSION_ID",
              "LXQT_SESSION_CONFIG", "DESKTOP_SESSION", "DESKTOP", "DBUS_SESSION_BUS_ADDRESS"})
            environment.remove(QString::fromLatin1(session));
        environment.insert(QStringLiteral("XDG_CURRENT_DESKTOP"), QStringLiteral("X-Generic"));
        // xdg-mime takes a flatpak-info file there for a sandbox.
        environment.insert(QStringLiteral("XDG_RUNTIME_DIR"), m_scratch.path() + QStringLiteral("/runtime"));
        if (layout == Layout::System) {
            environment.insert(QStringLiteral("XDG_DATA_HOME"), m_scratch.path() + QStringLiteral("/home"));
            environment.insert(QStringLiteral("XDG_DATA_DIRS"), dataDir(layout));
        } else {
            environment.insert(QStringLiteral("XDG_DATA_HOME"), dataDir(layout));
            environment.insert(QStringLiteral("XDG_DATA_DIRS"), m_baseDataDir);
        }
        return environment;
    }

    void skipWithoutMimeDatabase() const
    {
        if (m_updateMimeDatabase.isEmpty())
            QSKIP("update-mime-database is not installed (Debian: shared-mime-info)");
        if (m_baseDataDir.isEmpty())
            QSKIP("no shared-mime-info base types (mime/packages/freedesktop.org.xml) in the XDG data folders");
    }

    QTemporaryDir m_scratch;
    QString m_baseDataDir; // holds mime/packages/freedesktop.org.xml
    QString m_updateMimeDatabase;
    ProgramRun m_databaseBuilds[2]; // by Layout
};

QTEST_GUILESS_MAIN(tst_DesktopIntegration)
#include "tst_desktopintegration.moc"
