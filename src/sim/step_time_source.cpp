#include "sim/step_time_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "io/pollux_trace.h"
#include "models/transfer_split.h"
#include "replay/replay_oracle.h"
#include "scoring/transfer_eval.h"
#include "structure/network_zoo.h"

namespace trainplan::sim {

namespace fs = std::filesystem;

std::string StepTimeSource::describe() const {
  switch (kind) {
    case Kind::kTrace:
      return "";
    case Kind::kOtherTraces:
      return "step times from the traces in " + other_traces + "; learning curves from the applications' own traces";
    case Kind::kTransfer: {
      const std::string measured =
          trials.empty() || target_trials == 0 ? fmt::format("no {} step measured", to.name)
          : target_trials >= 0 ? fmt::format("corrected by {} step{} of each application (all, where it has fewer) "
                                             "measured in {}, seed {}",
                                             target_trials, target_trials == 1 ? "" : "s", trials, seed)
                               : fmt::format("corrected by the steps measured in {}", trials);
      // The transfer times steps, not memory: a GPU that holds less is given the batches the
      // traces ran all the same, which the reader should know.
      const std::string memory =
          to.gpu.memory_gb > 0 && from.gpu.memory_gb > 0 && to.gpu.memory_gb < from.gpu.memory_gb
              ? fmt::format("; {} holds {:g} GB against {}'s {:g}, and keeps the per-GPU batches the traces ran, "
                            "which it may not hold",
                            to.name, to.gpu.memory_gb, from.name, from.gpu.memory_gb)
              : "";
      return fmt::format("step times moved from {} to {} by split-transfer ({}); learning curves from the "
                         "applications' own traces{}",
                         from.name, to.name, measured, memory);
    }
  }
  return "";
}

void check_step_time_source(const StepTimeSource& src) {
  if (!src.trials.empty() && src.kind != StepTimeSource::Kind::kTransfer)
    throw InputError("", 0, "--trials", "measured steps correct a move to another GPU: give --gpu with them");
  if (src.target_trials >= 0 && src.trials.empty())
    throw InputError("", 0, "--target-trials", "draws from the steps of --trials: give --trials");
  if (src.kind == StepTimeSource::Kind::kTransfer && src.to.node.gpus_per_node > 0 &&
      src.gpus_per_node > src.to.node.gpus_per_node)
    throw InputError("", 0, "--gpus-per-node",
                     fmt::format("{} GPUs a node, and {}'s node holds {} (for larger nodes, {}; docs/HARDWARE.md)",
                                 src.gpus_per_node, src.to.name, src.to.node.gpus_per_node,
                                 src.to.origin == "built-in"
                                     ? fmt::format("give a hardware file with base {} and gpus_per_node", src.to.name)
                                     : fmt::format("give a larger gpus_per_node in {}", src.to.origin)));
  if (src.kind == StepTimeSource::Kind::kTransfer && src.gpus_per_node > 9)
    throw InputError("", 0, "--gpus-per-node",
                     fmt::format("a cluster of another GPU is tabulated as trace placements, one digit a node: at "
                                 "most 9 GPUs a node, got {}",
                                 src.gpus_per_node));
}

namespace {

// The trace folder of `tr`'s application under `root`, the folder of `option`;
// InputError naming both when it has none (`what`: what it was wanted for).
fs::path application_dir(const io::PolluxTrace& tr, const std::string& root, const std::string& option,
                         const std::string& what) {
  const fs::path dir = fs::path(root) / tr.name;
  if (!fs::exists(dir / "placements.csv"))
    throw InputError((dir / "placements.csv").string(), 0, option,
                     "application '" + tr.name + "' of --data has no " + what + " in " + option + "' folder");
  return dir;
}

// The step times of `tr` replaced by those of the same application in `root`.
void take_other_trace(io::PolluxTrace& tr, const std::string& root) {
  const fs::path dir = application_dir(tr, root, "--step-times", "trace to take its step times from");
  io::PolluxTrace other = io::read_pollux_trace(dir.string(), {.curves = false});
  tr.placements = std::move(other.placements);
  tr.scalability = std::move(other.scalability);
}

// The node counts a job's table holds, from the fewest nodes it fits in to
// the most: each of the first eight, then every doubling, and the most. A
// spread between two of them is read as the wider (AppModel::step_time), so
// that a cluster of thousands of nodes needs a few dozen spreads per GPU
// count, not thousands.
std::vector<int> node_counts(int fewest, int most) {
  std::vector<int> out;
  for (int n = fewest; n <= most; n = n < fewest + 7 ? n + 1 : 2 * n) out.push_back(n);
  if (out.empty() || out.back() != most) out.push_back(most);
  return out;
}

// The step times of `tr` predicted on another GPU, at even spreads of
// 1..max_gpus GPUs over at most `nodes` nodes of `gpus_per_node`, and at the
// per-GPU batches the trace measured.
void take_transferred(io::PolluxTrace& tr, const StepTimeSource& src) {
  models::TransferProblem problem;
  problem.source = scoring::trace_samples(tr.dir, true);
  problem.source_hw = src.from;
  problem.target_hw = src.to;
  problem.network = structure::find_network(tr.name);
  if (!src.trials.empty()) {
    const fs::path dir = application_dir(tr, src.trials, "--trials", "steps measured to correct its move");
    std::vector<models::StepSample> measured = scoring::trace_samples(dir.string(), false);
    if (src.target_trials >= 0) {
      // Drawn as `evaluate --transfer` draws its trials, so that a seed names the same rows.
      const std::vector<size_t> idx = scoring::trial_order(measured.size(), src.seed);
      for (size_t i = 0; i < idx.size() && i < static_cast<size_t>(src.target_trials); ++i)
        problem.target_trials.push_back(measured[idx[i]]);
    } else {
      problem.target_trials = std::move(measured);
    }
  }
  models::SplitTransferModel model;
  model.fit(problem);

  std::set<double> batches;
  double least_local = INFINITY;
  for (const auto& r : tr.placements) {
    batches.insert(r.local_bsz);
    least_local = std::min(least_local, r.local_bsz);
  }
  // No job of the application can use more GPUs than its largest global
  // batch over its least per-GPU batch (AppModel::max_gpus).
  int most = src.max_gpus;
  if (!tr.curves.empty() && least_local >= 1)
    most = std::min<int>(most, std::max(1.0, std::floor(tr.curves.back().global_batch / least_local)));
  std::vector<io::PlacementRow> rows;
  for (int g = 1; g <= most; ++g) {
    for (int n : node_counts((g + src.gpus_per_node - 1) / src.gpus_per_node, std::min(g, src.nodes))) {
      const std::string p = replay::ReplayOracle::placement_for(g, n);
      if (p.empty()) continue;
      for (double b : batches) {
        models::StepSample at = models::step_sample(p, b);
        const auto parts = model.target_parts(at);
        io::PlacementRow row;
        row.placement = p, row.gpus = g, row.nodes = n, row.local_bsz = b;
        row.step_time = parts.total;
        row.sync_time = std::min(parts.exposed_comm, parts.total);
        rows.push_back(row);
      }
    }
  }
  tr.placements = std::move(rows);
  tr.scalability.clear();  // every spread the cluster can make is tabulated
}

}  // namespace

LoadedApps load_apps(const std::string& dir, const StepTimeSource& src) {
  check_step_time_source(src);
  auto dirs = io::list_pollux_traces(dir);
  if (dirs.empty()) throw InputError(dir, 0, "", "no application traces (directories with placements.csv) found");
  LoadedApps loaded;
  auto& apps = loaded.apps;
  for (const auto& d : dirs) {
    io::PolluxTrace tr = io::read_pollux_trace(d);
    // A folder of step times may hold only the applications a workload runs.
    try {
      if (src.kind == StepTimeSource::Kind::kOtherTraces)
        application_dir(tr, src.other_traces, "--step-times", "trace to take its step times from");
      if (src.kind == StepTimeSource::Kind::kTransfer && !src.trials.empty())
        application_dir(tr, src.trials, "--trials", "steps measured to correct its move");
    } catch (const InputError& e) {
      loaded.unavailable.emplace(tr.name, e);
      continue;
    }
    if (src.kind == StepTimeSource::Kind::kOtherTraces) take_other_trace(tr, src.other_traces);
    if (src.kind == StepTimeSource::Kind::kTransfer) take_transferred(tr, src);
    replay::OracleOptions o;
    o.gpus_per_node = src.gpus_per_node;
    apps.push_back(std::make_shared<AppModel>(std::make_shared<const replay::ReplayOracle>(std::move(tr), o)));
  }
  return loaded;
}

}  // namespace trainplan::sim
