// The JSON API of `trainplan serve`, without HTTP: maps (method, path, body)
// to (status, JSON) over the library calls the CLI uses (app/predict.h,
// app/plan_request.h).
// server/http_server.h puts it behind cpp-httplib; tests can call it directly.
//
//   GET  /health   {"status": "ok", "version": ...}
//   GET  /models   registered models and their parts
//   GET  /fits     the fitted sample sets held, by id
//   POST /fit      samples (+ model) -> id, chosen models, in-sample MRE
//   POST /predict  id or samples + configuration -> as `trainplan predict --json`
//   POST /plan     id or samples + constraints   -> as `trainplan plan --json`
//   POST /curves   id or samples -> measured points, fitted curves and band,
//                  candidate models' scores (app/curves.h)
//   GET  /llm/models  the transformer zoo and the GPU catalog
//   POST /llm/plan    model, gpu, tokens, ... -> as `trainplan llm plan --json`
//   GET  /workloads   the workloads and policies POST /simulate takes
//   POST /simulate    workload name, policies, cluster -> as `trainplan
//                     simulate --json`, with each job's result and the GPUs
//                     in use over time (app/simulate_request.h)
//   POST /transfer    samples + from_gpu, to_gpu -> as `trainplan transfer
//                     --samples --json`, with the samples as if run on
//                     to_gpu (app/transfer_samples.h)
//   POST /watch       a job's log (log_text, or log_path on the server) +
//                     target -> the latest forecast `trainplan watch --json`
//                     gives, and the chart of `watch --plot` as data
//                     (app/watch_chart.h)
//
// Errors: {"error": what, "file", "line", "field" (when known)} with 400 (bad
// JSON, a missing or mistyped field, InputError), 403 (samples_path or log_path without
// Limits::allow_paths, or outside Limits::allowed_root), 404 (unknown id,
// one let go, or an unknown path),
// 405 (wrong method), 413 (a body or samples file over Limits), 422
// (InfeasibleError; samples or a search space over Limits), 503 (busy, over
// the time limit, stopping, a /fit when every id held is kept;
// Response::retry_after_s when a retry can succeed), 500 (anything else). Messages name request fields, not CLI
// options. handle() never throws.
//
// Fitted ids: at most Limits::max_fits are held; a /fit past it lets go of
// the id used least recently, those no request is using first (a request on
// it in progress keeps its samples until it ends; ids given to keep() stay),
// and a later request on that id is a 404 that says so.
//
// Thread-safe. Requests that bring samples (/fit; /predict and /plan with
// samples_csv or samples_path) compute at most Limits::max_concurrent at a
// time, up to Limits::max_queue more waiting; requests on fitted ids have a
// pool of the same size of their own (so at most twice max_concurrent fits
// run at once); requests on one id run one at a time (its models are fitted
// lazily and cached), and take their slot once they hold the id, so that
// requests on different ids run in parallel. Every POST runs under a CancelScope (core/cancel.h): it is
// abandoned at its time limit or on stop().
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/live_watch.h"
#include "app/llm_plan_request.h"
#include "app/plan_request.h"
#include "app/predict.h"

namespace trainplan::server {

// The version /health reports (the CMake project version).
const char* version();

// What one request may cost; `trainplan serve` sets each from a flag of the
// same name (docs/SERVER.md, "Limits").
struct Limits {
  size_t max_body_bytes = size_t(8) << 20;  // a request body, and a samples_path file: past it 413
  size_t max_rows = 10000;                  // rows of samples in one request: past it 422
  double request_timeout_s = 60;            // a POST's wall time, waiting included: past it 503
  // A request's head (line and headers) from its first byte, and the taking
  // of an answer: past it 408 and the connection closes (deadline_server.h).
  double head_timeout_s = 10;
  int max_concurrent = 2;                   // requests computing at once, in each of the two pools (samples, ids)
  int max_queue = 16;                       // requests waiting for a slot, in each pool: past it 503
  int max_fits = 64;                        // fitted sample sets held: a /fit past it lets go of the least recently used
  long max_plan_cells = 1L << 20;           // (batch, workers) cells one /plan may search: past it 422
  int threads = 64;                         // HTTP connections served at once (http_server.h)
  // Threads one client address may hold while other connections wait for
  // one; 0: no limit (deadline_server.h). Behind a proxy every client has
  // its address: set 0 there and limit clients in the proxy.
  int max_connections_per_client = 16;
  // samples_path reads a file on the server's machine: refused (403) unless
  // the server was started with --allow-paths.
  bool allow_paths = false;
  // With allow_paths: the folder whose files (after symbolic links) a
  // samples_path may name; empty: any file the process can read.
  std::string allowed_root;
};

struct Response {
  Response(int status = 200, nlohmann::json body = {}, int retry_after_s = 0, std::string allow = {})
      : status(status), body(std::move(body)), retry_after_s(retry_after_s), allow(std::move(allow)) {}
  int status;
  nlohmann::json body;
  int retry_after_s;  // > 0: the HTTP front sends Retry-After
  std::string allow;  // 405: the methods the path takes, sent as Allow
};

class Service {
 public:
  using Clock = std::chrono::steady_clock;

  // `default_model`: the model ("auto" or a registered name) used when a request names none;
  // `params`: what every model is made with (the cluster's communication profile).
  explicit Service(std::string default_model = "auto", models::ModelParams params = {}, Limits limits = {});

  // The 404 (no such path) or 405 (another method, with `allow`) a request
  // gets before anything of it is read; nullopt for one the service routes.
  std::optional<Response> route_refusal(const std::string& method, const std::string& path) const;
  // `received`: when the request arrived; its time limit runs from then.
  // `body` is dropped once parsed. `abandoned` (may be null), asked on this
  // thread while the request waits or computes: whether its client has gone,
  // and the request with it (its slot and its place in line freed).
  Response handle(const std::string& method, const std::string& path, std::string body,
                  Clock::time_point received = Clock::now(), bool (*abandoned)() = nullptr);

  // Names the client (its address) of the requests this thread handles
  // while it lives, for the pools' shares (take_slot): a client holding a
  // quarter of a pool's places while another client asks is refused, and a
  // freed slot goes to the waiting client that computes the least. Requests
  // handled without one are one client.
  class ClientScope {
   public:
    explicit ClientScope(std::string client);
    ~ClientScope();
    ClientScope(const ClientScope&) = delete;
    ClientScope& operator=(const ClientScope&) = delete;
  };

  // Refuses new POSTs and cancels those computing; each answers 503. GETs
  // still answer. Safe from any thread, more than once.
  void stop();
  bool stopping() const { return stopping_.load(); }
  const Limits& limits() const { return limits_; }
  // POSTs being handled now (computing or waiting).
  int in_flight() const { return in_flight_.load(); }
  // Requests waiting for a slot, in both pools (Limits::max_queue bounds each).
  int waiting() const;

  // Fits `samples` and holds them under a new id; returns the /fit response.
  // `label` stands for the samples in responses (a path, or "samples_csv").
  // Throws InputError as the library does.
  nlohmann::json fit(SampleSet samples, const std::string& label, const std::string& model,
                     const std::string& time_model = "", const std::string& metric_model = "");
  // Never lets go of fitted id `id` (the samples `trainplan serve --samples`
  // loads at start); it still counts against Limits::max_fits. When every
  // id held is kept, a /fit past the limit is a 503.
  void keep(const std::string& id);

  // Where POST /simulate finds the applications' traces (`trainplan simulate
  // --data`) and the workloads it may name; call before serving.
  void set_simulation_dirs(std::string data, std::string workloads);

 private:
  struct Entry {
    Entry(SampleSet s, const models::ModelParams& p) : src(std::move(s), p) {}
    std::timed_mutex mu;  // held while a request uses `src`
    app::ModelSource src;
    std::string id, label;
    std::string model, time_model, metric_model;  // as given to /fit: the defaults of later requests
    std::string chosen_time, chosen_metric;
    long last_use = 0;  // Service::use_clock_ at the last request on it (guarded by Service::mu_)
    bool kept = false;  // never let go (Service::keep; guarded by Service::mu_)
  };
  // A slot of Limits::max_concurrent, held while a request computes. Two
  // pools of that size: requests that bring samples, and requests on a
  // fitted id (cheap when their models are cached, so they do not wait
  // behind fits; bounded all the same, since a far target or a model not
  // fitted yet costs as much as a fit).
  enum class Pool { kSamples = 0, kById = 1 };
  class Slot {
   public:
    Slot(Service& s, Pool pool, std::string client) : s_(s), pool_(int(pool)), client_(std::move(client)) {}
    ~Slot();  // frees the slot and wakes the waiters
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    Service& s_;
    int pool_;
    std::string client_;
  };

  nlohmann::json health() const;
  nlohmann::json models() const;
  nlohmann::json fits() const;
  nlohmann::json fit_request(const nlohmann::json& req);
  nlohmann::json predict_request(const nlohmann::json& req);
  Response plan_request(const nlohmann::json& req);
  Response plan_on_gpus(const nlohmann::json& req, const nlohmann::json& gpus, const app::PlanQuery& q, Entry& e,
                              std::unique_ptr<Slot>& slot);
  nlohmann::json curves_request(const nlohmann::json& req);
  nlohmann::json llm_models() const;
  Response llm_plan_request(const nlohmann::json& req);
  Response llm_plan_on_gpus(const nlohmann::json& gpus, const nlohmann::json& req, const plan::LlmPlanOptions& o,
                            bool precision_given,
                            const std::function<app::LlmPlanOutcome(const structure::HardwareProfile&, plan::LlmPlanOptions)>& plan_on,
                            const std::function<nlohmann::json(nlohmann::json)>& worded);
  nlohmann::json workloads() const;
  nlohmann::json simulate_request(const nlohmann::json& req);
  nlohmann::json transfer_request(const nlohmann::json& req);
  // The workloads under sim_workloads_ ("pollux-1.0/workload-1"), sorted.
  std::vector<std::string> workload_names() const;
  // Why nothing can be simulated (no traces, no workloads); empty when something can.
  std::string simulation_missing() const;
  // The entry a request names ("id"), or a fresh one from its samples (with `slot` taken).
  std::shared_ptr<Entry> entry_for(const nlohmann::json& req, std::unique_ptr<Slot>& slot);
  // The request's samples ("samples_csv" or "samples_path") and their label:
  // counted against the limits, then parsed once `slot` is taken.
  std::optional<std::pair<SampleSet, std::string>> request_samples(const nlohmann::json& req,
                                                                   std::unique_ptr<Slot>& slot);
  // Whether a samples_path lies in Limits::allowed_root (links followed).
  bool within_allowed_root(const std::string& path) const;
  // A file on the server a request names in `field` (samples_path,
  // log_path), opened once for reading: refused (RequestError) outside
  // Limits::allowed_root, before and after opening (on what was opened, so a
  // link swapped in between cannot send the read elsewhere), or when it is
  // not a regular file (opening a device can act on it, and a pipe waits);
  // InputError when it cannot be opened. `noun` names it in messages ("sample
  // file"), `not_regular_hint` says what to give instead. The caller checks
  // Limits::allow_paths first.
  struct ServerFile {
    int fd = -1;
    std::string opened;  // its name, links resolved where a root applies
    uint64_t size = 0;
    uint64_t device = 0, inode = 0;
    double quiet_s = 0;  // seconds since it was last modified
    ServerFile() = default;
    ServerFile(const ServerFile&) = delete;
    ServerFile& operator=(const ServerFile&) = delete;
    ~ServerFile();
  };
  void open_server_file(const std::string& label, const char* field, const std::string& noun,
                        const std::string& not_regular_hint, ServerFile& out) const;
  // 413 for a file named in `field` past Limits::max_body_bytes, with
  // `advice` after the flag that sets the limit.
  [[noreturn]] void refuse_too_large(const std::string& label, const char* field, const std::string& advice = "") const;
  // Reads `file` from its offset to its end into `out` in pieces, so that a
  // huge file is never read whole: refuse_too_large once `already` bytes and
  // those read pass the limit. `piece`, when set, sees each piece before it
  // is kept, and stops the reading (the piece not kept) by returning false.
  // InputError naming the `noun` when the file cannot be read.
  void read_server_file(const ServerFile& file, size_t already, const std::string& label, const char* field,
                        const std::string& noun, std::string& out,
                        const std::function<bool(std::string_view)>& piece = {}) const;
  nlohmann::json watch_request(const nlohmann::json& req);
  // POST /watch on a log_path: the watch fed so far, kept between requests
  // so that following a growing log reads and forecasts only what it added.
  struct WatchState {
    std::unique_ptr<app::LiveWatch> live;
    uint64_t device = 0, inode = 0;
    size_t offset = 0;  // bytes fed: whole lines
    std::string head;   // the file's first bytes, to tell a rewritten one
    std::string tail;   // the last bytes fed, the same
    bool fed_unterminated = false;  // the last line was fed whole before its newline came
    size_t lines = 0, warnings_total = 0;
    nlohmann::json warnings = nlohmann::json::array();
    std::string last_event;
    std::optional<nlohmann::json> final_update;  // the done line's update, while it stands
  };
  struct FollowedLog {
    std::mutex mu;  // held by the request feeding it
    long last_use = 0;    // followed_clock_ at its last request (guarded by followed_mu_)
    WatchState state;
  };
  // Logs kept at most (the one asked for least recently goes), and the
  // first bytes of each compared.
  static constexpr size_t kMostFollowedLogs = 16, kHeadBytes = 256, kTailBytes = 64;
  std::shared_ptr<FollowedLog> followed_log(const std::string& key);
  // Feeds `text`'s whole lines (from a file, a last line without its newline
  // only when it is a whole JSON object) to `st`, and answers /watch.
  nlohmann::json watch_answer(WatchState& st, const app::WatchOptions& o, std::string_view text, bool from_file,
                              bool restarted, std::optional<double> quiet_s);
  // Waits for a slot of `pool` until the request's CancelScope ends; throws when its line is full.
  // `admitted`: the request was let into the line already (lock_entry), and
  // joins it whatever its length.
  std::unique_ptr<Slot> take_slot(Pool pool = Pool::kSamples, bool admitted = false);
  // A slot of the ids' pool unless `slot` holds one (a request that brought its samples).
  void take_id_slot(std::unique_ptr<Slot>& slot, bool admitted);
  // An id's lock (Entry::mu), held until the request's CancelScope ends
  // (Cancelled). A request that must wait for it counts as waiting in the
  // ids' pool: 503 when Limits::max_queue wait there already.
  // `waited`: whether it had to wait (and so was admitted to the line).
  std::unique_lock<std::timed_mutex> lock_entry(std::timed_mutex& mu, bool& waited);
  // Makes room for one more fitted id: lets go of the least recently used
  // (of those no request holds, if any) while Limits::max_fits are held;
  // 503 when every id held is kept. Call with mu_ held.
  void make_room_for_fit();
  // 503 when a /fit could not be held: Limits::max_fits ids held, every one
  // kept.
  void check_room_for_fit() const;
  // Whether `id` is one this server gave and let go: ids are "fit-N" in
  // order, and an id leaves entries_ only when let go. Call with mu_ held.
  bool was_let_go(const std::string& id) const;

  std::string default_model_;
  models::ModelParams model_params_;
  std::string sim_data_ = "../shared/data/pollux-t4", sim_workloads_ = "../shared/data/workloads";
  Limits limits_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_flight_{0};

  mutable std::mutex mu_;  // guards entries_, next_id_, use_clock_
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  long next_id_ = 1;
  long use_clock_ = 0;

  std::mutex followed_mu_;  // guards followed_, followed_clock_
  std::map<std::string, std::shared_ptr<FollowedLog>> followed_;  // by the file opened and the options
  long followed_clock_ = 0;
  mutable std::mutex slots_mu_;  // guards computing_, waiting_
  std::condition_variable slots_cv_;
  int computing_[2] = {0, 0}, waiting_[2] = {0, 0};  // by Pool
  int waiting_for_ids_ = 0;  // requests waiting for an id's lock (lock_entry)
  struct ClientPlaces {
    int computing = 0, waiting = 0;
  };
  std::map<std::string, ClientPlaces> clients_[2];  // by Pool, then client; guarded by slots_mu_
};

}  // namespace trainplan::server
