// SPDX-License-Identifier: Apache-2.0
#include "modelspec.h"

#include "core/error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

namespace peaklens::replay {

namespace {

using json = nlohmann::json;

class SpecReader
{
public:
    SpecReader(const json &object, std::string source)
        : m_object(object)
        , m_source(std::move(source))
    {
    }

    [[noreturn]] void fail(const std::string &problem) const { throw Error(m_source + ": " + problem); }

    std::int64_t integer(const char *key, std::int64_t fallback, std::int64_t low, std::int64_t high)
    {
        m_known.insert(key);
        if (!m_object.contains(key))
            return fallback;
        const json &value = m_object.at(key);
        if (!value.is_number_integer())
            fail(std::string("\"") + key + "\" must be a whole number.");
        const std::int64_t number = value.get<std::int64_t>();
        if (number < low || number > high)
            fail(std::string("\"") + key + "\" is " + std::to_string(number) + "; it must lie between " + std::to_string(low)
                 + " and " + std::to_string(high) + ".");
        return number;
    }

    double real(const char *key, double fallback, double low, double high)
    {
        m_known.insert(key);
        if (!m_object.contains(key))
            return fallback;
        const json &value = m_object.at(key);
        if (!value.is_number())
            fail(std::string("\"") + key + "\" must be a number.");
        const double number = value.get<double>();
        if (!(number >= low && number <= high))
            fail(std::string("\"") + key + "\" must lie between " + json(low).dump() + " and " + json(high).dump() + ".");
        return number;
    }

    std::string text(const char *key, const std::string &fallback, const std::set<std::string> &allowed)
    {
        m_known.insert(key);
        if (!m_object.contains(key))
            return fallback;
        const json &value = m_object.at(key);
        if (!value.is_string() || !allowed.contains(value.get<std::string>())) {
            std::string list;
            for (const std::string &name : allowed)
                list += (list.empty() ? "" : ", ") + name;
            fail(std::string("\"") + key + "\" must be one of " + list + ".");
        }
        return value.get<std::string>();
    }

    const json *child(const char *key)
    {
        m_known.insert(key);
        return m_object.contains(key) ? &m_object.at(key) : nullptr;
    }

    // Unknown keys are almost always typos, which would silently fall back to defaults.
    void rejectUnknownKeys() const
    {
        for (const auto &[key, value] : m_object.items()) {
            if (!m_known.contains(key))
                fail("unknown key \"" + key + "\" (docs/replay.md lists the keys of each model).");
        }
    }

private:
    const json &m_object;
    std::string m_source;
    std::set<std::string> m_known;
};

constexpr std::int64_t kMaxLayers = 4096;
constexpr std::int64_t kMaxWidth = 1 << 16;
constexpr std::int64_t kMaxLength = 1 << 20;

void readScriptBlocks(SpecReader &reader, ModelSpec &spec, const std::string &baseDirectory)
{
    const json *blocks = reader.child("blocks");
    if (!blocks || !blocks->is_array() || blocks->empty())
        reader.fail("a torchscript model needs \"blocks\": a list of TorchScript files, one per layer.");
    if (blocks->size() > static_cast<std::size_t>(kMaxLayers))
        reader.fail("more than " + std::to_string(kMaxLayers) + " blocks.");
    std::set<std::string> names;
    for (std::size_t i = 0; i < blocks->size(); ++i) {
        const json &entry = (*blocks)[i];
        ScriptBlock block;
        if (entry.is_string()) {
            block.name = "blocks." + std::to_string(i);
            block.file = entry.get<std::string>();
        } else if (entry.is_object() && entry.contains("file") && entry.at("file").is_string()) {
            block.file = entry.at("file").get<std::string>();
            block.name = entry.value("name", "blocks." + std::to_string(i));
        } else {
            reader.fail("block " + std::to_string(i) + " must be a file name or {\"name\": ..., \"file\": ...}.");
        }
        if (block.name.empty() || block.file.empty())
            reader.fail("block " + std::to_string(i) + " has an empty name or file.");
        if (!names.insert(block.name).second)
            reader.fail("two blocks are named \"" + block.name + "\".");
        std::filesystem::path file(block.file);
        if (file.is_relative())
            file = std::filesystem::path(baseDirectory) / file;
        block.file = file.lexically_normal().string();
        spec.blocks.push_back(std::move(block));
    }
    spec.layers = static_cast<std::int64_t>(spec.blocks.size());

    const json *input = reader.child("input");
    if (!input || !input->is_object())
        reader.fail("a torchscript model needs \"input\": {\"shape\": [batch, ...], \"dtype\": \"float32\" or \"int64\"}.");
    SpecReader inputReader(*input, "\"input\"");
    const json *shape = inputReader.child("shape");
    if (!shape || !shape->is_array() || shape->empty() || shape->size() > 8)
        reader.fail("\"input.shape\" must be a list of 1 to 8 sizes, batch first.");
    std::int64_t elements = 1;
    for (const json &size : *shape) {
        if (!size.is_number_integer() || size.get<std::int64_t>() < 1 || size.get<std::int64_t>() > kMaxLength)
            reader.fail("\"input.shape\" sizes must be whole numbers from 1 to " + std::to_string(kMaxLength) + ".");
        elements *= size.get<std::int64_t>();
        if (elements > (std::int64_t(1) << 40))
            reader.fail("\"input.shape\" describes more than 2^40 elements.");
        spec.inputShape.push_back(size.get<std::int64_t>());
    }
    spec.integerInput = inputReader.text("dtype", "float32", {"float32", "int64"}) == "int64";
    inputReader.rejectUnknownKeys();
    spec.batch = spec.inputShape.front();
}

} // namespace

json ModelSpec::toJson() const
{
    json out = {{"model", modelKindName(kind)}};
    switch (kind) {
    case ModelKind::Gpt:
        out.update({{"layers", layers}, {"d_model", dModel}, {"heads", heads}, {"seq", seq}, {"vocab", vocab}});
        break;
    case ModelKind::Mlp:
        out.update({{"layers", layers}, {"d_model", dModel}, {"classes", classes}});
        break;
    case ModelKind::Cnn:
        out.update({{"layers", layers}, {"channels", channels}, {"image", image}, {"classes", classes}});
        break;
    case ModelKind::TorchScript: {
        json blockList = json::array();
        for (const ScriptBlock &block : blocks)
            blockList.push_back({{"name", block.name}, {"file", block.file}});
        out.update({{"blocks", blockList},
                    {"input", {{"shape", inputShape}, {"dtype", integerInput ? "int64" : "float32"}}},
                    {"loss", loss}});
        if (loss == "cross_entropy" || integerInput)
            out["classes"] = classes;
        break;
    }
    }
    if (kind != ModelKind::TorchScript)
        out.update({{"batch", batch}, {"dropout", dropout}});
    out.update({{"lr", learningRate}, {"seed", seed}});
    return out;
}

std::string modelKindName(ModelKind kind)
{
    switch (kind) {
    case ModelKind::Gpt:
        return "gpt";
    case ModelKind::Mlp:
        return "mlp";
    case ModelKind::Cnn:
        return "cnn";
    case ModelKind::TorchScript:
        return "torchscript";
    }
    return "gpt";
}

ModelSpec builtinSpec(const std::string &name)
{
    return parseModelSpec(json{{"model", name}}, "--model", ".");
}

ModelSpec parseModelSpec(const json &object, const std::string &source, const std::string &baseDirectory)
{
    if (!object.is_object())
        throw Error(source + ": a model spec must be a JSON object.");
    SpecReader reader(object, source);
    ModelSpec spec;
    const std::string kind = reader.text("model", "", {"gpt", "mlp", "cnn", "torchscript"});
    if (kind.empty())
        reader.fail("\"model\" is missing; it must be gpt, mlp, cnn or torchscript.");
    spec.learningRate = reader.real("lr", spec.learningRate, 0.0, 10.0);
    spec.seed = static_cast<std::uint64_t>(reader.integer("seed", 0, 0, std::numeric_limits<std::int64_t>::max()));

    if (kind == "torchscript") {
        spec.kind = ModelKind::TorchScript;
        readScriptBlocks(reader, spec, baseDirectory);
        spec.loss = reader.text("loss", spec.integerInput ? "cross_entropy" : "mse", {"mse", "cross_entropy"});
        spec.classes = reader.integer("classes", spec.classes, 2, 1 << 24);
        reader.rejectUnknownKeys();
        return spec;
    }

    spec.kind = kind == "gpt" ? ModelKind::Gpt : kind == "mlp" ? ModelKind::Mlp : ModelKind::Cnn;
    spec.layers = reader.integer("layers", spec.kind == ModelKind::Mlp ? 8 : spec.layers, 1, kMaxLayers);
    spec.batch = reader.integer("batch", spec.kind == ModelKind::Gpt ? 4 : spec.kind == ModelKind::Mlp ? 1024 : 8, 1, kMaxLength);
    spec.dropout = reader.real("dropout", spec.dropout, 0.0, 0.9);
    switch (spec.kind) {
    case ModelKind::Gpt:
        spec.dModel = reader.integer("d_model", spec.dModel, 1, kMaxWidth);
        spec.heads = reader.integer("heads", spec.heads, 1, kMaxWidth);
        spec.seq = reader.integer("seq", spec.seq, 1, kMaxLength);
        spec.vocab = reader.integer("vocab", spec.vocab, 2, 1 << 24);
        if (spec.dModel % spec.heads != 0)
            reader.fail("\"d_model\" (" + std::to_string(spec.dModel) + ") must be a multiple of \"heads\" ("
                        + std::to_string(spec.heads) + ").");
        break;
    case ModelKind::Mlp:
        spec.dModel = reader.integer("d_model", 512, 1, kMaxWidth);
        spec.classes = reader.integer("classes", spec.classes, 2, 1 << 24);
        break;
    case ModelKind::Cnn:
        spec.channels = reader.integer("channels", spec.channels, 1, 8192);
        spec.image = reader.integer("image", spec.image, 4, 8192);
        spec.classes = reader.integer("classes", spec.classes, 2, 1 << 24);
        break;
    case ModelKind::TorchScript:
        break;
    }
    reader.rejectUnknownKeys();
    return spec;
}

ModelSpec readModelSpec(const std::string &path)
{
    std::ifstream file(path);
    if (!file)
        throw FileError(path, "cannot open the model spec for reading.");
    json object;
    try {
        object = json::parse(file);
    } catch (const json::parse_error &error) {
        throw FileError(path, std::string("not valid JSON: ") + error.what());
    }
    return parseModelSpec(object, path, std::filesystem::absolute(path).parent_path().string());
}

} // namespace peaklens::replay
