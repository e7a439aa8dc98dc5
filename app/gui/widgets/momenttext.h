#pragma once
// What the timeline's tooltip says at a time: allocated and reserved bytes, the phase and
// layer of the last event, the site of its allocation, the step.

#include "tracedocument.h"

#include <QString>

namespace peaklens::gui {

QString momentText(const TraceDocument &document, const TimelineSeries &series, std::int64_t originNs, std::int64_t timeNs);

} // namespace peaklens::gui
