// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Python helper's manifest (plugins/python, docs/recording.md): the module tree with
// kinds and parameter bytes, and the checkpoint toggles that were applied. Parsing is a
// pure function; the file comes from the training process and is checked like any input.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens::record {

struct ManifestModule
{
    std::string path; // "blocks.3.attn"; the model itself ("") is left out
    std::string type; // "CausalSelfAttention"
    std::int64_t parameterBytes = 0;
};

struct Manifest
{
    std::vector<ManifestModule> modules;
    std::vector<std::string> checkpoint;
    std::string torchVersion;
};

// Throws peaklens::Error with a sentence when `json` is not a manifest.
Manifest parseManifest(std::string_view json);

// A module path the trace can hold: dot-separated non-empty names, not absurdly deep.
bool isLayerPath(std::string_view path);

} // namespace peaklens::record
