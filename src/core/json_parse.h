// JSON text parsed as nlohmann::json parses it, except that an object naming
// the same key twice is refused: the library keeps the last value silently, so
// a request or a file that sets a field twice would run on one of the two
// without anyone seeing which.
#pragma once
#include <istream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace trainplan {

// Thrown for a key that appears twice in one object; key() is that key.
class JsonDuplicateKey : public std::runtime_error {
 public:
  explicit JsonDuplicateKey(std::string key);
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Throws nlohmann::json::exception where nlohmann::json::parse would, and
// JsonDuplicateKey for a repeated key at any depth.
nlohmann::json parse_json_unique_keys(const std::string& text);
nlohmann::json parse_json_unique_keys(std::istream& in);

}  // namespace trainplan
