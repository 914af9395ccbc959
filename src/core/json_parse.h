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

// Thrown for a key that appears twice in one object. key() is that key;
// path() is where it sits, from the document's root: members by name, array
// elements by index from 0 ("layers[2].name"; "a" at the top level), for
// the caller to name as the field; what() names the key alone.
class JsonDuplicateKey : public std::runtime_error {
 public:
  JsonDuplicateKey(std::string key, std::string path);
  const std::string& key() const { return key_; }
  const std::string& path() const { return path_; }

 private:
  std::string key_, path_;
};

// Throws nlohmann::json::exception where nlohmann::json::parse would, and
// for a document nested deeper than 256 objects and arrays (out_of_range);
// JsonDuplicateKey for a repeated key at any depth; parse_error for a NUL
// byte anywhere (the library would end the text there); Cancelled
// (core/cancel.h) when the calling thread's CancelScope ends mid-parse.
// Time and memory linear in the text.
nlohmann::json parse_json_unique_keys(const std::string& text);
nlohmann::json parse_json_unique_keys(std::istream& in);

// The library's message for a parse or type error without its internal tag
// ("[json.exception.parse_error.101] "), which names nothing a user can act on.
std::string json_error_text(const nlohmann::json::exception& e);

// A JSON file read as parse_json_unique_keys reads it. Every failure is an
// InputError naming `path`: a missing or unreadable file, a folder, text
// that is not JSON, a repeated key (its path as the field). `what` says what
// the file was meant to be ("communication profile", "network file").
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace trainplan
