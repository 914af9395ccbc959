#include "server/request_fields.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>

#include "core/json_parse.h"
#include "models/registry.h"
#include "profile/profile_plan.h"

namespace trainplan::server {

using nlohmann::json;

json error_body(const std::string& message) { return {{"error", message}}; }

namespace {

// Fields every request on samples may carry, besides its own.
const std::set<std::string> kSampleFields = {"id", "samples_csv", "samples_path", "model", "time_model",
                                             "metric_model"};

// A CLI option name ("--max-workers") as the API field it stands for ("max_workers").
bool is_option(const std::string& s) { return s.size() > 2 && s[0] == '-' && s[1] == '-'; }

std::string api_field(const std::string& option) {
  std::string f = option.substr(2);
  for (char& c : f)
    if (c == '-') c = '_';
  return f;
}

}  // namespace

std::string quoted_prefix(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 100; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += c < 0x20 ? fmt::format("\\x{:02x}", c) : std::string(1, char(c));
  }
  return s.size() > 100 ? out + "..." : out;
}

void refuse_unknown_fields(const json& req, const std::set<std::string>& allowed, const std::string& listed) {
  for (const auto& [k, v] : req.items())
    if (!allowed.count(k))
      throw RequestError(400, quoted_prefix(k), fmt::format("unknown field '{}' ({})", quoted_prefix(k), listed));
}

void check_fields(const json& req, std::set<std::string> allowed) {
  allowed.insert(kSampleFields.begin(), kSampleFields.end());
  std::string known;
  for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
  refuse_unknown_fields(req, allowed, "known: " + known);
  // A model's name is checked here, where the field is known; the registry's
  // own error would not say which field held it.
  for (const char* f : {"model", "time_model", "metric_model"})
    if (const auto it = req.find(f); it != req.end() && it->is_string()) {
      const std::string name = it->get<std::string>();
      // "model" names both parts; empty is refused there (time_model and
      // metric_model empty mean: as "model").
      if (name.empty() && std::string(f) == "model")
        throw RequestError(400, f, "field 'model' is empty: give a model's name, or auto (GET /models lists them)");
      if (name.empty() || name == "auto") continue;
      const auto* e = models::ModelRegistry::instance().find(name);
      if (!e) throw RequestError(400, f, fmt::format("unknown model '{}' (GET /models lists them)", quoted_prefix(name)));
      const std::string field = f;
      if (field == "time_model" && !e->make_time)
        throw RequestError(400, f, fmt::format("model '{}' has no epoch-time part (GET /models lists each model's parts)", name));
      if (field == "metric_model" && !e->make_metric)
        throw RequestError(400, f, fmt::format("model '{}' has no metric part (GET /models lists each model's parts)", name));
    }
}

const json* find(const json& req, const char* name) {
  auto it = req.find(name);
  return it == req.end() || it->is_null() ? nullptr : &*it;
}

double get_number(const json& req, const char* name, std::optional<double> def) {
  const json* v = find(req, name);
  if (!v) {
    if (!def) throw RequestError(400, name, fmt::format("missing field '{}' (a number)", name));
    return *def;
  }
  if (!v->is_number()) throw RequestError(400, name, fmt::format("field '{}' must be a number", name));
  return v->get<double>();
}

// Seconds, as a number or as the CLI's durations ("90", "36h", "1h30m", "2w"),
// as a deadline is written on the command line; "0" too reads as the number 0
// (where 0 means no deadline), which the command line leaves out instead.
double get_duration(const json& req, const char* name, std::optional<double> def) {
  const json* v = find(req, name);
  if (!v) return get_number(req, name, def);
  if (v->is_number()) return v->get<double>();
  if (!v->is_string())
    throw RequestError(400, name, fmt::format("field '{}' must be a number of seconds or a duration such as \"36h\"", name));
  const std::string text = v->get<std::string>();
  // "0" reads as the number 0 does (no deadline where 0 means none), not as a duration too short.
  if (text.find_first_not_of("0.") == std::string::npos && text.find('0') != std::string::npos) return 0;
  try {
    return profile::parse_duration(text, name);
  } catch (const InputError& e) {
    throw RequestError(400, name, fmt::format("field '{}': {}", name, e.message()));
  }
}

long long to_integer(const json& v, const char* name) {
  // Past long long's range (an unsigned 2^64 - 1, or a float past 10^15) a
  // value would wrap to a negative one that reads as "not given".
  if (v.is_number_unsigned() && v.get<unsigned long long>() > (unsigned long long)std::numeric_limits<long long>::max())
    throw RequestError(400, name, fmt::format("field '{}' is out of range", name));
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d)) {
      if (std::fabs(d) < 1e15) return static_cast<long long>(d);
      throw RequestError(400, name, fmt::format("field '{}' is out of range", name));
    }
  }
  throw RequestError(400, name, fmt::format("field '{}' must be an integer", name));
}

int get_int(const json& req, const char* name, std::optional<int> def) {
  const json* v = find(req, name);
  if (!v) {
    if (!def) throw RequestError(400, name, fmt::format("missing field '{}' (an integer)", name));
    return *def;
  }
  long long x = to_integer(*v, name);
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
    throw RequestError(400, name, fmt::format("field '{}' is out of range", name));
  return static_cast<int>(x);
}

uint64_t get_seed(const json& req, const char* name, uint64_t def) {
  const json* v = find(req, name);
  if (!v) return def;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  long long x = to_integer(*v, name);
  if (x < 0) throw RequestError(400, name, fmt::format("field '{}' must be >= 0", name));
  return static_cast<uint64_t>(x);
}

std::string get_string(const json& req, const char* name, const std::string& def) {
  const json* v = find(req, name);
  if (!v) return def;
  if (!v->is_string()) throw RequestError(400, name, fmt::format("field '{}' must be a string", name));
  return v->get<std::string>();
}

bool get_bool(const json& req, const char* name, bool def) {
  const json* v = find(req, name);
  if (!v) return def;
  if (!v->is_boolean()) throw RequestError(400, name, fmt::format("field '{}' must be true or false", name));
  return v->get<bool>();
}

std::vector<int> get_int_list(const json& req, const char* name) {
  const json* v = find(req, name);
  if (!v) return {};
  if (!v->is_array()) throw RequestError(400, name, fmt::format("field '{}' must be an array of integers", name));
  std::vector<int> out;
  for (const auto& x : *v) {
    long long i = to_integer(x, name);
    if (i < 1 || i > std::numeric_limits<int>::max())
      throw RequestError(400, name, fmt::format("field '{}' must hold positive integers", name));
    out.push_back(static_cast<int>(i));
  }
  return out;
}

void one_of(const std::string& v, const char* name, const std::vector<std::string>& allowed) {
  std::string known;
  for (const auto& a : allowed) {
    if (v == a) return;
    known += (known.empty() ? "" : ", ") + a;
  }
  throw RequestError(400, name, fmt::format("field '{}' must be one of: {}", name, known));
}

void RowCounter::feed(std::string_view text) {
  for (char c : text) {
    // A '\r' alone ends a line too: the CSV reader splits a text without
    // '\n' at each '\r' (old Mac files). Where a text has both, counting
    // them all counts more rows than are read, never fewer.
    const bool ends_line = c == '\n' ? !after_cr_ : c == '\r';
    after_cr_ = c == '\r';
    if (ends_line) {
      lines_ += data_;
      start_ = true, data_ = false;
      continue;
    }
    if (c == '\n') continue;  // the '\n' of a "\r\n"
    if (start_) start_ = false, comment_ = c == '#';
    if (!comment_ && c != ' ' && c != '\t') data_ = true;
  }
}

size_t RowCounter::rows() const {
  const size_t lines = lines_ + (data_ ? 1 : 0);
  return lines ? lines - 1 : 0;
}

void check_csv_rows(std::string_view text, const char* field, const std::string& what, size_t max_rows) {
  RowCounter rows;
  rows.feed(text);
  if (rows.rows() > max_rows)
    throw RequestError(422, field,
                       fmt::format("{} holds more than {} rows, the server's limit (trainplan serve --max-rows); send "
                                   "fewer rows",
                                   what, max_rows));
}

namespace {

// At most how many JSON values a body's containers hold, from its commas and
// brackets outside strings: a parsed value costs 16 bytes and an object's
// member about 80 more, so an 8 MiB body of `{},{},...` parsed to 300 MB.
// No request needs more than a few thousand (samples travel as CSV text).
size_t json_values_at_most(const std::string& body) {
  size_t n = 1;
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',' || c == '[' || c == '{') {
      ++n;
    }
  }
  return n;
}

}  // namespace

json parse_body(const std::string& body) {
  if (const size_t n = json_values_at_most(body); n > kMostBodyJsonValues)
    throw RequestError(413, "",
                       fmt::format("the body holds about {} JSON values, more than the {} a request may (samples and "
                                   "logs travel as text: samples_csv, log_text)",
                                   n, kMostBodyJsonValues));
  json j;
  try {
    j = parse_json_unique_keys(body.empty() ? std::string("{}") : body);
  } catch (const JsonDuplicateKey& e) {
    throw RequestError(400, e.path(), fmt::format("bad JSON: {}", e.what()));
  } catch (const json::exception& e) {
    // Not only parse_error: a number past double's range ("1e400") is out_of_range.
    throw RequestError(400, "", fmt::format("bad JSON: {} (the body must be one JSON object)", json_error_text(e)));
  }
  if (!j.is_object()) throw RequestError(400, "", "the request body must be a JSON object");
  return j;
}

std::string api_field_name(const std::string& option) { return api_field(option); }

std::string api_wording(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const bool at_word = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '-');
    if (at_word && text.compare(i, 2, "--") == 0 && i + 2 < text.size() && std::islower(static_cast<unsigned char>(text[i + 2]))) {
      size_t j = i + 2;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '-')) ++j;
      out += api_field(text.substr(i, j - i));
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

json input_error_body(const InputError& e, const json& req) {
  json b;
  // A place in a CSV or a file a request carried: its field is the request's.
  std::string carrier;
  if (!e.file().empty() && req.is_object()) {
    if (req.contains(e.file())) carrier = e.file();
    else if (const auto dot = e.file().find('.'); dot != std::string::npos && req.contains(e.file().substr(0, dot)))
      carrier = e.file().substr(0, dot);
    else
      for (const auto& [key, value] : req.items())
        if (value.is_string() && value.get_ref<const std::string&>() == e.file()) carrier = key;
  }
  if (!carrier.empty()) {
    b["error"] = api_wording(e.what());
    b["field"] = carrier;
    // A field named as the CLI's option is the request's own field, not a column of what it carried.
    if (!e.field().empty() && !is_option(e.field())) b["column"] = e.field();
  } else if (is_option(e.field())) {
    std::string where;
    if (!e.file().empty()) where = e.file() + (e.line() > 0 ? ":" + std::to_string(e.line()) : "") + ": ";
    b["error"] = where + api_field(e.field()) + " " + api_wording(e.message());
    b["field"] = api_field(e.field());
  } else {
    b["error"] = api_wording(e.what());
    if (!e.field().empty()) b["field"] = e.field();
  }
  if (!e.file().empty()) b["file"] = e.file();
  if (e.line() > 0) b["line"] = e.line();
  return b;
}

}  // namespace trainplan::server
