// SPDX-License-Identifier: Apache-2.0
#pragma once
// A small unpickler for plain data, protocols 2 to 5: the opcodes memory snapshots use.
// It builds values only; opcodes that would import or call Python code (GLOBAL,
// STACK_GLOBAL, REDUCE, BUILD, ...) are refused, so a pickle never executes anything.

#include "core/progress.h"
#include "streamsink.h"
#include "value.h"

#include <string>

namespace peaklens::pickle {

// Decodes document.bytes into document.root. Throws ImportError naming `path`, the byte
// offset and the problem. With a sink, the lists it takes stay empty in the document: what
// was made for their items is released once the sink has read them, and items it reads one
// by one are never made at all.
void unpickle(Document &document, const std::string &path, const Progress &progress = {}, StreamSink *sink = nullptr);

// True when the bytes start like a pickle of protocol 2 or later.
bool looksLikePickle(std::string_view prefix);

} // namespace peaklens::pickle
