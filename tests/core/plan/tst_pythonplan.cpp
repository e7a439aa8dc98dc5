// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/format/tracereader.h"
#include "core/plan/pythonplan.h"

using namespace peaklens;

namespace {

std::shared_ptr<const Trace> sample()
{
    return TraceReader::read(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");
}

// The keys of the emitted MODULES dict, in order.
QStringList moduleKeys(const QString &code)
{
    if (code.contains(QStringLiteral("\nMODULES = {}\n")))
        return {};
    const qsizetype begin = code.indexOf(QStringLiteral("MODULES = {\n"));
    const qsizetype end = code.indexOf(QStringLiteral("\n}\n"), begin);
    QStringList keys;
    if (begin < 0 || end < 0)
        return keys;
    const QString body = code.mid(begin + 12, end - begin - 12);
    for (const QString &line : body.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        keys << line.trimmed().section(QStringLiteral(": "), 0, 0);
    return keys;
}

} // namespace

class tst_PythonPlan : public QObject
{
    Q_OBJECT

private slots:
    void stringsHoldExactlyTheirCharacters_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("literal");
        QTest::newRow("a module path") << QByteArray("blocks.3.attn") << QStringLiteral("\"blocks.3.attn\"");
        QTest::newRow("quote and backslash") << QByteArray("a\"b\\c") << QStringLiteral("\"a\\\"b\\\\c\"");
        QTest::newRow("line breaks cannot end the literal")
            << QByteArray("x\"\n__import__('os')\r") << QStringLiteral("\"x\\\"\\x0a__import__('os')\\x0d\"");
        QTest::newRow("accented letter") << QByteArray("caf\xc3\xa9") << QStringLiteral("\"caf\\xe9\"");
        QTest::newRow("right-to-left override") << QByteArray("a\xe2\x80\xae") << QStringLiteral("\"a\\u202e\"");
        QTest::newRow("beyond the BMP") << QByteArray("\xf0\x9f\x98\x80") << QStringLiteral("\"\\U0001f600\"");
        QTest::newRow("not UTF-8") << QByteArray("a\xff"
                                                 "b")
                                   << QStringLiteral("\"a\\ufffdb\"");
        QTest::newRow("DEL") << QByteArray("\x7f") << QStringLiteral("\"\\x7f\"");
        QTest::newRow("empty") << QByteArray() << QStringLiteral("\"\"");
    }
    void stringsHoldExactlyTheirCharacters()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, literal);
        QCOMPARE(QString::fromStdString(pythonString(std::string_view(text.constData(), text.size()))), literal);
    }

    void aPlanNamesItsUnitsModules_data()
    {
        QTest::addColumn<QString>("strategy");
        QTest::addColumn<QString>("canonical");
        QTest::addColumn<QStringList>("modules");
        QTest::addColumn<bool>("standalone");
        QTest::newRow("layers on their own")
            << QStringLiteral("blocks.1,blocks.3") << QStringLiteral("blocks.1,blocks.3")
            << QStringList{QStringLiteral("\"blocks.1\""), QStringLiteral("\"blocks.3\"")} << true;
        QTest::newRow("a rule, written out")
            << QStringLiteral("every:3") << QStringLiteral("blocks.0,blocks.3")
            << QStringList{QStringLiteral("\"blocks.0\""), QStringLiteral("\"blocks.3\"")} << true;
        QTest::newRow("nothing") << QStringLiteral("none") << QStringLiteral("none") << QStringList{} << true;
        QTest::newRow("a layer kept in bfloat16")
            << QStringLiteral("blocks.1[bf16],blocks.2") << QStringLiteral("blocks.1[bf16],blocks.2")
            << QStringList{QStringLiteral("\"blocks.1\""), QStringLiteral("\"blocks.2\"")} << true;
        QTest::newRow("a layer offloaded") << QStringLiteral("blocks.1 [offload]") << QStringLiteral("blocks.1[offload]")
                                           << QStringList{QStringLiteral("\"blocks.1\"")} << true;
        QTest::newRow("a per-op policy") << QStringLiteral("blocks.1[save:aten::addmm],blocks.2")
                                         << QStringLiteral("blocks.1[save:aten.addmm.default],blocks.2")
                                         << QStringList{QStringLiteral("\"blocks.1\""), QStringLiteral("\"blocks.2\"")} << true;
        QTest::newRow("segments run through the helper")
            << QStringLiteral("segments:2") << QStringLiteral("blocks.0..blocks.1,blocks.2..blocks.3")
            << QStringList{QStringLiteral("\"blocks.0\""), QStringLiteral("\"blocks.1\""), QStringLiteral("\"blocks.2\""),
                           QStringLiteral("\"blocks.3\"")}
            << false;
        QTest::newRow("an inner unit is checked once")
            << QStringLiteral("blocks.0..blocks.3(blocks.0,blocks.2)") << QStringLiteral("blocks.0..blocks.3(blocks.0,blocks.2)")
            << QStringList{QStringLiteral("\"blocks.0\""), QStringLiteral("\"blocks.3\""), QStringLiteral("\"blocks.2\"")}
            << false;
    }
    void aPlanNamesItsUnitsModules()
    {
        QFETCH(QString, strategy);
        QFETCH(QString, canonical);
        QFETCH(QStringList, modules);
        QFETCH(bool, standalone);
        const auto trace = sample();
        const CostModel model = buildCostModel(*trace);
        const Plan plan = planForStrategy(model, strategy.toStdString());
        const QString code = QString::fromStdString(pythonPlan(*trace, model, plan, "Strategy " + strategy.toStdString()));
        QVERIFY2(code.contains(QStringLiteral("\nSTRATEGY = \"") + canonical + QStringLiteral("\"\n")), qPrintable(code));
        QCOMPARE(moduleKeys(code), modules);
        QCOMPARE(code.contains(QStringLiteral("torch.utils.checkpoint.checkpoint(original")), standalone);
        QCOMPARE(code.contains(QStringLiteral("peaklens.instrument(model, checkpoint=STRATEGY)")), !standalone);
        QVERIFY(code.contains(QStringLiteral("# Strategy ") + strategy + QLatin1Char('\n')));
        // A standalone module names the operators each selective unit saves.
        const bool selective = strategy.contains(QStringLiteral("[save:"));
        const QString form = strategy.contains(QStringLiteral("[bf16]"))     ? QStringLiteral("bf16")
                             : strategy.contains(QStringLiteral("offload]")) ? QStringLiteral("offload")
                                                                             : QString();
        QCOMPARE(code.contains(QStringLiteral("\nKEPT = {\n    \"blocks.1\": \"") + form + QStringLiteral("\",\n}\n")),
                 !form.isEmpty());
        QCOMPARE(code.contains(QStringLiteral("\nKEPT = {}\n")), standalone && form.isEmpty());
        QCOMPARE(code.contains(QStringLiteral("\nSAVED = {\n    \"blocks.1\": [\"aten.addmm.default\"],\n}\n")), selective);
        QCOMPARE(code.contains(QStringLiteral("\nSAVED = {}\n")), standalone && !selective);
    }

    // A layer's name comes from the file: whatever it holds stays inside its literal, and
    // no line of the description leaves its comment.
    void namesFromTheTraceStayInert()
    {
        const auto trace = sample();
        CostModel model = buildCostModel(*trace);
        model.layers[1].path = "blocks.1\"\n__import__('os').system('x')\r#";
        const Plan plan = planForToggles(model, {"blocks.0"});
        const std::string description = "Checkpointing " + model.layers[1].path + "\rimport os\x0b\nsecond line";
        const QString code = QString::fromStdString(pythonPlan(*trace, model, plan, description));
        for (const QString &line : code.split(QLatin1Char('\n'))) {
            QVERIFY2(!line.contains(QLatin1Char('\r')) && !line.contains(QChar(0x0b)), qPrintable(line));
            QVERIFY2(!line.startsWith(QStringLiteral("__import__")) && !line.startsWith(QStringLiteral("import os")),
                     qPrintable(code));
        }
        QVERIFY(code.contains(QStringLiteral("# second line\n")));

        model.layers[0].path = model.layers[1].path;
        const QString named = QString::fromStdString(pythonPlan(*trace, model, plan, {}));
        QVERIFY2(named.contains(QStringLiteral("    \"blocks.1\\\"\\x0a__import__('os').system('x')\\x0d#\": ")),
                 qPrintable(named));
    }

    // Parameter bytes as traced check the model the plan is applied to; a layer whose bytes
    // the trace does not know is not checked.
    void parameterBytesAreThoseTraced()
    {
        auto trace = std::make_shared<Trace>(*sample());
        const CostModel model = buildCostModel(*trace);
        trace->layers[model.layers[2].layer].parameterBytes = 3148800;
        trace->layers[model.layers[4].layer].parameterBytes = 0;
        const QString code =
            QString::fromStdString(pythonPlan(*trace, model, planForToggles(model, {"blocks.2", "blocks.4"}), {}));
        QVERIFY2(code.contains(QStringLiteral("    \"blocks.2\": 3148800,\n    \"blocks.4\": None,\n")), qPrintable(code));
    }
};

QTEST_GUILESS_MAIN(tst_PythonPlan)
#include "tst_pythonplan.moc"
