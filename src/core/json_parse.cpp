#include "core/json_parse.h"

#include <set>
#include <vector>

namespace trainplan {

JsonDuplicateKey::JsonDuplicateKey(std::string key)
    : std::runtime_error("the key \"" + key + "\" appears twice in one object"), key_(std::move(key)) {}

namespace {

// One set of keys per object being read, innermost last.
nlohmann::json::parser_callback_t unique_keys(std::vector<std::set<std::string>>& open) {
  return [&open](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) {
      open.emplace_back();
    } else if (event == E::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == E::key && !open.empty()) {
      const auto key = parsed.get<std::string>();
      if (!open.back().insert(key).second) throw JsonDuplicateKey(key);
    }
    return true;
  };
}

}  // namespace

nlohmann::json parse_json_unique_keys(const std::string& text) {
  std::vector<std::set<std::string>> open;
  return nlohmann::json::parse(text, unique_keys(open));
}

nlohmann::json parse_json_unique_keys(std::istream& in) {
  std::vector<std::set<std::string>> open;
  return nlohmann::json::parse(in, unique_keys(open));
}

}  // namespace trainplan
