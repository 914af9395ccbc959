// The text of a JSON answer. Bytes that are not UTF-8 (a file name, a label
// read from a user's file) become U+FFFD instead of stopping the answer with
// an exception after its work is done.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace trainplan::io {

inline std::string json_text(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace trainplan::io
