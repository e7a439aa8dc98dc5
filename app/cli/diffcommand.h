// SPDX-License-Identifier: Apache-2.0
#pragma once
// The object `peaklens-cli diff --json` prints (docs/cli.md), for the commands that answer with it.

#include "core/analysis/tracediff.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace peaklens::cli {

nlohmann::ordered_json diffToJson(const std::string &pathA, const std::string &pathB, const TraceDiff &diff,
                                  std::optional<std::size_t> top, const std::optional<BlockGrouping> &grouping);

} // namespace peaklens::cli
