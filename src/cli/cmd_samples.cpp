// trainplan samples: read a profiling store — export its samples to the
// sample CSV format, or list its trials with their status and stderr.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "core/median.h"
#include "io/json_text.h"
#include "io/output_path.h"
#include "io/sample_csv.h"
#include "profile/machine_probe.h"
#include "profile/progress.h"
#include "profile/sample_store.h"
#include "profile/samples_file.h"
#include "profile/live_log.h"

namespace trainplan::cli {
namespace {

using namespace trainplan::profile;

struct SamplesArgs {
  std::vector<std::string> files;  // compare: two sample CSVs or stores
  std::string store;
  std::string out;
  bool failed_only = false;
  bool json = false;
};

// Opening would create an empty store; a typo deserves an error instead.
void require_exists(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw InputError(path, 0, "", "no such sample store (write one with trainplan profile --store)");
}

void run_export(const SamplesArgs& a) {
  io::check_output_path(a.out, "--out",
                        {{a.store, "--store"}, {profile::live_log_path(a.store), "--store's live log"}});
  SampleStore store(a.store, SampleStore::Open::kExisting);
  SampleSet set = store.samples();
  if (set.empty()) throw InputError(a.store, 0, "", "the store holds no ok trials yet; nothing to export");
  if (a.out.empty() || a.out == "-") std::cout << io::format_samples_csv(set);
  else io::write_samples_csv(a.out, set);
  size_t all = store.trials().size();
  std::cerr << fmt::format("exported {} ok samples of {} trials{} from {}{}\n", set.size(), all,
                           set.curve.empty() ? "" : fmt::format(", and {} learning-curve points", set.curve.size()),
                           a.store, a.out.empty() || a.out == "-" ? "" : " -> " + a.out);
}

void run_list(const SamplesArgs& a) {
  SampleStore store(a.store, SampleStore::Open::kExisting);
  auto trials = store.trials();
  nlohmann::json arr = nlohmann::json::array();
  if (!a.json)
    fmt::print("{:>6} {:>7} {:>6}  {:<10} {:>12} {:>10} {:>8}  {}\n", "batch", "workers", "epochs", "status",
               "epoch_time_s", "metric", "wall_s", "finished / reason");
  for (const auto& r : trials) {
    if (a.failed_only && r.status == TrialStatus::kOk) continue;
    if (a.json) {
      arr.push_back({{"batch", r.key.batch},
                     {"workers", r.key.workers},
                     {"epochs", r.key.epochs},
                     {"status", to_string(r.status)},
                     {"reason", r.reason},
                     {"epoch_time_s", r.epoch_time_s ? nlohmann::json(*r.epoch_time_s) : nlohmann::json(nullptr)},
                     {"metric", r.metric ? nlohmann::json(*r.metric) : nlohmann::json(nullptr)},
                     {"metric_name", r.metric_name},
                     {"epochs_reported", r.epochs_reported},
                     {"metric_diverged", r.metric_diverged},
                     {"oversubscribed", r.oversubscribed},
                     {"note", r.note},
                     {"wall_s", r.wall_s},
                     {"started_at", r.started_at},
                     {"finished_at", r.finished_at},
                     {"command", r.command},
                     {"stderr_tail", r.stderr_tail}});
      continue;
    }
    fmt::print("{:>6} {:>7} {:>6}  {:<10} {:>12} {:>10} {:>8.1f}  {}\n", r.key.batch, r.key.workers, r.key.epochs,
               to_string(r.status), r.epoch_time_s ? fmt::format("{:.4g}", *r.epoch_time_s) : "-",
               r.metric ? fmt::format("{:.4g}", *r.metric) : "-", r.wall_s,
               r.status == TrialStatus::kOk ? r.finished_at : r.reason);
    // What the profiler said of the trial when it ran (interference, oversubscription, a NaN metric).
    if (r.status != TrialStatus::kOk && r.key.epochs > 0 && r.epochs_reported > 0 && r.epochs_reported < r.key.epochs)
      fmt::print("    reported {} of its {} epochs before it stopped\n", r.epochs_reported, r.key.epochs);
    if (!r.note.empty()) fmt::print("    note: {}\n", r.note);
    if (a.failed_only && !r.stderr_tail.empty()) {
      std::string tail = r.stderr_tail;
      while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
      fmt::print("    stderr (last {} bytes):\n", tail.size());
      size_t pos = 0;
      while (pos <= tail.size()) {
        size_t nl = tail.find('\n', pos);
        if (nl == std::string::npos) nl = tail.size();
        fmt::print("      {}\n", tail.substr(pos, nl - pos));
        pos = nl + 1;
      }
    }
  }
  if (a.json) std::cout << io::json_text(arr) << "\n";
}

// The epoch time of each (batch, workers) of a sample set: the median over
// its trial samples (they agree when the time came from one time trial). A
// (batch, workers) measured on several node counts is refused: the median
// of 10 s on one node and 20 s on two is a time nobody measured.
std::map<std::pair<double, int>, double> epoch_times(const SampleSet& set) {
  std::map<std::pair<double, int>, std::vector<double>> all;
  std::map<std::pair<double, int>, int> nodes_of;
  for (const auto& s : set.samples) {
    all[{s.batch, s.workers}].push_back(s.epoch_time_s);
    const int nodes = s.nodes > 0 ? s.nodes : 1;
    if (auto [it, fresh] = nodes_of.try_emplace({s.batch, s.workers}, nodes); !fresh && it->second != nodes)
      throw InputError(set.source, s.line, "nodes",
                       fmt::format("batch {:g} on {} workers ran on {} and on {} nodes: compare tells configurations "
                                   "apart by batch and workers only; compare one node count at a time",
                                   s.batch, s.workers, it->second, nodes));
  }
  std::map<std::pair<double, int>, double> out;
  for (auto& [k, v] : all) out[k] = median(v);
  return out;
}

// The machine probe of each (batch, workers)'s time trial (profile/machine_probe.h);
// empty for a sample CSV or a store written without probes.
std::map<std::pair<double, int>, double> probes_of(const std::vector<TrialRecord>& trials) {
  std::map<std::pair<double, int>, double> out;
  for (const auto& r : trials)
    if (r.key.epochs == 0 && r.status == TrialStatus::kOk && r.timing && r.timing->probe_s > 0)
      out[{double(r.key.batch), r.key.workers}] = r.timing->probe_s;
  return out;
}

// Two profiles of the same configurations: how far apart their epoch times
// are, per configuration, as |b / a - 1|; with stores, the machine probes
// beside them, to tell a machine that changed speed from a program that did.
void run_compare(const SamplesArgs& a) {
  const SamplesAndTrials first = read_samples_and_trials(a.files[0]), second = read_samples_and_trials(a.files[1]);
  const auto ta = epoch_times(first.samples), tb = epoch_times(second.samples);
  const auto pa = probes_of(first.trials), pb = probes_of(second.trials);
  const bool probed = !pa.empty() && !pb.empty();
  // Before the table's heading, which would otherwise stand over nothing.
  if (std::none_of(ta.begin(), ta.end(), [&tb](const auto& e) { return tb.count(e.first) > 0; }))
    throw InputError(a.files[1], 0, "", "no (batch, workers) in common with " + a.files[0] + "; nothing to compare");
  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> ratios, probes_a, probes_b;
  if (!a.json)
    fmt::print("{:>6} {:>7} {:>12} {:>12} {:>8}{}\n", "batch", "workers", "first_s", "second_s", "diff",
               probed ? fmt::format(" {:>13} {:>13}", "probe1_ms", "probe2_ms") : "");
  for (const auto& entry : ta) {
    // Not a structured binding: clang before 16, which scripts/sanitize.sh may use, cannot
    // capture one in the lambda below.
    const auto& k = entry.first;
    const double t1 = entry.second;
    auto it = tb.find(k);
    if (it == tb.end()) continue;
    const double d = std::abs(it->second / t1 - 1);
    ratios.push_back(it->second / t1);
    nlohmann::json row{{"batch", k.first}, {"workers", k.second}, {"first_s", t1}, {"second_s", it->second}, {"diff", d}};
    std::string probe_cells;
    if (probed) {
      // Each side's probe of this configuration: a table cell, a JSON field, and the side's list.
      auto side = [&](const auto& probes, const char* field, std::vector<double>& list) {
        auto i = probes.find(k);
        if (i == probes.end()) return std::string("-");
        row[field] = i->second;
        list.push_back(i->second);
        return fmt::format("{:.3f}", 1e3 * i->second);
      };
      const std::string c1 = side(pa, "probe_first_s", probes_a), c2 = side(pb, "probe_second_s", probes_b);
      probe_cells = fmt::format(" {:>13} {:>13}", c1, c2);
    }
    rows.push_back(row);
    if (!a.json)
      fmt::print("{:>6g} {:>7} {:>12.4g} {:>12.4g} {:>7.1f}%{}\n", k.first, k.second, t1, it->second, 100 * d,
                 probe_cells);
  }
  const size_t n = ratios.size();
  // The median and worst |ratio / reference - 1|.
  auto apart = [&](double reference) {
    std::vector<double> d;
    for (double r : ratios) d.push_back(std::abs(r / reference - 1));
    return std::pair(median(d), *std::max_element(d.begin(), d.end()));
  };
  const auto [middle, worst] = apart(1);
  // The same after the factor common to every configuration (the median
  // ratio): what is left is how far the profile's shape repeats, the
  // relative times that decide between configurations, where a machine that
  // ran uniformly slower moves only the factor.
  const double common = median(ratios);
  const auto [shape_middle, shape_worst] = apart(common);
  nlohmann::json probe = nullptr;
  std::string probe_line;
  if (!probes_a.empty() && !probes_b.empty()) {
    const double m1 = median(probes_a), m2 = median(probes_b), ratio = m2 / m1;
    const bool changed = probes_differ(m1, m2);
    probe = {{"first_s", m1}, {"second_s", m2}, {"ratio", ratio}, {"machine_speed_changed", changed}};
    probe_line = changed ? fmt::format("the machine probe took {:.3f} ms in the first profile and {:.3f} ms in the second "
                                       "(x{:.2f}): the machine itself ran at another speed, so part of these differences "
                                       "is the machine's, not the program's (docs/PROFILING.md)",
                                       1e3 * m1, 1e3 * m2, ratio)
                         : fmt::format("the machine probe took {:.3f} ms and {:.3f} ms (x{:.2f}): it saw no change in "
                                       "the machine's speed, though it does not see every kind (docs/PROFILING.md)",
                                       1e3 * m1, 1e3 * m2, ratio);
  }
  // Epochs of different sizes take different times for the same speed.
  const auto& da = first.samples.dataset_size;
  const auto& db = second.samples.dataset_size;
  const std::string size_note =
      da && db && *da != *db
          ? fmt::format("the two epochs are of different sizes ({} and {} examples): their times differ by that "
                        "much for the same speed, so compare the ratio x{:.3f} with {:.3f}",
                        *da, *db, common, double(*db) / double(*da))
          : "";
  // Two profiles of different programs differ by the programs, not by how well either was measured.
  auto has_metric = [](const SampleSet& set) {
    return std::any_of(set.samples.begin(), set.samples.end(), [](const Sample& x) { return x.metric.has_value(); });
  };
  auto workloads = [](const SampleSet& set) {
    std::set<std::string> names;
    for (const auto& x : set.samples)
      if (!x.model.empty()) names.insert(x.model);
    return fmt::format("{}", fmt::join(names, ", "));
  };
  const std::string wa = workloads(first.samples), wb = workloads(second.samples);
  std::string workload_note;
  if (!wa.empty() && !wb.empty() && wa != wb)
    workload_note = fmt::format("the profiles are of different workloads ({} and {}): their times differ by the "
                                "programs as much as by the measuring",
                                wa, wb);
  else if (has_metric(first.samples) && has_metric(second.samples) &&
           first.samples.direction != second.samples.direction)
    workload_note = fmt::format("the profiles' metrics go opposite ways ({} and {} is better): are they of the same "
                                "program?",
                                first.samples.direction == MetricDirection::kMax ? "higher" : "lower",
                                second.samples.direction == MetricDirection::kMax ? "higher" : "lower");
  std::string warning = size_note;
  if (!workload_note.empty()) warning += (warning.empty() ? "" : "; ") + workload_note;
  if (a.json) {
    std::cout << io::json_text(nlohmann::json{{"first", a.files[0]}, {"second", a.files[1]}, {"configurations", n},
                                {"dataset_sizes", {da ? nlohmann::json(*da) : nlohmann::json(nullptr),
                                                   db ? nlohmann::json(*db) : nlohmann::json(nullptr)}},
                                {"warning", warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(warning)},
                                {"median_diff", middle}, {"max_diff", worst}, {"common_ratio", common},
                                {"median_diff_after_common_ratio", shape_middle},
                                {"max_diff_after_common_ratio", shape_worst}, {"machine_probe", probe}, {"rows", rows}})
              << "\n";
    return;
  }
  fmt::print("{} configurations in common: epoch times differ by {:.1f}% at the median, {:.1f}% at worst\n", n,
             100 * middle, 100 * worst);
  fmt::print("the second over the first is x{:.3f} at the median; divided by that, they differ by {:.1f}% at the "
             "median, {:.1f}% at worst (how far the relative times repeat)\n",
             common, 100 * shape_middle, 100 * shape_worst);
  if (!probe_line.empty()) fmt::print("{}\n", probe_line);
  if (!size_note.empty()) fmt::print("warning: {}\n", size_note);
  if (!workload_note.empty()) fmt::print("warning: {}\n", workload_note);
}

void setup(CLI::App& root) {
  auto args = std::make_shared<SamplesArgs>();
  auto* cmd = root.add_subcommand("samples", "Read a profiling store: export its samples, list its trials, compare two profiles");
  cmd->require_subcommand(1);
  auto* ex = cmd->add_subcommand("export", "Write the store's ok trials in the sample CSV format (docs/FORMATS.md), then the points of their learning curves (source=curve: the best metric after each earlier epoch)");
  ex->add_option("--store", args->store, "SQLite store written by trainplan profile")->required();
  ex->add_option("-o,--out", args->out, "Output CSV (default: stdout)");
  ex->callback([args] {
    require_exists(args->store);
    run_export(*args);
  });
  auto* ls = cmd->add_subcommand("list", "List every trial in the store: key, status, epoch time, metric, reason");
  ls->add_option("--store", args->store, "SQLite store written by trainplan profile")->required();
  ls->add_flag("--failed", args->failed_only, "Only trials that were not ok, with their stderr tails");
  ls->add_flag("--json", args->json, "JSON array of records (with command and stderr tail) on stdout");
  ls->callback([args] {
    require_exists(args->store);
    run_list(*args);
  });
  auto* cmp = cmd->add_subcommand(
      "compare", "Compare the epoch times of two profiles of the same configurations (sample CSVs or stores): "
                 "per (batch, workers), and the median and worst relative difference; with two stores, also "
                 "the machine probe each profile's time trials took, which says whether the machine itself changed speed");
  cmp->add_option("files", args->files, "FIRST SECOND: sample CSVs or profile stores")->required()->expected(2);
  cmp->add_flag("--json", args->json, "Print the comparison as JSON");
  cmp->callback([args] { run_compare(*args); });
}

CommandRegistrar reg(41, setup);

}  // namespace
}  // namespace trainplan::cli
