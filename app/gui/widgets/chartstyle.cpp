// SPDX-License-Identifier: GPL-3.0-or-later
#include "chartstyle.h"

#include "core/report/axisticks.h"

namespace peaklens::gui {

namespace {

constexpr qsizetype kLegendNameLength = 30;

} // namespace

QColor paletteColor(palette::Rgb rgb, int alpha)
{
    QColor value(static_cast<QRgb>(rgb));
    value.setAlpha(alpha);
    return value;
}

double NiceTicker::getTickStep(const QCPRange &range)
{
    const double step = niceStep(range.size(), tickCount());
    return step > 0 ? step : QCPAxisTicker::getTickStep(range);
}

std::pair<double, QString> byteUnit(std::int64_t bytes)
{
    if (bytes >= (std::int64_t(1) << 30))
        return {double(1 << 30), QStringLiteral("GiB")};
    if (bytes >= (std::int64_t(1) << 20))
        return {double(1 << 20), QStringLiteral("MiB")};
    if (bytes >= 1024)
        return {1024.0, QStringLiteral("KiB")};
    return {1.0, QStringLiteral("bytes")};
}

void placeLegendBelow(QCustomPlot *plot)
{
    plot->legend->setVisible(true);
    plot->legend->setFont(plot->font());
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot->legend->setWrap(12);
    auto *legendRow = new QCPLayoutGrid;
    plot->plotLayout()->addElement(1, 0, legendRow);
    legendRow->setMargins(QMargins(0, 0, 0, 4));
    legendRow->addElement(0, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
}

void styleBand(QCPGraph *lowest, QCPGraph *highest, const QPalette &palette, const QString &name)
{
    for (QCPGraph *graph : {lowest, highest}) {
        graph->setPen(QPen(palette.text().color(), 1));
        graph->setLineStyle(QCPGraph::lsStepLeft);
    }
    QColor band = palette.mid().color();
    band.setAlpha(170);
    highest->setBrush(band);
    highest->setChannelFillGraph(lowest);
    highest->setName(name);
}

QString legendLayerName(const QString &path)
{
    if (path.size() <= kLegendNameLength)
        return path;
    qsizetype cut = path.indexOf(QLatin1Char('.'), path.size() - kLegendNameLength);
    if (cut < 0)
        cut = path.size() - kLegendNameLength;
    return QChar(0x2026) + path.mid(cut + (path[cut] == QLatin1Char('.') ? 1 : 0));
}

} // namespace peaklens::gui
