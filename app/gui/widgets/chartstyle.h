// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the app's charts share in how they look: the palette's colours as Qt's, axis ticks
// at 1, 2 or 5 times a power of ten (as in the reports), the binary unit a value axis is
// labelled in, and layer paths short enough for a legend.

#include "core/report/palette.h"

#include <qcustomplot.h>

#include <QColor>
#include <QPalette>
#include <QString>

#include <cstdint>
#include <utility>

namespace peaklens::gui {

QColor paletteColor(palette::Rgb rgb, int alpha = 255);

class NiceTicker final : public QCPAxisTicker
{
protected:
    double getTickStep(const QCPRange &range) override;
};

// The unit for values up to `bytes`, so axis numbers stay short: bytes per unit and its name.
std::pair<double, QString> byteUnit(std::int64_t bytes);

// A band between two curves (a file's lowest and highest bytes per chunk): outlined in
// the text colour, filled grey, named `name` in the legend by its upper edge alone.
void styleBand(QCPGraph *lowest, QCPGraph *highest, const QPalette &palette, const QString &name);

// The plot's legend in rows under it, where it never hides data, 12 entries a row.
void placeLegendBelow(QCustomPlot *plot);

// "…model:253.11" for "nsys_profile:142.model:253.11": the whole trailing components of a
// layer's path that fit in a legend.
QString legendLayerName(const QString &path);

} // namespace peaklens::gui
