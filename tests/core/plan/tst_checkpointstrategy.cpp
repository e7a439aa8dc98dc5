// SPDX-License-Identifier: Apache-2.0
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
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<QString>("error");
        for (const QJsonValue &value : cases()[QStringLiteral("cases")].toArray()) {
            const QJsonObject c = value.toObject();
            const QString text = c[QStringLiteral("text")].toString();
            QTest::newRow(qPrintable(QLatin1Char('"') + text + QLatin1Char('"')))
                << text << c[QStringLiteral("toggles")] << c[QStringLiteral("schedule")].toString()
                << c[QStringLiteral("error")].toString();
        }
    }
    void sharedCases()
    {
        QFETCH(QString, text);
        QFETCH(QJsonValue, toggles);
        QFETCH(QString, schedule);
        QFETCH(QString, error);
        const QJsonObject all = cases();
        const auto chain = strings(all[QStringLiteral("chain")]);
        const auto toggleable = strings(all[QStringLiteral("toggleable")]);
        LayerParts parts;
        for (const std::string &layer : toggleable)
            parts.push_back(strings(all[QStringLiteral("parts")].toObject()[QString::fromStdString(layer)]));
        if (!error.isEmpty()) {
            try {
                CheckpointStrategy::parse(text.toStdString()).schedule(chain, toggleable, parts);
                QFAIL("accepted");
            } catch (const Error &e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(error), e.what());
            }
            return;
        }
        const CheckpointStrategy strategy = CheckpointStrategy::parse(text.toStdString());
        const CheckpointSchedule units = strategy.schedule(chain, toggleable, parts);
        const std::vector<bool> resolved = toggledPositions(units, toggleable.size());
        const std::vector<std::uint64_t> chosen = partMasks(units, toggleable.size());
        std::vector<std::string> on;
        for (std::size_t i = 0; i < resolved.size(); ++i) {
            if (resolved[i])
                on.push_back(toggleable[i]);
            for (std::size_t c = 0; c < parts[i].size(); ++c) {
                if (chosen[i] >> c & 1u)
                    on.push_back(parts[i][c]);
            }
        }
        QCOMPARE(on, strings(toggles));
        QCOMPARE(QString::fromStdString(CheckpointStrategy::of(units, toggleable, parts).toString()), schedule);
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
                                      QStringLiteral("Every 3rd layer"), QStringLiteral("Segments of √N layers")}));
        QCOMPARE(CheckpointStrategy::every(1), CheckpointStrategy::parse("all"));
        QCOMPARE(CheckpointStrategy::layers({}), CheckpointStrategy::parse("none"));
    }

    // Rules resolve to units; a layer is recomputed once per unit that holds it.
    void schedules_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("chainLength");
        QTest::addColumn<QString>("units");
        QTest::addColumn<QList<int>>("recomputes");
        QTest::newRow("sqrt of 12") << QStringLiteral("sqrt") << int(12) << QStringLiteral("0..3,4..7")
                                    << QList<int>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
        QTest::newRow("sqrt of 10") << QStringLiteral("sqrt") << int(10) << QStringLiteral("0..3,4..7")
                                    << QList<int>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
        QTest::newRow("segments:3 of 7") << QStringLiteral("segments:3") << int(7) << QStringLiteral("0..2,3..5")
                                         << QList<int>{1, 1, 1, 1, 1, 1, 0};
        QTest::newRow("every:2 of 5") << QStringLiteral("every:2") << int(5) << QStringLiteral("0,2,4")
                                      << QList<int>{1, 0, 1, 0, 1};
        QTest::newRow("two levels") << QStringLiteral("1..5(1..2,4)") << int(6) << QStringLiteral("1..5(1..2,4)")
                                    << QList<int>{0, 2, 2, 1, 2, 1};
        QTest::newRow("three levels") << QStringLiteral("0..5(0..4(0..1))") << int(6) << QStringLiteral("0..5(0..4(0..1))")
                                      << QList<int>{3, 3, 2, 2, 2, 1};
    }
    void schedules()
    {
        QFETCH(QString, text);
        QFETCH(int, chainLength);
        QFETCH(QString, units);
        QFETCH(QList<int>, recomputes);
        std::vector<std::string> chain;
        for (int k = 0; k < chainLength; ++k)
            chain.push_back(std::to_string(k));
        const CheckpointSchedule schedule = CheckpointStrategy::parse(text.toStdString()).schedule(chain, chain);
        QCOMPARE(QString::fromStdString(CheckpointStrategy::of(schedule, chain).toString()), units);
        QList<int> counts;
        for (std::size_t count : recomputeCounts(schedule, std::size_t(chainLength)))
            counts << int(count);
        QCOMPARE(counts, recomputes);
    }

    // A rule's segment must be the chain's layers one after another.
    void ruleSegmentsStayInTheChain()
    {
        const std::vector<std::string> chain{"b.0", "b.1", "b.2", "b.3"}, stages{"b.0", "b.1", "norm", "b.2", "b.3"};
        QVERIFY_THROWS_EXCEPTION(Error, CheckpointStrategy::parse("segments:3").schedule(chain, stages));
        QCOMPARE(CheckpointStrategy::parse("every:2").resolve(chain, stages),
                 (std::vector<bool>{true, false, false, true, false}));
    }

    void deepNestingIsRefused()
    {
        std::string text = "a..b";
        for (int i = 0; i < 200; ++i)
            text += "(a..b";
        QVERIFY_THROWS_EXCEPTION(Error, CheckpointStrategy::parse(text));
    }
};

QTEST_GUILESS_MAIN(tst_CheckpointStrategy)
#include "tst_checkpointstrategy.moc"
