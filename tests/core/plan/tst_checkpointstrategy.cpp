#include "testsupport.h"

#include "core/error.h"
#include "core/plan/checkpointstrategy.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace peaklens;

namespace {

std::vector<std::string> strings(const QJsonValue &array)
{
    std::vector<std::string> out;
    for (const QJsonValue &value : array.toArray())
        out.push_back(value.toString().toStdString());
    return out;
}

QJsonObject cases()
{
    QFile file(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/checkpoint_strategies.json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read checkpoint_strategies.json");
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

// The grammar's cases, shared with the Python helper's tests.
class tst_CheckpointStrategy : public QObject
{
    Q_OBJECT

private slots:
    void sharedCases_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QJsonValue>("toggles");
        QTest::addColumn<QString>("error");
        for (const QJsonValue &value : cases()[QStringLiteral("cases")].toArray()) {
            const QJsonObject c = value.toObject();
            const QString text = c[QStringLiteral("text")].toString();
            QTest::newRow(qPrintable(QLatin1Char('"') + text + QLatin1Char('"')))
                << text << c[QStringLiteral("toggles")] << c[QStringLiteral("error")].toString();
        }
    }
    void sharedCases()
    {
        QFETCH(QString, text);
        QFETCH(QJsonValue, toggles);
        QFETCH(QString, error);
        const QJsonObject all = cases();
        const auto chain = strings(all[QStringLiteral("chain")]);
        const auto toggleable = strings(all[QStringLiteral("toggleable")]);
        if (!error.isEmpty()) {
            try {
                CheckpointStrategy::parse(text.toStdString()).resolve(chain, toggleable);
                QFAIL("accepted");
            } catch (const Error &e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(error), e.what());
            }
            return;
        }
        const CheckpointStrategy strategy = CheckpointStrategy::parse(text.toStdString());
        const std::vector<bool> resolved = strategy.resolve(chain, toggleable);
        std::vector<std::string> on;
        for (std::size_t i = 0; i < resolved.size(); ++i) {
            if (resolved[i])
                on.push_back(toggleable[i]);
        }
        QCOMPARE(on, strings(toggles));
        // Printing reads back as the same value.
        QCOMPARE(CheckpointStrategy::parse(strategy.toString()), strategy);
    }

    void presets()
    {
        QStringList labels;
        for (const CheckpointStrategy &strategy : CheckpointStrategy::presets()) {
            QVERIFY(strategy.isRule());
            labels << QString::fromStdString(strategy.label());
        }
        QCOMPARE(labels, (QStringList{QStringLiteral("None"), QStringLiteral("All layers"), QStringLiteral("Every 2nd layer"),
                                      QStringLiteral("Every 3rd layer"), QStringLiteral("Every √N-th layer")}));
        QCOMPARE(CheckpointStrategy::every(1), CheckpointStrategy::parse("all"));
        QCOMPARE(CheckpointStrategy::layers({}), CheckpointStrategy::parse("none"));
    }
};

QTEST_GUILESS_MAIN(tst_CheckpointStrategy)
#include "tst_checkpointstrategy.moc"
