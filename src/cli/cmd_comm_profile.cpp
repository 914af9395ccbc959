// trainplan comm-profile: measure a cluster's communication profile (how the
// inter-node sync cost grows with nodes and GPUs per node, relative to two
// nodes with one GPU each) from Pollux-format traces recorded on it, and write
// it as JSON for `evaluate`, `fit`, `predict` and `plan --comm-profile`.
#include <fmt/format.h>

#include <iostream>
#include <set>

#include "cli/command.h"
#include "core/error.h"
#include "io/json_text.h"
#include "io/output_path.h"
#include "io/pollux_trace.h"
#include "replay/comm_calibration.h"

namespace trainplan::cli {
namespace {

struct CommProfileArgs {
  std::string data;
  std::vector<std::string> exclude;
  std::string out;
  int batches = 3;
  int max_nodes = replay::CommCalibrationOptions{}.max_nodes;
  int max_gpus_per_node = replay::CommCalibrationOptions{}.max_gpus_per_node;
  bool json = false;
};

void run_comm_profile(const CommProfileArgs& a) {
  io::check_output_path(a.out, "--out", {{a.data, "--data"}});
  if (a.batches < 1) throw InputError("", 0, "--batches", "needs at least 1");
  if (a.max_nodes < 2 || a.max_nodes > 1024) throw InputError("", 0, "--max-nodes", "must be from 2 to 1024");
  if (a.max_gpus_per_node < 1 || a.max_gpus_per_node > 1024)
    throw InputError("", 0, "--max-gpus-per-node", "must be from 1 to 1024");
  std::set<std::string> skip(a.exclude.begin(), a.exclude.end());
  std::vector<replay::ReplayOracle> oracles;
  // Step times only: no epoch is counted, so a trace whose dataset size is
  // unknown (deepspeech2 on the A100) is read with a stand-in one.
  replay::OracleOptions step_times_only;
  step_times_only.dataset_size = 1;
  for (const auto& dir : io::list_pollux_traces(a.data)) {
    if (skip.erase(io::pollux_trace_name(dir)) > 0) continue;
    // Steps alone: neither the curves nor the syncs are read, so a trace
    // without them is measured as well.
    oracles.emplace_back(io::read_pollux_trace(dir, {.curves = false, .sync_optional = true}), step_times_only);
  }
  if (!skip.empty()) throw InputError(a.data, 0, "--exclude", "no trace named '" + *skip.begin() + "' under it");
  if (oracles.empty()) throw InputError(a.data, 0, "--exclude", "leaves out every trace under it: none is left to measure");
  std::vector<const replay::ReplayOracle*> ptrs;
  for (const auto& o : oracles) ptrs.push_back(&o);
  replay::CommCalibrationOptions opts;
  opts.batches = a.batches;
  opts.max_nodes = a.max_nodes;
  opts.max_gpus_per_node = a.max_gpus_per_node;
  auto profile = replay::comm_profile_from(ptrs, opts);

  if (a.json) {
    std::cout << io::json_text(profile.to_json()) << "\n";
  } else {
    std::cout << fmt::format("communication profile: inter-node sync cost relative to 2 nodes x 1 GPU ({})\n",
                             profile.source);
    std::set<int> ks;
    for (const auto& [key, v] : profile.table()) ks.insert(key.second);
    std::cout << "nodes \\ GPUs per node";
    for (int k : ks) std::cout << fmt::format("{:>8}", k);
    std::cout << "\n";
    int row = -1;
    for (const auto& [key, v] : profile.table()) {
      if (key.first != row) {
        if (row != -1) std::cout << "\n";
        row = key.first;
        std::cout << fmt::format("{:>21}", row);
        for (int k : ks) {
          auto it = profile.table().find({row, k});
          std::cout << (it == profile.table().end() ? fmt::format("{:>8}", "-") : fmt::format("{:>8.2f}", it->second));
        }
      }
    }
    std::cout << "\n";
  }
  if (!a.out.empty()) {
    profile.save(a.out);
    std::cerr << "wrote " << a.out << "\n";
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<CommProfileArgs>();
  auto* cmd = root.add_subcommand(
      "comm-profile", "Measure the cluster's inter-node communication shape from traces recorded on it");
  cmd->footer(
      "Per trace, at its --batches smallest per-GPU batches (where sync is least hidden by compute):\n"
      "  rho(n, k) = (t(k GPUs on each of n nodes) - t(1 GPU)) / (t(2 nodes x 1 GPU) - t(1 GPU))\n"
      "median over those batches, then over traces. Time models given the profile use rho(r, n) as the\n"
      "inter-node volume factor instead of the ring all-reduce's 2(r-1)/r, so a new model's two multi-node\n"
      "trials fit only the scale. See docs/lab/MODELS-TIME.md.\n"
      "Examples:\n"
      "  trainplan comm-profile --data ../shared/data/pollux-t4 --out t4.json\n"
      "  trainplan comm-profile --data ../shared/data/pollux-t4 --exclude imagenet   # leave one out");
  cmd->add_option("-d,--data", a->data, "Directory of Pollux-format traces (or one trace)")->required();
  cmd->add_option("--exclude", a->exclude, "Trace name to leave out (repeatable)");
  cmd->add_option("-o,--out", a->out, "Write the profile as JSON to this file");
  cmd->add_option("--batches", a->batches, "Smallest measured batches used per trace")->capture_default_str();
  cmd->add_option("--max-nodes", a->max_nodes,
                  "Measure node counts 2 to this (placements on more nodes are not read; the models hold the last "
                  "count beyond it)")
      ->capture_default_str();
  cmd->add_option("--max-gpus-per-node", a->max_gpus_per_node,
                  "Measure 1 to this many GPUs a node (more are not read; the models hold the last count beyond it)")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the profile as JSON");
  cmd->callback([a] { run_comm_profile(*a); });
}

CommandRegistrar reg(42, setup);

}  // namespace
}  // namespace trainplan::cli
