// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/analysis/allocationsites.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

// A stack written outermost first, one "function|file|line" per line, as the frames of
// real snapshots read (tests/data/real).
std::uint32_t stackFrom(StackTable &table, const QString &text)
{
    std::vector<Frame> frames;
    for (const QString &line : text.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QStringList parts = line.trimmed().split(QLatin1Char('|'));
        frames.push_back(Frame{ss(parts.value(0)), ss(parts.value(1)), parts.value(2).toInt()});
    }
    return table.internStack(frames);
}

const char *const kMain =
    "_start|??|0\n__libc_start_main|??|0\nPy_BytesMain|??|0\n<module>|/p/scripts/train.py|249\n"
    "memory_profile|/p/scripts/train.py|142\n_wrapped_call_impl|/v/site-packages/torch/nn/modules/module.py|1779\n"
    "_call_impl|/v/site-packages/torch/nn/modules/module.py|1790\n_PyEval_EvalFrameDefault|??|0\n"
    "forward|/p/cs336_basics/model.py|253\n_call_impl|/v/site-packages/torch/nn/modules/module.py|1790\n"
    "forward|/p/cs336_basics/model.py|399\n";
const char *const kAllocator =
    "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)|??|0\n"
    "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long)|CUDACachingAllocator.cpp|0\n"
    "torch::cuda::(anonymous namespace)::gather_with_cpp()|memory_snapshot.cpp|0\n"
    "torch::CapturedTraceback::gather(bool, bool, bool)|??|0\ntorch::unwind::unwind()|??|0\n";

} // namespace

class tst_AllocationSites : public QObject
{
    Q_OBJECT

private slots:
    void sitesAreNamedByTheFirstUserFrame_data()
    {
        QTest::addColumn<QString>("stack"); // outermost first
        QTest::addColumn<QString>("site");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("callers");
        QTest::addRow("user code under a library and the dispatcher")
            << QString::fromUtf8(kMain)
                   + QStringLiteral(
                       "forward|/p/cs336_basics/model.py|39\n"
                       "einsum|/v/site-packages/einops/einops.py|939\n"
                       "einsum|/v/site-packages/torch/functional.py|373\n"
                       "_PyObject_MakeTpCall|??|0\ntorch::autograd::THPVariable_einsum(_object*)|python_torch_functions_0.cpp|0\n"
                       "at::_ops::einsum::call(std::basic_string_view<char>)|??|0\n"
                       "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)|??|0\n"
                       "at::(anonymous namespace)::create_out(c10::ArrayRef<long>)|RegisterCUDA_0.cpp|0\n")
                   + QString::fromUtf8(kAllocator)
            << QStringLiteral("forward (model.py:39)") << QStringLiteral("user")
            << QStringLiteral("forward (model.py:399), forward (model.py:253)");
        QTest::addRow("the autograd engine's thread: operator and node")
            << QStringLiteral("__clone|??|0\ntorch::autograd::Engine::thread_main(std::shared_ptr<>)|??|0\n"
                              "torch::autograd::Engine::evaluate_function(std::shared_ptr<>&)|??|0\n"
                              "torch::autograd::Node::operator()(std::vector<at::Tensor>&&)||0\n"
                              "torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor>&&)|??|0\n"
                              "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)|??|0\n"
                              "at::_ops::bmm::redispatch(c10::DispatchKeySet)|??|0\n")
                   + QString::fromUtf8(kAllocator)
            << QStringLiteral("aten::bmm in BmmBackward0") << QStringLiteral("operator") << QString();
        QTest::addRow("only a library's Python")
            << QStringLiteral("train|/v/site-packages/transformers/trainer.py|2100\nforward|/v/site-packages/transformers/models/"
                              "llama/modeling_llama.py|300\n")
                   + QString::fromUtf8(kAllocator)
            << QStringLiteral("forward (modeling_llama.py:300)") << QStringLiteral("library") << QString();
        QTest::addRow("a library's model under its hooks and decorators, recorded on Windows")
            << QStringLiteral("train|C:\\v\\Lib\\site-packages\\transformers\\trainer.py|2100\n"
                              "forward|C:\\v\\Lib\\site-packages\\transformers\\models\\opt\\modeling_opt.py|880\n"
                              "new_forward|C:\\v\\Lib\\site-packages\\accelerate\\hooks.py|166\n"
                              "wrapper|C:\\v\\Lib\\site-packages\\transformers\\utils\\generic.py|918\n")
                   + QString::fromUtf8(kAllocator)
            << QStringLiteral("forward (modeling_opt.py:880)") << QStringLiteral("library") << QString();
        QTest::addRow("only the allocator") << QString::fromUtf8(
            kAllocator) << QStringLiteral("at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)")
                                            << QStringLiteral("other") << QString();
    }

    void sitesAreNamedByTheFirstUserFrame()
    {
        QFETCH(QString, stack);
        QFETCH(QString, site);
        QFETCH(QString, kind);
        QFETCH(QString, callers);
        StackTable table;
        const std::uint32_t id = stackFrom(table, stack);
        const AllocationSites sites(table);
        QCOMPARE(qs(sites.label(sites.siteOf(id))), site);
        QCOMPARE(QString::fromUtf8(siteKindName(sites.site(sites.siteOf(id)).kind)), kind);
        QStringList names;
        for (const std::string &caller : sites.callers(id, 2))
            names << qs(caller);
        QCOMPARE(names.join(QStringLiteral(", ")), callers);
    }

    void stacksThatDifferOnlyInMachineryShareASite()
    {
        StackTable table;
        const QString user = QString::fromUtf8(kMain) + QStringLiteral("forward|/p/cs336_basics/model.py|39\n");
        const std::uint32_t a = stackFrom(table, user + QString::fromUtf8(kAllocator));
        const std::uint32_t b = stackFrom(table, user + QStringLiteral("at::_ops::mm::call(at::Tensor const&)|??|0\n")
                                                     + QString::fromUtf8(kAllocator));
        const std::uint32_t c =
            stackFrom(table, QString::fromUtf8(kMain) + QStringLiteral("forward|/p/cs336_basics/model.py|40\n")
                                 + QString::fromUtf8(kAllocator));
        const AllocationSites sites(table);
        QVERIFY(a != b);
        QCOMPARE(sites.siteOf(a), sites.siteOf(b));
        QVERIFY(sites.siteOf(a) != sites.siteOf(c));
        QCOMPARE(sites.siteOf(StackTable::kEmptyStack), AllocationSites::kNoSite);
        QCOMPARE(qs(sites.label(AllocationSites::kNoSite)), QStringLiteral("(no stack)"));
        QCOMPARE(qs(sites.location(sites.siteOf(a))), QStringLiteral("forward (/p/cs336_basics/model.py:39)"));
    }
};

QTEST_GUILESS_MAIN(tst_AllocationSites)
#include "tst_allocationsites.moc"
