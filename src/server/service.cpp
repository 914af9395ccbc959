#include "server/service.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "core/error.h"
#include "scoring/evaluate.h"
#include "plan/planner.h"
#include "scoring/in_sample.h"
#include "scoring/mre.h"
#include "io/sample_csv.h"
#include "models/registry.h"

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

// A request the service refuses before any library call: its status and the field at fault.
struct RequestError : std::runtime_error {
  RequestError(int status, std::string field, const std::string& message)
      : std::runtime_error(message), status(status), field(std::move(field)) {}
  int status;
  std::string field;
};

json error_body(const std::string& message) { return {{"error", message}}; }

// Fields every request on samples may carry, besides its own.
const std::set<std::string> kSampleFields = {"id", "samples_csv", "samples_path", "model", "time_model",
                                             "metric_model"};

void check_fields(const json& req, std::set<std::string> allowed) {
  allowed.insert(kSampleFields.begin(), kSampleFields.end());
  for (const auto& [k, v] : req.items())
    if (!allowed.count(k)) {
      std::string known;
      for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
      throw RequestError(400, k, fmt::format("unknown field '{}' (known: {})", k, known));
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

// Samples named by the request: "samples_csv" (the text) or "samples_path" (a file on the server).
std::optional<std::pair<SampleSet, std::string>> request_samples(const json& req) {
  const json* csv = find(req, "samples_csv");
  const json* path = find(req, "samples_path");
  if (csv && path) throw RequestError(400, "samples_csv", "give samples_csv or samples_path, not both");
  if (csv) {
    if (!csv->is_string()) throw RequestError(400, "samples_csv", "field 'samples_csv' must be a string (CSV text)");
    return std::make_pair(io::parse_samples_csv(csv->get<std::string>(), "samples_csv"), std::string("samples_csv"));
  }
  if (path) {
    if (!path->is_string()) throw RequestError(400, "samples_path", "field 'samples_path' must be a string");
    std::string p = path->get<std::string>();
    return std::make_pair(io::read_samples_csv(p), p);
  }
  return std::nullopt;
}

json parse_body(const std::string& body) {
  json j;
  try {
    j = json::parse(body.empty() ? std::string("{}") : body);
  } catch (const json::parse_error& e) {
    throw RequestError(400, "", fmt::format("bad JSON: {}", e.what()));
  }
  if (!j.is_object()) throw RequestError(400, "", "the request body must be a JSON object");
  return j;
}

}  // namespace

json Service::health() const { return {{"status", "ok"}, {"version", version()}}; }

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
    e->id = fmt::format("fit-{}", next_id_++);
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
  return j;
}

json Service::fit_request(const json& req) {
  check_fields(req, {});
  if (find(req, "id")) throw RequestError(400, "id", "/fit takes samples (samples_csv or samples_path), not an id");
  auto s = request_samples(req);
  if (!s) throw RequestError(400, "samples_csv", "missing samples: give samples_csv (CSV text) or samples_path");
  return fit(std::move(s->first), s->second, get_string(req, "model", default_model_), get_string(req, "time_model", ""),
             get_string(req, "metric_model", ""));
}

std::shared_ptr<Service::Entry> Service::entry_for(const json& req) {
  if (const json* id = find(req, "id")) {
    if (find(req, "samples_csv") || find(req, "samples_path"))
      throw RequestError(400, "id", "give an id or samples, not both");
    if (!id->is_string()) throw RequestError(400, "id", "field 'id' must be a string (from /fit)");
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(id->get<std::string>());
    if (it == entries_.end())
      throw RequestError(404, "id", fmt::format("unknown id '{}' (POST /fit first; GET /fits lists them)", id->get<std::string>()));
    return it->second;
  }
  auto s = request_samples(req);
  if (!s) throw RequestError(400, "id", "missing samples: give an id (from /fit), samples_csv or samples_path");
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
  check_fields(req, {"batch", "workers", "nodes", "epochs", "confidence", "folds", "seed", "target", "max_epochs"});
  app::PredictQuery q;
  q.batch = get_number(req, "batch", std::nullopt);
  q.workers = get_int(req, "workers", std::nullopt);
  q.epochs = get_number(req, "epochs", -1.0);
  if (find(req, "epochs") && q.epochs < 0) throw RequestError(400, "epochs", "field 'epochs' must be >= 0");
  q.nodes = get_int(req, "nodes", -1);
  if (find(req, "nodes") && q.nodes < 0) throw RequestError(400, "nodes", "field 'nodes' must be >= 0");
  q.confidence = get_number(req, "confidence", 0.9);
  q.folds = get_int(req, "folds", 5);
  q.seed = get_seed(req, "seed", 1);
  if (find(req, "target")) q.target = get_number(req, "target", std::nullopt);
  q.max_epochs = get_int(req, "max_epochs", q.max_epochs);
  app::check_predict_query(q);
  auto e = entry_for(req);
  set_models(q, req, *e, default_model_);
  std::lock_guard<std::mutex> lock(e->mu);
  return to_json(app::predict(e->src, q));
}

json Service::plan_request(const json& req) {
  check_fields(req, {"target", "deadline", "max_workers", "search", "method", "batches", "gpus_per_node",
                     "max_epochs", "alternatives", "seed", "emit", "train_cmd", "job_name", "image", "confidence",
                     "bounds", "early_stop", "early_stop_budget", "conformal", "frontier", "tabu_iterations", "tabu_tenure", "manual_tries"});
  app::PlanQuery q;
  q.target = get_number(req, "target", std::nullopt);
  q.deadline = get_number(req, "deadline", std::nullopt);
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
  auto e = entry_for(req);
  set_models(q, req, *e, default_model_);
  std::lock_guard<std::mutex> lock(e->mu);
  return to_json(app::make_plan(e->src, q), e->label);
}

Response Service::handle(const std::string& method, const std::string& path, const std::string& body) {
  try {
    struct Route {
      const char* path;
      const char* method;
    };
    static const Route routes[] = {{"/health", "GET"}, {"/models", "GET"},  {"/fits", "GET"},
                                   {"/fit", "POST"},   {"/predict", "POST"}, {"/plan", "POST"}};
    const Route* route = nullptr;
    for (const auto& r : routes)
      if (path == r.path) route = &r;
    if (!route) return {404, error_body(fmt::format("no such endpoint: {} {}", method, path))};
    if (method != route->method)
      return {405, error_body(fmt::format("{} takes {}, not {}", path, route->method, method))};
    if (path == "/health") return {200, health()};
    if (path == "/models") return {200, models()};
    if (path == "/fits") return {200, fits()};
    json req = parse_body(body);
    if (path == "/fit") return {200, fit_request(req)};
    if (path == "/predict") return {200, predict_request(req)};
    return {200, plan_request(req)};
  } catch (const RequestError& e) {
    json b = error_body(e.what());
    if (!e.field.empty()) b["field"] = e.field;
    return {e.status, b};
  } catch (const InputError& e) {
    json b = error_body(e.what());
    if (!e.file().empty()) b["file"] = e.file();
    if (e.line() > 0) b["line"] = e.line();
    if (!e.field().empty()) b["field"] = e.field();
    return {400, b};
  } catch (const InfeasibleError& e) {
    return {422, error_body(e.what())};
  } catch (const std::exception& e) {
    return {500, error_body(fmt::format("internal error: {}", e.what()))};
  } catch (...) {
    return {500, error_body("internal error")};
  }
}

}  // namespace trainplan::server
