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
#include "app/plan_on_gpus.h"
#include "app/shortfall_json.h"
#include "app/search_space.h"
#include "app/transfer_samples.h"
#include "core/cancel.h"
#include "core/error.h"
#include "io/sample_csv.h"
#include "models/registry.h"
#include "plan/planner.h"
#include "profile/profile_plan.h"
#include "scoring/evaluate.h"
#include "scoring/in_sample.h"
#include "scoring/mre.h"
#include "server/request_fields.h"
#include "server/request_gpus.h"
#include "structure/gpu_catalog.h"
#include "structure/network_zoo.h"

namespace trainplan::server {

const char* version() {
#ifdef TRAINPLAN_VERSION
  return TRAINPLAN_VERSION;
#else
  return "unknown";
#endif
}

using nlohmann::json;

// ---- limits -----------------------------------------------------------------

namespace {
thread_local std::string current_client;
}  // namespace

Service::ClientScope::ClientScope(std::string client) { current_client = std::move(client); }
Service::ClientScope::~ClientScope() { current_client.clear(); }

Service::Slot::~Slot() {
  {
    std::lock_guard<std::mutex> lock(s_.slots_mu_);
    --s_.computing_[pool_];
    auto it = s_.clients_[pool_].find(client_);
    if (it != s_.clients_[pool_].end() && --it->second.computing == 0 && it->second.waiting == 0)
      s_.clients_[pool_].erase(it);
  }
  s_.slots_cv_.notify_all();  // the waiters of both pools share the condition
}

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
  return waiting_[0] + waiting_[1] + waiting_for_ids_;
}

std::unique_ptr<Service::Slot> Service::take_slot(Pool pool, bool admitted) {
  const int p = int(pool);
  const std::string client = current_client;
  std::unique_lock<std::mutex> lock(slots_mu_);
  auto& clients = clients_[p];
  // A client's share of a pool's places (computing and waiting): past it,
  // while another client is there, its requests are refused, so that one
  // client's burst cannot fill the line others wait in.
  const int share = std::max(1, (limits_.max_concurrent + limits_.max_queue) / 4);
  auto places = [](const ClientPlaces& c) { return c.computing + c.waiting; };
  bool others = false, another_over_share = false;
  for (const auto& [name, c] : clients)
    if (name != client) others = true, another_over_share = another_over_share || places(c) > share;
  const ClientPlaces mine_now = clients.count(client) ? clients.at(client) : ClientPlaces{};
  // Whether a client waiting computes less than this one does: it goes first.
  auto a_lesser_client_waits = [&](int mine) {
    for (const auto& [name, c] : clients)
      if (c.waiting > 0 && c.computing < mine) return true;
    return false;
  };
  if (computing_[p] >= limits_.max_concurrent || a_lesser_client_waits(mine_now.computing)) {
    // The ids' line holds those waiting for an id's lock too. A slot a lesser client waits for is
    // taken already.
    const int line = waiting_[p] + (pool == Pool::kById ? waiting_for_ids_ : 0);
    if (!admitted && others && places(mine_now) >= share)
      throw RequestError(503, "",
                         fmt::format("busy: this client holds {} of the places of the requests {} (computing or "
                                     "waiting), its share while other clients ask (a quarter of trainplan serve "
                                     "--max-concurrent plus --max-queue); retry later",
                                     places(mine_now), pool == Pool::kById ? "on fitted ids" : "with samples or searches"),
                         1);
    // A client under its share is let into a line that another client's burst has filled, by as much
    // as its share; no line at all (--max-queue 0) stays none.
    const int most_line =
        limits_.max_queue == 0 || !another_over_share ? limits_.max_queue : limits_.max_queue + share;
    if (!admitted && line >= most_line)
      throw RequestError(503, "",
                         fmt::format("busy: {} requests {} are computing and {} are waiting, the server's "
                                     "limits (trainplan serve --max-concurrent, --max-queue); retry later{}",
                                     computing_[p], pool == Pool::kById ? "on fitted ids" : "with samples or searches",
                                     line,
                                     pool == Pool::kById ? "" : " (a request on samples can use an id from /fit instead: its own pool)"),
                         1);
    ++waiting_[p];
    ++clients[client].waiting;
    struct Unwait {
      int& n;
      std::map<std::string, ClientPlaces>& clients;
      const std::string& client;
      ~Unwait() {
        --n;
        auto it = clients.find(client);
        if (--it->second.waiting == 0 && it->second.computing == 0) clients.erase(it);
      }
    } unwait{waiting_[p], clients, client};
    // A freed slot goes to a waiting request of the client computing the least.
    // Wakes at least every 20 ms to see the request's time limit and stop().
    while (computing_[p] >= limits_.max_concurrent || a_lesser_client_waits(clients.at(client).computing)) {
      slots_cv_.wait_for(lock, std::chrono::milliseconds(20));
      check_cancelled();
    }
  }
  ++computing_[p];
  ++clients[client].computing;
  return std::make_unique<Slot>(*this, pool, client);
}

std::unique_lock<std::timed_mutex> Service::lock_entry(std::timed_mutex& mu, bool& waited) {
  std::unique_lock<std::timed_mutex> lock(mu, std::try_to_lock);
  waited = !lock.owns_lock();
  if (lock.owns_lock()) return lock;
  // Counted apart from the slot's line (waiting_for_ids_), and a request
  // that waited here joins the slot's line without the limit (`waited`,
  // take_slot's `admitted`): it was admitted once, and a newcomer taking the
  // place it left on getting the lock must not have it refused.
  constexpr int p = int(Pool::kById);
  {
    std::lock_guard<std::mutex> guard(slots_mu_);
    if (waiting_[p] + waiting_for_ids_ >= limits_.max_queue)
      throw RequestError(503, "",
                         fmt::format("busy: {} requests on fitted ids are waiting (for their id, which a request "
                                     "is using, or for a slot), the server's limit (trainplan serve --max-queue); "
                                     "retry later",
                                     waiting_[p] + waiting_for_ids_),
                         1);
    ++waiting_for_ids_;
  }
  struct Unwait {
    Service& s;
    ~Unwait() {
      std::lock_guard<std::mutex> guard(s.slots_mu_);
      --s.waiting_for_ids_;
    }
  } unwait{*this};
  while (!lock.try_lock_for(std::chrono::milliseconds(20))) check_cancelled();
  return lock;
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

// ---- routes -----------------------------------------------------------------

// The load is in the answer so that an operator (or a test) sees the work
// under way without a request of its own taking a slot.
json Service::health() const {
  std::lock_guard<std::mutex> lock(slots_mu_);  // the two counts from one moment
  return {{"status", "ok"},
          {"version", version()},
          {"computing", computing_[0] + computing_[1]},
          {"waiting", waiting_[0] + waiting_[1] + waiting_for_ids_},
          {"by_id", {{"computing", computing_[1]}, {"waiting", waiting_[1] + waiting_for_ids_}}}};
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
void Service::take_id_slot(std::unique_ptr<Slot>& slot, bool admitted) {
  if (!slot) slot = take_slot(Pool::kById, admitted);
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
                             fmt::format("id '{}' was let go to hold newer fits: the server holds {} (trainplan "
                                         "serve --max-fits), letting go of the least recently used; POST /fit its "
                                         "samples again",
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
// The request's `dataset_size`, as --dataset-size gives it: absent, or an integer >= 1.
std::optional<long> request_dataset_size(const json& req) {
  if (!find(req, "dataset_size")) return std::nullopt;
  const int n = get_int(req, "dataset_size", std::nullopt);
  if (n < 1) throw RequestError(400, "dataset_size", "field 'dataset_size' must be >= 1");
  return n;
}

// The packing's reasons (`nodes_from`, at any depth) name the CLI's options;
// an answer names fields.
void reword_nodes_from(json& j) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items())
      if (key == "nodes_from" && value.is_string()) value = api_wording(value.get<std::string>());
      else reword_nodes_from(value);
  } else if (j.is_array()) {
    for (auto& v : j) reword_nodes_from(v);
  }
}

// The model names a request asks for, else those its entry was fitted with:
// a request naming one part (time_model) keeps the entry's other; one naming
// `model` names both parts but those it names apart.
template <class Q, class E>
void set_models(Q& q, const json& req, const E& e, const std::string& default_model) {
  const bool names_both = find(req, "model") != nullptr;
  q.model = names_both ? get_string(req, "model", default_model) : e.model;
  q.time_model = find(req, "time_model") ? get_string(req, "time_model", "") : names_both ? "" : e.time_model;
  q.metric_model = find(req, "metric_model") ? get_string(req, "metric_model", "") : names_both ? "" : e.metric_model;
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
  q.gpus_per_node = get_int(req, "gpus_per_node", q.gpus_per_node);
  if (q.gpus_per_node < 0) throw RequestError(400, "gpus_per_node", "gpus_per_node must be >= 0 (0: unknown)");
  q.confidence = get_number(req, "confidence", q.confidence);
  q.folds = get_int(req, "folds", q.folds);
  q.seed = get_seed(req, "seed", q.seed);
  if (find(req, "target")) q.target = get_number(req, "target", std::nullopt);
  q.max_epochs = get_int(req, "max_epochs", q.max_epochs);
  if (find(req, "max_epochs") && !q.target)
    throw RequestError(400, "max_epochs", "max_epochs bounds the search for target's epochs: give target");
  app::check_predict_query(q);
  std::unique_ptr<Slot> slot;
  auto e = entry_for(req, slot);
  set_models(q, req, *e, default_model_);
  bool waited = false;
  auto lock = lock_entry(e->mu, waited);
  take_id_slot(slot, waited);
  json j = to_json(app::predict(e->src, q));
  reword_nodes_from(j);
  return j;
}

Response Service::plan_request(const json& req) {
  check_fields(req, {"target", "deadline", "max_workers", "search", "method", "batches", "gpus_per_node",
                     "max_epochs", "alternatives", "seed", "emit", "train_cmd", "no_gpus", "job_name", "image", "confidence",
                     "bounds", "early_stop", "early_stop_budget", "conformal", "frontier", "tabu_iterations", "tabu_tenure", "manual_tries",
                     "gpus", "from_gpu", "prices", "trials", "precision", "target_precision", "tf32", "dataset_size"});
  app::PlanQuery q;
  q.target = get_number(req, "target", std::nullopt);
  q.deadline = get_duration(req, "deadline", std::nullopt);
  q.max_workers = get_int(req, "max_workers", q.max_workers);
  q.search = get_string(req, "search", q.search);
  one_of(q.search, "search", {"auto", "tabu", "exhaustive"});
  q.method = get_string(req, "method", q.method);
  one_of(q.method, "method", plan::planner_names());
  q.batches = get_int_list(req, "batches");
  // Absent: the planner's default (the hardware's node); given, >= 0.
  if (find(req, "gpus_per_node")) {
    q.gpus_per_node = get_int(req, "gpus_per_node", std::nullopt);
    if (q.gpus_per_node < 0) throw RequestError(400, "gpus_per_node", "gpus_per_node must be >= 0 (0: unknown)");
  }
  q.max_epochs = get_int(req, "max_epochs", q.max_epochs);
  q.alternatives = get_int(req, "alternatives", q.alternatives);
  q.seed = get_seed(req, "seed", q.seed);
  q.emit = get_string(req, "emit", q.emit);
  if (!q.emit.empty()) one_of(q.emit, "emit", {"torchrun", "slurm", "k8s"});
  q.train_cmd = get_string(req, "train_cmd", q.train_cmd);
  q.no_gpus = get_bool(req, "no_gpus", q.no_gpus);
  q.job_name = get_string(req, "job_name", q.job_name);
  q.image = get_string(req, "image", q.image);
  q.confidence = get_number(req, "confidence", q.confidence);
  const std::string bounds = get_string(req, "bounds", "two-sided");
  one_of(bounds, "bounds", {"two-sided", "one-sided"});
  q.bounds = uncertainty::parse_confidence_bounds(bounds);
  q.conformal = get_bool(req, "conformal", q.conformal);
  q.early_stop = get_bool(req, "early_stop", q.early_stop);
  q.frontier = get_bool(req, "frontier", q.frontier);
  const std::string budget = get_string(req, "early_stop_budget", "deadline");
  one_of(budget, "early_stop_budget", {"target", "deadline"});
  q.early_stop_budget = plan::parse_early_stop_budget(budget);
  q.tabu_iterations = get_int(req, "tabu_iterations", q.tabu_iterations);
  q.tabu_tenure = get_int(req, "tabu_tenure", q.tabu_tenure);
  q.manual_tries = get_int(req, "manual_tries", q.manual_tries);
  // As the CLI: a field this plan does not read is refused, not passed over.
  // A field at its default asks for nothing ("conformal": false, "bounds":
  // "two-sided"), as a client that sends every field does: only one that
  // would change the plan counts as given.
  const app::PlanQuery defaults;
  const std::map<std::string, bool> changes = {
      {"--bounds", q.bounds != defaults.bounds},
      {"--early-stop-budget", q.early_stop_budget != defaults.early_stop_budget},
      {"--manual-tries", q.manual_tries != defaults.manual_tries},
      {"--tabu-iterations", q.tabu_iterations != defaults.tabu_iterations},
      {"--tabu-tenure", q.tabu_tenure != defaults.tabu_tenure},
      {"--search", q.search != defaults.search},
      {"--seed", q.seed != defaults.seed},
      {"--conformal", q.conformal != defaults.conformal},
      {"--train-cmd", q.train_cmd != defaults.train_cmd},
      {"--job-name", q.job_name != defaults.job_name},
      {"--image", q.image != defaults.image},
      {"--no-gpus", q.no_gpus != defaults.no_gpus}};
  app::check_plan_options_read(q, [&](const std::string& option) {
    const auto it = changes.find(option);
    return it != changes.end() ? it->second : find(req, api_field_name(option).c_str()) != nullptr;
  });
  if (const json* b = find(req, "batches"); b && b->is_array() && b->empty())
    throw RequestError(400, "batches", "batches is empty: leave it out to plan on every batch of the samples");
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
  for (const char* f : {"from_gpu", "prices", "trials", "precision", "target_precision", "tf32", "dataset_size"})
    if (find(req, f)) throw RequestError(400, f, fmt::format("field '{}' goes with 'gpus' (the GPUs to plan on)", f));
  bool waited = false;
  auto lock = lock_entry(e->mu, waited);
  take_id_slot(slot, waited);
  json j = to_json(app::make_plan(e->src, q), e->label);
  reword_nodes_from(j);
  return {200, j};
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
  const std::optional<long> dataset_size = request_dataset_size(req);
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
  bool waited = false;
  auto lock = lock_entry(e.mu, waited);
  take_id_slot(slot, waited);
  // As plan --gpu --dataset-size: the samples' size where they give none (or another), for their move.
  std::optional<SampleSet> sized;
  if (dataset_size) {
    sized = e.src.samples();
    sized->dataset_size = dataset_size;
  }
  const auto c = app::plan_on_gpus(sized ? *sized : e.src.samples(), from, hws, prices, q, e.src.params(), trials,
                                   precision);
  json j = app::to_json(c, e.label);
  reword_nodes_from(j);
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
        // A name given twice would be cross-validated twice (20,000 copies took 37 s) and answered once.
        if (std::find(q.evaluate.begin(), q.evaluate.end(), n.get<std::string>()) != q.evaluate.end())
          throw RequestError(400, "evaluate", fmt::format("evaluate names model '{}' twice", n.get<std::string>()));
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
  bool waited = false;
  auto lock = lock_entry(e->mu, waited);
  take_id_slot(slot, waited);
  return app::curves(e->src, q, e->label);
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
  const std::optional<long> dataset_size = request_dataset_size(req);
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
    // As transfer --samples --trials --dataset-size: the size given is the trials' too.
    if (dataset_size) measured.dataset_size = dataset_size;
    trials = app::trial_steps(std::move(measured), set.dataset_size, to.name, to.node.gpus_per_node);
  }
  const app::SamplesTransfer t = app::transfer_samples(set, from, to, std::move(trials), network, precision);
  json j = app::to_json(t);
  j["samples"] = s->second;
  j["samples_csv"] = io::format_samples_csv(t.moved);
  return j;
}

std::optional<Response> Service::route_refusal(const std::string& method, const std::string& path) const {
  struct Route {
    const char* path;
    const char* method;
  };
  static const Route routes[] = {{"/health", "GET"}, {"/models", "GET"},  {"/fits", "GET"},
                                 {"/fit", "POST"},   {"/predict", "POST"}, {"/plan", "POST"},
                                 {"/curves", "POST"}, {"/llm/models", "GET"}, {"/llm/plan", "POST"},
                                 {"/workloads", "GET"},   {"/simulate", "POST"}, {"/transfer", "POST"},
                                 {"/watch", "POST"}};
  const Route* route = nullptr;
  for (const auto& r : routes)
    if (path == r.path) route = &r;
  if (!route) return Response{404, error_body(fmt::format("no such endpoint: {} {}", method, path))};
  // HEAD is a GET without its body (the HTTP front drops the body):
  // monitors probe /health that way.
  const bool head_of_get = method == "HEAD" && std::string_view(route->method) == "GET";
  if (method != route->method && !head_of_get)
    return Response{405, error_body(fmt::format("{} takes {}, not {}", path, route->method, method)), 0,
                    std::string_view(route->method) == "GET" ? "GET, HEAD" : route->method};
  return std::nullopt;
}

Response Service::handle(const std::string& method, const std::string& path, std::string body,
                         Clock::time_point received, bool (*abandoned)()) {
  bool body_had_samples = false;  // for the advice of a request past its time limit
  json req;                        // parsed, for the request field an error in its text names
  try {
    if (auto refused = route_refusal(method, path)) return std::move(*refused);
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
    CancelScope scope(received + limit, &stopping_, abandoned);
    req = parse_body(body);
    std::string().swap(body);
    body_had_samples = req.contains("samples_csv") || req.contains("samples_path");
    if (path == "/fit") return {200, fit_request(req)};
    if (path == "/predict") return {200, predict_request(req)};
    if (path == "/curves") return {200, curves_request(req)};
    if (path == "/llm/plan") return llm_plan_request(req);
    if (path == "/simulate") return {200, simulate_request(req)};
    if (path == "/transfer") return {200, transfer_request(req)};
    if (path == "/watch") return {200, watch_request(req)};
    return plan_request(req);
  } catch (const RequestError& e) {
    json b = error_body(e.what());
    if (!e.field.empty()) b["field"] = e.field;
    return {e.status, b, e.retry_after_s};
  } catch (const InputError& e) {
    return {400, input_error_body(e, req)};
  } catch (const InfeasibleError& e) {
    json b = error_body(api_wording(e.what()));
    b.update(app::to_json(e.shortfall()));  // the failing constraint in figures, where the planner measured it
    return {422, b};
  } catch (const Cancelled& c) {
    if (c.why == Cancelled::Why::kStop) return {503, error_body("the server is stopping")};
    // No one reads it; said for the log (nginx's 499, a client that closed the request).
    if (c.why == Cancelled::Why::kAbandoned)
      return {499, error_body("the client closed its connection before the answer: the request was abandoned")};
    // What to change depends on what the request was: samples to fit, or a
    // search (a plan, a transformer plan, a simulation) to narrow.
    const bool brought_samples = path == "/fit" || body_had_samples;
    return {503, error_body(fmt::format("the request took longer than {:g} s, the server's limit (trainplan serve "
                                        "--request-timeout), and was abandoned; {}",
                                        limits_.request_timeout_s,
                                        brought_samples ? "send fewer samples, name the models instead of auto, or "
                                                          "use an id from /fit"
                                        : path == "/simulate" ? "simulate a smaller cluster or load"
                                        : path == "/watch"    ? "send a log of fewer epochs, or the naive method"
                                        : path == "/curves"   ? "ask for fewer curves, steps or models to evaluate"
                                                              : "narrow the search (fewer GPUs, batches or "
                                                                "alternatives), or name the models instead of auto"))};
  } catch (const std::bad_alloc&) {
    return {503, error_body(fmt::format("the server ran out of memory for this request; {}",
                                        path == "/watch" ? "send a shorter log" : "send fewer samples"))};
  } catch (const std::exception& e) {
    return {500, error_body(fmt::format("internal error: {}", e.what()))};
  } catch (...) {
    return {500, error_body("internal error")};
  }
}

}  // namespace trainplan::server
