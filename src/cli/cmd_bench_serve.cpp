// trainplan bench serve: a load benchmark of `trainplan serve` on loopback
// (server/load_bench.h). Starts the server as a child process on a free port
// of 127.0.0.1 with its default limits, runs the clients, reads the server's
// peak RSS, then stops it with SIGTERM while a request computes and times its
// exit. Exit 1 when a valid request failed, a malformed one was answered
// otherwise than expected, /health failed, or the server did not exit 0.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include <httplib.h>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/json_text.h"
#include "io/sample_csv.h"
#include "replay/synthetic_store.h"
#include "server/load_bench.h"

namespace trainplan::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchServeArgs {
  server::LoadOptions load;
  std::string samples = "examples/lenet-mnist-samples.csv";
  std::string serve_args;  // more flags for the server, split on spaces
  bool json_out = false;
};

// `trainplan serve` as a child process; its stderr is drained by a thread.
struct ServerChild {
  pid_t pid = -1;
  int port = 0;
  std::thread drain;
  std::string err;  // what it printed (guarded by being read after drain joins)

  ~ServerChild() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (drain.joinable()) drain.join();
  }
};

void start_server(ServerChild& s, const std::vector<std::string>& flags) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> argv = {"trainplan", "serve", "--host", "127.0.0.1", "--port", "0", "--quiet"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  s.pid = fork();
  if (s.pid < 0) throw std::runtime_error("fork failed");
  if (s.pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    execv("/proc/self/exe", c.data());
    _exit(127);
  }
  close(fds[1]);
  // Read until the address is printed (30 s at most), then drain in the background.
  const std::string mark = "listening on http://127.0.0.1:";
  std::string text;
  const auto until = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < until) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (auto at = text.find(mark); at != std::string::npos && text.find('\n', at) != std::string::npos) {
      s.port = std::atoi(text.c_str() + at + mark.size());
      break;
    }
  }
  s.err = text;
  const int rfd = fds[0];
  s.drain = std::thread([&s, rfd] {
    char buf[4096];
    for (ssize_t n; (n = read(rfd, buf, sizeof buf)) > 0;) s.err.append(buf, static_cast<size_t>(n));
    close(rfd);
  });
  if (s.port <= 0) throw InputError("", 0, "--serve-args", "the server did not start: " + text);
}

// A field of /proc/PID/status in kB ("VmHWM": the peak resident set), or -1.
long proc_status_kb(pid_t pid, const std::string& field) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  return -1;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

void run_bench_serve(BenchServeArgs a) {
  if (a.load.clients < 1) throw InputError("", 0, "--clients", "must be >= 1");
  if (a.load.requests < 1) throw InputError("", 0, "--requests", "must be >= 1");
  if (!(a.load.duration_s > 0)) throw InputError("", 0, "--duration", "must be > 0 seconds");
  // The malformed requests carry one row (one byte) past the limit, built whole in memory.
  if (a.load.max_rows < 1 || a.load.max_rows > 1000000) throw InputError("", 0, "--max-rows", "must be from 1 to 1000000");
  if (a.load.max_body_bytes < 1 || a.load.max_body_bytes > (size_t(1) << 30))
    throw InputError("", 0, "--max-body-bytes", "must be from 1 to 1 GiB");
  std::ifstream in(a.samples);
  if (!in) throw InputError(a.samples, 0, "", "cannot open sample file (run from the repository root, or give --samples)");
  std::stringstream ss;
  ss << in.rdbuf();
  a.load.samples_csv = ss.str();

  // Every valid /fit of the load keeps an id: room for all of them, so that
  // none is let go (the by-id requests' own included) and the load stays
  // the one the earlier runs measured.
  std::vector<std::string> flags = {"--max-fits", std::to_string(a.load.requests + 10), "--max-rows",
                                    std::to_string(a.load.max_rows), "--max-body-bytes",
                                    std::to_string(a.load.max_body_bytes)};
  for (auto& w : split_words(a.serve_args)) flags.push_back(w);
  ServerChild child;
  start_server(child, flags);
  const long rss_start_kb = proc_status_kb(child.pid, "VmRSS");
  std::cerr << fmt::format("bench serve: server pid {} on port {}; {} clients, {} requests, at most {:g} s...\n",
                           child.pid, child.port, a.load.clients, a.load.requests, a.load.duration_s);

  server::LoadResult r = server::run_load("127.0.0.1", child.port, a.load);
  const long peak_kb = proc_status_kb(child.pid, "VmHWM");
  const long rss_end_kb = proc_status_kb(child.pid, "VmRSS");

  // Stop while a request computes: an auto /fit of 5,000 synthetic rows (seconds of
  // cross-validation; the load's own samples now fit within the 300 ms, and the stop then
  // interrupted nothing) is sent, and SIGTERM 300 ms later.
  // Within the server's --max-rows and --max-body-bytes (about 40 bytes a row), or it would be
  // refused before it computed.
  replay::SyntheticStoreParams slow_rows;
  slow_rows.rows = std::min<size_t>({5000, size_t(a.load.max_rows), a.load.max_body_bytes / 64});
  slow_rows.form = replay::SyntheticStoreParams::Form::kTrials;
  const std::string slow_csv = io::format_samples_csv(replay::synthetic_store(slow_rows));
  int stop_status = -1;
  std::thread slow([&] {
    httplib::Client c("127.0.0.1", child.port);
    c.set_read_timeout(60, 0);
    auto res = c.Post("/fit", nlohmann::json{{"samples_csv", slow_csv}, {"model", "auto"}}.dump(),
                      "application/json");
    stop_status = res ? res->status : 0;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t_stop = Clock::now();
  kill(child.pid, SIGTERM);
  int ws = 0;
  waitpid(child.pid, &ws, 0);
  const double stop_s = std::chrono::duration<double>(Clock::now() - t_stop).count();
  child.pid = -1;
  slow.join();
  const int exit_code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);

  nlohmann::json j = server::to_json(r);
  j["server"] = {{"command", "trainplan serve --host 127.0.0.1 --port 0 --quiet " + [&] {
                    std::string s;
                    for (const auto& f : flags) s += (s.empty() ? "" : " ") + f;
                    return s;
                  }()},
                 {"samples", a.samples},
                 {"rss_start_mb", rss_start_kb / 1024.0},
                 {"rss_end_mb", rss_end_kb / 1024.0},
                 {"peak_rss_mb", peak_kb / 1024.0},
                 {"stop", {{"signal", "SIGTERM"}, {"exit_code", exit_code}, {"seconds", stop_s},
                           {"in_flight_answer", stop_status}}}};
  if (a.json_out) {
    std::cout << io::json_text(j) << "\n";
  } else {
    std::cout << fmt::format("server: {}\n", j["server"]["command"].get<std::string>());
    std::cout << fmt::format("samples: {}; setup /fit ({}) {:.1f} s\n", a.samples, a.load.setup_model, r.setup_s);
    std::cout << server::format_load(r);
    std::cout << fmt::format("server RSS: {:.1f} MB at start, peak {:.1f} MB, {:.1f} MB at the end\n",
                             rss_start_kb / 1024.0, peak_kb / 1024.0, rss_end_kb / 1024.0);
    std::cout << fmt::format("stop: SIGTERM with an auto /fit computing: exit {} after {:.3f} s (the /fit got {})\n",
                             exit_code, stop_s, stop_status);
    // 503 is the abandoned computation; anything else says the stop did not meet one.
    if (stop_status != 503)
      std::cout << fmt::format("note: the /fit was not abandoned mid-computation (it got {}), so the stop was not "
                               "tested on one: a larger --max-rows gives it a longer fit\n",
                               stop_status);
  }
  std::cout.flush();
  std::vector<std::string> bad;
  if (r.valid_failed()) bad.push_back(fmt::format("{} valid requests failed", r.valid_failed()));
  if (r.malformed_wrong()) bad.push_back(fmt::format("{} malformed requests got another answer", r.malformed_wrong()));
  if (r.health_failed) bad.push_back(fmt::format("{} /health probes failed", r.health_failed));
  if (exit_code != 0) bad.push_back(fmt::format("the server exited {} on SIGTERM", exit_code));
  if (!bad.empty()) {
    std::string msg;
    for (const auto& b : bad) msg += (msg.empty() ? "" : "; ") + b;
    std::cerr << "bench serve: " << msg << "\n";
    std::exit(kExitFailure);
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<BenchServeArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "serve",
      "Load benchmark of `trainplan serve` on loopback: concurrent clients mixing valid /fit, /predict, /plan and\n"
      "malformed requests; throughput, latency per request kind, the server's peak RSS, /health beside the load,\n"
      "and the time to stop on SIGTERM mid-request. Exit 1 when a valid request failed (docs/SERVER.md).");
  cmd->add_option("--clients", a->load.clients, "Concurrent clients, each on its own keep-alive connection")
      ->capture_default_str();
  cmd->add_option("--requests", a->load.requests, "Requests in all")->capture_default_str();
  add_duration_option(cmd, "--duration", a->load.duration_s, "No request starts after it [default: 60]");
  cmd->add_option("--seed", a->load.seed, "Seed of the request mix")->capture_default_str()->check(seed_number());
  cmd->add_option("--samples", a->samples, "Sample CSV (with a metric) the valid requests fit")->capture_default_str();
  cmd->add_option("--max-rows", a->load.max_rows, "The server's --max-rows (a malformed request is one row over)")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", a->load.max_body_bytes,
                  "The server's --max-body-bytes (a malformed request is one byte over)")
      ->capture_default_str();
  cmd->add_option("--serve-args", a->serve_args, "More flags for the server, e.g. \"--max-concurrent 4\"");
  cmd->add_flag("--json", a->json_out, "Print the result as JSON");
  cmd->callback([a] { run_bench_serve(*a); });
}

CommandRegistrar reg(98, setup);

}  // namespace
}  // namespace trainplan::cli
