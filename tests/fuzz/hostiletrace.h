// SPDX-License-Identifier: Apache-2.0
#pragma once
// Traces for the report writers whose every name is hostile: the structure of a given
// trace (layers, events, ranges, steps, stacks) with its layer paths and kinds, metadata,
// frames and kernel names replaced by text from the fuzz input.

#include "core/trace/trace.h"

#include <string>

class FuzzedDataProvider;

namespace peaklens::fuzz {

// Text no name should break a report with: invalid UTF-8, control characters, characters
// that reorder or hide text, markup, CSV formulas, and very long runs of these.
std::string hostileText(FuzzedDataProvider &input);

// `skeleton` with its names from `input`. Throws peaklens::Error where the builder
// refuses a name (an empty or overlong layer path).
TracePtr withHostileNames(const Trace &skeleton, FuzzedDataProvider &input);

} // namespace peaklens::fuzz
