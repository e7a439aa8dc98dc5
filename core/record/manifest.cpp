// SPDX-License-Identifier: Apache-2.0
#include "core/record/manifest.h"

#include "core/error.h"
#include "core/trace/tracebuilder.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace peaklens::record {

namespace {

const nlohmann::json &field(const nlohmann::json &object, const char *key)
{
    static const nlohmann::json missing;
    if (!object.is_object())
        return missing;
    auto it = object.find(key);
    return it == object.end() ? missing : *it;
}

} // namespace

bool isLayerPath(std::string_view path)
{
    if (path.empty() || path.front() == '.' || path.back() == '.' || path.find("..") != std::string_view::npos)
        return false;
    return std::size_t(std::count(path.begin(), path.end(), '.')) < TraceBuilder::kMaxLayerDepth;
}

Manifest parseManifest(std::string_view json)
{
    const auto root = nlohmann::json::parse(json, nullptr, false);
    if (root.is_discarded())
        throw Error("it is not JSON.");
    if (field(root, "format") != "peaklens-manifest" || !field(root, "modules").is_array())
        throw Error("it is not a PeakLens manifest (a JSON object with format \"peaklens-manifest\" and modules).");
    Manifest manifest;
    for (const auto &module : field(root, "modules")) {
        const auto &path = field(module, "path");
        const auto &type = field(module, "type");
        if (!path.is_string() || !type.is_string())
            throw Error("a module entry has no path or type.");
        const auto &name = path.get_ref<const std::string &>();
        if (name.empty())
            continue; // the model itself
        if (!isLayerPath(name))
            throw Error("the module path \"" + name.substr(0, 80) + "\" is not a dotted module path.");
        const auto &bytes = field(module, "parameter_bytes");
        std::int64_t parameterBytes = 0;
        if (bytes.is_number_integer()) {
            parameterBytes = bytes.get<std::int64_t>();
            if (parameterBytes < 0 || parameterBytes > TraceBuilder::kMaxEventBytes)
                throw Error("module " + name + " claims " + std::to_string(parameterBytes) + " parameter bytes.");
        }
        manifest.modules.push_back({name, type.get<std::string>(), parameterBytes});
    }
    const auto &checkpoint = field(root, "checkpoint");
    if (checkpoint.is_array()) {
        for (const auto &entry : checkpoint) {
            if (entry.is_string())
                manifest.checkpoint.push_back(entry.get<std::string>());
        }
    }
    if (const auto &torch = field(root, "torch"); torch.is_string())
        manifest.torchVersion = torch.get<std::string>();
    return manifest;
}

} // namespace peaklens::record
