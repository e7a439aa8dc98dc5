// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What a user can change about the layers of an opened trace: which layers form the
// checkpointing chain (the repeated blocks, where the trace names none), a layer's name,
// merging a layer into its parent, and which rank of a sharded run the trace stands for
// (core/plan/sharding.h). Each change analyses the trace again off the UI thread and
// hands over a new document.

#include "jobs.h"
#include "tracedocument.h"

#include "core/plan/sharding.h"

#include <QObject>

class QMenu;
class QWidget;

namespace peaklens::gui {

class LayerEditor final : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;

    // Plans with exactly these layers as the chain; empty: the default chain.
    void useChain(const DocumentPtr &document, std::vector<std::uint32_t> layers);
    void rename(const DocumentPtr &document, std::uint32_t layer, const QString &name);
    void mergeIntoParent(const DocumentPtr &document, std::uint32_t layer);
    // The trace as one rank of a run sharding it holds it: planned and predicted per rank.
    void shard(const DocumentPtr &document, const Sharding &sharding);
    bool isBusy() const { return m_jobs.isRunning(); }

    // The layer's context menu: the chains it offers, Rename…, Merge into its parent.
    QMenu *menuFor(const DocumentPtr &document, std::uint32_t layer, QWidget *parent);

Q_SIGNALS:
    void edited(const DocumentPtr &document, const QString &what);
    void failed(const QString &message);

private:
    void start(const QString &what, std::function<DocumentPtr()> work);

    Jobs m_jobs;
};

} // namespace peaklens::gui
