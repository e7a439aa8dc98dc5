// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builds a pickle::Document from JSON text, so a snapshot saved as JSON goes through the
// same interpretation as a pickled one.

#include "core/import/filebytes.h"
#include "value.h"

#include <string>

namespace peaklens::pickle {

// Parses bytes (with simdjson's padding) into document. Throws ImportError naming path.
void parseJsonDocument(const FileBytes &bytes, Document &document, const std::string &path);

} // namespace peaklens::pickle
