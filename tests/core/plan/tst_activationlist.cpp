// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/format/tracereader.h"
#include "core/plan/activationlist.h"
#include "core/plan/planner.h"

#include <map>
#include <set>

using namespace peaklens;

namespace {

std::shared_ptr<const Trace> sample()
{
    return TraceReader::read(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
}

} // namespace

class tst_ActivationList : public QObject
{
    Q_OBJECT

private slots:
    // Without checkpoints every block is saved, and what a layer keeps but its output is
    // exactly what the model says checkpointing it frees.
    void withoutCheckpointsEachLayerSavesWhatItsCheckpointWouldFree()
    {
        const auto trace = sample();
        const CostModel model = buildCostModel(*trace);
        const auto list = keptActivations(*trace, model, {});
        QVERIFY(!list.empty());
        std::map<std::string, std::int64_t> saved;
        std::map<std::string, int> outputs;
        for (const KeptActivation &row : list) {
            QCOMPARE(row.policy, KeptPolicy::Save);
            QVERIFY(row.unit.empty());
            QCOMPARE(row.bytes, trace->events.deltaBytes(row.event));
            QVERIFY(row.bytes > 0);
            if (row.output)
                ++outputs[row.layer];
            else
                saved[row.layer] += row.bytes;
        }
        for (const ChainLayer &layer : model.layers) {
            QCOMPARE(saved[layer.path], layer.savingBytes);
            QVERIFY(outputs[layer.path] <= 1);
        }
    }

    void policiesFollowThePlansUnits_data()
    {
        QTest::addColumn<QString>("strategy");
        // Per layer: the policy of its blocks but the output, and of its output ("-": the
        // replay's layers had freed their outputs when their backward began).
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("one layer") << QStringLiteral("blocks.1")
                                   << QStringList{QStringLiteral("blocks.0 SAVE -"),
                                                  QStringLiteral("blocks.1 RECOMPUTE:blocks.1 -"),
                                                  QStringLiteral("blocks.2 SAVE -")};
        // A segment keeps only its input: its inner layers' outputs are made again too.
        QTest::newRow("a segment") << QStringLiteral("blocks.0..blocks.2")
                                   << QStringList{QStringLiteral("blocks.0 RECOMPUTE:blocks.0..blocks.2 -"),
                                                  QStringLiteral("blocks.1 RECOMPUTE:blocks.0..blocks.2 -"),
                                                  QStringLiteral("blocks.2 RECOMPUTE:blocks.0..blocks.2 -"),
                                                  QStringLiteral("blocks.3 SAVE -")};
    }
    void policiesFollowThePlansUnits()
    {
        QFETCH(QString, strategy);
        QFETCH(QStringList, expected);
        const auto trace = sample();
        const CostModel model = buildCostModel(*trace);
        const Plan plan = planForStrategy(model, strategy.toStdString());
        std::map<std::string, std::set<QString>> inner, output;
        for (const KeptActivation &row : keptActivations(*trace, model, plan.schedule)) {
            const QString policy = QString::fromLatin1(keptPolicyName(row.policy))
                                   + (row.unit.empty() ? QString() : QLatin1Char(':') + test::qs(row.unit));
            (row.output ? output : inner)[row.layer].insert(policy);
        }
        for (const QString &line : expected) {
            const QStringList parts = line.split(QLatin1Char(' '));
            const std::string layer = parts[0].toStdString();
            QCOMPARE(inner[layer], std::set<QString>{parts[1]});
            QCOMPARE(output[layer], parts[2] == QStringLiteral("-") ? std::set<QString>{} : std::set<QString>{parts[2]});
        }
    }

    void theOperatorIsTheInnermostButAFactory_data()
    {
        QTest::addColumn<QStringList>("frames"); // outermost first
        QTest::addColumn<QString>("op");
        QTest::newRow("the kernel's operator")
            << QStringList{QStringLiteral("forward"), QStringLiteral("aten::linear"), QStringLiteral("aten::addmm")}
            << QStringLiteral("aten::addmm");
        QTest::newRow("a factory allocating for its caller")
            << QStringList{QStringLiteral("aten::clone"), QStringLiteral("aten::empty_like"),
                           QStringLiteral("aten::empty_strided")}
            << QStringLiteral("aten::clone");
        QTest::newRow("a factory called on its own")
            << QStringList{QStringLiteral("__init__"), QStringLiteral("aten::empty.memory_format")}
            << QStringLiteral("aten::empty.memory_format");
        QTest::newRow("a dispatcher frame") << QStringList{QStringLiteral("at::_ops::bmm::call(at::Tensor const&)")}
                                            << QStringLiteral("aten::bmm");
        QTest::newRow("no operator") << QStringList{QStringLiteral("forward")} << QString();
    }
    void theOperatorIsTheInnermostButAFactory()
    {
        QFETCH(QStringList, frames);
        QFETCH(QString, op);
        StackTable stacks;
        std::vector<Frame> written;
        for (const QString &function : frames)
            written.push_back(Frame{function.toStdString(), function.startsWith(QStringLiteral("aten")) ? "" : "model.py", 0});
        QCOMPARE(test::qs(allocatingOperator(stacks, stacks.internStack(written))), op);
        QCOMPARE(test::qs(allocatingOperator(stacks, StackTable::kEmptyStack)), QString());
    }
};

QTEST_GUILESS_MAIN(tst_ActivationList)
#include "tst_activationlist.moc"
