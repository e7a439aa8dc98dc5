// SPDX-License-Identifier: Apache-2.0
#include "jsondump.h"

#include "jsonwriter.h"

namespace peaklens {

namespace {

void write(JsonWriter &out, const nlohmann::ordered_json &value)
{
    using Type = nlohmann::ordered_json::value_t;
    switch (value.type()) {
    case Type::object:
        out.beginObject();
        for (auto item = value.begin(); item != value.end(); ++item) {
            out.key(item.key());
            write(out, item.value());
        }
        out.endObject();
        break;
    case Type::array:
        out.beginArray();
        for (const auto &item : value)
            write(out, item);
        out.endArray();
        break;
    case Type::string:
        out.value(value.get_ref<const std::string &>());
        break;
    case Type::boolean:
        out.value(value.get<bool>());
        break;
    case Type::number_integer:
        out.value(value.get<std::int64_t>());
        break;
    case Type::number_unsigned:
        out.value(value.get<std::uint64_t>());
        break;
    case Type::number_float:
        out.value(value.get<double>());
        break;
    default:
        out.null();
        break; // null; binary and discarded values are never built here
    }
}

} // namespace

std::string dumpJson(const nlohmann::ordered_json &value, int indent)
{
    JsonWriter out(indent);
    write(out, value);
    return out.take();
}

} // namespace peaklens
