// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/trace/category.h"

#include <QFile>
#include <QRegularExpression>

using namespace peaklens;
using namespace peaklens::test;

Q_DECLARE_METATYPE(Category)

namespace {

// One training step; each row puts the allocation and free of block x somewhere in it.
QString stepWith(const QString &forward, const QString &backward, const QString &optimizer, const QString &after,
                 bool lifetimeMeta = true)
{
    return (lifetimeMeta ? QStringLiteral("meta categories lifetime\n") : QString())
           + QStringLiteral("begin step 0\n+10 begin fwd:a\n") + forward + QStringLiteral("\n+10 end fwd:a\n")
           + QStringLiteral("+10 begin bwd:a\n") + backward + QStringLiteral("\n+10 end bwd:a\n")
           + QStringLiteral("+10 begin opt\n") + optimizer + QStringLiteral("\n+10 end opt\n+10 end step 0\n") + after
           + QStringLiteral("\n");
}

} // namespace

class tst_LifetimeCategories : public QObject
{
    Q_OBJECT

private slots:
    void classify_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<Category>("expected");

        const QString alloc = QStringLiteral("+1 alloc x 1MiB");
        const QString free = QStringLiteral("+1 free x");
        QTest::newRow("forward, freed in the forward") << stepWith(alloc + u'\n' + free, {}, {}, {}) << Category::Temporary;
        QTest::newRow("forward, freed in the backward") << stepWith(alloc, free, {}, {}) << Category::Activation;
        // A library's workspace made at its first call and kept: not what the backward needs.
        QTest::newRow("forward, kept past its step") << stepWith(alloc, {}, {}, {}) << Category::Unknown;
        QTest::newRow("backward, freed in the backward") << stepWith({}, alloc + u'\n' + free, {}, {}) << Category::Temporary;
        // zero_grad(set_to_none=True) frees the gradients in the step, after the backward.
        QTest::newRow("backward, freed in the optimizer") << stepWith({}, alloc, free, {}) << Category::Gradient;
        QTest::newRow("backward, kept past the step") << stepWith({}, alloc, {}, free) << Category::Gradient;
        QTest::newRow("optimizer, kept") << stepWith({}, {}, alloc, {}) << Category::OptimizerState;
        QTest::newRow("optimizer, freed in the step") << stepWith({}, {}, alloc + u'\n' + free, {}) << Category::Temporary;
        QTest::newRow("outside every range") << stepWith({}, {}, {}, alloc) << Category::Unknown;
        QTest::newRow("before the first step, kept") << alloc + u'\n' + stepWith({}, {}, {}, {}) << Category::Parameter;
        QTest::newRow("before the first step, freed in it") << alloc + u'\n' + stepWith({}, free, {}, {}) << Category::Unknown;
        QTest::newRow("before the first step, freed by the optimizer")
            << alloc + u'\n' + stepWith({}, {}, free, {}) << Category::OptimizerState;
        QTest::newRow("a known category stays")
            << stepWith(QStringLiteral("+1 alloc x 1MiB parameter"), {}, {}, {}) << Category::Parameter;
        QTest::newRow("without the meta key nothing changes") << stepWith(alloc, free, {}, {}, false) << Category::Unknown;
    }

    void classify()
    {
        QFETCH(QString, text);
        QFETCH(Category, expected);
        const auto trace = traceFrom(text);
        QVERIFY(!trace->events.empty());
        for (std::size_t i = 0; i < trace->events.size(); ++i)
            QCOMPARE(trace->events.category(i), expected); // the free follows its allocation
    }

    // Without an optimizer range the backward pass ends with the step's last backward range:
    // a block made in one layer's backward and freed in another's is autograd's own; one
    // that outlives them all is a gradient, though the step frees it.
    void theLastBackwardRangeEndsTheBackwardPass()
    {
        const auto trace = traceFrom(QStringLiteral("meta categories lifetime\n"
                                                    "begin step 0\n+1 begin fwd:a\n+1 end fwd:a\n"
                                                    "+1 begin bwd:b\n+1 alloc t 1MiB\n+1 alloc g 1MiB\n+1 end bwd:b\n"
                                                    "+1 begin bwd:a\n+1 free t\n+1 end bwd:a\n"
                                                    "+1 free g\n+1 end step 0\n"));
        QCOMPARE(trace->events.category(0), Category::Temporary);
        QCOMPARE(trace->events.category(1), Category::Gradient);
    }

    // Without steps, the next forward ends a backward allocation's "step".
    void withoutStepsTheNextForwardEndsTheBackward()
    {
        const auto freedSooner = traceFrom(QStringLiteral("meta categories lifetime\n"
                                                          "begin bwd:a\nalloc g 1MiB\n+1 free g\nend bwd:a\n"
                                                          "+10 begin fwd:a\nend fwd:a\n"));
        QCOMPARE(freedSooner->events.category(0), Category::Temporary);
        const auto kept = traceFrom(QStringLiteral("meta categories lifetime\n"
                                                   "begin bwd:a\nalloc g 1MiB\nend bwd:a\n"
                                                   "+10 begin fwd:a\n+1 free g\nend fwd:a\n"));
        QCOMPARE(kept->events.category(0), Category::Gradient);
        QCOMPARE(kept->events.category(1), Category::Gradient);
    }

    // The modelled training step knows every block's category. With them stripped, the
    // lifetime rules give each allocation back its category, except two that only their
    // source can tell: the input batch (made outside a range, like other memory: unknown)
    // and autograd's own short-lived buffers (temporaries of the backward).
    void modelledStepWithoutCategoriesGetsThemBack()
    {
        QFile file(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        const auto truth = traceFrom(text);
        static const QRegularExpression category(
            QStringLiteral(" (parameter|optimizer_state|input|temporary|activation|gradient|autograd_detail|unknown)(?= |$)"),
            QRegularExpression::MultilineOption);
        QString stripped = text;
        stripped.remove(category);
        const auto classified = traceFrom(QStringLiteral("meta categories lifetime\n") + stripped);
        QCOMPARE(classified->events.size(), truth->events.size());
        std::size_t sourceOnly = 0;
        for (std::size_t i = 0; i < truth->events.size(); ++i) {
            Category expected = truth->events.category(i);
            if (expected == Category::Input || expected == Category::AutogradDetail) {
                expected = expected == Category::Input ? Category::Unknown : Category::Temporary;
                ++sourceOnly;
            }
            if (classified->events.category(i) != expected)
                QFAIL(qPrintable(QStringLiteral("event %1: %2 instead of %3")
                                     .arg(i)
                                     .arg(qs(std::string(categoryName(classified->events.category(i)))))
                                     .arg(qs(std::string(categoryName(expected))))));
        }
        QVERIFY(sourceOnly > 0);
        QVERIFY(sourceOnly * 4 < truth->events.size()); // 444 of 524 come back exactly
    }
};

QTEST_GUILESS_MAIN(tst_LifetimeCategories)
#include "tst_lifetimecategories.moc"
