// SPDX-License-Identifier: GPL-3.0-or-later
#include "testsupport.h"

#include "models/layermodel.h"

#include "core/trace/units.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>

using namespace peaklens;
using namespace peaklens::gui;

namespace {

const QString kSample = QStringLiteral(PEAKLENS_SOURCE_DIR "/resources/samples/training-step.peaklens");

} // namespace

class tst_LayerModel : public QObject
{
    Q_OBJECT

private slots:
    void rowsMatchCoreLayerStats()
    {
        LayerModel model;
        QAbstractItemModelTester tester(&model);
        const DocumentPtr document = loadDocument(kSample);
        model.setFlat(true);
        model.resetData(document);
        const Trace &trace = *document->trace;
        QCOMPARE(model.rowCount(), int(trace.layers.size()));
        for (int row = 0; row < model.rowCount(); ++row) {
            const auto &stats = document->summary.layers[static_cast<std::size_t>(row)];
            QCOMPARE(model.index(row, LayerModel::NameColumn).data().toString(),
                     QString::fromStdString(trace.layers[static_cast<std::size_t>(row)].path));
            QCOMPARE(model.index(row, LayerModel::ActivationColumn).data().toString(),
                     QString::fromStdString(formatBytes(stats.activationBytes)));
            QCOMPARE(model.index(row, LayerModel::ActivationColumn).data(LayerModel::SortRole).toLongLong(),
                     stats.activationBytes);
        }
        model.resetData(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void treeFollowsTheModuleTree()
    {
        LayerModel model;
        QAbstractItemModelTester tester(&model);
        const DocumentPtr document = loadDocument(kSample);
        model.resetData(document);
        const Trace &trace = *document->trace;
        QStringList topLevel;
        for (int row = 0; row < model.rowCount(); ++row)
            topLevel << model.index(row, LayerModel::NameColumn).data().toString();
        QCOMPARE(topLevel, QStringList({QStringLiteral("embed"), QStringLiteral("blocks"), QStringLiteral("ln_f"),
                                        QStringLiteral("head"), QStringLiteral("loss")}));
        // Children hang off column 0, the checkbox column (the view draws the tree by the names).
        const QModelIndex blocks = model.indexOfLayer(*trace.findLayer("blocks"), 0);
        QCOMPARE(LayerModel::CheckpointColumn, 0);
        QCOMPARE(model.rowCount(blocks), 6);
        const QModelIndex third = model.index(2, LayerModel::NameColumn, blocks);
        QCOMPARE(third.data().toString(), QStringLiteral("2"));
        QCOMPARE(third.data(Qt::ToolTipRole).toString(), QStringLiteral("blocks.2"));
        QCOMPARE(model.parent(third), blocks);
        QCOMPARE(model.indexOfLayer(*trace.findLayer("blocks.2")), third);
        QVERIFY(model.flags(model.index(2, LayerModel::CheckpointColumn, blocks)) & Qt::ItemIsUserCheckable);
        model.setFlat(true);
        QCOMPARE(model.rowCount(), int(trace.layers.size()));
        QVERIFY(!model.parent(model.indexOfLayer(*trace.findLayer("blocks.2"))).isValid());
    }

    void onlyChainLayersAreCheckable()
    {
        LayerModel model;
        QAbstractItemModelTester tester(&model);
        const DocumentPtr document = loadDocument(kSample);
        model.setFlat(true);
        model.resetData(document);
        QSignalSpy changed(&model, &LayerModel::toggled);
        const auto &chain = document->model->layers;
        QCOMPARE(model.checkpoint().size(), chain.size());
        int checkable = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QModelIndex box = model.index(row, LayerModel::CheckpointColumn);
            if (model.flags(box) & Qt::ItemIsUserCheckable) {
                ++checkable;
                QVERIFY(model.index(row, LayerModel::NameColumn).data().toString().startsWith(QStringLiteral("blocks.")));
            } else {
                QVERIFY(!model.setData(box, Qt::Checked, Qt::CheckStateRole));
            }
        }
        QCOMPARE(checkable, int(chain.size()));

        const QModelIndex box = model.indexOfLayer(chain[1].layer, LayerModel::CheckpointColumn);
        QVERIFY(model.setData(box, Qt::Checked, Qt::CheckStateRole));
        QCOMPARE(changed.count(), 1);
        QVERIFY(model.checkpoint()[1]);
        QCOMPARE(box.data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Checked);
        // A schedule set from outside shows, and is not the user's tick.
        model.setSchedule(singleLayerUnits(std::vector<bool>(chain.size(), true)));
        QCOMPARE(changed.count(), 1);
        QVERIFY(model.checkpoint().back());
        QCOMPARE(
            model.indexOfLayer(chain.back().layer, LayerModel::CheckpointColumn).data(Qt::CheckStateRole).value<Qt::CheckState>(),
            Qt::Checked);
    }

    // A module inside a chain layer is ticked on its own; ticking its layer whole holds it.
    void partsAreCheckableAlone()
    {
        LayerModel model;
        QAbstractItemModelTester tester(&model);
        const DocumentPtr document = loadDocument(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/modelled-step.pltxt"));
        model.resetData(document);
        const auto &chain = document->model->layers;
        QVERIFY(chain[1].parts.size() >= 2);
        const QModelIndex attn = model.indexOfLayer(chain[1].parts[1].layer, LayerModel::CheckpointColumn);
        const QModelIndex layer = model.indexOfLayer(chain[1].layer, LayerModel::CheckpointColumn);
        QVERIFY(model.flags(attn) & Qt::ItemIsUserCheckable);
        QVERIFY(attn.data(Qt::ToolTipRole).toString().contains(QStringLiteral("alone")));
        QVERIFY(model.setData(attn, Qt::Checked, Qt::CheckStateRole));
        QCOMPARE(model.schedule(), (CheckpointSchedule{{1, 1, {}, 1}}));
        QCOMPARE(layer.data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Unchecked);

        // Whole, the layer holds its parts: ticked, not to be unticked alone.
        QVERIFY(model.setData(layer, Qt::Checked, Qt::CheckStateRole));
        QCOMPARE(model.schedule(), (CheckpointSchedule{{1, 1, {}}}));
        QCOMPARE(attn.data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Checked);
        QVERIFY(!(model.flags(attn) & Qt::ItemIsEnabled));
        QVERIFY(!model.setData(attn, Qt::Unchecked, Qt::CheckStateRole));

        const CheckpointSchedule mixed{{0, 0, {}, 3}, {2, 2, {}}};
        model.setSchedule(mixed);
        QCOMPARE(model.schedule(), mixed);
    }

    // A chain layer's policy column offers its leading per-op policies; choosing one
    // checkpoints the layer whole with it, unticking the layer drops it.
    void aPolicyIsChosenPerChainLayer()
    {
        LayerModel model;
        QAbstractItemModelTester tester(&model);
        const DocumentPtr document = loadDocument(QStringLiteral(PEAKLENS_SOURCE_DIR "/tests/data/operator-step.pltxt"));
        model.resetData(document);
        const auto &chain = document->model->layers;
        const QModelIndex policy = model.indexOfLayer(chain[1].layer, LayerModel::PolicyColumn);
        const QModelIndex box = model.indexOfLayer(chain[1].layer, LayerModel::CheckpointColumn);
        QVERIFY(model.flags(policy) & Qt::ItemIsEditable);
        QCOMPARE(policy.data().toString(), QString());
        // Ranked by time spared per byte kept: add (keeps nothing beyond the output), then
        // layer_norm, addmm, gelu.
        QCOMPARE(policy.data(LayerModel::PolicyChoicesRole).toStringList(),
                 (QStringList{QStringLiteral("Recompute all"), QStringLiteral("Save add.Tensor"),
                              QStringLiteral("Save native_layer_norm, add.Tensor"),
                              QStringLiteral("Save addmm, native_layer_norm, add.Tensor"),
                              QStringLiteral("Save addmm, gelu, native_layer_norm, add.Tensor"),
                              QStringLiteral("No checkpoint: keep in bfloat16"),
                              QStringLiteral("No checkpoint: offload to host memory")}));
        QSignalSpy toggled(&model, &LayerModel::toggled);
        QVERIFY(model.setData(policy, 3, Qt::EditRole));
        QCOMPARE(toggled.count(), 1);
        QCOMPARE(box.data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Checked);
        QCOMPARE(policy.data(Qt::EditRole).toInt(), 3);
        QCOMPARE(policy.data().toString(), QStringLiteral("Save addmm +2"));
        const std::vector<std::string> saved{"aten.add.Tensor", "aten.addmm.default", "aten.native_layer_norm.default"};
        QCOMPARE(model.schedule(), (CheckpointSchedule{{1, 1, {}, kWholeLayer, saved}}));
        QVERIFY(model.setData(box, Qt::Unchecked, Qt::CheckStateRole));
        QVERIFY(model.setData(box, Qt::Checked, Qt::CheckStateRole));
        QCOMPARE(policy.data().toString(), QStringLiteral("All"));
        QCOMPARE(model.schedule(), (CheckpointSchedule{{1, 1, {}}}));
        // A plan's policy shows as the choice it is; one outside the choices as what it saves.
        model.setSchedule({{1, 1, {}, kWholeLayer, saved}, {2, 2, {}, kWholeLayer, {"aten.gelu.default"}}});
        QCOMPARE(policy.data(Qt::EditRole).toInt(), 3);
        QCOMPARE(model.indexOfLayer(chain[2].layer, LayerModel::PolicyColumn).data().toString(), QStringLiteral("Save gelu"));
        QVERIFY(!model.setData(policy, 9, Qt::EditRole));
        // The last two choices keep bfloat16 or offload: no checkpoint, unticked.
        QVERIFY(model.setData(policy, 5, Qt::EditRole));
        QCOMPARE(box.data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Unchecked);
        QCOMPARE(policy.data().toString(), QStringLiteral("bf16"));
        QCOMPARE(model.schedule().front(), (CheckpointUnit{1, 1, {}, kWholeLayer, {}, KeptForm::Bfloat16}));
        QVERIFY(model.setData(policy, 6, Qt::EditRole));
        QCOMPARE(box.data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Unchecked);
        QCOMPARE(policy.data().toString(), QStringLiteral("offload"));
        QCOMPARE(policy.data(Qt::EditRole).toInt(), 6);
        QCOMPARE(model.schedule().front(), (CheckpointUnit{1, 1, {}, kWholeLayer, {}, KeptForm::Host}));
        model.setSchedule({{1, 1, {}, kWholeLayer, {}, KeptForm::Bfloat16}});
        QCOMPARE(policy.data(Qt::EditRole).toInt(), 5);
        QVERIFY(model.setData(box, Qt::Checked, Qt::CheckStateRole));
        QCOMPARE(policy.data().toString(), QStringLiteral("All"));
        QVERIFY(!(model.flags(model.indexOfLayer(chain[1].layer, LayerModel::NameColumn)) & Qt::ItemIsEditable));
    }
};

QTEST_MAIN(tst_LayerModel)
#include "tst_layermodel.moc"
