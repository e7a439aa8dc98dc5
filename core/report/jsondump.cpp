// SPDX-License-Identifier: Apache-2.0
#include "jsondump.h"

#include "core/trace/visibletext.h"

#include <utility>
#include <vector>

namespace peaklens {

namespace {

using json = nlohmann::ordered_json;

bool isValidUtf8(const std::string &text)
{
    return validUtf8(text) == text;
}

void makeValidUtf8(json &value)
{
    if (value.is_string()) {
        std::string &text = value.get_ref<std::string &>();
        if (!isValidUtf8(text))
            text = validUtf8(text);
    } else if (value.is_array()) {
        for (json &item : value)
            makeValidUtf8(item);
    } else if (value.is_object()) {
        bool keysValid = true;
        for (auto item = value.begin(); item != value.end(); ++item) {
            keysValid = keysValid && isValidUtf8(item.key());
            makeValidUtf8(item.value());
        }
        if (keysValid)
            return;
        // Keys cannot be changed in place: the object is rebuilt, in its order.
        json rebuilt = json::object();
        for (auto item = value.begin(); item != value.end(); ++item)
            rebuilt[validUtf8(item.key())] = std::move(item.value());
        value = std::move(rebuilt);
    }
}

} // namespace

std::string dumpJson(nlohmann::ordered_json value, int indent)
{
    makeValidUtf8(value);
    return value.dump(indent);
}

} // namespace peaklens
