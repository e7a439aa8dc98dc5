// SPDX-License-Identifier: Apache-2.0
#include "jsondocument.h"

#include "core/error.h"
#include "core/import/jsonscanner.h"

#include <simdjson.h>

namespace peaklens::pickle {

namespace {

class Converter
{
public:
    explicit Converter(Document &document)
        : m_doc(document)
    {
    }

    // Recursive: simdjson refuses documents nested deeper than 1024 levels, well within the stack.
    Value convert(simdjson::dom::element element)
    {
        switch (element.type()) {
        case simdjson::dom::element_type::NULL_VALUE:
            return Value::none();
        case simdjson::dom::element_type::BOOL:
            return Value::boolean(bool(element.get_bool()));
        case simdjson::dom::element_type::INT64:
            return Value::fromInt(int64_t(element.get_int64()));
        case simdjson::dom::element_type::UINT64:
            return Value::fromUInt(uint64_t(element.get_uint64()));
        case simdjson::dom::element_type::DOUBLE:
            return Value::fromFloat(double(element.get_double()));
        case simdjson::dom::element_type::STRING: {
            const std::string &text = m_doc.ownedStrings.emplace_back(std::string_view(element.get_string()));
            return Value::fromText(Kind::String, text.data(), static_cast<std::uint32_t>(text.size()));
        }
        case simdjson::dom::element_type::ARRAY: {
            std::vector<Value> items;
            for (simdjson::dom::element item : element.get_array())
                items.push_back(convert(item));
            const Value list = m_doc.newContainer(Kind::List);
            m_doc.append(list, items);
            return list;
        }
        case simdjson::dom::element_type::OBJECT: {
            std::vector<Value> items;
            for (simdjson::dom::key_value_pair field : element.get_object()) {
                const std::string &key = m_doc.ownedStrings.emplace_back(field.key);
                items.push_back(Value::fromText(Kind::String, key.data(), static_cast<std::uint32_t>(key.size())));
                items.push_back(convert(field.value));
            }
            const Value dict = m_doc.newContainer(Kind::Dict);
            m_doc.append(dict, items);
            return dict;
        }
        }
        return Value::none();
    }

private:
    Document &m_doc;
};

} // namespace

void parseJsonDocument(const FileBytes &bytes, Document &document, const std::string &path)
{
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    const auto error = parser.parse(bytes.data(), bytes.size(), false).get(root);
    if (error)
        JsonScanner::explainJsonError(bytes.view(), path, simdjson::error_message(error));
    try {
        document.root = Converter(document).convert(root);
    } catch (const Error &error) {
        throw ImportError(path, std::string("is too large: ") + error.what());
    }
    document.seal();
}

} // namespace peaklens::pickle
