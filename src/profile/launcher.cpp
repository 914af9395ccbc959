#include "profile/launcher.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "core/error.h"
#include "core/nodes.h"
#include "profile/process_group.h"

namespace trainplan::profile {

LauncherKind parse_launcher(const std::string& s) {
  if (s == "local") return LauncherKind::kLocal;
  if (s == "slurm") return LauncherKind::kSlurm;
  throw InputError("", 0, "--launcher", fmt::format("unknown launcher '{}'; use local or slurm", s));
}

const char* to_string(LauncherKind k) { return k == LauncherKind::kLocal ? "local" : "slurm"; }

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                       "-_./,:=+@%") == std::string::npos;
  return plain ? s : shell_quote(s);
}

std::string template_literal(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '{' || c == '}') out += c;
  }
  return out;
}

void check_host_address(const std::string& addr, const std::string& option) {
  bool ok = !addr.empty() && addr.size() <= 255 && addr.front() != '-';
  for (unsigned char c : addr) ok = ok && (std::isalnum(c) || c == '.' || c == '-' || c == '_' || c == ':' || c == '%');
  if (!ok)
    throw InputError("", 0, option,
                     fmt::format("'{}' is not a host name or an IP address (letters, digits and . - _ : %)", addr));
}

namespace {

// srun's line that a queued job got its nodes ("srun: job 149 has been
// allocated resources"): its words, and the whole line as a pattern (not the
// words printed by a program the trial runs).
constexpr const char* kSlurmAllocated = "has been allocated resources";
constexpr const char* kSlurmAllocatedLine = R"(^srun: job [0-9]+ has been allocated resources)";

// `s` without the line ends and spaces that end it (srun's and sinfo's messages).
std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Expands `tmpl` with `v` for `processes` ranks (local) or one srun (Slurm).
LaunchPlan plan_processes(const CommandTemplate& tmpl, std::map<std::string, std::string> v, int processes,
                          int nodes, const std::string& job_name, const LaunchSettings& s) {
  LaunchPlan lp;
  if (s.kind == LauncherKind::kLocal) {
    int procs = tmpl.per_rank() ? processes : 1;
    for (int rank = 0; rank < procs; ++rank) {
      v["rank"] = std::to_string(rank);
      lp.commands.push_back(tmpl.expand(v));
    }
    lp.display = lp.commands.front();
    // The trial records the plain command; the processes run it wrapped.
    if (!s.wrap.program.empty())
      for (auto& c : lp.commands)
        if (c.rfind(s.wrap.program, 0) == 0 && (c.size() == s.wrap.program.size() || c[s.wrap.program.size()] == ' '))
          c = s.wrap.wrapper + " " + c;
    return lp;
  }
  // Slurm: the script is expanded here with a token for the rank, which bash
  // on the node replaces by $SLURM_PROCID, the task's rank, before running
  // the script as the local launcher does (bash -c): a {rank} inside quotes
  // is the rank there too. --overcommit lets r exceed the node's CPUs (ranks
  // share cores, as with the local launcher); reserve more with
  // --srun-arg=--cpus-per-task=N.
  constexpr const char* kRankToken = "@TRAINPLAN_RANK@";
  v["rank"] = kRankToken;
  std::string script = tmpl.expand(v);
  std::string srun = tmpl.per_rank() ? fmt::format("srun --ntasks={} --overcommit --oversubscribe", processes)
                                     : fmt::format("srun --nodes={} --ntasks={} --ntasks-per-node=1", nodes, nodes);
  // The nodes {nodes} says: --workers-per-node ranks on each.
  if (tmpl.per_rank() && s.workers_per_node > 0)
    srun += fmt::format(" --nodes={} --ntasks-per-node={}", nodes, s.workers_per_node);
  // Not --quiet: srun's "queued and waiting for resources" is how a trial that never started is told
  // from one that hung (slurm_never_started).
  srun += fmt::format(" --job-name={} --kill-on-bad-exit=1 --label", job_name);
  for (const auto& a : s.srun_args) srun += " " + shell_quote(a);
  const std::string with_rank = fmt::format("exec /bin/bash -c \"${{1//{}/$SLURM_PROCID}}\"", kRankToken);
  lp.commands.push_back(srun + " /bin/bash -c " + shell_quote(with_rank) + " trainplan-rank " + shell_quote(script));
  lp.label_filter = true;
  lp.display = lp.commands.front();
  lp.timeout_restarts_at = kSlurmAllocatedLine;
  return lp;
}

int nodes_of(int workers, const LaunchSettings& s) {
  return s.workers_per_node > 0 ? nodes_for(workers, s.workers_per_node) : 1;
}

}  // namespace

bool oversubscribes_locally(const LaunchSettings& s, int processes, int threads) {
  return s.kind == LauncherKind::kLocal && oversubscribes(processes, threads);
}

void check_data_parallel_template(const CommandTemplate& tmpl, const std::string& option) {
  for (const auto& name : CommandTemplate::shape_placeholder_names())
    if (tmpl.uses(name))
      throw InputError("", 0, option,
                       fmt::format("{{{}}} is a transformer grid's placeholder (trainplan llm profile); a "
                                   "data-parallel trial has no model shape",
                                   name));
}

LaunchPlan plan_launch(const CommandTemplate& tmpl, const TrialKey& key, const LaunchSettings& s, int master_port,
                       const std::vector<int>& batches) {
  check_data_parallel_template(tmpl);
  const int nodes = nodes_of(key.workers, s);
  // A data-parallel trial is the layout tp = pp = 1, dp = workers.
  std::map<std::string, std::string> v = {{"batch", std::to_string(key.batch)},
                                          {"workers", std::to_string(key.workers)},
                                          {"epochs", std::to_string(key.epochs)},
                                          {"master_port", std::to_string(master_port)},
                                          {"master_addr", s.master_addr},
                                          {"nodes", std::to_string(nodes)},
                                          {"rank", "0"},
                                          {"tp", "1"},
                                          {"pp", "1"},
                                          {"dp", std::to_string(key.workers)},
                                          {"micro_batch", std::to_string(key.batch)},
                                          {"global_batch", std::to_string(int64_t(key.batch) * key.workers)},
                                          {"batches", batches.empty() ? std::to_string(key.batch)
                                                                      : fmt::format("{}", fmt::join(batches, ","))}};
  return plan_processes(tmpl, std::move(v), key.workers, nodes,
                        fmt::format("trainplan-b{}-r{}-e{}", key.batch, key.workers, key.epochs), s);
}

std::string to_string(const LayoutKey& k) {
  return fmt::format("tp={} pp={} dp={} mb={} gb={}", k.tp, k.pp, k.dp, k.micro_batch, k.global_batch);
}

LaunchPlan plan_layout_launch(const CommandTemplate& tmpl, const LayoutKey& key, const LaunchSettings& s,
                              int master_port) {
  const int nodes = nodes_of(key.workers(), s);
  std::map<std::string, std::string> v = {{"batch", std::to_string(key.micro_batch)},
                                          {"workers", std::to_string(key.workers())},
                                          {"epochs", "1"},
                                          {"master_port", std::to_string(master_port)},
                                          {"master_addr", s.master_addr},
                                          {"nodes", std::to_string(nodes)},
                                          {"rank", "0"},
                                          {"tp", std::to_string(key.tp)},
                                          {"pp", std::to_string(key.pp)},
                                          {"dp", std::to_string(key.dp)},
                                          {"micro_batch", std::to_string(key.micro_batch)},
                                          {"global_batch", std::to_string(key.global_batch)},
                                          {"batches", std::to_string(key.micro_batch)}};
  for (const auto& [name, value] : key.shape) v[name] = value;
  for (const auto& name : CommandTemplate::shape_placeholder_names())
    if (tmpl.uses(name) && !v.count(name))
      throw InputError("", 0, "--cmd", fmt::format("{{{}}} has no value for this configuration", name));
  return plan_processes(tmpl, std::move(v), key.workers(), nodes,
                        fmt::format("trainplan-tp{}-pp{}-dp{}-mb{}", key.tp, key.pp, key.dp, key.micro_batch), s);
}

std::string rank0_lines(const std::string& labelled) {
  std::istringstream in(labelled);
  std::string line, out;
  while (std::getline(in, line))
    if (auto text = rank0_line(line)) out += *text + "\n";
  return out;
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (const std::string p = (std::filesystem::path(d) / program).string(); !d.empty() && access(p.c_str(), X_OK) == 0)
      return p;
  return "";
}

void check_slurm_reachable() {
  if (find_on_path("srun").empty())
    throw InputError("", 0, "--launcher",
                     "slurm: srun is not on PATH (load the cluster's Slurm module, or run where Slurm is installed)");
  ProcessGroupOptions po;
  po.timeout_s = 30;
  const ProcessGroupResult r = run_process_group({"sinfo --noheader --summarize"}, po);
  if (r.ok()) return;
  const std::string why = trim_end(r.stderr_tail);
  throw InputError("", 0, "--launcher",
                   fmt::format("slurm: the controller does not answer (sinfo {}){}", 
                               r.timed_out ? "ran past 30 s" : fmt::format("exited with status {}", r.exit_code),
                               why.empty() ? "" : ": " + why));
}

std::optional<std::string> slurm_failure(const std::string& stderr_tail) {
  // srun's lines for tasks that ended badly: "srun: error: NODE: task 1: Exited with exit code 3",
  // "NODE: tasks 0-1: Exited with exit code 1", "NODE: task 1: Segmentation fault (core dumped)",
  // "task 0: Killed", "task 2: Out Of Memory". The first that is not the Terminated that
  // --kill-on-bad-exit sends the others is the cause.
  static const std::regex task_line(R"((tasks?) ([0-9][0-9,\-]*): ([A-Z][^\n]*))");
  static const std::regex exit_code(R"(Exited with exit code (\d+))");
  for (auto it = std::sregex_iterator(stderr_tail.begin(), stderr_tail.end(), task_line); it != std::sregex_iterator();
       ++it) {
    const std::string who = ((*it)[1] == "tasks" ? "ranks " : "rank ") + (*it)[2].str();
    const std::string what = trim_end((*it)[3].str());
    if (std::smatch code; std::regex_search(what, code, exit_code)) {
      if (code[1] != "0") return fmt::format("{} exited with status {}", who, code[1].str());
      continue;
    }
    if (what == "Terminated") continue;
    return fmt::format("{}: {}", who, what);
  }
  // "slurmstepd: error: *** STEP 12.0 ON NODE CANCELLED AT 2026-... DUE TO TIME LIMIT ***" (or JOB)
  static const std::regex cancelled(R"(\*\*\* (STEP|JOB) \S+ ON \S+ CANCELLED AT \S+( DUE TO [A-Z ]*[A-Z])?)");
  std::smatch m;
  if (std::regex_search(stderr_tail, m, cancelled)) {
    if (!m[2].matched) return std::string("the Slurm job step was cancelled (scancel, or a limit of the job)");
    std::string cause = m[2].str();  // " DUE TO TIME LIMIT"
    for (char& c : cause) c = char(std::tolower(static_cast<unsigned char>(c)));
    return "the Slurm job step was cancelled" + cause;
  }
  // "srun: error: Unable to allocate resources: ..." / "Unable to contact slurm controller ..."
  static const std::regex unable(R"(srun: error: (Unable to [^\n]*))");
  if (std::regex_search(stderr_tail, m, unable)) return "srun could not start the job: " + m[1].str();
  return std::nullopt;
}

std::string queued_text(double restarted_after_s) {
  return restarted_after_s >= 0
             ? fmt::format(", counted from when the Slurm job started: it queued {:.0f} s", restarted_after_s)
             : "";
}

std::optional<std::string> slurm_never_started(const std::string& stderr_tail) {
  // "srun: job 149 queued and waiting for resources" ... "srun: job 149 has been allocated resources"
  if (stderr_tail.find("queued and waiting for resources") == std::string::npos ||
      stderr_tail.find(kSlurmAllocated) != std::string::npos)
    return std::nullopt;
  // "srun: Requested partition configuration not available now": more nodes or CPUs than it has up.
  static const std::regex why(R"(srun: (Requested [^\n]*not available[^\n]*))");
  std::smatch m;
  const bool cannot = std::regex_search(stderr_tail, m, why);
  const std::string what = cannot ? trim_end(m[1].str()) : std::string();
  return fmt::format("the Slurm job never left the queue{}: {}", cannot ? " (srun: " + what + ")" : "",
                     cannot ? "ask for no more nodes and CPUs than the partition has (--workers-per-node, --srun-arg)"
                            : "the cluster was busy; run the profile inside an allocation (salloc, or an sbatch "
                              "script) so that each trial starts at once");
}

int free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed while looking for a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("could not bind a loopback port");
  }
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace trainplan::profile
