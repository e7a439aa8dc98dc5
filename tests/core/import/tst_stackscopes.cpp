// SPDX-License-Identifier: Apache-2.0
#include "testsupport.h"

#include "core/import/stackscopes.h"
#include "core/plan/costmodel.h"

using namespace peaklens;
using peaklens::test::qs;
using peaklens::test::ss;

namespace {

const char *const kEngine = "__clone|??|0;torch::autograd::Engine::thread_main(std::shared_ptr<>)|??|0;"
                            "torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)|??|0";
const char *const kOptimizer =
    "<module>|/p/train.py|30;wrapper|/v/site-packages/torch/optim/optimizer.py|533;step|/p/adamw.py|70";

// A training loop's stacks: train.py calls the model at line 10; model.py's forward loops
// over blocks at line 20; a block calls attention at block.py:5 and allocates at :7.
// `callFrames`: with torch.nn's _call_impl frames between the calls, as most builds record.
std::string moduleCall(bool callFrames)
{
    return callFrames ? "_wrapped_call_impl|/v/site-packages/torch/nn/modules/module.py|1779;"
                        "_call_impl|/v/site-packages/torch/nn/modules/module.py|1790;"
                      : "";
}

std::string forwardStack(bool callFrames, int blockLine, bool inAttention)
{
    std::string stack = "<module>|/p/train.py|10;" + moduleCall(callFrames) + "forward|/p/model.py|20;" + moduleCall(callFrames)
                        + "forward|/p/block.py|" + std::to_string(blockLine);
    if (inAttention)
        stack += ";" + moduleCall(callFrames) + "forward|/p/attn.py|3";
    return stack + ";at::_ops::mm::call(at::Tensor const&)|??|0";
}

std::uint32_t intern(TraceBuilder &builder, const std::string &text)
{
    std::vector<Frame> frames;
    for (const QString &item : qs(text).split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        const QStringList parts = item.split(QLatin1Char('|'));
        frames.push_back(Frame{ss(parts[0]), ss(parts[1]), parts[2].toInt()});
    }
    return builder.stacks().internStack(frames);
}

// `steps` training steps of 3 blocks; returns the trace and its layer paths, sorted.
std::shared_ptr<const Trace> train(bool callFrames, int steps, StackScopesResult &result)
{
    TraceBuilder builder;
    const std::uint32_t lane = builder.lane(Lane{});
    std::vector<MemoryEvent> events;
    std::int64_t t = 0;
    std::uint64_t addr = 0x1000;
    const auto alloc = [&](const std::string &stack) {
        events.push_back(
            MemoryEvent{t += 10, 256, addr += 0x100, lane, kNoLayer, intern(builder, stack), Category::Unknown, Phase::Other});
    };
    for (int step = 0; step < steps; ++step) {
        const std::uint64_t first = addr + 0x100;
        for (int block = 0; block < 3; ++block) {
            alloc(forwardStack(callFrames, 5, true));
            alloc(forwardStack(callFrames, 7, false));
        }
        for (int k = 0; k < 6; ++k) {
            alloc(kEngine);
            // Each backward node frees the activations its block saved.
            events.push_back(MemoryEvent{t += 10, -256, first + std::uint64_t(5 - k) * 0x100, lane, kNoLayer, 0,
                                         Category::Unknown, Phase::Other});
        }
        alloc(kOptimizer);
    }
    result = deriveScopesFromStacks(builder, events);
    for (const MemoryEvent &event : events)
        builder.addEvent(event);
    return builder.finish();
}

QString layerPaths(const Trace &trace)
{
    QStringList paths;
    for (const Layer &layer : trace.layers)
        paths << qs(layer.path) + (layer.kind.empty() ? QString() : QStringLiteral(" [") + qs(layer.kind) + QLatin1Char(']'));
    paths.sort();
    return paths.join(QLatin1Char('\n'));
}

const char *const kLayers = "train:10 [forward in model.py]\n"
                            "train:10.model:20[0] [forward in block.py]\n"
                            "train:10.model:20[0].block:5 [forward in attn.py]\n"
                            "train:10.model:20[1] [forward in block.py]\n"
                            "train:10.model:20[1].block:5 [forward in attn.py]\n"
                            "train:10.model:20[2] [forward in block.py]\n"
                            "train:10.model:20[2].block:5 [forward in attn.py]";

} // namespace

class tst_StackScopes : public QObject
{
    Q_OBJECT

private slots:
    void layersAndPhasesFromModuleCalls_data()
    {
        QTest::addColumn<bool>("callFrames");
        QTest::addColumn<int>("steps");
        QTest::addRow("one step") << true << 1;
        QTest::addRow("two steps reuse the layers") << true << 2;
        QTest::addRow("stacks without _call_impl frames") << false << 1;
    }

    void layersAndPhasesFromModuleCalls()
    {
        QFETCH(bool, callFrames);
        QFETCH(int, steps);
        StackScopesResult result;
        const auto trace = train(callFrames, steps, result);
        QCOMPARE(layerPaths(*trace), QString::fromUtf8(kLayers));
        QCOMPARE(result.steps, std::size_t(steps));
        QCOMPARE(result.layered, std::size_t(6 * steps));
        QCOMPARE(result.phased, std::size_t(13 * steps));
        QString phases;
        for (std::size_t i = 0; i < 19; ++i)
            phases += trace->events.deltaBytes(i) > 0 ? QString::fromUtf8(phasePrefix(trace->events.phase(i))).left(1)
                                                      : QStringLiteral("-");
        QCOMPARE(phases, QStringLiteral("ffffffb-b-b-b-b-b-o"));
        // The block at model.py:20 allocates twice per call: a forward range from the first to the last.
        const auto block1 = *trace->findLayer("train:10.model:20[1]");
        std::vector<std::pair<std::int64_t, std::int64_t>> spans;
        for (const Range &range : trace->ranges) {
            if (range.layer == block1)
                spans.emplace_back(range.beginNs, range.endNs);
        }
        QCOMPARE(spans.size(), std::size_t(steps));
        QCOMPARE(spans.front(), std::make_pair(std::int64_t(30), std::int64_t(40)));
    }

    // A recursive (or damaged) stack of 300 nested forward calls: layers stop 10 deep, and
    // the import goes on.
    void deepRecursionStopsAtAFixedDepth()
    {
        TraceBuilder builder;
        const std::uint32_t lane = builder.lane(Lane{});
        std::string stack = "<module>|/p/train.py|1";
        for (int depth = 0; depth < 300; ++depth)
            stack += ";forward|/p/tree.py|" + std::to_string(10 + depth % 7);
        std::vector<MemoryEvent> events{
            MemoryEvent{10, 64, 0x1000, lane, kNoLayer, intern(builder, stack), Category::Unknown, Phase::Other}};
        const StackScopesResult result = deriveScopesFromStacks(builder, events);
        QCOMPARE(result.layered, std::size_t(1));
        const auto trace = builder.finish();
        std::size_t deepest = 0;
        for (const Layer &layer : trace->layers)
            deepest = std::max<std::size_t>(deepest, std::count(layer.path.begin(), layer.path.end(), '.') + 1);
        QCOMPARE(deepest, std::size_t(10));
    }

    // The layer an allocation lands in, from stacks as real recordings make them (outermost
    // frame first): wrappers between a call and its module are passed over, names stay short.
    void layerOfOneAllocation_data()
    {
        QTest::addColumn<QString>("stack");
        QTest::addColumn<QString>("layer");
        const QString call = qs(moduleCall(true));
        const QString hook = QStringLiteral("new_forward|/v/site-packages/accelerate/hooks.py|166;");
        const QString llama = QStringLiteral("/v/site-packages/transformers/models/llama/modeling_llama.py|");
        QTest::addRow("a peft and accelerate Llama in a notebook")
            << QStringLiteral("<module>|/tmp/ipykernel_7/3105878423.py|21;") + call
                   + QStringLiteral("forward|/v/site-packages/peft/peft_model.py|1430;") + call
                   + QStringLiteral("forward|/v/site-packages/peft/tuners/tuners_utils.py|193;") + call + hook
                   + QStringLiteral("forward|") + llama + QStringLiteral("1164;") + call + hook + QStringLiteral("forward|")
                   + llama + QStringLiteral("968;") + call + hook + QStringLiteral("forward|") + llama
                   + QStringLiteral("713;at::_ops::mm::call(at::Tensor const&)|??|0")
            << QStringLiteral("cell:21.modeling_llama:1164.modeling_llama:968");
        QTest::addRow("transformers' decorators, recorded on Windows")
            << QStringLiteral("<module>|C:\\r\\main.py|9;") + QString(call).replace(QLatin1Char('/'), QLatin1Char('\\'))
                   + QStringLiteral("wrapper|C:\\r\\.venv\\lib\\site-packages\\transformers\\utils\\generic.py|918;"
                                    "wrapped_func|C:\\r\\.venv\\lib\\site-packages\\transformers\\utils\\deprecation.py|172;"
                                    "forward|C:\\r\\.venv\\lib\\site-packages\\transformers\\models\\opt\\modeling_opt.py|880;"
                                    "__call__|C:\\r\\.venv\\lib\\site-packages\\transformers\\modeling_layers.py|94;")
                   + QString(call).replace(QLatin1Char('/'), QLatin1Char('\\'))
                   + QStringLiteral("forward|C:\\r\\.venv\\lib\\site-packages\\transformers\\models\\opt\\modeling_opt.py|300")
            << QStringLiteral("main:9.modeling_opt:880");
        QTest::addRow("a block run through torch.utils.checkpoint")
            << QStringLiteral("<module>|/p/train.py|10;") + call
                   + QStringLiteral("forward|/p/model.py|20;checkpoint|/v/site-packages/torch/utils/checkpoint.py|495;")
                   + QStringLiteral("apply|/v/site-packages/torch/autograd/function.py|575;") + call
                   + QStringLiteral("forward|/p/block.py|7")
            << QStringLiteral("train:10.model:20");
        QTest::addRow("a long file name")
            << QStringLiteral("<module>|/p/train.py|10;") + call
                   + QStringLiteral("forward|/p/an_experimental_transformer_with_a_very_long_module_name_v2.py|20;") + call
                   + QStringLiteral("forward|/p/block.py|7")
            << QStringLiteral("train:10.an_experimental_tran\u2026long_module_name_v2:20");
    }

    void layerOfOneAllocation()
    {
        QFETCH(QString, stack);
        QFETCH(QString, layer);
        TraceBuilder builder;
        const std::uint32_t lane = builder.lane(Lane{});
        std::vector<MemoryEvent> events{
            MemoryEvent{10, 64, 0x1000, lane, kNoLayer, intern(builder, ss(stack)), Category::Unknown, Phase::Other}};
        deriveScopesFromStacks(builder, events);
        const auto trace = builder.finish();
        QVERIFY(events.front().layer < trace->layers.size());
        const QString path = qs(trace->layers[events.front().layer].path);
        QCOMPARE(path, layer);
        for (const QString &part : path.split(QLatin1Char('.')))
            QVERIFY2(part.toUtf8().size() <= 48, qPrintable(part));
    }

    // Stacks of Python frames alone (as PyTorch records them on Windows): once the forward
    // has begun, an allocation without frames is the autograd engine's, the backward's.
    void framelessAllocationsAfterTheForwardAreTheBackward()
    {
        TraceBuilder builder;
        const std::uint32_t lane = builder.lane(Lane{});
        const std::uint32_t forward = intern(builder, "<module>|/p/train.py|10;" + moduleCall(true) + "forward|/p/model.py|20");
        std::vector<MemoryEvent> events;
        for (const std::uint32_t stack : {0u, forward, forward, 0u, 0u})
            events.push_back(MemoryEvent{10 * std::int64_t(events.size() + 1), 64, 0x1000 + 0x100 * events.size(), lane, kNoLayer,
                                         stack, Category::Unknown, Phase::Other});
        deriveScopesFromStacks(builder, events);
        QString phases;
        for (const MemoryEvent &event : events)
            phases += event.phase == Phase::Other ? QStringLiteral("o") : QString::fromUtf8(phasePrefix(event.phase)).left(1);
        QCOMPARE(phases, QStringLiteral("offbb"));

        // With native frames recorded, a frameless allocation proves nothing.
        TraceBuilder native;
        const std::uint32_t nativeLane = native.lane(Lane{});
        const std::uint32_t withNative =
            intern(native, "<module>|/p/train.py|10;" + moduleCall(true)
                               + "forward|/p/model.py|20;at::_ops::mm::call(at::Tensor const&)|??|0");
        std::vector<MemoryEvent> nativeEvents{
            MemoryEvent{10, 64, 0x1000, nativeLane, kNoLayer, withNative, Category::Unknown, Phase::Other},
            MemoryEvent{20, 64, 0x2000, nativeLane, kNoLayer, 0, Category::Unknown, Phase::Other}};
        deriveScopesFromStacks(native, nativeEvents);
        QCOMPARE(int(nativeEvents.back().phase), int(Phase::Other));
    }

    // The repeated blocks become the checkpointing chain, and the frees of what each block
    // saved show when its backward ran.
    void theBlocksAreTheDefaultChain()
    {
        StackScopesResult result;
        const auto trace = train(true, 1, result);
        QStringList chain;
        for (std::uint32_t layer : defaultChain(*trace))
            chain << qs(trace->layers[layer].path);
        QCOMPARE(chain.join(QLatin1Char(' ')), QStringLiteral("train:10.model:20[0] train:10.model:20[1] train:10.model:20[2]"));
    }
};

QTEST_GUILESS_MAIN(tst_StackScopes)
#include "tst_stackscopes.moc"
