// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffpane.h"

#include "models/diffmodel.h"
#include "tables.h"

#include "core/trace/units.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QVBoxLayout>

namespace peaklens::gui {

namespace {

QString bytes(std::int64_t value)
{
    return QString::fromStdString(formatBytes(value));
}

QString signedBytes(std::int64_t value)
{
    return (value > 0 ? QStringLiteral("+") : QString()) + bytes(value);
}

const QString kTitles[] = {DiffPane::tr("By layer"), DiffPane::tr("By allocation site"), DiffPane::tr("By category"),
                           DiffPane::tr("By grouping")};
// The last tab's choices, as --group names them.
const char *const kGroupings[] = {"file", "stage", "compile-context", "user-metadata", "pool", "stream"};

QString percent(std::int64_t from, std::int64_t to)
{
    if (from == 0)
        return {};
    return QStringLiteral(" (%1%2 %)")
        .arg(to >= from ? QStringLiteral("+") : QString())
        .arg(100.0 * double(to - from) / double(from), 0, 'f', 1);
}

} // namespace

DiffPane::DiffPane(QWidget *parent)
    : QWidget(parent)
    , m_headline(new QLabel(this))
    , m_tables(new QTabWidget(this))
    , m_grouping(new QComboBox(this))
{
    m_headline->setObjectName(QStringLiteral("diffHeadline"));
    m_headline->setWordWrap(true);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *close = new QPushButton(tr("Close comparison"), this);
    for (int t = 0; t < 4; ++t) {
        m_models[t] = new DiffModel(this);
        auto *proxy = new QSortFilterProxyModel(this);
        proxy->setSourceModel(m_models[t]);
        proxy->setSortRole(DiffModel::SortRole);
        QTableView *view = makeTable(proxy, this);
        view->horizontalHeader()->setSectionResizeMode(DiffModel::KeyColumn, QHeaderView::Stretch);
        if (t < 3) {
            m_tables->addTab(view, kTitles[t]);
            continue;
        }
        auto *page = new QWidget(this);
        auto *pageLayout = new QVBoxLayout(page);
        pageLayout->setContentsMargins(0, 0, 0, 0);
        for (const char *grouping : kGroupings)
            m_grouping->addItem(QString::fromStdString(parseBlockGrouping(grouping).title()), QString::fromLatin1(grouping));
        m_grouping->setObjectName(QStringLiteral("diffGrouping"));
        pageLayout->addWidget(m_grouping, 0, Qt::AlignLeft);
        pageLayout->addWidget(view, 1);
        m_tables->addTab(page, kTitles[t]);
    }
    connect(m_grouping, &QComboBox::currentIndexChanged, this, &DiffPane::groupingChosen);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *header = new QHBoxLayout;
    header->addWidget(m_headline, 1);
    header->addWidget(close, 0, Qt::AlignTop);
    layout->addLayout(header);
    layout->addWidget(m_tables, 1);
    connect(close, &QPushButton::clicked, this, &DiffPane::closeRequested);
}

void DiffPane::showDiff(const TraceDiff &diff, const QString &nameA, const QString &nameB)
{
    QString text = tr("<b>A</b> %1 &nbsp; <b>B</b> %2<br>").arg(nameA.toHtmlEscaped(), nameB.toHtmlEscaped());
    text += tr("Peak %1 → %2: <b>%3</b>%4")
                .arg(bytes(diff.a.peakBytes), bytes(diff.b.peakBytes), signedBytes(diff.peakDeltaBytes()),
                     percent(diff.a.peakBytes, diff.b.peakBytes));
    if (diff.a.reservedBytes && diff.b.reservedBytes)
        text += tr(" · reserved %1 → %2").arg(bytes(*diff.a.reservedBytes), bytes(*diff.b.reservedBytes));
    if (diff.a.stepTimeNs && diff.b.stepTimeNs)
        text +=
            tr(" · median step %1 → %2%3")
                .arg(QString::fromStdString(formatDuration(*diff.a.stepTimeNs)),
                     QString::fromStdString(formatDuration(*diff.b.stepTimeNs)), percent(*diff.a.stepTimeNs, *diff.b.stepTimeNs));
    if (diff.samePeaks())
        text += tr("<br>Nothing differs at the peaks.");
    else if (diff.curves)
        text += tr("<br>B's step %1 is drawn over A's on the timeline, phase by phase.").arg(diff.curves->step);
    else
        text += tr("<br>B has no step matching A's peak step: its curve is not drawn.");
    m_headline->setText(text);
    m_models[0]->resetData(diff.byLayer, tr("Layer"));
    m_models[1]->resetData(diff.bySite, tr("Allocation site"));
    m_models[2]->resetData(diff.byCategory, tr("Category"));
    for (int t = 0; t < 3; ++t)
        fitTable(t);
}

void DiffPane::showGroupRows(const std::vector<DiffRow> &rows)
{
    QString title = m_grouping->currentText();
    if (!title.isEmpty())
        title[0] = title[0].toUpper();
    m_models[3]->resetData(rows, title);
    fitTable(3);
}

BlockGrouping DiffPane::grouping() const
{
    return parseBlockGrouping(m_grouping->currentData().toString().toStdString());
}

void DiffPane::fitTable(int tab)
{
    auto *view = tab < 3 ? static_cast<QTableView *>(m_tables->widget(tab)) : m_tables->widget(tab)->findChild<QTableView *>();
    view->sortByColumn(-1, Qt::AscendingOrder); // the largest change either way first, as given
    view->resizeColumnsToContents();
    view->horizontalHeader()->setSectionResizeMode(DiffModel::KeyColumn, QHeaderView::Stretch);
    m_tables->setTabText(tab, kTitles[tab] + QStringLiteral(" (%1)").arg(m_models[tab]->rowCount()));
}

QString DiffPane::headline() const
{
    return m_headline->text();
}

} // namespace peaklens::gui
