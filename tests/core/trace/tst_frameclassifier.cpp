#include "testsupport.h"

#include "core/trace/frameclassifier.h"

using namespace peaklens;
using peaklens::test::ss;

// Frames as real memory snapshots and Kineto traces name them.
class tst_FrameClassifier : public QObject
{
    Q_OBJECT

private slots:
    void kinds_data()
    {
        QTest::addColumn<QString>("function");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("kind");
        QTest::addRow("unwinder") << QStringLiteral("torch::unwind::unwind()") << QStringLiteral("??") << QStringLiteral("allocator");
        QTest::addRow("traceback") << QStringLiteral("torch::CapturedTraceback::gather(bool, bool, bool)") << QStringLiteral("??") << QStringLiteral("allocator");
        QTest::addRow("caching allocator")
            << QStringLiteral("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)")
            << QStringLiteral("CUDACachingAllocator.cpp") << QStringLiteral("allocator");
        QTest::addRow("empty tensor factory") << QStringLiteral("at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)")
                                              << QStringLiteral("??") << QStringLiteral("allocator");
        QTest::addRow("a template with its return type")
            << QStringLiteral("at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*)")
            << QStringLiteral("??") << QStringLiteral("allocator");
        QTest::addRow("a void template")
            << QStringLiteral("void at::meta::common_checks_baddbmm_bmm<at::meta::structured_bmm>(at::meta::structured_bmm&)")
            << QStringLiteral("??") << QStringLiteral("torch");
        QTest::addRow("generated registration") << QStringLiteral("at::(anonymous namespace)::create_out(c10::ArrayRef<long>)")
                                                << QStringLiteral("RegisterCUDA_0.cpp") << QStringLiteral("dispatcher");
        QTest::addRow("boxing wrapper")
            << QStringLiteral("c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<>>::call()")
            << QStringLiteral("VariableType_3.cpp") << QStringLiteral("dispatcher");
        QTest::addRow("operator entry") << QStringLiteral("at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)")
                                        << QStringLiteral("??") << QStringLiteral("dispatcher");
        QTest::addRow("autograd VariableType")
            << QStringLiteral("torch::autograd::VariableType::(anonymous namespace)::bmm(c10::DispatchKeySet)")
            << QStringLiteral("VariableType_3.cpp") << QStringLiteral("autograd");
        QTest::addRow("autograd engine")
            << QStringLiteral("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&)")
            << QStringLiteral("??") << QStringLiteral("autograd");
        QTest::addRow("CPython eval") << QStringLiteral("_PyEval_EvalFrameDefault") << QStringLiteral("??") << QStringLiteral("interpreter");
        QTest::addRow("CPython call") << QStringLiteral("_PyObject_MakeTpCall") << QStringLiteral("??") << QStringLiteral("interpreter");
        QTest::addRow("Python binding") << QStringLiteral("torch::autograd::THPVariable_mul(_object*, _object*, _object*)")
                                        << QStringLiteral("python_variable_methods.cpp") << QStringLiteral("interpreter");
        QTest::addRow("unsymbolized") << QStringLiteral("??") << QStringLiteral("??") << QStringLiteral("interpreter");
        QTest::addRow("libc start") << QStringLiteral("__libc_start_main") << QStringLiteral("??") << QStringLiteral("system");
        QTest::addRow("thread start") << QStringLiteral("__clone") << QStringLiteral("??") << QStringLiteral("system");
        QTest::addRow("ATen kernel") << QStringLiteral("at::native::sumproduct_pair(at::Tensor const&)") << QStringLiteral("Linear.cpp")
                                     << QStringLiteral("torch");
        QTest::addRow("torch.nn module call") << QStringLiteral("_call_impl")
                                              << QStringLiteral("/x/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py")
                                              << QStringLiteral("torch");
        QTest::addRow("Kineto's relative torch path") << QStringLiteral("_call_impl") << QStringLiteral("torch/nn/modules/module.py")
                                                      << QStringLiteral("torch");
        QTest::addRow("generated inductor code") << QStringLiteral("call") << QStringLiteral("/tmp/torchinductor_bc/ab/cabc.py")
                                                 << QStringLiteral("torch");
        QTest::addRow("a library") << QStringLiteral("einsum") << QStringLiteral("/x/.venv/lib/python3.12/site-packages/einops/einops.py")
                                   << QStringLiteral("library");
        QTest::addRow("the standard library") << QStringLiteral("wait") << QStringLiteral("/usr/lib/python3.11/threading.py")
                                              << QStringLiteral("library");
        QTest::addRow("Kineto's relative standard library") << QStringLiteral("spawn_main") << QStringLiteral("multiprocessing/spawn.py")
                                                            << QStringLiteral("library");
        QTest::addRow("the user's model") << QStringLiteral("forward")
                                          << QStringLiteral("/home/lin/cs336/assignment2-systems/cs336-basics/cs336_basics/model.py")
                                          << QStringLiteral("user");
        QTest::addRow("Kineto's relative user file") << QStringLiteral("main") << QStringLiteral("test_perf_model.py") << QStringLiteral("user");
        QTest::addRow("frozen import machinery") << QStringLiteral("_call_with_frames_removed")
                                                 << QStringLiteral("<frozen importlib._bootstrap>") << QStringLiteral("interpreter");
    }

    void kinds()
    {
        QFETCH(QString, function);
        QFETCH(QString, file);
        QFETCH(QString, kind);
        QCOMPARE(QString::fromUtf8(frameKindName(classifyFrame(Frame{ss(function), ss(file), 0}))), kind);
    }

    void namesOfOperatorsAndNodes_data()
    {
        QTest::addColumn<QString>("function");
        QTest::addColumn<QString>("op");   // empty: none
        QTest::addColumn<QString>("node"); // empty: none
        QTest::addRow("operator call") << QStringLiteral("at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)")
                                       << QStringLiteral("aten::bmm") << QString();
        QTest::addRow("redispatch is not the call") << QStringLiteral("at::_ops::bmm::redispatch(c10::DispatchKeySet)") << QString() << QString();
        QTest::addRow("Kineto operator") << QStringLiteral("aten::linear") << QStringLiteral("aten::linear") << QString();
        QTest::addRow("generated backward node") << QStringLiteral("torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor>&&)")
                                                 << QString() << QStringLiteral("BmmBackward0");
        QTest::addRow("gradient accumulation") << QStringLiteral("torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)")
                                               << QString() << QStringLiteral("AccumulateGrad");
        QTest::addRow("the generic node call") << QStringLiteral("torch::autograd::Node::operator()(std::vector<at::Tensor>&&)")
                                               << QString() << QString();
        QTest::addRow("Kineto backward span") << QStringLiteral("autograd::engine::evaluate_function: MmBackward0") << QString()
                                              << QStringLiteral("MmBackward0");
    }

    void namesOfOperatorsAndNodes()
    {
        QFETCH(QString, function);
        QFETCH(QString, op);
        QFETCH(QString, node);
        const Frame frame{ss(function), "??", 0};
        QCOMPARE(QString::fromStdString(operatorName(frame).value_or("")), op);
        QCOMPARE(QString::fromStdString(autogradNodeName(frame).value_or("")), node);
    }

    void phaseHints_data()
    {
        QTest::addColumn<QString>("function");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("phase");
        QTest::addRow("autograd engine thread") << QStringLiteral("torch::autograd::Engine::thread_main(std::shared_ptr<>)")
                                                << QStringLiteral("??") << int(Phase::Backward);
        QTest::addRow("loss.backward()") << QStringLiteral("backward") << QStringLiteral("/v/site-packages/torch/_tensor.py")
                                         << int(Phase::Backward);
        QTest::addRow("an optimizer's step wrapper") << QStringLiteral("wrapper") << QStringLiteral("/v/site-packages/torch/optim/optimizer.py")
                                                     << int(Phase::Optimizer);
        QTest::addRow("a module call") << QStringLiteral("_call_impl") << QStringLiteral("/v/site-packages/torch/nn/modules/module.py")
                                       << int(Phase::Forward);
        QTest::addRow("a module's forward") << QStringLiteral("forward") << QStringLiteral("/home/me/model.py") << int(Phase::Forward);
        QTest::addRow("user code proves nothing") << QStringLiteral("step") << QStringLiteral("/home/me/optimizer.py") << int(Phase::Other);
    }

    void phaseHints()
    {
        QFETCH(QString, function);
        QFETCH(QString, file);
        QFETCH(int, phase);
        QCOMPARE(int(phaseHint(Frame{ss(function), ss(file), 1})), phase);
    }
};

QTEST_GUILESS_MAIN(tst_FrameClassifier)
#include "tst_frameclassifier.moc"
