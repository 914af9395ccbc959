#include "io/layer_graph_json.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <vector>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_parse.h"

namespace trainplan::io {

namespace {

using nlohmann::json;

// A whole number >= 1 (or >= 0 with `zero_ok`) at j[key], or `fallback` when absent and fallback >= 0.
int size_field(const std::string& path, const json& j, const std::string& where, const char* key, int fallback,
               bool zero_ok = false) {
  const std::string field = where + "." + key;
  if (!j.contains(key)) {
    if (fallback >= 0) return fallback;
    throw InputError(path, 0, field, "missing");
  }
  const json& v = j.at(key);
  if (!v.is_number_integer() || v.get<long long>() < (zero_ok ? 0 : 1) || v.get<long long>() > 1'000'000'000)
    throw InputError(path, 0, field, fmt::format("must be a whole number from {} to 10^9, got {}", zero_ok ? 0 : 1, v.dump()));
  return static_cast<int>(v.get<long long>());
}

// A key the format does not have would be ignored, and a misspelt one ("stirde") would leave its
// default in place unseen: refused, naming the keys the object may have.
void check_keys(const std::string& path, const json& j, const std::string& where,
                const std::vector<std::string>& allowed) {
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const auto& a : allowed) known = known || key == a;
    if (known) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw InputError(path, 0, where.empty() ? key : where + "." + key,
                     fmt::format("unknown key (this object takes: {})", list));
  }
}

}  // namespace

structure::LayerGraph read_layer_graph_json(const std::string& path) {
  const json doc = read_json_file(path, "network file");
  if (!doc.is_object()) throw InputError(path, 0, "", "the network must be a JSON object");
  check_keys(path, doc, "", {"name", "description", "input", "layers"});
  // json::value() throws type_error for a field of another type: checked here to name the field.
  auto text = [&](const char* key, const std::string& fallback) {
    if (!doc.contains(key) || doc[key].is_null()) return fallback;
    if (!doc[key].is_string()) throw InputError(path, 0, key, "must be a string");
    return doc[key].get<std::string>();
  };
  const std::string name = text("name", "custom");
  structure::GraphBuilder g(name, text("description", "from " + path));
  if (!doc.contains("input") || !doc["input"].is_object())
    throw InputError(path, 0, "input", "missing: {\"image\": [c, h, w]} or {\"sequence\": [tokens, features]}");
  const json& input = doc["input"];
  check_keys(path, input, "input", {"image", "sequence"});
  auto dims = [&](const char* key, size_t n) {
    const json& a = input.at(key);
    if (!a.is_array() || a.size() != n) throw InputError(path, 0, std::string("input.") + key, fmt::format("needs {} sizes", n));
    std::vector<int> out;
    for (size_t i = 0; i < n; ++i) {
      if (!a[i].is_number_integer() || a[i].get<long long>() < 1 || a[i].get<long long>() > 1'000'000'000)
        throw InputError(path, 0, fmt::format("input.{}[{}]", key, i), "must be a whole number from 1 to 10^9");
      out.push_back(static_cast<int>(a[i].get<long long>()));
    }
    return out;
  };
  if (input.contains("image")) {
    auto d = dims("image", 3);
    g.image(d[0], d[1], d[2]);
  } else if (input.contains("sequence")) {
    auto d = dims("sequence", 2);
    g.sequence(d[0], d[1]);
  } else {
    throw InputError(path, 0, "input", "needs \"image\": [c, h, w] or \"sequence\": [tokens, features]");
  }
  if (!doc.contains("layers") || !doc["layers"].is_array() || doc["layers"].empty())
    throw InputError(path, 0, "layers", "needs a non-empty array of layers");
  const json& layers = doc["layers"];
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& l = layers[i];
    const std::string where = fmt::format("layers[{}]", i);
    if (!l.is_object() || !l.contains("type") || !l["type"].is_string())
      throw InputError(path, 0, where + ".type", "each layer needs a \"type\"");
    const std::string type = l["type"];
    static const std::map<std::string, std::vector<std::string>> kKeys = {
        {"conv", {"type", "out", "kernel", "stride", "padding", "bias"}},
        {"pool", {"type", "kernel", "stride", "padding"}},
        {"linear", {"type", "out", "bias"}},
        {"attention", {"type", "heads"}},
        {"lstm", {"type", "hidden", "bidirectional"}},
        {"gru", {"type", "hidden", "bidirectional"}},
        {"embedding", {"type", "rows", "dim", "per_example"}},
        {"upsample", {"type", "factor"}},
        {"set_channels", {"type", "channels"}},
    };
    const auto keys = kKeys.find(type);
    if (keys != kKeys.end()) check_keys(path, l, where, keys->second);
    else if (type == "batch_norm" || type == "relu" || type == "global_pool" || type == "flatten" ||
             type == "layer_norm" || type == "gelu" || type == "add")
      check_keys(path, l, where, {"type"});
    auto size = [&](const char* key, int fallback = -1, bool zero_ok = false) {
      return size_field(path, l, where, key, fallback, zero_ok);
    };
    // A true/false field, named with its layer where it is not one.
    auto flag = [&](const char* key, bool fallback) {
      const auto it = l.find(key);
      if (it == l.end()) return fallback;
      if (!it->is_boolean())
        throw InputError(path, 0, where + "." + key, fmt::format("must be true or false, got {}", it->dump()));
      return it->get<bool>();
    };
    try {
      if (type == "conv") {
        const int k = size("kernel");
        g.conv(size("out"), k, size("stride", 1), size("padding", 0, true), flag("bias", false));
      } else if (type == "batch_norm") {
        g.batch_norm();
      } else if (type == "relu") {
        g.relu();
      } else if (type == "pool") {
        const int k = size("kernel");
        g.pool(k, size("stride", k), size("padding", 0, true));
      } else if (type == "global_pool") {
        g.global_pool();
      } else if (type == "flatten") {
        g.flatten();
      } else if (type == "linear") {
        g.linear(size("out"), flag("bias", true));
      } else if (type == "layer_norm") {
        g.layer_norm();
      } else if (type == "gelu") {
        g.gelu();
      } else if (type == "attention") {
        g.attention(size("heads"));
      } else if (type == "lstm" || type == "gru") {
        g.recurrent(size("hidden"), type == "lstm" ? 4 : 3, flag("bidirectional", false));
      } else if (type == "embedding") {
        // Its output is what follows it: per_example tokens of dim features (the builder keeps the
        // previous shape for the built-in networks, which merge several embeddings themselves).
        const int dim = size("dim"), per_example = size("per_example");
        g.embedding(size("rows"), dim, per_example);
        g.sequence(per_example, dim);
      } else if (type == "add") {
        g.add();
      } else if (type == "upsample") {
        g.upsample(size("factor"));
      } else if (type == "set_channels") {
        g.set_channels(size("channels"));
      } else {
        throw InputError(path, 0, where + ".type",
                         "unknown layer type '" + type +
                             "' (conv, batch_norm, relu, pool, global_pool, flatten, linear, layer_norm, gelu, "
                             "attention, lstm, gru, embedding, add, upsample, set_channels)");
      }
    } catch (const json::exception& e) {
      throw InputError(path, 0, where, fmt::format("bad field: {}", json_error_text(e)));
    } catch (const InputError& e) {
      if (!e.file().empty()) throw;
      throw InputError(path, 0, where, e.message());  // a shape the layer cannot take
    }
  }
  structure::LayerGraph built = g.build();
  // Layers that cost nothing (set_channels alone) leave a step of 0 s and an infinite rate.
  if (built.layers.empty())
    throw InputError(path, 0, "layers", "none of the layers has a cost of its own (set_channels alone): give at "
                                        "least one that computes");
  return built;
}

}  // namespace trainplan::io
