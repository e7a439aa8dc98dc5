// SPDX-License-Identifier: Apache-2.0
#pragma once
// JSON text that is valid whatever bytes a trace holds: nlohmann's dump throws on a string
// that is not UTF-8, and names in a file are whatever its writer put there.

#include <nlohmann/json.hpp>

#include <string>

namespace peaklens {

// `value` as JSON text, each string and key made valid UTF-8 first: bytes that are not
// become the four characters \xHH (validUtf8), so that readers see them and parsers
// accept the file. `indent` as for nlohmann's dump: -1 writes one line.
std::string dumpJson(nlohmann::ordered_json value, int indent = 2);

} // namespace peaklens
