// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/import/spanstacks.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

class tst_SpanStacks : public QObject
{
    Q_OBJECT

private slots:
    void framesFromSpanNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("frame"); // function|file|line
        QTest::addRow("a Python function") << QStringLiteral("transformers/models/qwen2/modeling_qwen2.py(150): forward")
                                           << QStringLiteral("forward|transformers/models/qwen2/modeling_qwen2.py|150");
        QTest::addRow("a module-level frame") << QStringLiteral("<string>(1): <module>") << QStringLiteral("<module>|<string>|1");
        QTest::addRow("a built-in") << QStringLiteral("<built-in method linear of PyCapsule object at 0x7d6a9b3c7cc0>")
                                    << QStringLiteral("<built-in method linear of PyCapsule object at 0x7d6a9b3c7cc0>||0");
        QTest::addRow("an operator") << QStringLiteral("aten::addmm") << QStringLiteral("aten::addmm||0");
        QTest::addRow("parentheses that are not a line") << QStringLiteral("f(x): y") << QStringLiteral("f(x): y||0");
    }

    void framesFromSpanNames()
    {
        QFETCH(QString, name);
        QFETCH(QString, frame);
        const Frame f = SpanStacks::frameOf(ss(name));
        QCOMPARE(qs(f.function) + QLatin1Char('|') + qs(f.file) + QLatin1Char('|') + QString::number(f.line), frame);
    }

    // An allocation's stack is the spans open around it on its thread, outermost first.
    void stacksAreTheSpansAroundEachEvent()
    {
        StackTable stacks;
        SpanStacks spans;
        const std::uint32_t main = stacks.internFrame(Frame{"main", "train.py", 10});
        const std::uint32_t forward = stacks.internFrame(Frame{"forward", "model.py", 39});
        const std::uint32_t mm = stacks.internFrame(Frame{"aten::mm", "", 0});
        spans.add(0, 0, 100, main);
        spans.add(0, 10, 50, forward);
        spans.add(0, 20, 30, mm);
        spans.add(0, 60, 70, mm);      // directly under main
        spans.add(1, 0, 100, forward); // another thread's
        std::vector<MemoryEvent> events;
        for (std::int64_t t : {5, 25, 40, 50, 65, 150})
            events.push_back(MemoryEvent{t + 1000, 64});
        spans.assign(0, events, stacks, 1000);
        QStringList described;
        for (const MemoryEvent &event : events) {
            QStringList names;
            for (std::uint32_t f : stacks.framesOf(event.stack))
                names << qs(stacks.frames()[f].function);
            described << names.join(QLatin1Char('<'));
        }
        QCOMPARE(described.join(QStringLiteral(" | ")),
                 QStringLiteral("main | aten::mm<forward<main | forward<main | main | aten::mm<main | "));
    }
};

QTEST_GUILESS_MAIN(tst_SpanStacks)
#include "tst_spanstacks.moc"
