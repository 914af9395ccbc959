// trainplan transfer: a data-parallel job's step time on a GPU it was never
// profiled on, from its trace on another GPU (models/transfer_split.h), with
// the parts a hardware change scales differently; K steps measured on the
// target (--trials) correct them. `evaluate --transfer` scores the same model
// on traces of both GPUs (docs/TRANSFER.md).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "io/hardware_file.h"
#include "models/transfer_split.h"
#include "scoring/transfer_eval.h"
#include "structure/network_zoo.h"

namespace trainplan::cli {
namespace {

namespace fs = std::filesystem;

struct TransferArgs {
  std::string from, from_gpu, to_gpu, trials, network, placements = "1,2,4,8", batches, out;
  bool json = false;
  bool describe = false;
};

void run_transfer(const TransferArgs& a) {
  // trace_samples names a trace directory's missing placements.csv.
  models::TransferProblem problem;
  problem.source_hw = io::resolve_hardware(a.from_gpu, "--from-gpu");
  problem.target_hw = io::resolve_hardware(a.to_gpu, "--to-gpu");
  problem.source = scoring::trace_samples(a.from, true);
  if (!a.trials.empty()) problem.target_trials = scoring::trace_samples(a.trials, false);
  const std::string net = a.network.empty() ? fs::path(a.from).lexically_normal().filename().string() : a.network;
  problem.network = structure::find_network(net);
  if (!a.network.empty() && !problem.network)
    throw InputError("", 0, "--network", "'" + a.network + "' is not a network trainplan knows (trainplan network)");

  std::vector<models::StepSample> at;
  const auto batches = comma_list(a.batches, "--batches");
  for (const auto& p : comma_list(a.placements, "--placements"))
    for (const auto& b : batches) {
      double batch = 0;
      try {
        batch = std::stod(b);
      } catch (const std::exception&) {
        throw InputError("", 0, "--batches", "'" + b + "' is not a number");
      }
      if (!(batch >= 1)) throw InputError("", 0, "--batches", "each per-GPU batch must be >= 1, got " + b);
      try {
        at.push_back(models::step_sample(p, batch));
      } catch (const InputError& e) {
        throw InputError("", 0, "--placements", e.message());
      }
    }

  models::SplitTransferModel model;
  model.fit(problem);

  nlohmann::json rows = nlohmann::json::array();
  for (const auto& s : at) {
    const auto parts = model.target_parts(s);
    rows.push_back({{"placement", s.placement()}, {"gpus", s.gpus()}, {"local_bsz", s.batch},
                    {"step_time_s", parts.total}, {"host_s", parts.host},
                    {"gpu_s", parts.gpu_fixed + parts.compute + parts.memory}, {"exposed_comm_s", parts.exposed_comm}});
  }
  if (!a.out.empty()) {
    std::string csv = "placement,local_bsz,step_time,host_s,gpu_s,exposed_comm_s\n";
    for (const auto& r : rows)
      csv += fmt::format("{},{:g},{:.6g},{:.6g},{:.6g},{:.6g}\n", r["placement"].get<std::string>(),
                         r["local_bsz"].get<double>(), r["step_time_s"].get<double>(), r["host_s"].get<double>(),
                         r["gpu_s"].get<double>(), r["exposed_comm_s"].get<double>());
    std::ofstream f(a.out);
    if (!(f << csv)) throw InputError(a.out, 0, "", "cannot write this file");
  }
  if (a.json) {
    nlohmann::json j = {{"from", a.from},
                        {"from_gpu", problem.source_hw.name},
                        {"to_gpu", problem.target_hw.name},
                        {"network", problem.network ? problem.network->name : ""},
                        {"target_trials", problem.target_trials.size()},
                        {"ratios", scoring::ratios_json(model.ratios())},
                        {"rows", rows}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("{} measured on {} ({} steps), predicted on {}{}{}\n", a.from, problem.source_hw.name,
                           problem.source.size(), problem.target_hw.name,
                           problem.target_trials.empty()
                               ? ", no step measured there"
                               : fmt::format(", corrected by {} steps measured there", problem.target_trials.size()),
                           problem.network ? " (layer graph " + problem.network->name + ")" : " (no layer graph)");
  if (a.describe) std::cout << model.describe();
  std::cout << fmt::format("{:>10} {:>9} {:>10} {:>9} {:>9} {:>13}\n", "placement", "local_bsz", "step_s", "host_s",
                           "gpu_s", "exposed_comm");
  for (const auto& r : rows)
    std::cout << fmt::format("{:>10} {:>9g} {:>10.4g} {:>9.4g} {:>9.4g} {:>13.4g}\n", r["placement"].get<std::string>(),
                             r["local_bsz"].get<double>(), r["step_time_s"].get<double>(), r["host_s"].get<double>(),
                             r["gpu_s"].get<double>(), r["exposed_comm_s"].get<double>());
  std::cout << "step_s joins host and GPU as the fitted overlap says (their sum in series, the larger when they overlap "
               "fully); docs/TRANSFER.md gives the model and its measured errors\n";
  if (!a.out.empty()) std::cerr << fmt::format("wrote {} rows to {}\n", rows.size(), a.out);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<TransferArgs>();
  auto* cmd = root.add_subcommand(
      "transfer", "A data-parallel job's step time on a GPU it was never profiled on, from its trace on another GPU");
  cmd->footer(
      "Example:\n"
      "  trainplan transfer --from ../shared/data/pollux-t4/imagenet --from-gpu t4 --to-gpu a100-40gb \\\n"
      "      --placements 1,8,88 --batches 32,128\n"
      "Score the model first on traces of both GPUs: trainplan evaluate --transfer (docs/TRANSFER.md).");
  cmd->add_option("--from", a->from, "One network's trace directory measured on --from-gpu (Pollux format)")->required();
  cmd->add_option("--from-gpu", a->from_gpu, "The GPU the trace was measured on: a catalog name or a hardware file")
      ->required();
  cmd->add_option("--to-gpu", a->to_gpu, "The GPU to predict: a catalog name or a hardware file")->required();
  cmd->add_option("--placements", a->placements,
                  "Placements to predict, comma-separated: GPUs per node, one digit a node (1, 4, 44, 2222)")
      ->capture_default_str();
  cmd->add_option("--batches", a->batches, "Per-GPU batch sizes to predict, comma-separated")->required();
  cmd->add_option("--trials", a->trials,
                  "A trace directory of steps measured on the target GPU: they correct the prediction");
  cmd->add_option("--network", a->network,
                  "The network's layer graph (trainplan network); default: the --from directory's name when known");
  cmd->add_option("-o,--out", a->out, "Write the predictions as CSV (placement,local_bsz,step_time,...)");
  cmd->add_flag("--describe", a->describe, "Also print the source fit, the hardware ratios and the trials' corrections");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run_transfer(*a); });
}

CommandRegistrar reg(47, setup);

}  // namespace
}  // namespace trainplan::cli
