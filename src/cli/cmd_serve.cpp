// trainplan serve: the HTTP JSON API (docs/SERVER.md) over the library calls
// of fit, predict and plan. The API itself lives in src/server/.
#include <fmt/format.h>
#include <malloc.h>
#include <unistd.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "models/registry.h"
#include "profile/samples_file.h"
#include "server/deadline_server.h"
#include "server/http_server.h"
#include "server/loopback_host.h"
#include "server/service.h"

namespace trainplan::cli {
namespace {

struct ServeArgs {
  std::string host = "127.0.0.1";
  std::vector<std::string> allowed_hosts;
  int port = 8077;
  std::string samples;
  std::string model = "auto";
  std::string comm_profile;
  bool quiet = false;
  std::string sim_data = "../shared/data/pollux-t4", sim_workloads = "../shared/data/workloads";
  server::Limits limits;
};

// How long a stop waits for the requests in flight to unwind (each answers
// 503) and for idle keep-alive connections to close, before the process exits anyway.
constexpr auto kStopGrace = std::chrono::milliseconds(800);

void run_serve(const ServeArgs& a) {
  if (a.port < 0 || a.port > 65535) throw InputError("--port must be in 0..65535 (0: any free port)");
  const server::Limits& l = a.limits;
  if (l.max_body_bytes < 1) throw InputError("", 0, "--max-body-bytes", "must be >= 1");
  // A body is held whole, parsed at about five times its size, and up to four at once: past a GiB
  // the bound on bodies held would overflow, and no request needs one.
  constexpr uint64_t kMostBodyBytes = uint64_t(1) << 30;
  if (l.max_body_bytes > kMostBodyBytes)
    throw InputError("", 0, "--max-body-bytes", fmt::format("must be at most {} (1 GiB)", kMostBodyBytes));
  if (l.max_rows < 1) throw InputError("", 0, "--max-rows", "must be >= 1");
  if (!(l.request_timeout_s > 0)) throw InputError("", 0, "--request-timeout", "must be > 0 seconds");
  if (!(l.head_timeout_s > 0) || l.head_timeout_s > server::DeadlineServer::kLongestTimeoutS)
    throw InputError("", 0, "--head-timeout", "must be > 0 seconds and at most a year");
  if (l.request_timeout_s > server::DeadlineServer::kLongestTimeoutS)
    throw InputError("", 0, "--request-timeout", "must be at most a year");
  if (l.max_concurrent < 1) throw InputError("", 0, "--max-concurrent", "must be >= 1");
  if (l.max_queue < 0) throw InputError("", 0, "--max-queue", "must be >= 0");
  if (l.max_fits < 1) throw InputError("", 0, "--max-fits", "must be >= 1");
  if (l.max_plan_cells < 1) throw InputError("", 0, "--max-plan-cells", "must be >= 1");
  if (l.threads < 2) throw InputError("", 0, "--threads", "must be >= 2");
  if (l.max_connections_per_client < 0)
    throw InputError("", 0, "--max-connections-per-client", "must be >= 0 (0: no limit)");
  if (!l.allowed_root.empty() && !std::filesystem::is_directory(l.allowed_root))
    throw InputError("", 0, "--allow-paths", fmt::format("'{}' is not a folder", l.allowed_root));
  // Any readable file, its first line quotable in an error, is the local
  // user's own reach on loopback; to every client of a wider address it is not.
  if (l.allow_paths && l.allowed_root.empty() && !server::is_loopback_host(a.host))
    throw InputError("", 0, "--allow-paths",
                     fmt::format("without a folder it lets every client that reaches --host {} read any file the "
                                 "server can (and an error can quote its first line): give the folder samples may be "
                                 "read from (--allow-paths DIR), or listen on loopback",
                                 a.host));
  // The default every request that names no model gets: an unknown one would have each blamed on its client.
  if (a.model != "auto") {
    try {
      models::ModelRegistry::instance().get(a.model);
    } catch (const InputError& e) {
      throw InputError("", 0, "--model", e.message());
    }
  }
  // Few malloc arenas: each request thread would otherwise keep its own, and the memory a large request
  // freed stays resident in it (http_server.cpp trims after each body too).
  mallopt(M_ARENA_MAX, 4);
  server::Service service(a.model, model_params(a.comm_profile), a.limits);
  service.set_simulation_dirs(a.sim_data, a.sim_workloads);
  // A stop asked while the operator's samples are fitted, before any request is taken: nothing to abandon.
  struct sigaction stop_now {};
  stop_now.sa_handler = [](int) {
    static const char message[] = "trainplan serve: stopped before serving\n";
    (void)!::write(2, message, sizeof message - 1);
    _exit(kExitOk);
  };
  sigaction(SIGINT, &stop_now, nullptr);
  sigaction(SIGTERM, &stop_now, nullptr);
  if (!a.samples.empty()) {
    std::cerr << fmt::format("fitting {} (model {})...\n", a.samples, a.model);
    auto j = service.fit(profile::read_samples(a.samples), a.samples, a.model);
    service.keep(j["id"].get<std::string>());  // the operator's samples stay whatever clients fit
    std::cerr << fmt::format("fitted as id {}: time model {}, metric model {}\n", j["id"].get<std::string>(),
                             j["time_model"].get<std::string>(),
                             j["metric_model"].is_null() ? "none" : j["metric_model"].get<std::string>());
  }

  // SIGINT and SIGTERM are blocked in every thread (httplib's workers inherit
  // the mask) and taken by one thread with sigwait, which stops the server.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  std::function<void(const std::string&)> log;
  if (!a.quiet) log = [](const std::string& line) { std::cerr << line + "\n"; };
  server::HttpServer http(service, log);
  int port = 0;
  try {
    port = http.bind(a.host, a.port, a.allowed_hosts);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{} (is the port in use, or the host not an address of this machine?)", e.what()));
  }
  std::mutex mu;
  std::condition_variable cv;
  bool served = false;  // listen() has returned
  std::atomic<bool> signalled{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&sigs, &sig);
    signalled = true;
    // Cancels the computations in flight: each answers 503 at its next
    // cancellation point (core/cancel.h), then listen() returns.
    http.stop();
    std::unique_lock<std::mutex> lock(mu);
    if (cv.wait_for(lock, kStopGrace, [&] { return served; })) return;
    // A connection that is still open (a client sending slowly, or one idle
    // in keep-alive) would hold listen() for up to its timeout: go without it.
    std::cerr << fmt::format("trainplan serve: stopped ({} requests in flight abandoned)\n", service.in_flight());
    std::_Exit(kExitOk);
  });
  std::cerr << fmt::format("trainplan serve: listening on http://{}:{} (Ctrl-C to stop)\n", a.host, port);
  bool ok = http.listen();
  {
    std::lock_guard<std::mutex> lock(mu);
    served = true;
  }
  cv.notify_all();
  if (!signalled) pthread_kill(waiter.native_handle(), SIGTERM);  // wake the waiter when listen() ended by itself
  waiter.join();
  if (!ok) throw std::runtime_error("the server stopped with an error");
  std::cerr << "trainplan serve: stopped\n";
}

void setup(CLI::App& root) {
  auto a = std::make_shared<ServeArgs>();
  auto* cmd = root.add_subcommand(
      "serve",
      "Serve predictions and plans over HTTP (JSON in, JSON out): GET /health, /models, /fits, /workloads,\n"
      "/llm/models; POST /fit, /predict, /plan, /curves, /simulate, /llm/plan, /transfer, /watch. /predict and /plan answer what\n"
      "`predict --json` and `plan --json` print. GET / is a page over the same API (docs/WEB.md).\n"
      "See docs/SERVER.md. Stops on SIGINT or SIGTERM (exit 0) within a second, abandoning the requests in\n"
      "flight (each answers 503).");
  cmd->add_option("--host", a->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", a->port, "TCP port (0: any free port; the one taken is printed)")->capture_default_str();
  cmd->add_option("--allow-host", a->allowed_hosts,
                  "A host name clients may address a loopback-bound server by, besides localhost and 127.0.0.1 (a "
                  "proxy in front that passes its own name); repeatable. Requests for other names, and browser "
                  "requests from pages of another origin, get 403 (docs/SERVER.md)");
  cmd->add_option("--samples", a->samples, "Sample CSV to fit at start (its id is printed, fit-1)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", a->model, "Model when a request names none: 'auto' or a registered name")
      ->capture_default_str();
  add_comm_profile_option(cmd, a->comm_profile);
  cmd->add_flag("--quiet", a->quiet, "Do not log requests on stderr");
  cmd->add_option("--sim-data", a->sim_data,
                  "Application traces POST /simulate replays (as simulate --data); absent: /simulate answers 404")
      ->capture_default_str();
  cmd->add_option("--sim-workloads", a->sim_workloads,
                  "Folder of Pollux-format workload CSVs POST /simulate may name (GET /workloads lists them)")
      ->capture_default_str();
  auto* limits = cmd->add_option_group("Limits", "What one request may cost (docs/SERVER.md, \"Limits\")");
  server::Limits& l = a->limits;
  l.max_concurrent = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  limits->add_option("--max-body-bytes", l.max_body_bytes,
                     "Largest request body, and largest samples_path file; past it: 413")
      ->capture_default_str();
  limits->add_option("--max-rows", l.max_rows, "Most rows of samples in one request; past it: 422")
      ->capture_default_str();
  add_duration_option(limits, "--request-timeout", l.request_timeout_s,
                      "Wall time of one POST, waiting included; past it the computation is abandoned and the "
                      "answer is 503 [default: 60]");
  add_duration_option(limits, "--head-timeout", l.head_timeout_s,
                      "Time a client has to send a request's line and headers (from their first byte) and to take "
                      "an answer; past it: 408 and the connection closes [default: 10]");
  limits->add_option("--max-concurrent", l.max_concurrent,
                     "Requests computing at once, in each of two pools: those that bring samples (/fit; /predict, "
                     "/plan with samples_csv or samples_path) and those on fitted ids (default: the cores, at least 2)")
      ->capture_default_str();
  limits->add_option("--max-queue", l.max_queue,
                     "Requests waiting for a slot, in each pool; past it: 503 with Retry-After")
      ->capture_default_str();
  limits->add_option("--max-fits", l.max_fits, "Fitted sample sets (ids) held; a /fit past it lets go of the least recently used")
      ->capture_default_str();
  limits->add_option("--max-plan-cells", l.max_plan_cells,
                     "Most (batch, workers) cells one /plan may search (batches x max_workers); past it: 422")
      ->capture_default_str();
  limits
      ->add_option("--allow-paths", l.allowed_root,
                   "Let requests read sample files on this machine (samples_path): with DIR only the files under DIR "
                   "(symbolic links followed), without it any the server can read (on a loopback --host only); "
                   "without the option: 403")
      ->expected(0, 1)
      ->type_name("[DIR]");
  limits->add_option("--threads", l.threads,
                     "Connections served at once (an idle keep-alive connection holds one for up to 5 s, a slow "
                     "client for up to --head-timeout, or --request-timeout while it sends a body)")
      ->capture_default_str();
  limits->add_option("--max-connections-per-client", l.max_connections_per_client,
                     "Threads one client address may hold while other connections wait for one: past it a new "
                     "connection of that client, or one of its connections waiting for its bytes for 0.5 s, is "
                     "answered 503 with Retry-After (0: no limit; behind a proxy, where every client has the "
                     "proxy's address, use 0 and limit clients in the proxy)")
      ->capture_default_str();
  cmd->footer(
      "Example: trainplan serve --samples s.csv &\n"
      "         curl -s localhost:8077/predict -H 'Content-Type: application/json' \\\n"
      "              -d '{\"id\": \"fit-1\", \"batch\": 64, \"workers\": 8, \"epochs\": 30}'");
  cmd->callback([a, cmd] {
    a->limits.allow_paths = cmd->get_option("--allow-paths")->count() > 0;
    run_serve(*a);
  });
}

CommandRegistrar reg(45, setup);

}  // namespace
}  // namespace trainplan::cli
