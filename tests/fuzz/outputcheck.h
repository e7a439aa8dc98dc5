// SPDX-License-Identifier: Apache-2.0
#pragma once
// Properties of the report writers' output, checked independently of the code that
// escapes names: each function returns what is wrong, with its byte offset, or nothing.

#include <string>
#include <string_view>

namespace peaklens::fuzz {

// Invalid UTF-8 (overlong forms, surrogates and code points past U+10FFFF included).
std::string utf8Problem(std::string_view text);

// utf8Problem, and characters no displayed text should hold: C0 controls other than tab
// and line breaks, DEL, C1 controls, and the bidirectional embeddings, overrides,
// isolates and marks that make text display as something else.
std::string hiddenTextProblem(std::string_view text);

// Where `document` is not well-formed XML (an optional <!DOCTYPE ...> aside): tags that
// do not nest, attributes without quotes or with '<' in them, '&' that starts no
// reference, comments holding "--", text outside the one root element.
std::string markupProblem(std::string_view document);

// Where `json` is not one JSON value (in UTF-8, as JSON must be).
std::string jsonProblem(std::string_view json);
// jsonProblem, or no array "runs" with `runs` entries.
std::string jsonReportProblem(std::string_view json, std::size_t runs);

// Where `csv` is not one table of RFC 4180 records ending in '\n' with as many fields as
// its header, or where a field of a text column (named in the header: trace, layer,
// kind, ...) starts with a character that makes a spreadsheet read it as a formula.
std::string csvProblem(std::string_view csv);

} // namespace peaklens::fuzz
