// SPDX-License-Identifier: GPL-3.0-or-later
#include "keptpane.h"

#include "models/keptmodel.h"
#include "tables.h"

#include "core/trace/units.h"

#include <QLabel>
#include <QSortFilterProxyModel>
#include <QVBoxLayout>

namespace peaklens::gui {

KeptPane::KeptPane(QWidget *parent)
    : QWidget(parent)
    , m_model(new KeptModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_title(new QLabel(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(KeptModel::SortRole);
    m_view = makeTable(m_proxy, this);
    // Wide enough for what they hold, measured on the first rows: a long chain has many.
    m_view->horizontalHeader()->setResizeContentsPrecision(200);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(KeptModel::SiteColumn, QHeaderView::Stretch);
    m_view->sortByColumn(KeptModel::LayerColumn, Qt::AscendingOrder);
    m_title->setObjectName(QStringLiteral("keptTitle"));
    m_title->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addWidget(m_view);
}

void KeptPane::showKept(const DocumentPtr &document, const CheckpointSchedule &schedule)
{
    if (!document || !document->model) {
        m_model->resetData({});
        m_title->setText(document
                             ? tr("No layers to checkpoint in this trace: %1").arg(QString::fromStdString(document->modelProblem))
                             : QString());
        return;
    }
    m_model->resetData(keptActivations(*document->trace, *document->model, schedule, *document->sites));
    const KeptTotals totals = keptTotals(m_model->rows());
    const auto bytes = [](std::int64_t value) { return QString::fromStdString(formatBytes(value)); };
    m_title->setText(tr("Kept for backward in the measured step: %1 in %2 blocks; %3.")
                         .arg(bytes(totals.bytes))
                         .arg(m_model->rows().size())
                         .arg(QString::fromStdString(keptTotalsText(totals))));
}

QString KeptPane::title() const
{
    return m_title->text();
}

} // namespace peaklens::gui
