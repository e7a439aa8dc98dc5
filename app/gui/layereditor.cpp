// SPDX-License-Identifier: GPL-3.0-or-later
#include "layereditor.h"

#include "core/trace/layeredits.h"
#include "core/trace/visibletext.h"

#include <QInputDialog>
#include <QMenu>

namespace peaklens::gui {

namespace {

QString pathOf(const Trace &trace, std::uint32_t layer)
{
    return QString::fromStdString(trace.layers[layer].path);
}

std::vector<std::uint32_t> childrenOf(const Trace &trace, std::uint32_t layer)
{
    std::vector<std::uint32_t> children;
    for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
        if (trace.layers[l].parent == layer)
            children.push_back(l);
    }
    return children;
}

// The layer and its siblings of the same kind: the repeated blocks it is one of. For a call
// of a loop ("model:253[3]"), the calls of that loop, in order.
std::vector<std::uint32_t> likeSiblings(const Trace &trace, std::uint32_t layer)
{
    std::vector<std::pair<long, std::uint32_t>> blocks;
    const Layer &target = trace.layers[layer];
    const auto call = loopCall(target.name());
    for (std::uint32_t l = 0; l < trace.layers.size(); ++l) {
        if (trace.layers[l].parent != target.parent)
            continue;
        if (!call && trace.layers[l].kind == target.kind)
            blocks.emplace_back(0, l);
        else if (const auto sibling = loopCall(trace.layers[l].name()); call && sibling && sibling->loop == call->loop)
            blocks.emplace_back(sibling->index, l);
    }
    std::stable_sort(blocks.begin(), blocks.end());
    std::vector<std::uint32_t> layers;
    layers.reserve(blocks.size());
    for (const auto &[index, l] : blocks)
        layers.push_back(l);
    return layers;
}

} // namespace

void LayerEditor::start(const QString &what, std::function<DocumentPtr()> work)
{
    if (m_jobs.isRunning())
        return;
    m_jobs.start([work = std::move(work)](const Progress &) { return work(); },
                 [this, what](const DocumentPtr &document) { Q_EMIT edited(document, what); },
                 [this](const QString &message) { Q_EMIT failed(message); });
}

void LayerEditor::useChain(const DocumentPtr &document, std::vector<std::uint32_t> layers)
{
    ChainSelection chain;
    chain.layers = std::move(layers);
    const QString what = chain.layers.empty() ? tr("Planning with the default chain")
                                              : tr("Planning with %1 layers from %2 to %3 as the chain")
                                                    .arg(chain.layers.size())
                                                    .arg(pathOf(*document->trace, chain.layers.front()),
                                                         pathOf(*document->trace, chain.layers.back()));
    start(what, [document, chain] { return analyseDocument(document->filePath(), document->trace, chain); });
}

void LayerEditor::rename(const DocumentPtr &document, std::uint32_t layer, const QString &name)
{
    const QString what = tr("Renamed %1 to %2").arg(pathOf(*document->trace, layer), name);
    start(what, [document, layer, name = name.toStdString()] {
        return analyseDocument(document->filePath(), std::make_shared<const Trace>(renameLayer(*document->trace, layer, name)));
    });
}

void LayerEditor::mergeIntoParent(const DocumentPtr &document, std::uint32_t layer)
{
    const Trace &trace = *document->trace;
    const QString what = tr("Merged %1 into %2").arg(pathOf(trace, layer), pathOf(trace, trace.layers[layer].parent));
    start(what, [document, layer] {
        return analyseDocument(document->filePath(),
                               std::make_shared<const Trace>(peaklens::mergeIntoParent(*document->trace, layer)));
    });
}

void LayerEditor::shard(const DocumentPtr &document, const Sharding &sharding)
{
    const QString what = tr("Planning for %1").arg(QString::fromStdString(shardingDescription(sharding)));
    start(what, [document, sharding] {
        return analyseDocument(document->filePath(),
                               std::make_shared<const Trace>(withSharding(*document->trace, document->chain, sharding)),
                               document->chain);
    });
}

QMenu *LayerEditor::menuFor(const DocumentPtr &document, std::uint32_t layer, QWidget *parent)
{
    const Trace &trace = *document->trace;
    const Layer &target = trace.layers[layer];
    auto *menu = new QMenu(parent);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    const auto children = childrenOf(trace, layer);
    QAction *action = menu->addAction(tr("Plan with its %1 sub-layers as the chain").arg(children.size()), this,
                                      [this, document, children] { useChain(document, children); });
    action->setEnabled(children.size() >= 2);
    action->setObjectName(QStringLiteral("chainOfChildren"));
    const auto siblings = likeSiblings(trace, layer);
    const auto call = loopCall(target.name());
    action = menu->addAction(call ? tr("Plan with the %1 calls of %2 as the chain")
                                        .arg(siblings.size())
                                        .arg(QString::fromUtf8(call->loop.data(), qsizetype(call->loop.size())))
                                  : tr("Plan with the %1 layers of kind %2 beside it as the chain")
                                        .arg(siblings.size())
                                        .arg(target.kind.empty() ? tr("(none)") : QString::fromStdString(target.kind)),
                             this, [this, document, siblings] { useChain(document, siblings); });
    action->setEnabled(siblings.size() >= 2 && (call || !target.kind.empty()));
    action->setObjectName(QStringLiteral("chainOfSiblings"));
    action = menu->addAction(tr("Plan with the default chain"), this, [this, document] { useChain(document, {}); });
    action->setEnabled(!document->chain.layers.empty());
    menu->addSeparator();
    menu->addAction(
        tr("Rename %1…").arg(QString::fromStdString(std::string(target.name()))), this, [this, document, layer, parent] {
            bool ok = false;
            const QString name =
                QInputDialog::getText(parent, tr("Rename layer"), tr("New name:"), QLineEdit::Normal,
                                      QString::fromStdString(std::string(document->trace->layers[layer].name())), &ok);
            if (ok)
                rename(document, layer, name);
        });
    action = menu->addAction(target.parent == kNoLayer ? tr("Merge into its parent")
                                                       : tr("Merge into %1").arg(pathOf(trace, target.parent)),
                             this, [this, document, layer] { mergeIntoParent(document, layer); });
    action->setEnabled(target.parent != kNoLayer);
    return menu;
}

} // namespace peaklens::gui
