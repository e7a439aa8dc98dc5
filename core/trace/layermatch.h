// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a layer is across two recordings of one script: its place in the model's structure,
// not the line numbers its name shows. Layers named from call stacks ("model:253[3]")
// change name when an edit moves a line; their match keys do not.

#include "trace.h"

#include <string>
#include <vector>

namespace peaklens {

// Per layer of the trace, its key: the parent's key, then each "file:line" part as the
// file and the rank of its line among its siblings' lines in that file ("model#2[3]"),
// so that lines moved together keep their order and their keys. Module paths from the
// helper or Kineto ("blocks.3.attn") are their own keys.
std::vector<std::string> layerMatchKeys(const Trace &trace);

} // namespace peaklens
