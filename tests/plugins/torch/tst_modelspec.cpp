// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/error.h"
#include "plugins/torch/modelspec.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QTemporaryDir>

using namespace peaklens;
using namespace peaklens::replay;
using test::qs;
using test::ss;

class tst_ModelSpec : public QObject
{
    Q_OBJECT

private slots:
    void builtinDefaults_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("layers");
        QTest::addRow("gpt") << QStringLiteral("gpt") << 4;
        QTest::addRow("mlp") << QStringLiteral("mlp") << 8;
        QTest::addRow("cnn") << QStringLiteral("cnn") << 4;
    }

    void builtinDefaults()
    {
        QFETCH(QString, name);
        QFETCH(int, layers);
        const ModelSpec spec = builtinSpec(ss(name));
        QCOMPARE(spec.layers, layers);
        QCOMPARE(qs(modelKindName(spec.kind)), name);
        // What a trace stores as its replay spec reads back to the same spec.
        const ModelSpec again = parseModelSpec(spec.toJson(), "again", ".");
        QCOMPARE(qs(again.toJson().dump()), qs(spec.toJson().dump()));
    }

    void overridesAreRead()
    {
        const ModelSpec spec =
            parseModelSpec(nlohmann::json::parse(R"({"model": "gpt", "layers": 12, "d_model": 768, "heads": 12, "seq": 1024,
                                      "vocab": 50257, "batch": 8, "dropout": 0.0, "lr": 0.0003, "seed": 7})"),
                           "spec.json", ".");
        QCOMPARE(spec.layers, 12);
        QCOMPARE(spec.dModel, 768);
        QCOMPARE(spec.heads, 12);
        QCOMPARE(spec.seq, 1024);
        QCOMPARE(spec.vocab, 50257);
        QCOMPARE(spec.batch, 8);
        QCOMPARE(spec.dropout, 0.0);
        QCOMPARE(spec.learningRate, 0.0003);
        QCOMPARE(spec.seed, std::uint64_t(7));
    }

    void torchScriptBlocksResolveAgainstTheSpec()
    {
        const ModelSpec spec = parseModelSpec(
            nlohmann::json::parse(R"({"model": "torchscript", "blocks": ["a.pt", {"name": "head", "file": "/abs/h.pt"}],
                                      "input": {"shape": [4, 16], "dtype": "int64"}, "classes": 100})"),
            "spec.json", "/models/run");
        QCOMPARE(spec.blocks.size(), std::size_t(2));
        QCOMPARE(qs(spec.blocks[0].name), QStringLiteral("blocks.0"));
        QCOMPARE(qs(spec.blocks[0].file), QStringLiteral("/models/run/a.pt"));
        QCOMPARE(qs(spec.blocks[1].name), QStringLiteral("head"));
        QCOMPARE(qs(spec.blocks[1].file), QStringLiteral("/abs/h.pt"));
        QVERIFY(spec.integerInput);
        QCOMPARE(qs(spec.loss), QStringLiteral("cross_entropy"));
        QCOMPARE(spec.batch, 4);
    }

    void badSpecsSayWhatIsWrong_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        QTest::addRow("not an object") << QStringLiteral("[1, 2]") << QStringLiteral("must be a JSON object");
        QTest::addRow("no model") << QStringLiteral("{}") << QStringLiteral("\"model\" is missing");
        QTest::addRow("unknown model") << QStringLiteral(R"({"model": "lstm"})")
                                       << QStringLiteral("one of cnn, gpt, mlp, torchscript");
        QTest::addRow("typo in a key") << QStringLiteral(R"({"model": "gpt", "d_modle": 64})")
                                       << QStringLiteral("unknown key \"d_modle\"");
        QTest::addRow("key of another model")
            << QStringLiteral(R"({"model": "mlp", "heads": 4})") << QStringLiteral("unknown key \"heads\"");
        QTest::addRow("heads do not divide") << QStringLiteral(R"({"model": "gpt", "d_model": 100, "heads": 3})")
                                             << QStringLiteral("must be a multiple of \"heads\"");
        QTest::addRow("zero layers") << QStringLiteral(R"({"model": "gpt", "layers": 0})")
                                     << QStringLiteral("\"layers\" is 0; it must lie between 1 and 4096");
        QTest::addRow("huge width") << QStringLiteral(R"({"model": "mlp", "d_model": 10000000})")
                                    << QStringLiteral("\"d_model\" is 10000000");
        QTest::addRow("fractional layers") << QStringLiteral(R"({"model": "cnn", "layers": 2.5})")
                                           << QStringLiteral("\"layers\" must be a whole number");
        QTest::addRow("dropout of one") << QStringLiteral(R"({"model": "gpt", "dropout": 1.0})")
                                        << QStringLiteral("\"dropout\" must lie between 0");
        QTest::addRow("string batch") << QStringLiteral(R"({"model": "gpt", "batch": "8"})")
                                      << QStringLiteral("\"batch\" must be a whole number");
        QTest::addRow("script without blocks")
            << QStringLiteral(R"({"model": "torchscript"})") << QStringLiteral("needs \"blocks\"");
        QTest::addRow("script without input")
            << QStringLiteral(R"({"model": "torchscript", "blocks": ["a.pt"]})") << QStringLiteral("needs \"input\"");
        QTest::addRow("script bad shape") << QStringLiteral(
            R"({"model": "torchscript", "blocks": ["a.pt"], "input": {"shape": [0, 3]}})")
                                          << QStringLiteral("sizes must be whole numbers from 1");
        QTest::addRow("script huge input") << QStringLiteral(
            R"({"model": "torchscript", "blocks": ["a.pt"], "input": {"shape": [1048576, 1048576, 4]}})")
                                           << QStringLiteral("more than 2^40 elements");
        QTest::addRow("script duplicate names") << QStringLiteral(
            R"({"model": "torchscript", "blocks": [{"name": "x", "file": "a.pt"}, {"name": "x", "file": "b.pt"}],
                                 "input": {"shape": [2]}})")
                                                << QStringLiteral("two blocks are named \"x\"");
        QTest::addRow("script bad dtype") << QStringLiteral(
            R"({"model": "torchscript", "blocks": ["a.pt"], "input": {"shape": [2], "dtype": "float16"}})")
                                          << QStringLiteral("\"dtype\" must be one of float32, int64");
    }

    void badSpecsSayWhatIsWrong()
    {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        try {
            parseModelSpec(nlohmann::json::parse(ss(json)), "spec.json", ".");
            QFAIL("the spec was accepted");
        } catch (const Error &error) {
            const QString message = qs(error.what());
            QVERIFY2(message.startsWith(QStringLiteral("spec.json: ")) || message.startsWith(QStringLiteral("\"input\": ")),
                     qPrintable(message));
            QVERIFY2(message.contains(expected), qPrintable(message));
        }
    }

    void unreadableSpecFiles()
    {
        QVERIFY_THROWS_EXCEPTION(FileError, readModelSpec("/nonexistent/spec.json"));
        QTemporaryDir directory;
        const QString path = directory.filePath(QStringLiteral("broken.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"model\": \"gpt\", ");
        file.close();
        try {
            readModelSpec(ss(path));
            QFAIL("a truncated spec was accepted");
        } catch (const FileError &error) {
            QVERIFY2(qs(error.what()).contains(QStringLiteral("not valid JSON")), error.what());
        }
    }
};

QTEST_GUILESS_MAIN(tst_ModelSpec)
#include "tst_modelspec.moc"
