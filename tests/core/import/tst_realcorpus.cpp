#include "testsupport.h"

#include "core/analysis/peakfinder.h"
#include "core/import/traceloader.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

QString corpusPath(const QString &name)
{
    return QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/real/") + name;
}

// What tests/data/real/expected.py computed from each file's own evidence.
QJsonObject expectedFigures()
{
    QFile file(corpusPath(QStringLiteral("expected.json")));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

// Files others recorded on real GPUs (tests/data/real/README.md says where from):
// PeakLens must read the same figures the files themselves hold.
class tst_RealCorpus : public QObject
{
    Q_OBJECT

private slots:
    void peaksEqualTheFilesOwnEvidence_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QJsonObject>("devices");
        const QJsonObject expected = expectedFigures();
        QVERIFY(expected.size() >= 10);
        for (auto it = expected.begin(); it != expected.end(); ++it)
            QTest::newRow(qPrintable(it.key())) << it.key() << it.value().toObject();
    }

    void peaksEqualTheFilesOwnEvidence()
    {
        QFETCH(QString, file);
        QFETCH(QJsonObject, devices);
        const auto trace = loadTrace(ss(corpusPath(file)));
        const PeakReport report = findPeaks(*trace);
        QStringList seen;
        for (const DevicePeak &peak : report.devices) {
            const QString device = qs(peak.device.toString());
            seen << device;
            QVERIFY2(devices.contains(device), qPrintable(device + QStringLiteral(" is not in the file")));
            const QJsonObject want = devices[device].toObject();
            QCOMPARE(peak.allocatedBytes, want[QStringLiteral("peak_bytes")].toInteger());
            const QJsonValue reserved = want[QStringLiteral("reserved_peak_bytes")];
            QCOMPARE(peak.reservedBytes.has_value(), !reserved.isNull());
            if (peak.reservedBytes)
                QCOMPARE(*peak.reservedBytes, reserved.toInteger());
        }
        QCOMPARE(seen.size(), devices.size());
        // What is live at the peak adds up to it.
        QCOMPARE(report.liveAtPeak->bytes, report.devices[*report.primary].allocatedBytes);
    }
};

QTEST_GUILESS_MAIN(tst_RealCorpus)
#include "tst_realcorpus.moc"
