// SPDX-License-Identifier: Apache-2.0
// What a user installs, run as installed: `cmake --install` into a scratch prefix, the tree
// then moved elsewhere (every binary must find the others from its own folder, none may
// name the build or source tree), the components a GPU server takes without Qt, and the
// Debian package unpacked into a scratch root.

#include "testsupport.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtEndian>

namespace {

const QString kBuildDir = QStringLiteral(PEAKLENS_BUILD_DIR);

QString version()
{
    QFile file(QStringLiteral(PEAKLENS_SOURCE_DIR "/VERSION"));
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()).trimmed() : QString();
}

struct Ran
{
    int exitCode = -1; // -1: did not finish in time, or crashed
    QString out;
    QString err;
    QString both() const { return out + err; }
};

// `program` run from `workingDirectory`, with the environment minus anything that would
// point it back at the build (PEAKLENS_PLUGIN_DIR) plus `extra`.
Ran run(const QString &program, const QStringList &arguments, const QString &workingDirectory,
        const QProcessEnvironment &extra = {}, int timeoutMs = 300000)
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QStringLiteral("PEAKLENS_PLUGIN_DIR"));
    environment.remove(QStringLiteral("PYTHONPATH"));
    environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    for (const QString &key : extra.keys())
        environment.insert(key, extra.value(key));
    process.setProcessEnvironment(environment);
    process.setWorkingDirectory(workingDirectory);
    process.start(program, arguments);
    Ran ran;
    if (!process.waitForFinished(timeoutMs) || process.exitStatus() != QProcess::NormalExit) {
        ran.err = QStringLiteral("%1 did not finish: %2").arg(program, process.errorString());
        return ran;
    }
    ran.exitCode = process.exitCode();
    ran.out = QString::fromUtf8(process.readAllStandardOutput());
    ran.err = QString::fromUtf8(process.readAllStandardError());
    return ran;
}

// `cmake --install` of the build into `prefix`, all components or the ones named.
Ran install(const QString &prefix, const QStringList &components = {})
{
    if (components.isEmpty())
        return run(QStringLiteral(CMAKE_COMMAND), {QStringLiteral("--install"), kBuildDir, QStringLiteral("--prefix"), prefix},
                   kBuildDir);
    Ran all;
    for (const QString &component : components) {
        all = run(QStringLiteral(CMAKE_COMMAND),
                  {QStringLiteral("--install"), kBuildDir, QStringLiteral("--prefix"), prefix, QStringLiteral("--component"),
                   component},
                  kBuildDir);
        if (all.exitCode != 0)
            break;
    }
    return all;
}

// Files under `root` holding `needle`, debug information aside (a binary built with it
// names its sources there, which running never reads).
QStringList filesNaming(const QString &root, const QByteArray &needle, const QString &scratch)
{
    QStringList naming;
    QDirIterator files(root, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (files.hasNext()) {
        const QString path = files.next();
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            continue;
        QByteArray bytes = file.readAll();
        if (bytes.startsWith("\x7f"
                             "ELF")) {
            const QString stripped = scratch + QStringLiteral("/stripped");
            if (run(QStringLiteral("strip"), {QStringLiteral("--strip-debug"), QStringLiteral("-o"), stripped, path}, scratch)
                    .exitCode
                == 0) {
                QFile strippedFile(stripped);
                if (strippedFile.open(QIODevice::ReadOnly))
                    bytes = strippedFile.readAll();
            }
        }
        if (bytes.contains(needle))
            naming << QDir(root).relativeFilePath(path);
    }
    return naming;
}

// The summary of the bundled sample, as `peaklens-cli summary` prints it.
void verifySummary(const Ran &summary)
{
    QVERIFY2(summary.exitCode == 0, qPrintable(summary.both()));
    QVERIFY2(summary.out.contains(QStringLiteral("peak")), qPrintable(summary.out));
    QVERIFY2(summary.err.isEmpty(), qPrintable(summary.err));
}

// The width and height a PNG's header gives, or an invalid size.
QSize pngSize(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray header = file.read(24);
    if (header.size() < 24 || !header.startsWith("\x89PNG\r\n\x1a\n") || header.mid(12, 4) != "IHDR")
        return {};
    return {qFromBigEndian<qint32>(header.constData() + 16), qFromBigEndian<qint32>(header.constData() + 20)};
}

// The app, offscreen, on its bundled sample (no file given: it must find it itself).
void verifyAppScreenshot(const QString &app, const QString &scratch)
{
    const QString png = scratch + QStringLiteral("/window.png");
    QFile::remove(png);
    const Ran shot =
        run(app, {QStringLiteral("--screenshot"), png, QStringLiteral("--size"), QStringLiteral("1000x700")}, scratch);
    QVERIFY2(shot.exitCode == 0, qPrintable(shot.both()));
    QCOMPARE(pngSize(png), QSize(1000, 700));
}

} // namespace

class tst_Install : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void movedTreeHoldsEveryPart_data();
    void movedTreeHoldsEveryPart();
    void movedTreeRuns_data();
    void movedTreeRuns();
    void movedAppOpensItsSample();
    void movedTreeNamesNoBuildPath_data();
    void movedTreeNamesNoBuildPath();
    void serverInstallsWithoutQt();
    void debianPackageInstallsAndRuns();

private:
    QTemporaryDir m_scratch;
    QString m_moved; // the installed tree, moved after installing
};

void tst_Install::initTestCase()
{
    QVERIFY(m_scratch.isValid());
    QVERIFY(!version().isEmpty());
    const QString staged = m_scratch.filePath(QStringLiteral("staged"));
    const Ran installed = install(staged);
    QVERIFY2(installed.exitCode == 0, qPrintable(installed.both()));
    m_moved = m_scratch.filePath(QStringLiteral("elsewhere/peaklens"));
    QVERIFY(QDir().mkpath(m_scratch.filePath(QStringLiteral("elsewhere"))));
    QVERIFY(QDir().rename(staged, m_moved));
}

void tst_Install::movedTreeHoldsEveryPart_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("built"); // false: only where its part is built here
    QTest::addRow("cli") << QStringLiteral("bin/peaklens-cli") << true;
    QTest::addRow("sample") << QStringLiteral("share/peaklens/samples/training-step.peaklens") << true;
    QTest::addRow("python helper") << QStringLiteral("share/peaklens/python/peaklens/__init__.py") << true;
    QTest::addRow("python version") << QStringLiteral("share/peaklens/python/peaklens/VERSION") << true;
    QTest::addRow("docs") << QStringLiteral("share/doc/peaklens/cli.md") << true;
    QTest::addRow("bash completion") << QStringLiteral("share/bash-completion/completions/peaklens-cli") << true;
    QTest::addRow("zsh completion") << QStringLiteral("share/zsh/vendor-completions/_peaklens-cli") << true;
    QTest::addRow("man page") << QStringLiteral("share/man/man1/peaklens-cli.1")
                              << QFileInfo::exists(kBuildDir + QStringLiteral("/share/man/man1/peaklens-cli.1"));
    const bool app = QFileInfo::exists(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens"));
    QTest::addRow("app") << QStringLiteral("bin/peaklens") << app;
    QTest::addRow("desktop entry") << QStringLiteral("share/applications/peaklens.desktop") << app;
    QTest::addRow("icon") << QStringLiteral("share/icons/hicolor/scalable/apps/peaklens.svg") << app;
    QTest::addRow("file types") << QStringLiteral("share/mime/packages/peaklens.xml") << app;
    QTest::addRow("replay") << QStringLiteral("bin/peaklens-replay")
                            << QFileInfo::exists(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens-replay"));
    QTest::addRow("collector") << QStringLiteral("lib/peaklens/libpeaklens_cupti.so")
                               << QFileInfo::exists(QStringLiteral(PEAKLENS_BIN_DIR "/libpeaklens_cupti.so"));
}

void tst_Install::movedTreeHoldsEveryPart()
{
    QFETCH(QString, path);
    QFETCH(bool, built);
    if (!built)
        QSKIP("this part is not built here");
    QVERIFY2(QFileInfo::exists(m_moved + u'/' + path), qPrintable(path));
}

void tst_Install::movedTreeRuns_data()
{
    QTest::addColumn<QString>("program");
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("expected"); // printed on stdout
    const QString sample = QStringLiteral("share/peaklens/samples/training-step.peaklens");
    QTest::addRow("cli summary") << QStringLiteral("peaklens-cli") << QStringList{QStringLiteral("summary"), sample}
                                 << QStringLiteral("peak");
    QTest::addRow("cli version") << QStringLiteral("peaklens-cli") << QStringList{QStringLiteral("--version")}
                                 << QStringLiteral("peaklens-cli ") + version();
    QTest::addRow("cli help") << QStringLiteral("peaklens-cli") << QStringList{QStringLiteral("--help")}
                              << QStringLiteral("summary");
    QTest::addRow("app version") << QStringLiteral("peaklens") << QStringList{QStringLiteral("--version")} << version();
    QTest::addRow("app help") << QStringLiteral("peaklens") << QStringList{QStringLiteral("--help")}
                              << QStringLiteral("--screenshot");
    QTest::addRow("replay version") << QStringLiteral("peaklens-replay") << QStringList{QStringLiteral("--version")}
                                    << QStringLiteral("peaklens-replay ") + version();
    QTest::addRow("replay help") << QStringLiteral("peaklens-replay") << QStringList{QStringLiteral("--help")}
                                 << QStringLiteral("--checkpoint");
}

void tst_Install::movedTreeRuns()
{
    QFETCH(QString, program);
    QFETCH(QStringList, arguments);
    QFETCH(QString, expected);
    const QString path = m_moved + QStringLiteral("/bin/") + program;
    if (!QFileInfo::exists(path))
        QSKIP("this program is not built here");
    for (QString &argument : arguments) {
        if (argument.startsWith(QStringLiteral("share/")))
            argument = m_moved + u'/' + argument;
    }
    const Ran ran = run(path, arguments, m_scratch.path());
    QVERIFY2(ran.exitCode == 0, qPrintable(ran.both()));
    QVERIFY2(ran.out.contains(expected), qPrintable(ran.both()));
}

void tst_Install::movedAppOpensItsSample()
{
    if (!QFileInfo::exists(m_moved + QStringLiteral("/bin/peaklens")))
        QSKIP("the desktop app is not built here");
    verifyAppScreenshot(m_moved + QStringLiteral("/bin/peaklens"), m_scratch.path());
}

void tst_Install::movedTreeNamesNoBuildPath_data()
{
    QTest::addColumn<QString>("path");
    QTest::addRow("build tree") << kBuildDir;
    QTest::addRow("source tree") << QStringLiteral(PEAKLENS_SOURCE_DIR);
}

void tst_Install::movedTreeNamesNoBuildPath()
{
#ifdef PEAKLENS_SANITIZED
    QSKIP("a sanitizer build names its sources in its binaries, for its reports");
#endif
    QFETCH(QString, path);
    const QStringList naming = filesNaming(m_moved, QDir::cleanPath(path).toUtf8() + '/', m_scratch.path());
    QVERIFY2(naming.isEmpty(), qPrintable(naming.join(QStringLiteral(", "))));
}

// cli, collector and python: no desktop app, nothing linked against Qt, and the helper
// finds the collector from where it is installed.
void tst_Install::serverInstallsWithoutQt()
{
    const QString server = m_scratch.filePath(QStringLiteral("server"));
    const Ran installed = install(server, {QStringLiteral("cli"), QStringLiteral("collector"), QStringLiteral("python")});
    QVERIFY2(installed.exitCode == 0, qPrintable(installed.both()));
    QVERIFY(!QFileInfo::exists(server + QStringLiteral("/bin/peaklens")));
    QVERIFY(!QFileInfo::exists(server + QStringLiteral("/bin/peaklens-replay")));
    const Ran dynamic =
        run(QStringLiteral("readelf"), {QStringLiteral("-d"), server + QStringLiteral("/bin/peaklens-cli")}, server);
    QVERIFY2(dynamic.exitCode == 0 && dynamic.out.contains(QStringLiteral("NEEDED")), qPrintable(dynamic.both()));
    QVERIFY2(!dynamic.out.contains(QStringLiteral("libQt")), qPrintable(dynamic.out));
    verifySummary(run(server + QStringLiteral("/bin/peaklens-cli"),
                      {QStringLiteral("summary"), server + QStringLiteral("/share/peaklens/samples/training-step.peaklens")},
                      server));

    if (QStandardPaths::findExecutable(QStringLiteral("python3"), {QStringLiteral("/usr/bin")}).isEmpty())
        QSKIP("no /usr/bin/python3");
    QProcessEnvironment python;
    python.insert(QStringLiteral("PYTHONPATH"), server + QStringLiteral("/share/peaklens/python"));
    const Ran helper =
        run(QStringLiteral("/usr/bin/python3"),
            {QStringLiteral("-c"),
             QStringLiteral("import os, peaklens, peaklens._installed as i; "
                            "print(peaklens.__version__); "
                            "print(os.path.normpath(os.path.join(os.path.dirname(peaklens.__file__), i.COLLECTOR_DIR)))")},
            server, python);
    QVERIFY2(helper.exitCode == 0, qPrintable(helper.both()));
    const QStringList lines = helper.out.trimmed().split(u'\n');
    QCOMPARE(lines.value(0), version());
    QCOMPARE(QDir::cleanPath(lines.value(1)), QDir::cleanPath(server + QStringLiteral("/lib/peaklens")));
}

// The .deb CPack writes, unpacked with dpkg -x into a scratch root, its programs run from there.
void tst_Install::debianPackageInstallsAndRuns()
{
    if (QStandardPaths::findExecutable(QStringLiteral("dpkg-deb")).isEmpty()
        || QStandardPaths::findExecutable(QStringLiteral("dpkg-shlibdeps")).isEmpty())
        QSKIP("dpkg-deb and dpkg-shlibdeps (dpkg-dev) are needed to build and unpack the package");
    const QString packages = m_scratch.filePath(QStringLiteral("packages"));
    const Ran packed = run(QStringLiteral(CPACK_COMMAND),
                           {QStringLiteral("-G"), QStringLiteral("DEB"), QStringLiteral("--config"),
                            kBuildDir + QStringLiteral("/CPackConfig.cmake"), QStringLiteral("-B"), packages},
                           kBuildDir, {}, 600000);
    QVERIFY2(packed.exitCode == 0, qPrintable(packed.both()));
    const QString deb = packages + QStringLiteral("/peaklens_") + version() + QStringLiteral("_amd64.deb");
    QVERIFY2(QFileInfo::exists(deb), qPrintable(QDir(packages).entryList().join(u' ')));

    const Ran fields = run(
        QStringLiteral("dpkg-deb"),
        {QStringLiteral("-f"), deb, QStringLiteral("Package"), QStringLiteral("Version"), QStringLiteral("Depends")}, packages);
    QVERIFY2(fields.exitCode == 0, qPrintable(fields.both()));
    QVERIFY2(fields.out.contains(QStringLiteral("Package: peaklens\n")), qPrintable(fields.out));
    QVERIFY2(fields.out.contains(QStringLiteral("Version: ") + version() + u'\n'), qPrintable(fields.out));
    // Found by dpkg-shlibdeps from the binaries: the C library always, Qt with the app.
    QVERIFY2(fields.out.contains(QRegularExpression(QStringLiteral("Depends:.*libc6"))), qPrintable(fields.out));
    if (QFileInfo::exists(QStringLiteral(PEAKLENS_BIN_DIR "/peaklens")))
        QVERIFY2(fields.out.contains(QRegularExpression(QStringLiteral("Depends:.*libqt6widgets6"))), qPrintable(fields.out));

    const QString root = m_scratch.filePath(QStringLiteral("root"));
    const Ran unpacked = run(QStringLiteral("dpkg"), {QStringLiteral("-x"), deb, root}, packages);
    QVERIFY2(unpacked.exitCode == 0, qPrintable(unpacked.both()));
    QDir samples(root + QStringLiteral("/usr/share/peaklens/samples"));
    const QStringList sampleFiles = samples.entryList({QStringLiteral("*.peaklens")}, QDir::Files);
    QVERIFY(!sampleFiles.isEmpty());
    for (const QString &sample : sampleFiles)
        verifySummary(
            run(root + QStringLiteral("/usr/bin/peaklens-cli"), {QStringLiteral("summary"), samples.filePath(sample)}, root));
    if (QFileInfo::exists(root + QStringLiteral("/usr/bin/peaklens")))
        verifyAppScreenshot(root + QStringLiteral("/usr/bin/peaklens"), m_scratch.path());
}

QTEST_GUILESS_MAIN(tst_Install)
#include "tst_install.moc"
