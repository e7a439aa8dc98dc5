// SPDX-License-Identifier: Apache-2.0
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
        QTest::addRow("unwinder") << QStringLiteral("torch::unwind::unwind()") << QStringLiteral("??")
                                  << QStringLiteral("allocator");
        QTest::addRow("traceback") << QStringLiteral("torch::CapturedTraceback::gather(bool, bool, bool)") << QStringLiteral("??")
                                   << QStringLiteral("allocator");
        QTest::addRow("caching allocator") << QStringLiteral(
            "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)")
                                           << QStringLiteral("CUDACachingAllocator.cpp") << QStringLiteral("allocator");
        QTest::addRow("empty tensor factory")
            << QStringLiteral("at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)") << QStringLiteral("??")
            << QStringLiteral("allocator");
        QTest::addRow("a template with its return type")
            << QStringLiteral("at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*)")
            << QStringLiteral("??") << QStringLiteral("allocator");
        QTest::addRow("a void template") << QStringLiteral(
            "void at::meta::common_checks_baddbmm_bmm<at::meta::structured_bmm>(at::meta::structured_bmm&)")
                                         << QStringLiteral("??") << QStringLiteral("torch");
        QTest::addRow("generated registration") << QStringLiteral("at::(anonymous namespace)::create_out(c10::ArrayRef<long>)")
                                                << QStringLiteral("RegisterCUDA_0.cpp") << QStringLiteral("dispatcher");
        QTest::addRow("boxing wrapper") << QStringLiteral(
            "c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<>>::call()")
                                        << QStringLiteral("VariableType_3.cpp") << QStringLiteral("dispatcher");
        QTest::addRow("operator entry") << QStringLiteral("at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)")
                                        << QStringLiteral("??") << QStringLiteral("dispatcher");
        QTest::addRow("autograd VariableType")
            << QStringLiteral("torch::autograd::VariableType::(anonymous namespace)::bmm(c10::DispatchKeySet)")
            << QStringLiteral("VariableType_3.cpp") << QStringLiteral("autograd");
        QTest::addRow("autograd engine") << QStringLiteral(
            "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&)")
                                         << QStringLiteral("??") << QStringLiteral("autograd");
        QTest::addRow("CPython eval") << QStringLiteral("_PyEval_EvalFrameDefault") << QStringLiteral("??")
                                      << QStringLiteral("interpreter");
        QTest::addRow("CPython call") << QStringLiteral("_PyObject_MakeTpCall") << QStringLiteral("??")
                                      << QStringLiteral("interpreter");
        QTest::addRow("Python binding") << QStringLiteral("torch::autograd::THPVariable_mul(_object*, _object*, _object*)")
                                        << QStringLiteral("python_variable_methods.cpp") << QStringLiteral("interpreter");
        QTest::addRow("unsymbolized") << QStringLiteral("??") << QStringLiteral("??") << QStringLiteral("interpreter");
        QTest::addRow("libc start") << QStringLiteral("__libc_start_main") << QStringLiteral("??") << QStringLiteral("system");
        QTest::addRow("thread start") << QStringLiteral("__clone") << QStringLiteral("??") << QStringLiteral("system");
        QTest::addRow("ATen kernel") << QStringLiteral("at::native::sumproduct_pair(at::Tensor const&)")
                                     << QStringLiteral("Linear.cpp") << QStringLiteral("torch");
        QTest::addRow("torch.nn module call")
            << QStringLiteral("_call_impl") << QStringLiteral("/x/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py")
            << QStringLiteral("torch");
        QTest::addRow("Kineto's relative torch path")
            << QStringLiteral("_call_impl") << QStringLiteral("torch/nn/modules/module.py") << QStringLiteral("torch");
        QTest::addRow("generated inductor code")
            << QStringLiteral("call") << QStringLiteral("/tmp/torchinductor_bc/ab/cabc.py") << QStringLiteral("torch");
        QTest::addRow("a library") << QStringLiteral("einsum")
                                   << QStringLiteral("/x/.venv/lib/python3.12/site-packages/einops/einops.py")
                                   << QStringLiteral("library");
        QTest::addRow("the standard library")
            << QStringLiteral("wait") << QStringLiteral("/usr/lib/python3.11/threading.py") << QStringLiteral("library");
        QTest::addRow("Kineto's relative standard library")
            << QStringLiteral("spawn_main") << QStringLiteral("multiprocessing/spawn.py") << QStringLiteral("library");
        QTest::addRow("the user's model") << QStringLiteral(
            "forward") << QStringLiteral("/home/lin/cs336/assignment2-systems/cs336-basics/cs336_basics/model.py")
                                          << QStringLiteral("user");
        QTest::addRow("Kineto's relative user file")
            << QStringLiteral("main") << QStringLiteral("test_perf_model.py") << QStringLiteral("user");
        QTest::addRow("frozen import machinery")
            << QStringLiteral("_call_with_frames_removed") << QStringLiteral("<frozen importlib._bootstrap>")
            << QStringLiteral("interpreter");
        // Frames of real snapshots recorded on Windows (tests/data/real/snapshot_windows_*).
        QTest::addRow("Windows: torch's module call")
            << QStringLiteral("_call_impl")
            << QStringLiteral("D:\\Dev\\assignment2-systems\\.venv\\Lib\\site-packages\\torch\\nn\\modules\\module.py")
            << QStringLiteral("torch");
        QTest::addRow("Windows: the user's model")
            << QStringLiteral("forward") << QStringLiteral("D:\\Dev\\assignment2-systems\\cs336-basics\\cs336_basics\\model.py")
            << QStringLiteral("user");
        QTest::addRow("Windows: transformers' decorator")
            << QStringLiteral("wrapper")
            << QStringLiteral("C:\\research\\DeComFL\\.venv\\lib\\site-packages\\transformers\\utils\\generic.py")
            << QStringLiteral("library");
        QTest::addRow("Windows: the standard library of a uv Python")
            << QStringLiteral("deepcopy")
            << QStringLiteral(
                   "C:\\Users\\Zidong\\AppData\\Roaming\\uv\\python\\cpython-3.10.19-windows-x86_64-none\\lib\\copy.py")
            << QStringLiteral("library");
        QTest::addRow("Windows: the user's script")
            << QStringLiteral("train_one_step") << QStringLiteral("C:\\research\\DeComFL\\cezo_fl\\server.py")
            << QStringLiteral("user");
        // Native frames of real Linux snapshots (snapshot_state_only_*): CPython and glibc
        // by their sources, and names a stripped build gives them.
        QTest::addRow("CPython by its source")
            << QStringLiteral("binary_op1") << QStringLiteral("/usr/local/src/conda/python-3.12.2/Objects/abstract.c")
            << QStringLiteral("interpreter");
        QTest::addRow("CPython's slot") << QStringLiteral("slot_nb_true_divide") << QStringLiteral("??")
                                        << QStringLiteral("interpreter");
        QTest::addRow("CPython's start-up") << QStringLiteral("pymain_run_file_obj")
                                            << QStringLiteral("/usr/local/src/conda/python-3.12.2/Modules/main.c")
                                            << QStringLiteral("interpreter");
        QTest::addRow("an optimised build's start-up")
            << QStringLiteral("run_mod.llvm.14322471339826624036") << QStringLiteral("??") << QStringLiteral("interpreter");
        QTest::addRow("glibc by its source")
            << QStringLiteral("__libc_start_call_main") << QStringLiteral("./csu/../sysdeps/nptl/libc_start_call_main.h")
            << QStringLiteral("system");
        QTest::addRow("a stripped libc's nearest symbol")
            << QStringLiteral("__xmknodat") << QStringLiteral("??") << QStringLiteral("system");
        QTest::addRow("Cython's call") << QStringLiteral("__Pyx_PyObject_Call(_object*, _object*, _object*)")
                                       << QStringLiteral("_raylet.cpp") << QStringLiteral("system");
    }

    // Frames that only pass a call on: a layer is never named after one.
    void passThrough_data()
    {
        QTest::addColumn<QString>("function");
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("passes");
        QTest::addRow("torch's module call")
            << QStringLiteral("_call_impl") << QStringLiteral("/v/lib/python3.12/site-packages/torch/nn/modules/module.py")
            << true;
        QTest::addRow("torch's module call, on Windows")
            << QStringLiteral("_wrapped_call_impl")
            << QStringLiteral("C:\\research\\DeComFL\\.venv\\lib\\site-packages\\torch\\nn\\modules\\module.py") << true;
        QTest::addRow("a no_grad decorator")
            << QStringLiteral("decorate_context")
            << QStringLiteral("/usr/local/lib/python3.10/dist-packages/torch/utils/_contextlib.py") << true;
        QTest::addRow("torch.compile's frame")
            << QStringLiteral("_fn") << QStringLiteral("/v/site-packages/torch/_dynamo/eval_frame.py") << true;
        QTest::addRow("accelerate's hook") << QStringLiteral("new_forward")
                                           << QStringLiteral("/v/site-packages/accelerate/hooks.py") << true;
        QTest::addRow("peft's model") << QStringLiteral("forward") << QStringLiteral("/v/site-packages/peft/peft_model.py")
                                      << true;
        QTest::addRow("transformers' output decorator")
            << QStringLiteral("wrapper")
            << QStringLiteral("C:\\research\\DeComFL\\.venv\\lib\\site-packages\\transformers\\utils\\generic.py") << true;
        QTest::addRow("transformers' deprecation decorator")
            << QStringLiteral("wrapped_func")
            << QStringLiteral("C:\\research\\DeComFL\\.venv\\lib\\site-packages\\transformers\\utils\\deprecation.py") << true;
        QTest::addRow("transformers' checkpointing layer")
            << QStringLiteral("__call__")
            << QStringLiteral("C:\\research\\DeComFL\\.venv\\lib\\site-packages\\transformers\\modeling_layers.py") << true;
        QTest::addRow("functools, relative as Kineto writes it")
            << QStringLiteral("wrapper") << QStringLiteral("functools.py") << true;
        QTest::addRow("contextlib") << QStringLiteral("inner") << QStringLiteral("/usr/lib/python3.11/contextlib.py") << true;
        QTest::addRow("a transformers model's forward")
            << QStringLiteral("forward")
            << QStringLiteral("C:\\research\\DeComFL\\.venv\\lib\\site-packages\\transformers\\models\\opt\\modeling_opt.py")
            << false;
        QTest::addRow("torch.nn's Sequential")
            << QStringLiteral("forward") << QStringLiteral("/v/site-packages/torch/nn/modules/container.py") << false;
        QTest::addRow("the user's model") << QStringLiteral("forward") << QStringLiteral("/home/me/model.py") << false;
        QTest::addRow("the user's functools")
            << QStringLiteral("wrapper") << QStringLiteral("/home/me/proj/functools.py") << false;
        QTest::addRow("a native frame") << QStringLiteral("at::native::add") << QStringLiteral("??") << false;
    }

    void passThrough()
    {
        QFETCH(QString, function);
        QFETCH(QString, file);
        QFETCH(bool, passes);
        QCOMPARE(isPassThroughFrame(Frame{ss(function), ss(file), 1}), passes);
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
        QTest::addRow("redispatch is not the call")
            << QStringLiteral("at::_ops::bmm::redispatch(c10::DispatchKeySet)") << QString() << QString();
        QTest::addRow("Kineto operator") << QStringLiteral("aten::linear") << QStringLiteral("aten::linear") << QString();
        QTest::addRow("generated backward node")
            << QStringLiteral("torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor>&&)") << QString()
            << QStringLiteral("BmmBackward0");
        QTest::addRow("gradient accumulation")
            << QStringLiteral("torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)") << QString()
            << QStringLiteral("AccumulateGrad");
        QTest::addRow("the generic node call")
            << QStringLiteral("torch::autograd::Node::operator()(std::vector<at::Tensor>&&)") << QString() << QString();
        QTest::addRow("Kineto backward span")
            << QStringLiteral("autograd::engine::evaluate_function: MmBackward0") << QString() << QStringLiteral("MmBackward0");
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
        QTest::addRow("an optimizer's step wrapper")
            << QStringLiteral("wrapper") << QStringLiteral("/v/site-packages/torch/optim/optimizer.py") << int(Phase::Optimizer);
        QTest::addRow("a module call") << QStringLiteral("_call_impl")
                                       << QStringLiteral("/v/site-packages/torch/nn/modules/module.py") << int(Phase::Forward);
        QTest::addRow("a module's forward") << QStringLiteral("forward") << QStringLiteral("/home/me/model.py")
                                            << int(Phase::Forward);
        QTest::addRow("user code proves nothing")
            << QStringLiteral("step") << QStringLiteral("/home/me/optimizer.py") << int(Phase::Other);
        QTest::addRow("loss.backward() on Windows")
            << QStringLiteral("backward") << QStringLiteral("D:\\Dev\\a2\\.venv\\Lib\\site-packages\\torch\\_tensor.py")
            << int(Phase::Backward);
        QTest::addRow("an optimizer on Windows")
            << QStringLiteral("step") << QStringLiteral("D:\\Dev\\a2\\.venv\\Lib\\site-packages\\torch\\optim\\adamw.py")
            << int(Phase::Optimizer);
        QTest::addRow("a module call on Windows")
            << QStringLiteral("_call_impl")
            << QStringLiteral("D:\\Dev\\a2\\.venv\\Lib\\site-packages\\torch\\nn\\modules\\module.py") << int(Phase::Forward);
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
