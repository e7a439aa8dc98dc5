// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include <QProcess>
#include <QProcessEnvironment>

#include <cstdio>

// Runs the Python helper's tests (test_*.py, unittest) on the project's PyTorch (the pip
// environment run.sh makes, PEAKLENS_PYTHON), so that they are part of ctest: the helper itself, the package pip installs,
// `python -m peaklens record` (through the CUDA stand-ins when they are built) and examples/train_small.py.
class tst_PythonHelper : public QObject
{
    Q_OBJECT

private slots:
    void unittests()
    {
        if (QStringLiteral(PEAKLENS_PYTHON).isEmpty())
            QSKIP("no PEAKLENS_PYTHON: configure with -DPEAKLENS_PYTHON=<a python with torch> (run.sh does)");
        QProcess python;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(PEAKLENS_SOURCE_DIR "/plugins/python"));
        environment.remove(QStringLiteral("PEAKLENS_CHECKPOINT"));
        // The build's peaklens-cli, app and torch recorder (test_torchrecord.py).
        environment.insert(QStringLiteral("PEAKLENS_TEST_BIN_DIR"), QStringLiteral(PEAKLENS_BIN_DIR));
#ifdef PEAKLENS_STANDIN_DIR
        environment.insert(QStringLiteral("PEAKLENS_TEST_STANDIN_DIR"), QStringLiteral(PEAKLENS_STANDIN_DIR));
#endif
        python.setProcessEnvironment(environment);
        python.setWorkingDirectory(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/plugins/python"));
        python.setProcessChannelMode(QProcess::MergedChannels);
        python.start(QStringLiteral(PEAKLENS_PYTHON),
                     {QStringLiteral("-m"), QStringLiteral("unittest"), QStringLiteral("discover"), QStringLiteral("-v"),
                      QStringLiteral("-s"), QStringLiteral("."), QStringLiteral("-p"), QStringLiteral("test_*.py")});
        QVERIFY2(python.waitForFinished(900000), "the Python tests did not finish");
        const QByteArray output = python.readAll();
        const bool passed = python.exitStatus() == QProcess::NormalExit && python.exitCode() == 0;
        if (!passed) // in full: a test failure's message is cut short
            std::fputs(output.constData(), stderr);
        QVERIFY2(passed, "the Python tests failed: their output is above");
        QVERIFY2(output.contains("OK"), output.constData());
    }
};

QTEST_GUILESS_MAIN(tst_PythonHelper)
#include "tst_pythonhelper.moc"
