#include "core/json_parse.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"

#include <set>
#include <string>
#include <vector>

namespace trainplan {

JsonDuplicateKey::JsonDuplicateKey(std::string key, std::string path)
    : std::runtime_error("the key \"" + key + "\" appears twice in one object"),
      key_(std::move(key)),
      path_(std::move(path)) {}

namespace {

// One frame per object or array being read, innermost last: an object's keys
// so far and the key being read, an array's elements so far.
struct Frame {
  bool array = false;
  size_t elements = 0;
  std::string key;
  std::set<std::string> keys;
};

// The path to `key` in the innermost frame: each frame entered from its
// parent by the parent's current key or element index.
std::string path_to(const std::vector<Frame>& open, const std::string& key) {
  std::string p;
  for (size_t i = 0; i + 1 < open.size(); ++i) {
    if (open[i].array)
      p += "[" + std::to_string(open[i].elements) + "]";
    else
      p += (p.empty() ? "" : ".") + open[i].key;
  }
  return p + (p.empty() ? "" : ".") + key;
}

nlohmann::json::parser_callback_t unique_keys(std::vector<Frame>& open) {
  return [&open](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    auto element_done = [&open] {
      if (!open.empty() && open.back().array) ++open.back().elements;
    };
    switch (event) {
      case E::object_start:
      case E::array_start:
        open.push_back(Frame{event == E::array_start, 0, {}, {}});
        break;
      case E::object_end:
      case E::array_end:
        if (!open.empty()) open.pop_back();
        element_done();
        break;
      case E::key:
        if (!open.empty()) {
          auto key = parsed.get<std::string>();
          if (!open.back().keys.insert(key).second) throw JsonDuplicateKey(key, path_to(open, key));
          open.back().key = std::move(key);
        }
        break;
      case E::value:
        element_done();
        break;
    }
    return true;
  };
}

}  // namespace

nlohmann::json parse_json_unique_keys(const std::string& text) {
  std::vector<Frame> open;
  return nlohmann::json::parse(text, unique_keys(open));
}

nlohmann::json parse_json_unique_keys(std::istream& in) {
  std::vector<Frame> open;
  return nlohmann::json::parse(in, unique_keys(open));
}

std::string json_error_text(const nlohmann::json::exception& e) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const auto close = text.find("] ");
    if (close != std::string::npos) text = text.substr(close + 2);
  }
  return text;
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a folder, not a " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open the " + what);
  try {
    return parse_json_unique_keys(in);
  } catch (const JsonDuplicateKey& e) {
    throw InputError(path, 0, e.path(), e.what());
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number past double's range ("1e400") is out_of_range.
    throw InputError(path, 0, "", "not valid JSON: " + json_error_text(e));
  }
}

}  // namespace trainplan
