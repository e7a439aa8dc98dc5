#include "testsupport.h"

#include <QProcess>
#include <QProcessEnvironment>

// Runs the Python helper's tests (test_helper.py, unittest) on Debian's python3-torch, so
// that they are part of ctest.
class tst_PythonHelper : public QObject
{
    Q_OBJECT

private slots:
    void unittests()
    {
        QProcess python;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(PEAKLENS_SOURCE_DIR "/plugins/python"));
        environment.remove(QStringLiteral("PEAKLENS_CHECKPOINT"));
        python.setProcessEnvironment(environment);
        python.setWorkingDirectory(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/plugins/python"));
        python.setProcessChannelMode(QProcess::MergedChannels);
        python.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-m"), QStringLiteral("unittest"), QStringLiteral("-v"),
                                                          QStringLiteral("test_helper")});
        QVERIFY2(python.waitForFinished(300000), "the Python tests did not finish");
        const QByteArray output = python.readAll();
        QVERIFY2(python.exitStatus() == QProcess::NormalExit && python.exitCode() == 0, output.constData());
        QVERIFY2(output.contains("OK"), output.constData());
    }
};

QTEST_GUILESS_MAIN(tst_PythonHelper)
#include "tst_pythonhelper.moc"
