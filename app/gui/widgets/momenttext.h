// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the timeline's tooltip says at a time: allocated and reserved bytes, the phase and
// layer of the last event, the site of its allocation, the step; and over a block, that
// block: its size, when it was allocated and freed, its layer, category, phase and stack.

#include "tracedocument.h"

#include <QString>

namespace peaklens::gui {

QString momentText(const TraceDocument &document, const TimelineSeries &series, std::int64_t originNs, std::int64_t timeNs);

// Block `block` of document.blocks, as lines of plain text; its user-code frames, innermost
// first, up to `frames` of them.
QString blockText(const TraceDocument &document, std::size_t block, std::int64_t originNs, std::size_t frames);

} // namespace peaklens::gui
