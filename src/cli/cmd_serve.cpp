// trainplan serve: the HTTP JSON API (docs/SERVER.md) over the library calls
// of fit, predict and plan. The API itself lives in src/server/.
#include <fmt/format.h>
#include <pthread.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <thread>

#include "cli/command.h"
#include "core/error.h"
#include "io/sample_csv.h"
#include "server/http_server.h"
#include "server/service.h"

namespace trainplan::cli {
namespace {

struct ServeArgs {
  std::string host = "127.0.0.1";
  int port = 8077;
  std::string samples;
  std::string model = "auto";
  std::string comm_profile;
  bool quiet = false;
};

void run_serve(const ServeArgs& a) {
  if (a.port < 0 || a.port > 65535) throw InputError("--port must be in 0..65535 (0: any free port)");
  server::Service service(a.model, model_params(a.comm_profile));
  if (!a.samples.empty()) {
    std::cerr << fmt::format("fitting {} (model {})...\n", a.samples, a.model);
    auto j = service.fit(io::read_samples_csv(a.samples), a.samples, a.model);
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
    port = http.bind(a.host, a.port);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{} (is the port in use, or the host not an address of this machine?)", e.what()));
  }
  std::atomic<bool> signalled{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&sigs, &sig);
    signalled = true;
    http.stop();
  });
  std::cerr << fmt::format("trainplan serve: listening on http://{}:{} (Ctrl-C to stop)\n", a.host, port);
  bool ok = http.listen();
  if (!signalled) pthread_kill(waiter.native_handle(), SIGTERM);  // wake the waiter when listen() ended by itself
  waiter.join();
  if (!ok) throw std::runtime_error("the server stopped with an error");
  std::cerr << "trainplan serve: stopped\n";
}

void setup(CLI::App& root) {
  auto a = std::make_shared<ServeArgs>();
  auto* cmd = root.add_subcommand(
      "serve",
      "Serve predictions and plans over HTTP (JSON in, JSON out): GET /health, /models, /fits;\n"
      "POST /fit, /predict, /plan. /predict and /plan answer what `predict --json` and `plan --json` print.\n"
      "See docs/SERVER.md. Stops on SIGINT or SIGTERM (exit 0).");
  cmd->add_option("--host", a->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", a->port, "TCP port (0: any free port; the one taken is printed)")->capture_default_str();
  cmd->add_option("--samples", a->samples, "Sample CSV to fit at start (its id is printed, fit-1)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", a->model, "Model when a request names none: 'auto' or a registered name")
      ->capture_default_str();
  add_comm_profile_option(cmd, a->comm_profile);
  cmd->add_flag("--quiet", a->quiet, "Do not log requests on stderr");
  cmd->footer(
      "Example: trainplan serve --samples s.csv &\n"
      "         curl -s localhost:8077/predict -d '{\"id\": \"fit-1\", \"batch\": 64, \"workers\": 8, \"epochs\": 30}'");
  cmd->callback([a] { run_serve(*a); });
}

CommandRegistrar reg(45, setup);

}  // namespace
}  // namespace trainplan::cli
