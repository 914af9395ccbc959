// trainplan llm profile: measures a grid of transformer configurations by
// running a command template once per row (docs/PROFILING.md, "Transformer
// layouts"). The grid is a CSV in `llm predict`'s shape; the output is the
// same rows with iteration_time_s and memory_gib filled in from each run's
// iteration_timing line, so `llm predict --calibrate` and
// `llm evaluate --grid` read it as it is.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "cli/llm_shape.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "core/whole_file.h"
#include "io/json_text.h"
#include "io/llm_config_csv.h"
#include "io/output_path.h"
#include "profile/interrupt.h"
#include "profile/layout_trial.h"
#include "profile/process_group.h"
#include "profile/progress.h"

namespace trainplan::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct ProfileArgs {
  std::string grid, cmd, out, launcher = "local", statistic = "median", master_addr = "127.0.0.1";
  std::vector<std::string> srun_args;
  double timeout_s = 600;
  int workers_per_node = 0;
  bool resume = false;
};

// The row's shape and settings, for the template's shape placeholders.
std::map<std::string, std::string> shape_values(const io::LlmConfigRow& row);

// With --resume: the rows of an earlier --out that measured a configuration
// (iteration_time_s > 0), by configuration_key, each with its values in
// `columns`' order (NaN where the file has no such column or cell). Rows
// match by what they configure, not by their text, so a grid that carries an
// earlier run's results (examples/h200-gpt/grid.csv) resumes too, and a
// changed grid measures what changed.
struct MeasuredRow {
  long line = 0;  // in the earlier --out
  std::vector<double> values;
};
std::map<std::string, MeasuredRow> measured_before(const std::string& out, const std::vector<std::string>& columns) {
  std::map<std::string, MeasuredRow> found;
  std::error_code ec;
  if (!std::filesystem::exists(out, ec)) return found;
  // An earlier run stopped before its first row was measured wrote the header alone.
  if (io::CsvTable::read(out, io::BadFieldCount::kSkip).rows().empty()) return found;
  const io::LlmConfigTable old = io::read_llm_configs(out, /*require_time=*/false, io::RowErrors::kSkip);
  std::map<long, const io::CsvRow*> by_line;
  for (const auto& row : old.table.rows()) by_line.emplace(row.line, &row);
  for (const auto& row : old.rows) {
    const io::CsvRow& fields = *by_line.at(row.line);
    std::vector<double> v;
    for (const auto& c : columns) {
      const int k = old.table.column(c);
      std::optional<double> x = k >= 0 ? io::parse_finite(fields.fields[size_t(k)]) : std::nullopt;
      v.push_back(x ? *x : std::numeric_limits<double>::quiet_NaN());
    }
    if (v[0] > 0) found[io::configuration_key(row)] = {row.line, v};
  }
  return found;
}

// What makes a row's time the time of that command: kept beside --out as
// OUT.run.json, so that --resume can refuse to mix rows measured by another
// command, launcher or statistic into one file (a CSV has no place for it).
nlohmann::json run_identity(const ProfileArgs& a) {
  return {{"cmd", a.cmd},
          {"statistic", a.statistic},
          {"launcher", a.launcher},
          {"master_addr", a.master_addr},
          {"workers_per_node", a.workers_per_node},
          {"srun_args", a.srun_args}};
}

std::string identity_path(const std::string& out) { return out + ".run.json"; }

// One run into one --out at a time: a second would time its ranks beside the
// first's on the same CPUs, and the last to rewrite --out would keep its rows
// alone. OUT.lock, locked for as long as this process lives (the kernel lets
// go of it at exit, however the process ends), is left beside --out.
void lock_out(const std::string& out) {
  // Named from where --out leads (links resolved, a link to a file not made yet
  // included), so that two names of one file share one lock.
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target = out;
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
    const fs::path to = fs::read_symlink(target, ec);
    if (ec) break;
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
  const fs::path resolved = fs::weakly_canonical(target, ec);
  const std::string path = (ec ? out : resolved.string()) + ".lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path, 0, "--out", std::string("cannot create the run's lock file: ") + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    throw InputError(out, 0, "--out",
                     "another `trainplan llm profile` is measuring into it (it holds " + path +
                         "): wait for it to end, or measure into another --out");
  }
}

// --resume into an --out whose rows another run identity measured: an
// InputError naming the option that differs. An --out without its identity
// file (written before there was one, or copied without it) is resumed with
// a warning.
void check_resume_identity(const ProfileArgs& a, size_t rows_kept) {
  const std::string path = identity_path(a.out);
  std::ifstream in(path);
  if (!in) {
    if (rows_kept > 0)
      std::cerr << fmt::format("warning: {} is missing, so the command that measured the {} kept row(s) cannot be "
                               "checked against this run's\n",
                               path, rows_kept);
    return;
  }
  const auto old = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!old.is_object()) throw InputError(path, 0, "", "--resume: not the JSON object llm profile writes");
  // As written (json_text: a --cmd's bytes that are not UTF-8 are stored as U+FFFD), or it never matches.
  const auto now = nlohmann::json::parse(io::json_text(run_identity(a)));
  static const std::map<std::string, std::string> option = {{"cmd", "--cmd"},
                                                            {"statistic", "--statistic"},
                                                            {"launcher", "--launcher"},
                                                            {"master_addr", "--master-addr"},
                                                            {"workers_per_node", "--workers-per-node"},
                                                            {"srun_args", "--srun-arg"}};
  for (const auto& [key, name] : option) {
    const auto it = old.find(key);
    if (it == old.end() || *it == now[key]) continue;
    throw InputError(path, 0, name,
                     fmt::format("--resume: the rows in {} were measured with {} {}, this run has {}: resume with "
                                 "the same, or measure into another --out",
                                 a.out, name, io::json_text(*it, -1), io::json_text(now[key], -1)));
  }
}

std::map<std::string, std::string> shape_values(const io::LlmConfigRow& row) {
  const auto& s = row.spec;
  const auto& l = row.layout;
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  return {{"hidden", std::to_string(s.hidden)},
          {"heads", std::to_string(s.heads)},
          {"layers", std::to_string(s.layers)},
          {"seq", std::to_string(s.seq)},
          {"vocab", std::to_string(s.vocab)},
          {"ffn_hidden", std::to_string(s.ffn())},
          {"kv_groups", std::to_string(s.kv())},
          {"virtual_stages", std::to_string(l.virtual_stages)},
          {"first_stage_layers", std::to_string(l.first_stage_layers)},
          {"last_stage_layers", std::to_string(l.last_stage_layers)},
          {"recompute", structure::to_string(l.recompute)},
          {"precision", structure::to_string(l.precision)},
          {"sequence_parallel", flag(l.sequence_parallel)},
          {"distributed_optimizer", flag(l.distributed_optimizer)},
          {"flash_attention", flag(l.flash_attention)},
          {"dropout", flag(l.dropout)},
          {"fp32_residual", flag(l.fp32_residual)}};
}

void run_llm_profile(const ProfileArgs& a) {
  // Rewritten after every row, so a file; and OUT.run.json beside it.
  if (a.out == "-") throw InputError("", 0, "--out", "must be a file: it is rewritten after each configuration, and --resume reads it back");
  // Nor a device or a pipe (/dev/stdout, a FIFO): its rows could not be read back, and OUT.lock and
  // OUT.run.json would be made beside it (in /dev).
  std::error_code out_ec;
  if (std::filesystem::exists(a.out, out_ec) && !std::filesystem::is_regular_file(a.out, out_ec) &&
      !std::filesystem::is_directory(a.out, out_ec))
    throw InputError(a.out, 0, "--out",
                     "must be a file: it is rewritten after each configuration, and --resume reads it back; this is "
                     "a device or a pipe");
  io::check_output_path(a.out, "--out", {{a.grid, "--grid"}});  // before the trials, not after the first
  lock_out(a.out);
  profile::CommandTemplate tmpl(a.cmd, "--cmd");
  auto grid = read_llm_configs_noted(a.grid);
  // One rank a GPU of tp x pp x dp: a context-parallel row would run with too few and be stored as if not.
  for (const auto& row : grid.rows)
    if (row.layout.cp > 1)
      throw InputError(a.grid, row.line, "cp",
                       fmt::format("cp {}: llm profile starts tp x pp x dp ranks and has no {{cp}} placeholder, so a "
                                   "context-parallel row would run with {} of its {} GPUs; leave such rows out",
                                   row.layout.cp, row.layout.gpus() / row.layout.cp, row.layout.gpus()));
  // A layout the grid varies must reach the command (as one of its placeholders), or every row would
  // time the same run under another layout's name.
  struct Field {
    const char* name;
    std::vector<std::string> placeholders;
    int (*value)(const io::LlmConfigRow&);
  };
  for (const Field& f : {Field{"tp", {"tp"}, [](const io::LlmConfigRow& r) { return r.layout.tp; }},
                         Field{"pp", {"pp"}, [](const io::LlmConfigRow& r) { return r.layout.pp; }},
                         Field{"dp", {"dp", "workers"}, [](const io::LlmConfigRow& r) { return r.layout.dp; }},
                         Field{"micro_batch", {"micro_batch", "batch"},
                               [](const io::LlmConfigRow& r) { return r.layout.micro_batch; }},
                         Field{"global_batch", {"global_batch"},
                               [](const io::LlmConfigRow& r) { return r.layout.global_batch; }}}) {
    const bool varies = std::any_of(grid.rows.begin(), grid.rows.end(),
                                    [&](const auto& r) { return f.value(r) != f.value(grid.rows.front()); });
    const bool reaches = std::any_of(f.placeholders.begin(), f.placeholders.end(),
                                     [&](const std::string& p) { return tmpl.uses(p); });
    if (varies && !reaches)
      throw InputError("", 0, "--cmd",
                       fmt::format("never receives {{{}}}, and {}'s rows differ in {}: every row would run the same "
                                   "{} and be stored under its own",
                                   fmt::join(f.placeholders, "} or {"), a.grid, f.name, f.name));
  }
  profile::LaunchSettings launch;
  launch.kind = profile::parse_launcher(a.launcher);
  launch.srun_args = a.srun_args;
  launch.workers_per_node = a.workers_per_node;
  profile::check_host_address(a.master_addr);
  launch.master_addr = a.master_addr;
  if (launch.kind == profile::LauncherKind::kSlurm) profile::check_slurm_reachable();
  // Rows that configure different runs must reach the command differently:
  // two rows whose commands are the same would time one run under two names
  // (a precision or recomputation the grid varies and the command never
  // receives).
  {
    std::map<std::string, const io::LlmConfigRow*> by_command;
    for (const auto& row : grid.rows) {
      const profile::LayoutKey key{row.layout.tp, row.layout.pp, row.layout.dp, row.layout.micro_batch,
                                   row.layout.global_batch, shape_values(row)};
      const std::string command = fmt::format("{}", fmt::join(profile::plan_layout_launch(tmpl, key, launch, 1).commands, "\n"));
      const auto [it, fresh] = by_command.emplace(command, &row);
      if (fresh || io::configuration_key(*it->second) == io::configuration_key(row)) continue;
      std::string differ;
      const auto mine = shape_values(row), theirs = shape_values(*it->second);
      for (const auto& [name, value] : mine)
        if (theirs.at(name) != value) differ += (differ.empty() ? "" : ", ") + name;
      throw InputError(
          a.grid, row.line, "",
          differ.empty()
              ? fmt::format("runs the same command as line {}, which it differs from in a setting no placeholder "
                            "carries (tied embeddings, gated MLP, biases, position embedding, the overlap "
                            "settings): both rows would time one run; leave one row out, or profile them with "
                            "commands of their own",
                            it->second->line)
              : fmt::format("runs the same command as line {}, which it differs from in {}: the command never "
                            "receives what differs, so both rows would time one run; add the placeholder ({{{}}}) "
                            "to --cmd, or leave one row out",
                            it->second->line, differ, differ.substr(0, differ.find(','))));
    }
  }
  const size_t n = grid.rows.size();
  // iteration_time_s, memory_gib, then each group's communication seconds,
  // written once a row has them (write_llm_predictions reads as many values
  // as names).
  const char* const groups[3] = {"tp", "pp", "dp"};
  std::vector<std::string> columns = {"iteration_time_s", "memory_gib"};
  for (const char* g : groups) columns.push_back(std::string(g) + "_comm_s");
  // The grid's columns that configure nothing and are named as a run's
  // figures (an earlier run's iteration_time_spread, iterations_timed,
  // peak_rss_gib): left empty in --out, where they would sit beside this
  // run's results as if they were its own. Other columns (a note) pass through.
  std::vector<std::string> unread;
  for (size_t c = 0; c < grid.table.header().size(); ++c) {
    const std::string& h = grid.table.header()[c];
    const auto& read = io::llm_columns_read();
    const bool configures = std::any_of(read.begin(), read.end(), [&](const std::string& r) {
      return grid.table.column(r) == int(c);
    });
    const std::string f = io::fold_column_name(h);
    const bool a_figure = f.starts_with("iteration") || f.starts_with("peak_") || f.starts_with("ci95") ||
                          f.starts_with("load_avg") || f.ends_with("_s") || f.ends_with("_gib") ||
                          f.ends_with("_bytes") || f.ends_with("_spread") || f.ends_with("_timed");
    if (!h.empty() && !configures && a_figure) unread.push_back(h);
  }
  if (!unread.empty())
    std::cerr << fmt::format("note: {}'s column(s) {} are an earlier run's figures; their cells are left empty in {} "
                             "(this run did not measure them)\n",
                             a.grid, fmt::join(unread, ", "), a.out);
  for (const auto& u : unread) columns.push_back(u);
  std::vector<std::vector<double>> values(n, std::vector<double>(columns.size(), std::numeric_limits<double>::quiet_NaN()));
  std::vector<bool> done(n, false);
  bool any_comm = false;
  if (a.resume) {
    const std::vector<std::string> measured(columns.begin(), columns.begin() + 5);
    const auto before = measured_before(a.out, measured);
    // --out is rewritten with the grid's rows. None of its measured rows in the grid: another grid's
    // file, refused. Some: a changed grid, whose rows no longer in it are kept in a copy of the file.
    std::set<std::string> keys;
    for (const auto& row : grid.rows) keys.insert(io::configuration_key(row));
    size_t gone = 0;
    long first_gone = 0;
    for (const auto& [key, row] : before)
      if (!keys.count(key)) ++gone, first_gone = first_gone ? std::min(first_gone, row.line) : row.line;
    if (gone > 0 && gone == before.size())
      throw InputError(a.out, first_gone, "",
                       fmt::format("--resume: none of its measured configurations is in {}, so {} is not an earlier "
                                   "--out of this grid, and rewriting it would lose them: measure into another --out",
                                   a.grid, a.out));

    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      auto it = before.find(io::configuration_key(grid.rows[i]));
      if (it == before.end()) continue;
      std::copy(it->second.values.begin(), it->second.values.end(), values[i].begin());
      done[i] = true, ++kept;
      for (size_t k = 2; k < it->second.values.size(); ++k) any_comm |= !std::isnan(it->second.values[k]);
    }
    check_resume_identity(a, kept);
    // Past every check that can refuse: the file as it was, kept under a name no earlier copy has.
    if (gone > 0) {
      std::string copy = a.out + ".before-resume";
      for (int k = 2; std::filesystem::exists(copy); ++k) copy = fmt::format("{}.before-resume.{}", a.out, k);
      std::error_code ec;
      std::filesystem::copy_file(a.out, copy, ec);
      if (ec)
        throw InputError(copy, 0, "--resume",
                         fmt::format("cannot keep {}'s rows no longer in {} ({}); nothing was rewritten", a.out,
                                     a.grid, ec.message()));
      std::cerr << fmt::format("note: {} measured row(s) of {} are no longer in {} (the first at line {}); {} is "
                               "rewritten without them, and kept whole as {}\n",
                               gone, a.out, a.grid, first_gone, a.out, copy);
    }
    std::cerr << fmt::format("resuming: {} of {} configurations already measured in {}\n", kept, n, a.out);
  } else {
    // Without --resume, --out is rewritten with no row measured: an earlier run's times there would
    // be lost. A file that is no measured grid is replaced, as any output is.
    std::map<std::string, MeasuredRow> before;
    try {
      before = measured_before(a.out, std::vector<std::string>(columns.begin(), columns.begin() + 5));
    } catch (const InputError&) {
    }
    if (!before.empty()) {
      std::set<std::string> keys;
      for (const auto& row : grid.rows) keys.insert(io::configuration_key(row));
      long first = 0;
      bool any_in_grid = false;
      for (const auto& [key, row] : before) {
        first = first ? std::min(first, row.line) : row.line;
        any_in_grid = any_in_grid || keys.count(key) > 0;
      }
      throw InputError(a.out, first, "--out",
                       fmt::format("holds {} configuration(s) an earlier run measured, which this run would "
                                   "rewrite: {}move {} away or give another --out",
                                   before.size(),
                                   any_in_grid ? "--resume keeps them and measures the rest; to measure them again, "
                                               : "none of them is in " + a.grid + ", so ",
                                   a.out));
    }
  }
  // The communication columns where a row has them, or where the grid has its own (whose old cells
  // are then emptied, not kept beside this run's times).
  auto write = [&] {
    std::vector<size_t> written = {0, 1};
    for (size_t k = 2; k < columns.size(); ++k)
      if (k >= 5 || any_comm || grid.table.own_column(columns[k]) >= 0) written.push_back(k);
    std::vector<std::string> names;
    std::vector<std::vector<double>> cells(n);
    for (size_t k : written) names.push_back(columns[k]);
    for (size_t i = 0; i < n; ++i)
      for (size_t k : written) cells[i].push_back(values[i][k]);
    io::write_llm_predictions(a.out, grid.table, names, cells, done);
  };
  // --out first (the rows this run keeps, none without --resume), then the run's identity: an
  // identity written beside an earlier run's rows, and a crash before they were rewritten, would
  // let a later --resume keep rows another command measured.
  write();
  write_whole_file(identity_path(a.out), io::json_text(run_identity(a)) + "\n");
  int failed = 0;
  // As `trainplan profile` warns (one thread a rank assumed): ranks that share CPUs measure contention.
  std::vector<long> over;
  for (const auto& row : grid.rows)
    if (profile::oversubscribes_locally(launch, row.layout.gpus(), 1)) over.push_back(row.line);
  if (!over.empty())
    std::cerr << fmt::format("warning: {} of {} configurations have more ranks than the {} CPU(s) this process may "
                             "use (lines {}): their ranks share CPUs, unpinned, so their times measure contention "
                             "as much as the layout, as no GPU cluster runs\n",
                             over.size(), n, profile::allowed_cpus().size(), fmt::join(over, ", "));
  // The rows left, at the mean wall time of those run so far (failed ones included).
  const auto started = std::chrono::steady_clock::now();
  // `run` of the `to_run` rows this run measures (a resumed run skips the others).
  const size_t to_run = size_t(std::count(done.begin(), done.end(), false));
  size_t run = 0;
  auto eta = [&]() -> std::string {
    if (run >= to_run) return "";
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return "; about " + profile::format_duration(elapsed / double(run) * double(to_run - run)) + " left";
  };
  // Ctrl-C (or SIGTERM) kills the running configuration's process group, as
  // `trainplan profile` does, and keeps the rows measured so far in --out.
  const std::atomic<bool>& stop = profile::install_interrupt_handler();
  // After Ctrl-C: --out already holds the rows measured; say where the run stopped, exit 130.
  auto interrupted = [&](const std::string& where) {
    const size_t measured = size_t(std::count(done.begin(), done.end(), true));
    std::cerr << fmt::format("interrupted{}; {} of {} configurations measured are in {} (add --resume to measure "
                             "the rest)\n",
                             where, measured, n, a.out);
    std::exit(130);
  };
  for (size_t i = 0; i < n; ++i) {
    if (done[i]) continue;
    ++run;
    const auto& row = grid.rows[i];
    profile::LayoutKey key{row.layout.tp, row.layout.pp, row.layout.dp, row.layout.micro_batch,
                           row.layout.global_batch, shape_values(row)};
    auto r = profile::run_layout_trial(tmpl, key, launch, a.timeout_s,
                                       a.statistic == "p10" ? "iteration_time_p10_s" : "iteration_time_s", &stop);
    // A configuration that finished before the signal came is kept; only a killed one is not.
    if (stop.load() && !r.timing) {
      write();
      interrupted(fmt::format(": {}:{} ({}) was killed", a.grid, row.line, profile::to_string(key)));
    }
    if (!r.timing) {
      ++failed;
      std::cerr << fmt::format("{}:{}: {} failed: {}\n  command: {}\n", a.grid, row.line, profile::to_string(key),
                               r.error, r.command);
    } else {
      values[i][0] = r.timing->iteration_time_s;
      if (r.timing->peak_memory_bytes) values[i][1] = *r.timing->peak_memory_bytes / kGiB;
      const std::optional<double> comm[3] = {r.timing->tp_comm_s, r.timing->pp_comm_s, r.timing->dp_comm_s};
      std::string in_groups;  // where the command reports it: each group's share, as seconds per iteration
      for (int k = 0; k < 3; ++k) {
        if (!comm[k]) continue;
        values[i][size_t(2 + k)] = *comm[k], any_comm = true;
        if (*comm[k] > 0)
          in_groups += fmt::format("{}{} {:.3g} s", in_groups.empty() ? " (in collectives: " : ", ",
                                   groups[k], *comm[k]);
      }
      if (!in_groups.empty()) in_groups += ")";
      if (!r.timing->memory_ignored.empty())
        std::cerr << fmt::format("{}:{}: {}\n", a.grid, row.line, r.timing->memory_ignored);
      done[i] = true;
      std::cout << fmt::format("{}/{} {}: {:.4g} s/iteration{}, {} ({:.1f} s{}){}\n", i + 1, n,
                               profile::to_string(key), values[i][0], in_groups,
                               std::isnan(values[i][1]) ? std::string("no memory figure")
                                                        : fmt::format("{:.4g} GiB peak", values[i][1]),
                               r.wall_s, eta(), r.oversubscribed ? ", oversubscribed" : "")
                << std::flush;
    }
    // Rewritten after each row, so an interrupted grid keeps what it measured.
    write();
    if (stop.load()) interrupted(fmt::format(" after {}:{}", a.grid, row.line));
  }
  if (failed > 0) {
    // As `trainplan profile`: the run went through, some trials did not.
    std::cerr << fmt::format("{} of {} configurations failed; {} has the other {}\n", failed, n, a.out,
                             n - size_t(failed));
    std::exit(kExitFailure);
  }
}

void setup(CLI::App& root) {
  auto* llm = root.get_subcommand("llm");
  auto a = std::make_shared<ProfileArgs>();
  auto* p = llm->add_subcommand("profile", "Measure iteration time and peak memory of each configuration of a grid "
                                           "by running a command template");
  p->footer(
      "The command's rank 0 prints {\"event\":\"iteration_timing\",\"iteration_time_s\":T,\"peak_memory_bytes\":M} "
      "on stdout. Ctrl-C kills the running configuration and keeps the rows measured (exit 130).\nPlaceholders: {tp} {pp} {dp} {micro_batch} ({batch} too) {global_batch} {workers} (= tp*pp*dp) "
      "{rank} {master_port} {master_addr} {nodes}, and the row's {hidden} {heads} {layers} {seq} {vocab} {ffn_hidden} "
      "{kv_groups} {virtual_stages} {first_stage_layers} {last_stage_layers} {recompute} {precision} "
      "{sequence_parallel} {distributed_optimizer} {flash_attention} {dropout} {fp32_residual}. Rows that differ must "
      "run different commands.\n\nExample (the built-in CPU GPT trainer, on the PATH beside "
      "trainplan; build/trainplan-train in a source tree):\n"
      "  trainplan llm profile --grid examples/cpu-gpt/grid-configs.csv -o grid.csv --cmd 'trainplan-train "
      "--workload gpt\n      --tp {tp} --pp {pp} --dp {dp} --micro-batch {micro_batch} --global-batch {global_batch} "
      "--rank {rank}\n      --master-port {master_port} --time-only'");
  p->add_option("--grid", a->grid,
                "CSV of configurations in llm predict's shape (gpus,global_batch,micro_batch,hidden,heads,layers,seq,"
                "tp,dp,pp,...); one trial per row")
      ->required();
  p->add_option("--cmd", a->cmd, "The command template (with {rank}: started once per rank)")->required();
  p->add_option("-o,--out", a->out, "The grid with iteration_time_s and memory_gib (GiB) filled in")->required();
  add_duration_option(p, "--timeout,--trial-timeout", a->timeout_s, "Time limit per configuration (default 600 s); under Slurm the queue's wait and the run are "
                      "bounded each");
  p->add_option("--statistic", a->statistic,
                "What iteration_time_s records: median (the line's iteration_time_s) or p10 (its "
                "iteration_time_p10_s, the 10th percentile: on a machine shared with other work, interference only "
                "adds time)")
      ->capture_default_str()
      ->check(CLI::IsMember({"median", "p10"}));
  p->add_option("--launcher", a->launcher, "local (processes on this machine) or slurm (one srun per configuration)")
      ->capture_default_str();
  p->add_option("--srun-arg", a->srun_args, "Extra srun argument (repeatable)");
  p->add_option("--master-addr", a->master_addr,
                "{master_addr}: the address rank 0 listens on (with --launcher slurm over several nodes, the first "
                "node's)")
      ->capture_default_str();
  p->add_option("--workers-per-node", a->workers_per_node, "Ranks per node, for {nodes} (0: one node)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  p->add_flag("--resume", a->resume,
              "Keep the rows an earlier run of this grid measured into --out (matched by what each configures) and "
              "measure the others; refused where OUT.run.json, written beside --out by each run, names another "
              "--cmd, --statistic, --launcher, --master-addr, --workers-per-node or --srun-arg");
  p->callback([a] { run_llm_profile(*a); });
}

CommandRegistrar reg(49, setup);

}  // namespace
}  // namespace trainplan::cli
