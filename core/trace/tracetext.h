// SPDX-License-Identifier: Apache-2.0
#pragma once
// PeakLens trace text: a small line-based language that describes a trace by hand, for
// tests, fixtures and the bundled sample. docs/formats.md has the full grammar; e.g.
//
//   layer blocks.0 kind=Block params=4MiB
//   begin step 1
//   +10us begin fwd:blocks.0
//   alloc a 256KiB activation
//   end fwd:blocks.0
//   free a @bwd:blocks.0
//   end step 1
//
// print() writes a trace back as text that parses to the same trace.

#include "trace.h"

#include <memory>
#include <string>
#include <string_view>

namespace peaklens {

// Throws TraceTextError naming the line on anything it does not understand.
std::shared_ptr<const Trace> parseTraceText(std::string_view text);
std::string printTraceText(const Trace &trace);

} // namespace peaklens
