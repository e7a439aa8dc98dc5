#include "value.h"

namespace peaklens::pickle {

const Value *Document::find(const Value &dict, std::string_view key) const
{
    if (!dict.isDict())
        return nullptr;
    const std::vector<Value> &pairs = items(dict);
    for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
        if (pairs[i].isString() && pairs[i].string() == key)
            return &pairs[i + 1];
    }
    return nullptr;
}

} // namespace peaklens::pickle
