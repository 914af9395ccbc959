#include "core/json_parse.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/cancel.h"
#include "core/error.h"

namespace trainplan {

JsonDuplicateKey::JsonDuplicateKey(std::string key, std::string path)
    : std::runtime_error("the key \"" + key + "\" appears twice in one object"),
      key_(std::move(key)),
      path_(std::move(path)) {}

namespace {

// Deeper than any request or file trainplan reads (a network file nests 4
// levels): past it a document is refused before its frames take memory.
constexpr size_t kMostDepth = 256;

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

// The library's DOM builder, with each object's keys checked as they come.
// A SAX handler, not the library's parse callback: the callback scans its
// parent container at every object's end, quadratic in a flat array of
// objects (a 3 MB request body took minutes), where this is linear. Every
// 4096 events it checks the caller's CancelScope (core/cancel.h), so a
// request's time limit holds while its body parses.
class UniqueKeysSax {
 public:
  using json = nlohmann::json;
  explicit UniqueKeysSax(json& root) : dom_(root) {}

  bool null() { return value(), dom_.null(); }
  bool boolean(bool v) { return value(), dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value(), dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value(), dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return value(), dom_.number_float(v, s); }
  bool string(json::string_t& v) { return value(), dom_.string(v); }
  bool binary(json::binary_t& v) { return value(), dom_.binary(v); }
  bool start_object(std::size_t n) { return open(false), dom_.start_object(n); }
  bool start_array(std::size_t n) { return open(true), dom_.start_array(n); }
  bool end_object() { return close(), dom_.end_object(); }
  bool end_array() { return close(), dom_.end_array(); }
  bool key(json::string_t& k) {
    tick();
    if (!open_.back().keys.insert(k).second) throw JsonDuplicateKey(k, path_to(open_, k));
    open_.back().key = k;
    return dom_.key(k);
  }
  // A template, so that the library's own type (parse_error,
  // out_of_range) is what is thrown, not its base.
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return dom_.parse_error(position, token, e);
  }

 private:
  void tick() {
    if (++events_ % 4096 == 0) check_cancelled();
  }
  // A scalar, or a container once closed: one more element of an array.
  void value() {
    tick();
    if (!open_.empty() && open_.back().array) ++open_.back().elements;
  }
  void open(bool array) {
    tick();
    if (open_.size() >= kMostDepth)
      throw json::out_of_range::create(
          410, "the document nests deeper than " + std::to_string(kMostDepth) + " objects and arrays", nullptr);
    open_.push_back(Frame{array, 0, {}, {}});
  }
  void close() {
    open_.pop_back();
    if (!open_.empty() && open_.back().array) ++open_.back().elements;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Frame> open_;
  size_t events_ = 0;
};

template <typename Input>
nlohmann::json parse_with_unique_keys(Input&& input) {
  nlohmann::json root;
  UniqueKeysSax sax(root);
  nlohmann::json::sax_parse(std::forward<Input>(input), &sax);
  return root;
}

}  // namespace

nlohmann::json parse_json_unique_keys(const std::string& text) {
  // The library takes a NUL byte for the end of the text and would accept
  // whatever follows it unread; JSON text holds none.
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    throw nlohmann::json::parse_error::create(101, nul + 1, "a NUL byte: JSON text holds none", nullptr);
  return parse_with_unique_keys(text);
}

nlohmann::json parse_json_unique_keys(std::istream& in) {
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_json_unique_keys(text);
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
