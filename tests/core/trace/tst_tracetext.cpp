// SPDX-License-Identifier: Apache-2.0
#include "core/error.h"
#include "core/trace/tracetext.h"
#include "testsupport.h"

#include <QFile>

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

class tst_TraceText : public QObject
{
    Q_OBJECT

private slots:
    void printsWhatItParsed_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("printed");

        QTest::addRow("events take the scope of the range around them")
            << QStringLiteral("begin fwd:blocks.0\nalloc a 256 activation\nend fwd:blocks.0\nfree a @bwd:blocks.0\n")
            << QStringLiteral("meta source.format trace-text\nlane\nlayer blocks\nlayer blocks.0\n"
                              "begin fwd:blocks.0\nalloc 0x7f0000000000 256 activation @fwd:blocks.0\n"
                              "end fwd:blocks.0\nfree 0x7f0000000000 @bwd:blocks.0\n");
        QTest::addRow("absolute and relative times")
            << QStringLiteral("t=1ms alloc a 1KiB\n+2us free a\nalloc b 2 temporary @opt\n")
            << QStringLiteral("meta source.format trace-text\nlane\n"
                              "t=1000000 alloc 0x7f0000000000 1024 unknown @other\n"
                              "t=1002000 free 0x7f0000000000 @other\nalloc 0x7f0000100000 2 temporary @opt\n");
        QTest::addRow("a free of a block allocated before the trace began")
            << QStringLiteral("free 0x1000 4096 activation device=cuda:1 stream=7\n")
            << QStringLiteral("meta source.format trace-text\nlane device=cuda:1 stream=7\n"
                              "free 0x1000 4096 activation device=cuda:1 stream=7 @other\n");
        QTest::addRow("steps, nested ranges, layers with kind and parameters")
            << QStringLiteral("layer net.fc kind=Linear params=4KiB\nbegin step 3\nbegin fwd:net\nbegin fwd:net.fc\n"
                              "end fwd:net.fc\nend fwd:net\nend step 3\n")
            << QStringLiteral("meta source.format trace-text\nlayer net\nlayer net.fc kind=Linear params=4096\n"
                              "begin step 3\nbegin fwd:net\nbegin fwd:net.fc\nend fwd:net.fc\nend fwd:net\n"
                              "end step 3\n");
        QTest::addRow("segments, kernels, CPU memory and stacks")
            << QStringLiteral("reserve s 2MiB\nkernel gemm%20tn 5us stream=2\n"
                              "alloc a 64 input device=cpu stack=main@train%20loop.py:3;load@data.py:10\n"
                              "unreserve s\n")
            << QStringLiteral("meta source.format trace-text\nlane\nlane stream=2\nlane device=cpu\n"
                              "reserve 0x7f0000000000 2097152\nkernel gemm%20tn 5000 stream=2\n"
                              "alloc 0x7f0000100000 64 input @other device=cpu "
                              "stack=main@train%20loop.py:3;load@data.py:10\n"
                              "unreserve 0x7f0000000000 2097152 device=cuda:0 stream=0\n");
        QTest::addRow("memory pools: a CUDA graph's and a MemPool's lanes beside the default one")
            << QStringLiteral("reserve g 2MiB pool=1,0\nalloc a 1MiB pool=1,0\nalloc b 64 stream=5 pool=0,1\n"
                              "alloc c 64\nfree a\n")
            << QStringLiteral("meta source.format trace-text\nlane pool=1,0\nlane stream=5 pool=0,1\nlane\n"
                              "reserve 0x7f0000000000 2097152 pool=1,0\n"
                              "alloc 0x7f0000100000 1048576 unknown @other pool=1,0\n"
                              "alloc 0x7f0000200000 64 unknown @other stream=5 pool=0,1\n"
                              "alloc 0x7f0000300000 64 unknown @other\nfree 0x7f0000100000 @other\n");
        QTest::addRow("stages: named spans, overlapping, one of them the optimizer's")
            << QStringLiteral("begin other stage=nccl:all%20reduce\nalloc a 64\nbegin opt stage=Optimizer.step%23AdamW.step\n"
                              "end other stage=nccl:all%20reduce\nend opt stage=Optimizer.step%23AdamW.step\n")
            << QStringLiteral("meta source.format trace-text\nlane\nbegin other stage=nccl:all%20reduce\n"
                              "alloc 0x7f0000000000 64 unknown @other\nbegin opt stage=Optimizer.step%23AdamW.step\n"
                              "end other stage=nccl:all%20reduce\nend opt stage=Optimizer.step%23AdamW.step\n");
        QTest::addRow("metadata keeps its spaces")
            << QStringLiteral("meta description  A small   test \n")
            << QStringLiteral("meta description A small   test\nmeta source.format trace-text\n");
    }
    void printsWhatItParsed()
    {
        QFETCH(QString, text);
        QFETCH(QString, printed);
        const auto trace = parseTraceText(ss(text));
        QCOMPARE(qs(printTraceText(*trace)), printed);
        // What it prints parses back to the same trace.
        QVERIFY(*parseTraceText(printTraceText(*trace)) == *trace);
    }

    void theBundledSampleRoundTrips()
    {
        QFile file(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto trace = parseTraceText(file.readAll().toStdString());
        QVERIFY(trace->events.size() > 100);
        QVERIFY(*parseTraceText(printTraceText(*trace)) == *trace);
    }

    // Only the escapes the printer writes are decoded: %1B stays three characters, never ESC.
    void decodesOnlyDocumentedEscapes_data()
    {
        QTest::addColumn<QString>("written");
        QTest::addColumn<QString>("name");
        QTest::addRow("space and semicolon") << QStringLiteral("a%20b%3Bc") << QStringLiteral("a b;c");
        QTest::addRow("lower-case hex") << QStringLiteral("a%3db") << QStringLiteral("a=b");
        QTest::addRow("terminal escape") << QStringLiteral("a%1B[2Jb") << QStringLiteral("a%1B[2Jb");
        QTest::addRow("half a UTF-8 sequence") << QStringLiteral("a%C3") << QStringLiteral("a%C3");
        QTest::addRow("percent at the end") << QStringLiteral("a%2") << QStringLiteral("a%2");
    }
    void decodesOnlyDocumentedEscapes()
    {
        QFETCH(QString, written);
        QFETCH(QString, name);
        const auto trace = parseTraceText("kernel " + ss(written) + " 3us\n");
        QCOMPARE(qs(trace->kernelNames.at(0)), name);
    }

    void rejectsWhatItDoesNotUnderstand_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("problem");
        QTest::addRow("unknown statement") << QStringLiteral("# c\nallocate a 5\n") << 2
                                           << QStringLiteral("unknown statement \"allocate\"");
        QTest::addRow("size that is not one")
            << QStringLiteral("alloc a many\n") << 1 << QStringLiteral("\"many\" is not a size");
        QTest::addRow("zero size") << QStringLiteral("alloc a 0\n") << 1 << QStringLiteral("is not a size");
        QTest::addRow("unknown category") << QStringLiteral("alloc a 5 weights\n") << 1 << QStringLiteral("not a category");
        QTest::addRow("double allocation") << QStringLiteral("alloc a 5\nalloc a 5\n") << 2
                                           << QStringLiteral("already allocated");
        QTest::addRow("free of a block never seen") << QStringLiteral("free z\n") << 1 << QStringLiteral("never allocated");
        QTest::addRow("second free") << QStringLiteral("alloc a 5\nfree a\nfree a\n") << 3 << QStringLiteral("is not allocated");
        QTest::addRow("time going backwards")
            << QStringLiteral("t=5ms alloc a 1\nt=1ms free a\n") << 2 << QStringLiteral("time goes backwards");
        QTest::addRow("end without begin") << QStringLiteral("end fwd:x\n") << 1 << QStringLiteral("no matching begin");
        QTest::addRow("range never ended") << QStringLiteral("begin bwd:x\nalloc a 1\n") << 1 << QStringLiteral("never ended");
        QTest::addRow("step never ended") << QStringLiteral("begin step 1\n") << 1 << QStringLiteral("step 1 is never ended");
        QTest::addRow("bad scope") << QStringLiteral("alloc a 1 @sideways:x\n") << 1 << QStringLiteral("not a scope");
        QTest::addRow("bad device") << QStringLiteral("alloc a 1 device=tpu:0\n") << 1 << QStringLiteral("not a device");
        QTest::addRow("option that does not apply")
            << QStringLiteral("alloc a 1 colour=red\n") << 1 << QStringLiteral("\"colour=\" does not apply");
        QTest::addRow("time overflow") << QStringLiteral("t=9e18 alloc a 1\n+9e18 free a\n") << 2
                                       << QStringLiteral("past what PeakLens can represent");
        QTest::addRow("implausible size") << QStringLiteral("alloc a 1e18\n") << 1 << QStringLiteral("larger than any device");
        QTest::addRow("only a scope (found by fuzzing)") << QStringLiteral("t=1 @fwd:x\n") << 1 << QStringLiteral("no statement");
        QTest::addRow("layer path nested absurdly deep (found by fuzzing)")
            << (QStringLiteral("alloc a 1 @fwd:x") + QString(5000, QLatin1Char('.')) + QLatin1Char('\n')) << 1
            << QStringLiteral("nests deeper than 1024");
        QTest::addRow("bad frame") << QStringLiteral("alloc a 1 stack=main\n") << 1 << QStringLiteral("not a frame");
        QTest::addRow("bad pool") << QStringLiteral("alloc a 1 pool=1\n") << 1 << QStringLiteral("not a memory pool");
        QTest::addRow("negative pool") << QStringLiteral("alloc a 1 pool=-1,0\n") << 1 << QStringLiteral("not a memory pool");
    }
    void rejectsWhatItDoesNotUnderstand()
    {
        QFETCH(QString, text);
        QFETCH(int, line);
        QFETCH(QString, problem);
        try {
            parseTraceText(ss(text));
            QFAIL("the text was accepted");
        } catch (const TraceTextError &error) {
            QCOMPARE(error.line(), line);
            QVERIFY2(qs(error.what()).contains(problem), error.what());
        }
    }
};

QTEST_GUILESS_MAIN(tst_TraceText)
#include "tst_tracetext.moc"
