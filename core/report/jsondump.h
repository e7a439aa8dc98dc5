// SPDX-License-Identifier: Apache-2.0
#pragma once
// A JSON value built as a tree (small answers: a plan, a diff, a report's figures) written
// as text through JsonWriter, the one writer of JSON: valid whatever bytes a trace holds
// (nlohmann's own dump throws on a string that is not UTF-8, and names in a file are
// whatever its writer put there). Long answers are written with JsonWriter directly.

#include <nlohmann/json.hpp>

#include <string>

namespace peaklens {

// `value` as JSON text, each string and key valid UTF-8: bytes that are not become the
// four characters \xHH (validUtf8), so that readers see them and parsers accept the file.
// `indent` as for nlohmann's dump: -1 writes one line.
std::string dumpJson(const nlohmann::ordered_json &value, int indent = 2);

} // namespace peaklens
