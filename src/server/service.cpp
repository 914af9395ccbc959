#include "server/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "app/curves.h"
#include "core/json_parse.h"
#include "app/llm_plan_on_gpus.h"
#include "app/llm_plan_request.h"
#include "io/llm_config_csv.h"
#include "app/simulate_request.h"
#include "app/plan_on_gpus.h"
#include "app/transfer_samples.h"
#include "app/search_space.h"
#include "core/cancel.h"
#include "core/error.h"
#include "io/sample_csv.h"
#include "models/registry.h"
#include "plan/planner.h"
#include "profile/profile_plan.h"
#include "profile/samples_file.h"
#include "structure/gpu_catalog.h"
#include "structure/network_zoo.h"
#include "structure/transformer.h"
#include "scoring/evaluate.h"
#include "scoring/in_sample.h"
#include "scoring/mre.h"
#include "sim/policy.h"
#include "sim/simulator.h"

namespace trainplan::server {

const char* version() {
#ifdef TRAINPLAN_VERSION
  return TRAINPLAN_VERSION;
#else
  return "unknown";
#endif
}

namespace {

using nlohmann::json;

// A request the service refuses before any library call: its status and the
// field at fault; `retry_after_s` > 0 when the same request can succeed later.
struct RequestError : std::runtime_error {
  RequestError(int status, std::string field, const std::string& message, int retry_after_s = 0)
      : std::runtime_error(message), status(status), field(std::move(field)), retry_after_s(retry_after_s) {}
  int status;
  std::string field;
  int retry_after_s;
};

json error_body(const std::string& message) { return {{"error", message}}; }

// Fields every request on samples may carry, besides its own.
const std::set<std::string> kSampleFields = {"id", "samples_csv", "samples_path", "model", "time_model",
                                             "metric_model"};

// A value quoted back in a message: at most 100 characters, control
// characters (a NUL would end the message for many readers) escaped.
std::string quoted_prefix(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 100; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += c < 0x20 ? fmt::format("\\x{:02x}", c) : std::string(1, char(c));
  }
  return s.size() > 100 ? out + "..." : out;
}

void check_fields(const json& req, std::set<std::string> allowed) {
  allowed.insert(kSampleFields.begin(), kSampleFields.end());
  for (const auto& [k, v] : req.items())
    if (!allowed.count(k)) {
      std::string known;
      for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
      throw RequestError(400, k, fmt::format("unknown field '{}' (known: {})", k, known));
    }
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
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) return static_cast<long long>(d);
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

// What a request that moves samples to another GPU says the training ran in:
// 'precision' (auto, fp32 or mixed; transfer's --precision),
// 'target_precision' (--target-precision: what it will run in there) and
// 'tf32' (--tf32: fp32 dense layers on TF32 tensor cores), applied to both GPUs.
models::TrainingPrecision moved_training(const json& req, structure::HardwareProfile* from,
                                         std::vector<structure::HardwareProfile*> to) {
  const bool tf32 = get_bool(req, "tf32", false);
  from->gpu.fp32_matmul_tf32 = tf32;
  for (auto* h : to) h->gpu.fp32_matmul_tf32 = tf32;
  models::TrainingPrecision out;
  for (auto [field, p] : {std::pair{"precision", &out.profiled}, std::pair{"target_precision", &out.target}}) {
    const auto v = models::precision_named(get_string(req, field, "auto"));
    if (!v) throw RequestError(400, field, fmt::format("field '{}' must be one of: auto, fp32, mixed", field));
    *p = *v;
  }
  return out;
}

// Counts the data rows of sample CSV text fed in pieces: the lines that are
// neither blank nor comments ('#'), less the header. Memory: none.
class RowCounter {
 public:
  void feed(std::string_view text) {
    for (char c : text) {
      if (c == '\n') {
        lines_ += data_;
        start_ = true, data_ = false;
        continue;
      }
      if (start_) start_ = false, comment_ = c == '#';
      if (!comment_ && c != '\r' && c != ' ' && c != '\t') data_ = true;
    }
  }
  size_t rows() const {
    const size_t lines = lines_ + (data_ ? 1 : 0);
    return lines ? lines - 1 : 0;
  }

 private:
  size_t lines_ = 0;
  bool start_ = true, comment_ = false, data_ = false;
};

// The CSV text of `field` (`what` names it in the message), held to the
// server's row limit before anything parses it: 422 past it.
void check_csv_rows(std::string_view text, const char* field, const std::string& what, size_t max_rows) {
  RowCounter rows;
  rows.feed(text);
  if (rows.rows() > max_rows)
    throw RequestError(422, field,
                       fmt::format("{} holds more than {} rows, the server's limit (trainplan serve --max-rows); send "
                                   "fewer rows",
                                   what, max_rows));
}

// The built-in GPU `name` names, for `field`. Catalog names only: a hardware
// file would be a read of the server's files.
structure::HardwareProfile catalog_gpu(const std::string& name, const char* field) {
  auto hw = structure::find_builtin_hardware(name);
  if (!hw) throw RequestError(400, field, fmt::format("unknown GPU '{}' (GET /llm/models lists the catalog)", name));
  return *hw;
}

// "gpus": 1 to `most` catalog names, none twice (each is a whole plan, so a
// few GPUs, not the catalog).
std::vector<structure::HardwareProfile> gpu_list(const json& gpus, size_t most) {
  if (!gpus.is_array() || gpus.empty() || gpus.size() > most)
    throw RequestError(400, "gpus", fmt::format("field 'gpus' must be an array of 1 to {} GPU names (GET /llm/models lists the catalog)", most));
  std::vector<structure::HardwareProfile> hws;
  for (const auto& g : gpus) {
    if (!g.is_string()) throw RequestError(400, "gpus", "field 'gpus' must hold GPU names (strings)");
    hws.push_back(catalog_gpu(g.get<std::string>(), "gpus"));
    for (size_t i = 0; i + 1 < hws.size(); ++i)
      if (hws[i].name == hws.back().name) throw RequestError(400, "gpus", fmt::format("{} is listed twice", hws[i].name));
  }
  return hws;
}

// "prices": {"t4": 0.53, ...}, a price for every GPU of `hws`, or none (empty).
std::vector<double> gpu_prices(const json& req, const std::vector<structure::HardwareProfile>& hws) {
  std::vector<double> prices;
  const json* p = find(req, "prices");
  if (!p) return prices;
  if (!p->is_object()) throw RequestError(400, "prices", "field 'prices' must be an object of GPU name to price per GPU-hour");
  prices.assign(hws.size(), 0.0);
  for (const auto& [name, v] : p->items()) {
    auto hw = structure::find_builtin_hardware(name);
    size_t i = 0;
    while (i < hws.size() && !(hw && hw->name == hws[i].name)) ++i;
    if (i == hws.size()) throw RequestError(400, "prices", fmt::format("'{}' is not one of 'gpus'", name));
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      throw RequestError(400, "prices", fmt::format("the price of {} must be a number > 0", name));
    if (prices[i] != 0) throw RequestError(400, "prices", fmt::format("{} is priced twice", hws[i].name));
    prices[i] = v.get<double>();
  }
  for (size_t i = 0; i < hws.size(); ++i)
    if (prices[i] == 0) throw RequestError(400, "prices", fmt::format("no price for {} (give one for every GPU, or none)", hws[i].name));
  return prices;
}

json parse_body(const std::string& body) {
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

// A CLI option name ("--max-workers") as the API field it stands for ("max_workers").
bool is_option(const std::string& s) { return s.size() > 2 && s[0] == '-' && s[1] == '-'; }

std::string api_field(const std::string& option) {
  std::string f = option.substr(2);
  for (char& c : f)
    if (c == '-') c = '_';
  return f;
}


// `text` with every CLI option in it ("--early-stop") written as its field ("early_stop").
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

// The JSON of an InputError, in the API's terms: a CLI option at fault is
// named as its request field ("deadline must be > 0 seconds", field
// "deadline"); a CSV place keeps its file, line and column.
json input_error_body(const InputError& e) {
  json b;
  if (is_option(e.field())) {
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

// Holds the calling thread until `mu` is locked; throws Cancelled (core/cancel.h)
// when the request's scope ends first.
std::unique_lock<std::timed_mutex> lock_within_scope(std::timed_mutex& mu) {
  std::unique_lock<std::timed_mutex> lock(mu, std::defer_lock);
  while (!lock.try_lock_for(std::chrono::milliseconds(20))) check_cancelled();
  return lock;
}


}  // namespace

// ---- limits -----------------------------------------------------------------

class Service::Slot {
 public:
  Slot(Service& s, Pool pool) : s_(s), pool_(int(pool)) {}
  ~Slot() {
    {
      std::lock_guard<std::mutex> lock(s_.slots_mu_);
      --s_.computing_[pool_];
    }
    s_.slots_cv_.notify_all();  // the waiters of both pools share the condition
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

 private:
  Service& s_;
  int pool_;
};

Service::Service(std::string default_model, models::ModelParams params, Limits limits)
    : default_model_(std::move(default_model)), model_params_(std::move(params)), limits_(limits) {
  limits_.max_concurrent = std::max(1, limits_.max_concurrent);
  limits_.max_queue = std::max(0, limits_.max_queue);
  // The allowed folder as it is now, links followed: a link named as the
  // folder and pointed elsewhere later does not move what may be read.
  if (!limits_.allowed_root.empty()) {
    std::error_code ec;
    auto root = std::filesystem::canonical(limits_.allowed_root, ec);
    if (!ec) limits_.allowed_root = root.string();
  }
}

void Service::stop() {
  stopping_ = true;
  std::lock_guard<std::mutex> lock(slots_mu_);
  slots_cv_.notify_all();
}

int Service::waiting() const {
  std::lock_guard<std::mutex> lock(slots_mu_);
  return waiting_[0] + waiting_[1];
}

std::unique_ptr<Service::Slot> Service::take_slot(Pool pool) {
  const int p = int(pool);
  std::unique_lock<std::mutex> lock(slots_mu_);
  if (computing_[p] >= limits_.max_concurrent) {
    if (waiting_[p] >= limits_.max_queue)
      throw RequestError(503, "",
                         fmt::format("busy: {} requests {} are computing and {} are waiting, the server's "
                                     "limits (trainplan serve --max-concurrent, --max-queue); retry later{}",
                                     computing_[p], pool == Pool::kById ? "on fitted ids" : "with samples",
                                     waiting_[p], pool == Pool::kById ? "" : ", or use an id from /fit (its own pool)"),
                         1);
    ++waiting_[p];
    struct Unwait {
      int& n;
      ~Unwait() { --n; }
    } unwait{waiting_[p]};
    // Wakes at least every 20 ms to see the request's time limit and stop().
    while (computing_[p] >= limits_.max_concurrent) {
      slots_cv_.wait_for(lock, std::chrono::milliseconds(20));
      check_cancelled();
    }
  }
  ++computing_[p];
  return std::make_unique<Slot>(*this, pool);
}

void Service::keep(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) throw std::invalid_argument("Service::keep: no fitted id " + id);
  it->second->kept = true;
}

namespace {
std::string all_kept_message(size_t held) {
  return fmt::format("the server holds {} fitted sample sets, its limit (trainplan serve --max-fits), every one kept; "
                     "use an id from GET /fits, or send samples with /predict and /plan",
                     held);
}
}  // namespace

void Service::check_room_for_fit() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(entries_.size()) >= limits_.max_fits &&
      std::all_of(entries_.begin(), entries_.end(), [](const auto& e) { return e.second->kept; }))
    throw RequestError(503, "", all_kept_message(entries_.size()));
}

bool Service::was_let_go(const std::string& id) const {
  long n = 0;
  const char* digits = id.data() + std::min<size_t>(id.size(), 4);
  const auto [end, ec] = std::from_chars(digits, id.data() + id.size(), n);
  return ec == std::errc() && end == id.data() + id.size() && n >= 1 && n < next_id_ && id == fmt::format("fit-{}", n);
}

void Service::make_room_for_fit() {
  while (static_cast<int>(entries_.size()) >= limits_.max_fits) {
    // The least recently used of those no request holds (the map's own
    // reference is the only one), else of all: a request in progress keeps
    // its samples either way, but its id should outlast idle ones.
    auto oldest = entries_.end();
    auto idle = [](const auto& it) { return it->second.use_count() == 1; };
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second->kept) continue;
      if (oldest == entries_.end() || idle(it) > idle(oldest) ||
          (idle(it) == idle(oldest) && it->second->last_use < oldest->second->last_use))
        oldest = it;
    }
    if (oldest == entries_.end()) throw RequestError(503, "", all_kept_message(entries_.size()));
    entries_.erase(oldest);
  }
}

// Whether `path`, its symbolic links followed, lies in Limits::allowed_root.
// A name that does not resolve yet is judged by the folder it would be in.
// (The folder itself counts as in it: the check that follows refuses a
// folder as no sample file.) A path that cannot be resolved (a folder on
// the way the server may not list) is judged as written, `..` removed, and
// the open that follows says what is wrong with it.
bool Service::within_allowed_root(const std::string& path) const {
  std::error_code ec;
  const std::filesystem::path root(limits_.allowed_root);
  auto target = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) {
    ec.clear();
    target = std::filesystem::absolute(path, ec).lexically_normal();
    if (ec) return false;
  }
  auto r = root.begin(), t = target.begin();
  for (; r != root.end() && !r->empty(); ++r, ++t)
    if (t == target.end() || *r != *t) return false;
  return true;
}

std::optional<std::pair<SampleSet, std::string>> Service::request_samples(const json& req,
                                                                         std::unique_ptr<Slot>& slot) {
  const json* csv = find(req, "samples_csv");
  const json* path = find(req, "samples_path");
  if (csv && path) throw RequestError(400, "samples_csv", "give samples_csv or samples_path, not both");
  if (!csv && !path) return std::nullopt;
  const char* field = csv ? "samples_csv" : "samples_path";
  if (path && !limits_.allow_paths)
    throw RequestError(403, "samples_path",
                       "this server reads no files: send the samples as samples_csv (CSV text), or start it with "
                       "trainplan serve --allow-paths");
  if (!(csv ? csv : path)->is_string())
    throw RequestError(400, field, fmt::format("field '{}' must be a string ({})", field, csv ? "CSV text" : "a file on the server"));
  std::string text, label;
  RowCounter rows;
  if (csv) {
    label = "samples_csv";
    rows.feed(csv->get_ref<const std::string&>());
  } else {
    label = path->get<std::string>();
    if (label.empty()) throw RequestError(400, field, "field 'samples_path' is empty: give a file on the server");
    if (!limits_.allowed_root.empty() && !within_allowed_root(label))
      throw RequestError(403, field,
                         fmt::format("'{}' is outside the folder this server reads sample files from (trainplan serve "
                                     "--allow-paths {})",
                                     quoted_prefix(label), limits_.allowed_root));
    // Only a regular file: opening a pipe blocks until someone writes to it,
    // past any time limit, and a device or a directory is no sample set.
    std::error_code ec;
    const auto st = std::filesystem::status(label, ec);
    if (ec || !std::filesystem::exists(st)) throw InputError(label, 0, "", "cannot open sample file (no such file)");
    if (!std::filesystem::is_regular_file(st))
      throw RequestError(400, field,
                         fmt::format("'{}' is not a regular file (a directory, a pipe or a device): give a samples CSV "
                                     "or a profile store",
                                     quoted_prefix(label)));
    // A profile store (`trainplan profile --store`) is read as the CLI reads
    // it, within the same limits: its size against the byte limit first, its
    // trials against the row limit once read.
    if (profile::is_profile_store(label)) {
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(label, ec);
      if (!ec && bytes > limits_.max_body_bytes)
        throw RequestError(413, field,
                           fmt::format("the file {} is larger than {} bytes, the server's limit (trainplan serve "
                                       "--max-body-bytes)",
                                       label, limits_.max_body_bytes));
      slot = take_slot();
      SampleSet set = profile::read_samples(label);
      if (set.samples.size() + set.curve.size() > limits_.max_rows)
        throw RequestError(422, field,
                           fmt::format("{} holds more than {} rows of samples, the server's limit (trainplan serve "
                                       "--max-rows); send fewer rows",
                                       field, limits_.max_rows));
      return std::make_pair(std::move(set), label);
    }
    // Read in pieces up to the byte limit, counting rows on the way, so that
    // neither a huge file nor a device ("/dev/zero") is read whole.
    std::ifstream in(label, std::ios::binary);
    if (!in) throw InputError(label, 0, "", "cannot open sample file");
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      const std::string_view piece(buf, static_cast<size_t>(in.gcount()));
      if (text.size() + piece.size() > limits_.max_body_bytes)
        throw RequestError(413, field,
                           fmt::format("the file {} is larger than {} bytes, the server's limit (trainplan serve "
                                       "--max-body-bytes)",
                                       label, limits_.max_body_bytes));
      rows.feed(piece);
      if (rows.rows() > limits_.max_rows) break;
      text.append(piece);
      check_cancelled();
    }
  }
  if (rows.rows() > limits_.max_rows)
    throw RequestError(422, field,
                       fmt::format("{} holds more than {} rows of samples, the server's limit (trainplan serve "
                                   "--max-rows); send fewer rows",
                                   field, limits_.max_rows));
  // Counted and within the limits: parsing and fitting wait for a slot.
  slot = take_slot();
  if (csv) return std::make_pair(io::parse_samples_csv(csv->get_ref<const std::string&>(), label), label);
  return std::make_pair(io::parse_samples_csv(text, label), label);
}

// ---- routes -----------------------------------------------------------------

// The load is in the answer so that an operator (or a test) sees the work
// under way without a request of its own taking a slot.
json Service::health() const {
  std::lock_guard<std::mutex> lock(slots_mu_);  // the two counts from one moment
  return {{"status", "ok"},
          {"version", version()},
          {"computing", computing_[0] + computing_[1]},
          {"waiting", waiting_[0] + waiting_[1]},
          {"by_id", {{"computing", computing_[1]}, {"waiting", waiting_[1]}}}};
}

json Service::models() const {
  json list = json::array();
  for (const auto* e : models::ModelRegistry::instance().all()) {
    json parts = json::array();
    if (e->make_time) parts.push_back("time");
    if (e->make_metric) parts.push_back("metric");
    list.push_back({{"name", e->name}, {"summary", e->summary}, {"parts", parts}});
  }
  return {{"models", list}, {"default", default_model_}};
}

json Service::fits() const {
  std::lock_guard<std::mutex> lock(mu_);
  json list = json::array();
  for (const auto& [id, e] : entries_)
    list.push_back({{"id", id},
                    {"samples", e->label},
                    {"n_samples", e->src.samples().size()},
                    {"time_model", e->chosen_time},
                    {"metric_model", e->chosen_metric.empty() ? json(nullptr) : json(e->chosen_metric)}});
  return {{"fits", list}};
}

json Service::fit(SampleSet samples, const std::string& label, const std::string& model,
                  const std::string& time_model, const std::string& metric_model) {
  auto e = std::make_shared<Entry>(std::move(samples), model_params_);
  e->label = label;
  e->model = model;
  e->time_model = time_model;
  e->metric_model = metric_model;
  const SampleSet& s = e->src.samples();
  const std::string tname = time_model.empty() ? model : time_model;
  const std::string mname = metric_model.empty() ? model : metric_model;
  const scoring::ModelChoice choice = e->src.choose(tname, mname);
  auto perf = e->src.performance(choice.time_model, choice.metric_model);
  e->chosen_time = choice.time_model;
  if (s.has_metric()) e->chosen_metric = choice.metric_model;

  // In-sample MRE (equation 12) as `trainplan fit` scores it: one score per
  // distinct time configuration, one per sample with a metric.
  json mre = {{"time", scoring::in_sample_time(*perf->time_model(), s).mre}, {"metric", nullptr}};
  if (perf->metric_model()) mre["metric"] = scoring::in_sample_metric(*perf->metric_model(), s).mre;
  // Fit the conformal models /predict uses at its defaults now, so that the first /predict is fast.
  std::string warm_note;
  try {
    e->src.conformal_time(choice.time_model, {});
    if (s.has_metric()) e->src.conformal_metric(choice.metric_model, {});
  } catch (const std::exception& ex) {
    warm_note = ex.what();
  }

  {
    std::lock_guard<std::mutex> lock(mu_);
    make_room_for_fit();
    e->id = fmt::format("fit-{}", next_id_++);
    e->last_use = ++use_clock_;
    entries_[e->id] = e;
  }
  json j = {{"id", e->id},
            {"samples", label},
            {"n_samples", s.size()},
            {"direction", to_string(s.direction)},
            {"time_model", e->chosen_time},
            {"metric_model", e->chosen_metric.empty() ? json(nullptr) : json(e->chosen_metric)},
            {"in_sample_mre", mre},
            {"choice", choice.reason}};
  if (!warm_note.empty()) j["note"] = "conformal intervals could not be fitted: " + warm_note;
  // Predicted on other hardware (POST /transfer): the errors above leave the transfer's own out.
  if (!s.times_predicted_from.empty()) j["times_predicted_from"] = s.times_predicted_from;
  if (s.times_predicted_log_sd) j["times_predicted_log_sd"] = *s.times_predicted_log_sd;
  return j;
}

json Service::fit_request(const json& req) {
  check_fields(req, {});
  if (find(req, "id")) throw RequestError(400, "id", "/fit takes samples (samples_csv or samples_path), not an id");
  if (!find(req, "samples_csv") && !find(req, "samples_path"))
    throw RequestError(400, "samples_csv", "missing samples: give samples_csv (CSV text) or samples_path");
  // Before the samples are read and fitted: a fit that cannot be held is refused at once.
  check_room_for_fit();
  std::unique_ptr<Slot> slot;
  auto s = request_samples(req, slot);
  if (!s) throw RequestError(400, "samples_csv", "missing samples: give samples_csv (CSV text) or samples_path");
  return fit(std::move(s->first), s->second, get_string(req, "model", default_model_), get_string(req, "time_model", ""),
             get_string(req, "metric_model", ""));
}

// A request on fitted samples computes too (a prediction far out, a plan, a
// model not fitted yet): it takes a slot of the ids' pool, so that no number
// of them holds more cores than the limits give. Taken once the id's lock is
// held: requests waiting on one busy id then hold no slot, and other ids run.
void Service::take_id_slot(std::unique_ptr<Slot>& slot) {
  if (!slot) slot = take_slot(Pool::kById);
}

std::shared_ptr<Service::Entry> Service::entry_for(const json& req, std::unique_ptr<Slot>& slot) {
  if (const json* id = find(req, "id")) {
    if (find(req, "samples_csv") || find(req, "samples_path"))
      throw RequestError(400, "id", "give an id or samples, not both");
    if (!id->is_string()) throw RequestError(400, "id", "field 'id' must be a string (from /fit)");
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const std::string& name = id->get_ref<const std::string&>();
      auto it = entries_.find(name);
      if (it == entries_.end()) {
        if (was_let_go(name))
          throw RequestError(404, "id",
                             fmt::format("id '{}' was let go to hold newer fits: the server keeps the {} used most "
                                         "recently (trainplan serve --max-fits); POST /fit its samples again",
                                         name, limits_.max_fits));
        throw RequestError(404, "id",
                           fmt::format("unknown id '{}' (POST /fit first; GET /fits lists them)", quoted_prefix(name)));
      }
      e = it->second;
      e->last_use = ++use_clock_;
    }
    return e;
  }
  if (!find(req, "samples_csv") && !find(req, "samples_path"))
    throw RequestError(400, "id", "missing samples: give an id (from /fit), samples_csv or samples_path");
  auto s = request_samples(req, slot);
  auto e = std::make_shared<Entry>(std::move(s->first), model_params_);
  e->label = s->second;
  e->model = default_model_;
  return e;
}

namespace {
// The model names a request asks for, else those its entry was fitted with.
template <class Q, class E>
void set_models(Q& q, const json& req, const E& e, const std::string& default_model) {
  if (find(req, "model") || find(req, "time_model") || find(req, "metric_model")) {
    q.model = get_string(req, "model", default_model);
    q.time_model = get_string(req, "time_model", "");
    q.metric_model = get_string(req, "metric_model", "");
  } else {
    q.model = e.model;
    q.time_model = e.time_model;
    q.metric_model = e.metric_model;
  }
}
}  // namespace

json Service::predict_request(const json& req) {
  check_fields(req, {"batch", "workers", "nodes", "gpus_per_node", "epochs", "confidence", "folds", "seed", "target",
                     "max_epochs"});
  app::PredictQuery q;
  q.batch = get_number(req, "batch", std::nullopt);
  q.workers = get_int(req, "workers", std::nullopt);
  q.epochs = get_number(req, "epochs", -1.0);
  if (find(req, "epochs") && !(q.epochs > 0)) throw RequestError(400, "epochs", "field 'epochs' must be > 0");
  q.nodes = get_int(req, "nodes", -1);
  if (find(req, "nodes") && q.nodes < 1) throw RequestError(400, "nodes", "field 'nodes' must be >= 1");
  q.gpus_per_node = get_int(req, "gpus_per_node", 0);
  q.confidence = get_number(req, "confidence", 0.9);
  q.folds = get_int(req, "folds", 5);
  q.seed = get_seed(req, "seed", 1);
  if (find(req, "target")) q.target = get_number(req, "target", std::nullopt);
  q.max_epochs = get_int(req, "max_epochs", q.max_epochs);
  app::check_predict_query(q);
  std::unique_ptr<Slot> slot;
  auto e = entry_for(req, slot);
  set_models(q, req, *e, default_model_);
  auto lock = lock_within_scope(e->mu);
  take_id_slot(slot);
  json j = to_json(app::predict(e->src, q));
  // The packing's reason names the CLI's options; an answer names fields.
  if (auto* from = j["config"].contains("nodes_from") ? &j["config"]["nodes_from"] : nullptr; from && from->is_string())
    *from = api_wording(from->get<std::string>());
  return j;
}

Response Service::plan_request(const json& req) {
  check_fields(req, {"target", "deadline", "max_workers", "search", "method", "batches", "gpus_per_node",
                     "max_epochs", "alternatives", "seed", "emit", "train_cmd", "no_gpus", "job_name", "image", "confidence",
                     "bounds", "early_stop", "early_stop_budget", "conformal", "frontier", "tabu_iterations", "tabu_tenure", "manual_tries",
                     "gpus", "from_gpu", "prices", "trials", "precision", "target_precision", "tf32"});
  app::PlanQuery q;
  q.target = get_number(req, "target", std::nullopt);
  q.deadline = get_duration(req, "deadline", std::nullopt);
  q.max_workers = get_int(req, "max_workers", 0);  // 0: the largest in the samples
  q.search = get_string(req, "search", q.search);
  one_of(q.search, "search", {"auto", "tabu", "exhaustive"});
  q.method = get_string(req, "method", q.method);
  one_of(q.method, "method", plan::planner_names());
  q.batches = get_int_list(req, "batches");
  q.gpus_per_node = get_int(req, "gpus_per_node", q.gpus_per_node);
  q.max_epochs = get_int(req, "max_epochs", q.max_epochs);
  q.alternatives = get_int(req, "alternatives", q.alternatives);
  q.seed = get_seed(req, "seed", q.seed);
  q.emit = get_string(req, "emit", "");
  if (!q.emit.empty()) one_of(q.emit, "emit", {"torchrun", "slurm", "k8s"});
  q.train_cmd = get_string(req, "train_cmd", q.train_cmd);
  q.no_gpus = get_bool(req, "no_gpus", false);
  q.job_name = get_string(req, "job_name", q.job_name);
  q.image = get_string(req, "image", q.image);
  q.confidence = get_number(req, "confidence", 0.0);
  const std::string bounds = get_string(req, "bounds", "two-sided");
  one_of(bounds, "bounds", {"two-sided", "one-sided"});
  q.bounds = uncertainty::parse_confidence_bounds(bounds);
  q.conformal = get_bool(req, "conformal", false);
  q.early_stop = get_bool(req, "early_stop", false);
  q.frontier = get_bool(req, "frontier", false);
  const std::string budget = get_string(req, "early_stop_budget", "deadline");
  one_of(budget, "early_stop_budget", {"target", "deadline"});
  q.early_stop_budget = plan::parse_early_stop_budget(budget);
  q.tabu_iterations = get_int(req, "tabu_iterations", q.tabu_iterations);
  q.tabu_tenure = get_int(req, "tabu_tenure", q.tabu_tenure);
  q.manual_tries = get_int(req, "manual_tries", q.manual_tries);
  std::unique_ptr<Slot> slot;
  auto e = entry_for(req, slot);
  set_models(q, req, *e, default_model_);
  // The planners walk every (batch, workers) cell, and tabu search lists them:
  // bound the space before they do.
  const ConfigSpace space = app::search_space(
      e->src.samples(), {.batches = q.batches, .max_workers = q.max_workers, .max_epochs = q.max_epochs});
  const double cells = double(space.batches.size()) * double(std::max(space.max_workers, 0));
  if (cells > double(limits_.max_plan_cells))
    throw RequestError(422, find(req, "batches") && !find(req, "max_workers") ? "batches" : "max_workers",
                       fmt::format("the search space has {:.0f} (batch, workers) cells ({} batches x {} worker "
                                   "counts), more than the server's limit of {} (trainplan serve --max-plan-cells); "
                                   "lower max_workers or give fewer batches",
                                   cells, space.batches.size(), space.max_workers, limits_.max_plan_cells));
  if (const json* gpus = find(req, "gpus")) return plan_on_gpus(req, *gpus, q, *e, slot);
  for (const char* f : {"from_gpu", "prices", "trials", "precision", "target_precision", "tf32"})
    if (find(req, f)) throw RequestError(400, f, fmt::format("field '{}' goes with 'gpus' (the GPUs to plan on)", f));
  auto lock = lock_within_scope(e->mu);
  take_id_slot(slot);
  return {200, to_json(app::make_plan(e->src, q), e->label)};
}

// POST /plan with "gpus": the same job on each GPU, as `plan --gpu` plans it;
// no GPU with a plan: 422, with each GPU's reason in the answer.
Response Service::plan_on_gpus(const json& req, const json& gpus, const app::PlanQuery& q, Entry& e,
                           std::unique_ptr<Slot>& slot) {
  // Each GPU refits the models on its moved samples: a few GPUs, not the catalog.
  constexpr size_t kMostGpus = 8;
  auto hws = gpu_list(gpus, kMostGpus);
  if (find(req, "emit")) throw RequestError(400, "emit", "field 'emit' plans one GPU: drop it, or drop 'gpus'");
  const json* from_v = find(req, "from_gpu");
  if (!from_v) throw RequestError(400, "from_gpu", "missing field 'from_gpu': the GPU the samples were measured on");
  if (!from_v->is_string()) throw RequestError(400, "from_gpu", "field 'from_gpu' must hold a GPU name (a string)");
  auto from = catalog_gpu(from_v->get<std::string>(), "from_gpu");
  std::vector<structure::HardwareProfile*> moved_to;
  for (auto& h : hws) moved_to.push_back(&h);
  const models::TrainingPrecision precision = moved_training(req, &from, moved_to);
  const std::vector<double> prices = gpu_prices(req, hws);
  // {"l4": "CSV text", ...}: samples timed on a GPU of 'gpus' that correct its move.
  std::map<std::string, SampleSet> trials;
  if (const json* t = find(req, "trials")) {
    if (!t->is_object()) throw RequestError(400, "trials", "field 'trials' must be an object of GPU name to samples CSV text");
    for (const auto& [name, v] : t->items()) {
      const auto hw = catalog_gpu(name, "trials");
      if (!v.is_string()) throw RequestError(400, "trials", fmt::format("the trials of {} must be CSV text", name));
      check_csv_rows(v.get_ref<const std::string&>(), "trials", "trials." + name, limits_.max_rows);
      if (trials.count(hw.name)) throw RequestError(400, "trials", fmt::format("{} is given twice", hw.name));
      try {
        trials.emplace(hw.name, io::parse_samples_csv(v.get_ref<const std::string&>(), "trials." + name));
      } catch (const InputError& e) {
        // The field is the request's: the CSV's own column and line stay in the message.
        throw RequestError(400, "trials", fmt::format("the trials of {}: {}", name, e.what()));
      }
    }
  }
  auto lock = lock_within_scope(e.mu);
  take_id_slot(slot);
  const auto c = app::plan_on_gpus(e.src.samples(), from, hws, prices, q, e.src.params(), trials, precision);
  json j = app::to_json(c, e.label);
  if (!c.fastest)
    return {422, {{"error", "no GPU in 'gpus' has a configuration that meets both constraints (each GPU's "
                            "'infeasible' says why)"},
                  {"plan", j}}};
  return {200, j};
}

json Service::curves_request(const json& req) {
  check_fields(req, {"confidence", "curves", "steps", "max_points", "evaluate", "folds", "seed"});
  app::CurvesQuery q;
  q.confidence = get_number(req, "confidence", q.confidence);
  q.curves = get_int(req, "curves", q.curves);
  q.steps = get_int(req, "steps", q.steps);
  q.max_points = get_int(req, "max_points", q.max_points);
  q.folds = get_int(req, "folds", q.folds);
  q.seed = get_seed(req, "seed", q.seed);
  // "all": every registered model, as `trainplan evaluate` scores them by default.
  if (const json* ev = find(req, "evaluate")) {
    if (ev->is_string() && ev->get<std::string>() == "all") {
      q.evaluate = models::ModelRegistry::instance().names();
    } else if (ev->is_array()) {
      for (const auto& n : *ev) {
        if (!n.is_string()) throw RequestError(400, "evaluate", "field 'evaluate' must be \"all\" or an array of model names");
        if (!models::ModelRegistry::instance().find(n.get<std::string>()))
          throw RequestError(400, "evaluate", fmt::format("unknown model '{}' (GET /models lists them)", n.get<std::string>()));
        q.evaluate.push_back(n.get<std::string>());
      }
    } else {
      throw RequestError(400, "evaluate", "field 'evaluate' must be \"all\" or an array of model names");
    }
  }
  app::check_curves_query(q);
  std::unique_ptr<Slot> slot;
  auto e = entry_for(req, slot);
  set_models(q, req, *e, default_model_);
  auto lock = lock_within_scope(e->mu);
  take_id_slot(slot);
  return app::curves(e->src, q, e->label);
}

json Service::llm_models() const {
  return {{"models", structure::transformer_names()}, {"gpus", structure::builtin_hardware_names()}};
}

json Service::transfer_request(const json& req) {
  check_fields(req, {"from_gpu", "to_gpu", "trials_csv", "dataset_size", "network", "precision", "target_precision",
                     "tf32"});
  if (find(req, "id")) throw RequestError(400, "id", "/transfer takes samples (samples_csv or samples_path), not an id");
  for (const char* f : {"model", "time_model", "metric_model"})
    if (find(req, f)) throw RequestError(400, f, fmt::format("/transfer fits no time or metric model: drop '{}'", f));
  auto gpu = [&](const char* field) {
    const std::string name = get_string(req, field, "");
    if (name.empty()) throw RequestError(400, field, fmt::format("missing field '{}' (a GPU of the catalog, GET /llm/models)", field));
    return catalog_gpu(name, field);
  };
  auto from = gpu("from_gpu"), to = gpu("to_gpu");
  const models::TrainingPrecision precision = moved_training(req, &from, {&to});
  const structure::LayerGraph* network = nullptr;
  if (find(req, "network")) {
    const std::string name = get_string(req, "network", "");
    network = structure::find_network(name);
    if (!network) throw RequestError(400, "network", fmt::format("'{}' is not a network trainplan knows", name));
  }
  std::optional<long> dataset_size;
  if (find(req, "dataset_size")) {
    const int n = get_int(req, "dataset_size", std::nullopt);
    if (n < 1) throw RequestError(400, "dataset_size", "field 'dataset_size' must be >= 1");
    dataset_size = n;
  }
  const json* trials_csv = find(req, "trials_csv");
  if (trials_csv) {
    if (!trials_csv->is_string()) throw RequestError(400, "trials_csv", "field 'trials_csv' must be a string (CSV text)");
    check_csv_rows(trials_csv->get_ref<const std::string&>(), "trials_csv", "trials_csv", limits_.max_rows);
  }
  std::unique_ptr<Slot> slot;
  auto s = request_samples(req, slot);
  if (!s) throw RequestError(400, "samples_csv", "missing samples: give samples_csv (CSV text) or samples_path");
  SampleSet& set = s->first;
  if (dataset_size) set.dataset_size = dataset_size;
  std::vector<models::StepSample> trials;
  if (trials_csv) {
    SampleSet measured = io::parse_samples_csv(trials_csv->get_ref<const std::string&>(), "trials_csv");
    if (!measured.dataset_size) measured.dataset_size = set.dataset_size;
    trials = app::sample_steps(measured, to.node.gpus_per_node);
  }
  const app::SamplesTransfer t = app::transfer_samples(set, from, to, std::move(trials), network, precision);
  json j = app::to_json(t);
  j["samples"] = s->second;
  j["samples_csv"] = io::format_samples_csv(t.moved);
  return j;
}

Response Service::llm_plan_request(const json& req) {
  static const std::set<std::string> allowed = {"model", "gpu", "max_gpus", "min_gpus", "max_cp", "gpus_per_node", "tokens", "global_batch",
                                                "deadline", "gpu_budget", "top", "precision", "reserve_gib",
                                                "flash_attention", "dropout", "fp32_residual", "overlap", "uneven_end_stages", "grad_reduce_in_bf16",
                                                "price_per_gpu_hour", "cost_budget", "calibrate", "calibrate_gpu", "frontier", "gpus", "prices"};
  for (const auto& [k, v] : req.items())
    if (!allowed.count(k)) throw RequestError(400, k, fmt::format("unknown field '{}' (GET /llm/models lists the models and GPUs)", k));
  const json* gpus = find(req, "gpus");
  for (const char* f : {"model", "gpu"})
    if (!find(req, f) && !(gpus && std::string(f) == "gpu"))
      throw RequestError(400, f, fmt::format("missing field '{}' (GET /llm/models lists them)", f));
  const std::string model = get_string(req, "model", "");
  auto spec = structure::find_transformer(model);
  if (!spec) throw RequestError(400, "model", fmt::format("unknown model '{}' (GET /llm/models lists them)", model));
  if (gpus) {
    if (find(req, "gpu")) throw RequestError(400, "gpu", "give 'gpu' (one GPU) or 'gpus' (several), not both");
    if (find(req, "calibrate") && !find(req, "calibrate_gpu"))
      throw RequestError(400, "calibrate",
                         "with 'gpus', give 'calibrate_gpu': the GPU the measured rows ran on, whose fitted fractions "
                         "and overheads then price each");
    if (find(req, "price_per_gpu_hour"))
      throw RequestError(400, "price_per_gpu_hour", "with 'gpus', give 'prices' ({\"a100-80gb\": 1.8, ...})");
  } else if (find(req, "prices")) {
    throw RequestError(400, "prices", "'prices' prices the GPUs of 'gpus': give 'price_per_gpu_hour' for one 'gpu'");
  }
  // One GPU's hardware; with "gpus" each is resolved there (and calibrate needs calibrate_gpu, above).
  std::optional<structure::HardwareProfile> one;
  if (!gpus) one = catalog_gpu(get_string(req, "gpu", ""), "gpu");
  plan::LlmPlanOptions o;
  o.max_gpus = get_int(req, "max_gpus", o.max_gpus);
  if (o.max_gpus < 1) throw RequestError(400, "max_gpus", "max_gpus must be >= 1");
  o.min_gpus = get_int(req, "min_gpus", o.min_gpus);
  if (o.min_gpus < 1 || o.min_gpus > o.max_gpus)
    throw RequestError(400, "min_gpus", "min_gpus must be between 1 and max_gpus");
  o.max_cp = get_int(req, "max_cp", o.max_cp);
  if (o.max_cp < 1 || o.max_cp > o.max_gpus) throw RequestError(400, "max_cp", "max_cp must be between 1 and max_gpus");
  o.gpus_per_node = get_int(req, "gpus_per_node", o.gpus_per_node);
  o.tokens = get_number(req, "tokens", std::nullopt);
  o.global_batch = get_int(req, "global_batch", std::nullopt);
  o.deadline_s = get_duration(req, "deadline", 0.0);
  if (o.deadline_s < 0) throw RequestError(400, "deadline", "deadline must be >= 0 seconds (0: none)");
  o.gpu_hour_budget = get_number(req, "gpu_budget", 0.0);
  o.price_per_gpu_hour = get_number(req, "price_per_gpu_hour", 0.0);
  o.cost_budget = get_number(req, "cost_budget", 0.0);
  o.top_k = get_int(req, "top", o.top_k);
  if (o.top_k < 1 || o.top_k > 100) throw RequestError(400, "top", "top must be in 1..100");
  if (o.gpus_per_node < 0) throw RequestError(400, "gpus_per_node", "gpus_per_node must be >= 0 (0: the GPU's node)");
  if (find(req, "precision")) {  // null is absent, as for every field
    auto pr = structure::parse_precision(get_string(req, "precision", ""));
    if (!pr) throw RequestError(400, "precision", "precision must be fp16, bf16, fp32, amp-fp32-master or fp8");
    o.precision = *pr;
  } else {
    // As the CLI's: fp16 where bf16 has no tensor cores (with "gpus", set for each GPU).
    if (one) o.precision = structure::default_training_precision(*one);
  }
  const double reserve_gib = get_number(req, "reserve_gib", 2.0);
  if (!(reserve_gib >= 0)) throw RequestError(400, "reserve_gib", "reserve_gib must be >= 0");
  o.memory_reserve_bytes = reserve_gib * 1024.0 * 1024.0 * 1024.0;
  o.flash_attention = get_bool(req, "flash_attention", false);
  o.dropout = get_bool(req, "dropout", true);
  o.overlap = get_bool(req, "overlap", false);
  o.uneven_end_stages = get_bool(req, "uneven_end_stages", false);
  o.grad_reduce_in_bf16 = get_bool(req, "grad_reduce_in_bf16", false);
  o.fp32_residual = get_bool(req, "fp32_residual", false);
  o.frontier = get_bool(req, "frontier", false);
  // Measured iterations as CSV text, not a path: a path would be a read of the server's files. Its errors name
  // "calibrate" with the line and column, as the CLI names the file.
  std::optional<app::LlmPlanMeasured> measured;
  if (req.contains("calibrate")) {
    const std::string text = get_string(req, "calibrate", "");
    // The GPU the rows ran on, when not 'gpu' (as --calibrate-gpu): a catalog name, as 'gpu' is.
    std::optional<structure::HardwareProfile> there;
    if (find(req, "calibrate_gpu")) there = catalog_gpu(get_string(req, "calibrate_gpu", ""), "calibrate_gpu");
    auto rows = io::parse_llm_configs(text, "calibrate", /*require_time=*/true);
    io::require_hardware_support(rows, there ? *there : *one);  // a row this GPU cannot run is no measurement of it
    measured = app::LlmPlanMeasured{std::move(rows), "calibrate"};
    measured->hardware = there;
  } else if (find(req, "calibrate_gpu")) {
    throw RequestError(400, "calibrate_gpu", "goes with 'calibrate': the GPU its measured rows ran on");
  }
  const bool precision_given = find(req, "precision") != nullptr;
  auto plan_on = [&](const structure::HardwareProfile& gpu, plan::LlmPlanOptions opts) {
    try {
      return app::make_llm_plan(*spec, gpu, opts, measured ? &*measured : nullptr);
    } catch (const InputError& e) {
      if (!e.file().empty() || e.field().empty()) throw;
      // The planner names its options; the request's fields are named otherwise in places.
      static const std::map<std::string, std::string> renamed = {{"memory_reserve_bytes", "reserve_gib"},
                                                                 {"deadline_s", "deadline"},
                                                                 {"gpu_hour_budget", "gpu_budget"},
                                                                 {"top_k", "top"}};
      const auto r = renamed.find(e.field());
      const std::string field = r != renamed.end() ? r->second : e.field();
      throw RequestError(400, field, field + " " + e.message());
    }
  };
  // The planner's sentences name the CLI's options; an answer names fields.
  auto worded = [&](json j) {
    for (auto& n : j["notes"]) n = api_wording(n.get<std::string>());
    if (j.contains("explanation")) j["explanation"] = api_wording(j["explanation"].get<std::string>());
    return j;
  };
  if (gpus) return llm_plan_on_gpus(*gpus, req, o, precision_given, plan_on, worded);
  // A plan over a large space computes for a second or more: it takes a slot, as a fit does.
  auto slot = take_slot();
  const app::LlmPlanOutcome out = plan_on(*one, o);
  json j = worded(app::to_json(out));
  // Nothing qualifies: 422 as the plan's own, with the search's answer (the closest configuration) beside the reason.
  if (out.result.top.empty())
    return {422, {{"error", api_wording(out.result.failing + ": " + out.result.explanation)}, {"plan", j}}};
  return {200, j};
}

// POST /llm/plan with "gpus": the same job on each GPU, as `llm plan --gpu A,B` plans it; "prices" (one
// for every GPU) cost each plan and, with "frontier", merge the GPUs' frontiers. No GPU with a plan: 422.
Response Service::llm_plan_on_gpus(const json& gpus, const json& req, const plan::LlmPlanOptions& o, bool precision_given,
                                   const std::function<app::LlmPlanOutcome(const structure::HardwareProfile&,
                                                                           plan::LlmPlanOptions)>& plan_on,
                                   const std::function<json(json)>& worded) {
  // Each GPU is a whole search: a few GPUs, not the catalog.
  constexpr size_t kMostGpus = 8;
  const auto hws = gpu_list(gpus, kMostGpus);
  std::vector<double> prices = gpu_prices(req, hws);
  if (o.cost_budget > 0 && prices.empty())
    throw RequestError(400, "prices", "a cost_budget needs what a GPU-hour costs on each GPU: give 'prices'");
  auto slot = take_slot();
  std::vector<app::LlmPlanOutcome> planned;
  for (size_t i = 0; i < hws.size(); ++i) {
    plan::LlmPlanOptions each = o;
    if (!precision_given) each.precision = structure::default_training_precision(hws[i]);
    each.price_per_gpu_hour = prices.empty() ? 0 : prices[i];
    planned.push_back(plan_on(hws[i], each));
  }
  const auto c = app::compare_llm_plans(std::move(planned), std::move(prices));
  json j = app::to_json(c);
  for (auto& g : j["gpus"]) g = worded(g);
  if (!c.any()) return {422, {{"error", "no GPU in 'gpus' has a configuration that qualifies (each GPU's reason is in 'plan')"}, {"plan", j}}};
  return {200, j};
}

void Service::set_simulation_dirs(std::string data, std::string workloads) {
  sim_data_ = std::move(data);
  sim_workloads_ = std::move(workloads);
}

std::vector<std::string> Service::workload_names() const {
  // "<folder>/<name>" for each CSV one folder down, and "<name>" for each at the top.
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  if (sim_workloads_.empty() || !fs::is_directory(sim_workloads_, ec)) return out;
  auto add = [&](const fs::path& dir, const std::string& prefix) {
    std::error_code e;
    for (const auto& f : fs::directory_iterator(dir, e))
      if (f.is_regular_file(e) && f.path().extension() == ".csv") out.push_back(prefix + f.path().stem().string());
  };
  add(sim_workloads_, "");
  for (const auto& d : fs::directory_iterator(sim_workloads_, ec))
    if (d.is_directory(ec)) add(d.path(), d.path().filename().string() + "/");
  std::sort(out.begin(), out.end());
  return out;
}

std::string Service::simulation_missing() const {
  std::error_code ec;
  if (!std::filesystem::is_directory(sim_data_, ec))
    return fmt::format("the server has no application traces to simulate: {} is not a directory (trainplan serve "
                       "--sim-data DIR)",
                       sim_data_.empty() ? std::string("(none)") : sim_data_);
  if (workload_names().empty())
    return fmt::format("the server has no workloads to simulate: no CSV in {} or its folders (trainplan serve "
                       "--sim-workloads DIR)",
                       sim_workloads_.empty() ? std::string("(none)") : sim_workloads_);
  return "";
}

json Service::workloads() const {
  json policies = json::array();
  for (const auto* e : sim::PolicyRegistry::instance().all()) policies.push_back(e->name);
  const std::string missing = simulation_missing();
  json j = {{"workloads", missing.empty() ? json(workload_names()) : json::array()}, {"policies", policies}};
  if (!missing.empty()) j["note"] = missing;
  return j;
}

json Service::simulate_request(const json& req) {
  static const std::set<std::string> allowed = {"workload", "policies", "nodes", "gpus_per_node", "load_scale",
                                                "restart_delay", "interval", "placement", "oracle", "gittins",
                                                "min_gain", "time_model"};
  for (const auto& [k, v] : req.items())
    if (!allowed.count(k)) throw RequestError(400, k, fmt::format("unknown field '{}' (GET /workloads lists the workloads and policies)", k));
  if (const std::string missing = simulation_missing(); !missing.empty()) throw RequestError(404, "workload", missing);
  // A name from the listing, never a path: the server reads only its own workloads.
  if (!find(req, "workload")) throw RequestError(400, "workload", "missing field 'workload' (GET /workloads lists them)");
  const std::string name = get_string(req, "workload", "");
  const auto names = workload_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw RequestError(404, "workload", fmt::format("unknown workload '{}' (GET /workloads lists them)", name));
  app::SimulateQuery q;
  q.workload = (std::filesystem::path(sim_workloads_) / (name + ".csv")).string();
  q.data = sim_data_;
  q.detail = true;
  if (const json* p = find(req, "policies")) {
    if (!p->is_array() || p->empty()) throw RequestError(400, "policies", "field 'policies' must be a non-empty array of names");
    q.policies.clear();
    for (const auto& x : *p) {
      if (!x.is_string()) throw RequestError(400, "policies", "field 'policies' must be a non-empty array of names");
      // Each name is a whole simulation: a name repeated would run (and answer) it again, and a
      // long list of one name would hold the server's memory and a core for the request's limit.
      if (std::find(q.policies.begin(), q.policies.end(), x.get<std::string>()) != q.policies.end())
        throw RequestError(400, "policies", fmt::format("'{}' is named twice", x.get<std::string>()));
      q.policies.push_back(x.get<std::string>());
    }
    std::vector<std::string> known;
    for (const auto* e : sim::PolicyRegistry::instance().all()) known.push_back(e->name);
    for (const auto& x : q.policies) one_of(x, "policies", known);
  }
  q.nodes = get_int(req, "nodes", q.nodes);
  q.gpus_per_node = get_int(req, "gpus_per_node", q.gpus_per_node);
  // A cluster's size bounds the simulator's work per event.
  if (q.nodes < 1 || q.nodes > 4096) throw RequestError(400, "nodes", "nodes must be in 1..4096");
  if (q.gpus_per_node < 1 || q.gpus_per_node > 64) throw RequestError(400, "gpus_per_node", "gpus_per_node must be in 1..64");
  q.load_scale = get_number(req, "load_scale", q.load_scale);
  if (!(q.load_scale >= 0.01 && q.load_scale <= 100)) throw RequestError(400, "load_scale", "load_scale must be in 0.01..100");
  q.restart_delay = get_number(req, "restart_delay", q.restart_delay);
  q.interval = get_number(req, "interval", q.interval);
  sim::check_schedule_times(q.restart_delay, q.interval);  // 400 naming the field, before a slot is taken
  q.placement = get_string(req, "placement", q.placement);
  one_of(q.placement, "placement", {"pack", "spread"});
  q.oracle = get_bool(req, "oracle", false);
  q.gittins = get_bool(req, "gittins", false);
  q.min_gain = get_number(req, "min_gain", q.min_gain);
  if (!(q.min_gain >= 0)) throw RequestError(400, "min_gain", "min_gain must be >= 0");
  q.time_model = get_string(req, "time_model", "");
  // A simulation computes like a fit: it takes a slot.
  auto slot = take_slot();
  return app::to_json(app::simulate(q));
}

Response Service::handle(const std::string& method, const std::string& path, std::string body,
                         Clock::time_point received) {
  try {
    struct Route {
      const char* path;
      const char* method;
    };
    static const Route routes[] = {{"/health", "GET"}, {"/models", "GET"},  {"/fits", "GET"},
                                   {"/fit", "POST"},   {"/predict", "POST"}, {"/plan", "POST"},
                                   {"/curves", "POST"}, {"/llm/models", "GET"}, {"/llm/plan", "POST"},
                                   {"/workloads", "GET"},   {"/simulate", "POST"}, {"/transfer", "POST"}};
    const Route* route = nullptr;
    for (const auto& r : routes)
      if (path == r.path) route = &r;
    if (!route) return {404, error_body(fmt::format("no such endpoint: {} {}", method, path))};
    // HEAD is a GET without its body (the HTTP front drops the body):
    // monitors probe /health that way.
    const bool head_of_get = method == "HEAD" && std::string_view(route->method) == "GET";
    if (method != route->method && !head_of_get)
      return {405, error_body(fmt::format("{} takes {}, not {}", path, route->method, method))};
    if (path == "/health") return {200, health()};
    if (path == "/models") return {200, models()};
    if (path == "/fits") return {200, fits()};
    if (path == "/llm/models") return {200, llm_models()};
    if (path == "/workloads") return {200, workloads()};
    if (stopping_) return {503, error_body("the server is stopping")};
    if (body.size() > limits_.max_body_bytes)
      return {413, error_body(fmt::format("the request body is {} bytes, more than the server's limit of {} "
                                          "(trainplan serve --max-body-bytes)",
                                          body.size(), limits_.max_body_bytes))};
    struct InFlight {
      std::atomic<int>& n;
      explicit InFlight(std::atomic<int>& n) : n(n) { ++n; }
      ~InFlight() { --n; }
    } in_flight(in_flight_);
    const auto limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits_.request_timeout_s));
    CancelScope scope(received + limit, &stopping_);
    json req = parse_body(body);
    std::string().swap(body);
    if (path == "/fit") return {200, fit_request(req)};
    if (path == "/predict") return {200, predict_request(req)};
    if (path == "/curves") return {200, curves_request(req)};
    if (path == "/llm/plan") return llm_plan_request(req);
    if (path == "/simulate") return {200, simulate_request(req)};
    if (path == "/transfer") return {200, transfer_request(req)};
    return plan_request(req);
  } catch (const RequestError& e) {
    json b = error_body(e.what());
    if (!e.field.empty()) b["field"] = e.field;
    return {e.status, b, e.retry_after_s};
  } catch (const InputError& e) {
    return {400, input_error_body(e)};
  } catch (const InfeasibleError& e) {
    return {422, error_body(api_wording(e.what()))};
  } catch (const Cancelled& c) {
    if (c.why == Cancelled::Why::kStop) return {503, error_body("the server is stopping")};
    return {503, error_body(fmt::format("the request took longer than {:g} s, the server's limit (trainplan serve "
                                        "--request-timeout), and was abandoned; send fewer samples, name the models "
                                        "instead of auto, or use an id from /fit",
                                        limits_.request_timeout_s))};
  } catch (const std::bad_alloc&) {
    return {503, error_body("the server ran out of memory for this request; send fewer samples")};
  } catch (const std::exception& e) {
    return {500, error_body(fmt::format("internal error: {}", e.what()))};
  } catch (...) {
    return {500, error_body("internal error")};
  }
}

}  // namespace trainplan::server
