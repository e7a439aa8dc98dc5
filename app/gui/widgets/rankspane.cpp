// SPDX-License-Identifier: GPL-3.0-or-later
#include "rankspane.h"

#include "tables.h"

#include "core/trace/units.h"

#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QVBoxLayout>

namespace peaklens::gui {

// One strip per rank, all on the scale of the highest peak; the outlier's strip tinted.
class RankStrips final : public QWidget
{
    Q_OBJECT

public:
    static constexpr int kStripHeight = 34;

    explicit RankStrips(QWidget *parent)
        : QWidget(parent)
    {
        setObjectName(QStringLiteral("rankStrips"));
    }

    void setTable(const CrossRankTable *table)
    {
        m_table = table;
        setMinimumHeight(table ? static_cast<int>(table->rows.size()) * kStripHeight : 0);
        update();
    }
    void setCurrent(int row)
    {
        m_current = row;
        update();
    }

Q_SIGNALS:
    void rankClicked(int row);

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter painter(this);
        painter.fillRect(rect(), palette().base());
        if (!m_table || m_table->rows.empty())
            return;
        std::int64_t top = 1;
        for (const RankRow &row : m_table->rows)
            top = std::max(top, row.overview.figures.peakBytes);
        const int labelWidth = fontMetrics().horizontalAdvance(QStringLiteral("rank 0000  00.00 GiB")) + 8;
        const QColor line = palette().text().color();
        QColor fill(static_cast<QRgb>(0x4e79a7));
        fill.setAlpha(150);
        for (std::size_t r = 0; r < m_table->rows.size(); ++r) {
            const RankRow &row = m_table->rows[r];
            const QRect strip(0, static_cast<int>(r) * kStripHeight, width(), kStripHeight - 2);
            if (row.outlier)
                painter.fillRect(strip, QColor(255, 228, 220));
            if (static_cast<int>(r) == m_current)
                painter.fillRect(strip, palette().highlight().color().lighter(180));
            painter.setPen(line);
            painter.drawText(
                strip.adjusted(4, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
                tr("rank %1  %2").arg(row.rank).arg(QString::fromStdString(formatBytes(row.overview.figures.peakBytes))));
            const QRectF chart(labelWidth, strip.top() + 2, std::max(10, width() - labelWidth - 4), strip.height() - 4);
            const auto &envelope = row.overview.envelope;
            if (envelope.empty())
                continue;
            // Each column from its lowest to its highest value: the peak is never lost.
            const double columnWidth = chart.width() / static_cast<double>(envelope.size());
            for (std::size_t c = 0; c < envelope.size(); ++c) {
                const double x = chart.left() + static_cast<double>(c) * columnWidth;
                const double high = static_cast<double>(envelope[c].maxBytes) / static_cast<double>(top);
                painter.fillRect(
                    QRectF(x, chart.bottom() - high * chart.height(), std::max(columnWidth, 1.0), high * chart.height()), fill);
            }
            painter.setPen(palette().mid().color());
            painter.drawLine(chart.bottomLeft(), chart.bottomRight());
        }
    }

    void mousePressEvent(QMouseEvent *event) override
    {
        const int row = event->pos().y() / kStripHeight;
        if (m_table && row >= 0 && row < static_cast<int>(m_table->rows.size()))
            Q_EMIT rankClicked(row);
    }

private:
    const CrossRankTable *m_table = nullptr;
    int m_current = -1;
};

RanksPane::RanksPane(QWidget *parent)
    : QWidget(parent)
    , m_model(new RanksModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_title(new QLabel(this))
    , m_strips(new RankStrips(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RanksModel::SortRole);
    m_view = makeTable(m_proxy, this);
    m_view->setObjectName(QStringLiteral("ranksTable"));
    m_view->sortByColumn(RanksModel::RankColumn, Qt::AscendingOrder);
    m_title->setWordWrap(true);
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_strips);
    scroll->setWidgetResizable(true);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("ranksTableAndChart"));
    split->addWidget(m_view);
    split->addWidget(scroll);
    split->setSizes({160, 240});
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addWidget(split, 1);
    connect(m_view, &QTableView::clicked, this,
            [this](const QModelIndex &index) { Q_EMIT rankChosen(m_proxy->data(index, RanksModel::RowRole).toInt()); });
    connect(m_strips, &RankStrips::rankClicked, this, &RanksPane::rankChosen);
}

void RanksPane::setTable(CrossRankTable table)
{
    m_model->resetData(std::move(table));
    m_strips->setTable(&m_model->table());
    const CrossRankTable &shown = m_model->table();
    QStringList outliers;
    for (const RankRow &row : shown.rows) {
        if (row.outlier)
            outliers << QString::number(row.rank);
    }
    QString title = tr("<b>%1 ranks</b>, median peak %2")
                        .arg(shown.rows.size())
                        .arg(QString::fromStdString(formatBytes(shown.medianPeakBytes)));
    if (shown.medianStepTimeNs)
        title += tr(", median step %1").arg(QString::fromStdString(formatDuration(*shown.medianStepTimeNs)));
    title += outliers.isEmpty() ? tr(" — no outlier")
                                : tr(" — <b>outlier: rank %1</b> (tinted)").arg(outliers.join(QStringLiteral(", ")));
    m_title->setText(title);
    m_view->resizeColumnsToContents();
}

void RanksPane::setCurrent(int row)
{
    m_strips->setCurrent(row);
}

} // namespace peaklens::gui

#include "rankspane.moc"
