// trainplan transfer: a data-parallel job's step time on a GPU it was never
// profiled on, from its trace on another GPU (models/transfer_split.h), with
// the parts a hardware change scales differently; K steps measured on the
// target (--trials) correct them. From profiling samples (--samples) it
// writes the same samples as if measured on the target, for `plan`,
// `predict` and `evaluate` (app/transfer_samples.h). `evaluate --transfer`
// scores the model on traces of both GPUs (docs/TRANSFER.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/transfer_samples.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "core/whole_file.h"
#include "io/csv.h"
#include "io/gnuplot.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "io/output_path.h"
#include "io/sample_csv.h"
#include "models/transfer_split.h"
#include "profile/launcher.h"
#include "profile/samples_file.h"
#include "scoring/transfer_eval.h"
#include "scoring/transfer_plot.h"
#include "structure/network_zoo.h"

namespace trainplan::cli {
namespace {

namespace fs = std::filesystem;

struct TransferArgs {
  std::string from, samples, from_gpu, to_gpu, trials, network, placements = "1,2,4,8", batches, out, plot;
  long dataset_size = 0;
  bool placements_given = false;
  bool json = false;
  bool describe = false;
  bool tf32 = false;
  models::TrainingPrecision precision;
};

// The precision the matrix work was taken in, with why (which says the
// target's too when the user gave another there): one line.
std::string precision_line(const nlohmann::json& ratios) {
  return fmt::format("matrix work in {}: {}\n", ratios.value("precision", "?"), ratios.value("precision_reason", ""));
}

SampleSet read_sample_set(const std::string& path, long dataset_size) {
  SampleSet set = profile::read_samples(path);
  apply_dataset_size(set, dataset_size, path);
  return set;
}

// Steps measured on the target: a trace directory, or samples (a CSV or a store).
std::vector<models::StepSample> target_steps(const TransferArgs& a, const structure::HardwareProfile& target,
                                             std::optional<long> job_dataset_size = std::nullopt) {
  if (a.trials.empty()) return {};
  if (fs::is_directory(a.trials)) return scoring::trace_samples(a.trials, false);
  return app::trial_steps(read_sample_set(a.trials, a.dataset_size), job_dataset_size, target.name,
                          target.node.gpus_per_node);
}

// The network's layer graph: --network, else the trace directory's name.
const structure::LayerGraph* network_for(const TransferArgs& a) {
  if (!a.network.empty()) {
    const auto* g = structure::find_network(a.network);
    if (!g) throw InputError("", 0, "--network", "'" + a.network + "' is not a network trainplan knows (trainplan network)");
    return g;
  }
  if (a.from.empty()) return nullptr;
  // "imagenet/" names the folder imagenet, as evaluate --transfer reads it.
  const fs::path dir = fs::path(a.from).lexically_normal();
  return structure::find_network((dir.has_filename() ? dir : dir.parent_path()).filename().string());
}

// --plot's checks before any work: its path, not the --out file's (compared
// by where they lead, as neither need exist yet), and gnuplot there to draw.
void check_plot(const TransferArgs& a, const std::vector<std::pair<std::string, std::string>>& inputs) {
  if (a.plot.empty()) return;
  io::check_plot_path(a.plot, inputs);
  std::error_code ec;
  if (!a.out.empty() && a.out != "-" &&
      fs::weakly_canonical(fs::absolute(a.plot), ec) == fs::weakly_canonical(fs::absolute(a.out), ec))
    throw InputError("", 0, "--plot", fmt::format("'{}' is also the --out file: give the chart a path of its own", a.plot));
  io::require_gnuplot();
}

// `gpus` on nodes of `per_node`, one digit a node, the last node holding the rest: 7 on 6 is "61".
std::string even_placement(int gpus, int per_node) {
  std::string out;
  for (; gpus > 0; gpus -= per_node) out += std::to_string(std::min(gpus, per_node));
  return out;
}

// A placement's group on the chart, its GPUs per node in ascending order as
// traces write them ("31" and "13" are one placement), with its size.
std::string placement_group(const models::StepSample& s) {
  auto sorted = s;
  std::sort(sorted.gpus_per_node.begin(), sorted.gpus_per_node.end());
  return fmt::format("placement {} ({} GPU{}{})", sorted.placement(), s.gpus(), s.gpus() == 1 ? "" : "s",
                     s.nodes() > 1 ? fmt::format(", {} nodes", s.nodes()) : "");
}

// --plot: the chart drawn, and said where.
void draw(const std::string& path, const std::vector<io::PlotPanel>& panels) {
  if (path.empty()) return;
  if (panels.empty()) throw InputError("", 0, "--plot", "nothing to draw: no configuration was predicted");
  io::render_plot(path, panels, 760, 560);
  std::cerr << fmt::format("chart of the predicted times -> {}\n", path);
}

// --samples: the samples again, each epoch time predicted on the target.
void run_transfer_samples(const TransferArgs& a) {
  io::check_output_path(a.out, "--out", {{a.samples, "--samples"}, {a.trials, "--trials"},
                                         hardware_file_input(a.from_gpu, "--from-gpu"),
                                         hardware_file_input(a.to_gpu, "--to-gpu")});
  check_plot(a, {{a.samples, "--samples"}, {a.trials, "--trials"}, hardware_file_input(a.from_gpu, "--from-gpu"),
                 hardware_file_input(a.to_gpu, "--to-gpu")});
  auto from = io::resolve_hardware(a.from_gpu, "--from-gpu");
  auto to = io::resolve_hardware(a.to_gpu, "--to-gpu");
  from.gpu.fp32_matmul_tf32 = to.gpu.fp32_matmul_tf32 = a.tf32;
  const SampleSet set = read_sample_set(a.samples, a.dataset_size);
  const app::SamplesTransfer t =
      app::transfer_samples(set, from, to, target_steps(a, to, set.dataset_size), network_for(a), a.precision);
  for (const auto& n : t.notes) std::cerr << "note: " << a.samples << ": " << n << "\n";
  // Drawn before the samples are written: a chart that fails leaves no output behind.
  if (!a.plot.empty()) {
    std::vector<scoring::TransferPredictedTime> predicted;
    std::vector<scoring::TransferMeasuredTime> measured;
    for (const auto& c : t.configurations) {
      const std::string group = fmt::format("{} worker{}{}", c.workers, c.workers == 1 ? "" : "s",
                                            c.nodes > 1 ? fmt::format(" on {} nodes", c.nodes) : "");
      predicted.push_back({group, c.batch, c.predicted_s, c.low80_s.value_or(c.predicted_s),
                           c.high80_s.value_or(c.predicted_s), -1, -1, -1, c.workers, c.target_nodes});
      measured.push_back({group, c.batch, c.measured_s});
    }
    draw(a.plot, scoring::transfer_prediction_panels(
                     predicted, measured,
                     {fmt::format("{}: epoch time on {} (measured) and {} (predicted){}",
                                  t.network.empty() ? a.samples : t.network, t.source, t.target,
                                  t.target_trials == 0
                                      ? ""
                                      : fmt::format("\nthe prediction corrected by {} configurations measured on {}",
                                                    t.target_trials, t.target)),
                      t.source, t.target, "seconds per epoch"}));
  }
  if (!a.out.empty()) io::write_samples_csv(a.out, t.moved);
  if (a.json) {
    nlohmann::json j = app::to_json(t);
    j["samples"] = a.samples;
    if (!a.out.empty()) j["out"] = a.out;
    std::cout << io::json_text(j) << "\n";
    return;
  }
  std::cout << fmt::format("{}: {} samples {} {} ({} configurations), epoch times predicted on {}{}{}\n",
                           a.samples, set.samples.size(),
                           set.times_predicted_from.empty()
                               ? std::string("measured on")
                               : fmt::format("predicted from {} (not measured) for", set.times_predicted_from),
                           t.source, t.source_steps, t.target,
                           t.target_trials == 0
                               ? ", no step measured there"
                               : fmt::format(", corrected by {} configuration{} measured there", t.target_trials,
                                             t.target_trials == 1 ? "" : "s"),
                           t.network.empty() ? " (no layer graph)" : " (layer graph " + t.network + ")");
  std::cout << precision_line(t.ratios);
  if (a.describe) std::cout << t.description;
  std::cout << fmt::format("{:>8} {:>8} {:>6} {:>12} {:>12} {:>12} {:>19} {:>9}\n", "batch", "workers", "nodes",
                           "measured_s", "target_nodes", "predicted_s", "80% interval", "speed-up");
  for (const auto& c : t.configurations)
    std::cout << fmt::format("{:>8g} {:>8} {:>6} {:>12.4g} {:>12} {:>12.4g} {:>19} {:>8.2f}x\n", c.batch, c.workers,
                             c.nodes ? std::to_string(c.nodes) : std::string("?"), c.measured_s, c.target_nodes,
                             c.predicted_s,
                             c.low80_s ? fmt::format("{:.4g}-{:.4g}", *c.low80_s, *c.high80_s) : std::string("-"),
                             c.speed_up);
  std::cout << fmt::format("epoch times, seconds, on {}'s nodes of {} GPUs (packed, as a plan there runs them); the "
                           "metric is kept (it depends on the batch and epochs, not the GPU); speed-up: the model's "
                           "fit of the source over its prediction, the hardware's effect without the fit's misses. "
                           "Plan there with: "
                           "trainplan plan --samples {} --hardware {} ...\n",
                           to.name, to.node.gpus_per_node,
                           a.out.empty() || a.out == "-" ? "OUT.csv (-o)" : profile::shell_word(a.out),
                           profile::shell_word(a.to_gpu));
  if (const auto& sd = t.moved.times_predicted_log_sd)
    std::cout << fmt::format("80% interval: the factors' posterior at each configuration; one error, shared by every "
                             "configuration, of 80% within x/{:.2f} at the median (times_predicted_log_sd={:.4g}, "
                             "carried in the moved samples: plan --confidence adds it to its bounds)\n",
                             std::exp(scoring::kZ80 * *sd), *sd);
  if (!a.out.empty())
    std::cerr << fmt::format("wrote {} samples{} to {}\n", t.moved.samples.size(),
                             t.moved.curve.empty() ? "" : fmt::format(" and {} curve points", t.moved.curve.size()), a.out);
}

void run_transfer(const TransferArgs& a) {
  if (a.from.empty() == a.samples.empty())
    throw InputError("", 0, "--from", "give either --from (a trace directory) or --samples (profiling samples)");
  if (!a.samples.empty()) {
    if (!a.batches.empty() || a.placements_given)
      throw InputError("", 0, a.batches.empty() ? "--placements" : "--batches",
                       "with --samples the samples' own configurations are predicted");
    return run_transfer_samples(a);
  }
  if (a.batches.empty()) throw InputError("", 0, "--batches", "the per-GPU batches to predict are required with --from");
  const auto trace_file = [](const std::string& dir, const char* name) {
    return dir.empty() ? std::string() : (fs::path(dir) / name).string();
  };
  io::check_output_path(a.out, "--out",
                        {{a.from, "--from"},
                         {a.trials, "--trials"},
                         hardware_file_input(a.from_gpu, "--from-gpu"),
                         hardware_file_input(a.to_gpu, "--to-gpu")});
  check_plot(a, {{trace_file(a.from, "placements.csv"), "--from trace's placements.csv"},
                 {trace_file(a.from, "scalability.csv"), "--from trace's scalability.csv"},
                 {trace_file(a.trials, "placements.csv"), "--trials trace's placements.csv"},
                 hardware_file_input(a.from_gpu, "--from-gpu"), hardware_file_input(a.to_gpu, "--to-gpu")});
  // trace_samples names a trace directory's missing placements.csv.
  models::TransferProblem problem;
  problem.source_hw = io::resolve_hardware(a.from_gpu, "--from-gpu");
  problem.target_hw = io::resolve_hardware(a.to_gpu, "--to-gpu");
  problem.source_hw.gpu.fp32_matmul_tf32 = problem.target_hw.gpu.fp32_matmul_tf32 = a.tf32;
  problem.precision = a.precision;
  problem.source = scoring::trace_samples(a.from, true);
  if (auto w = models::node_size_warning(problem.source, problem.source_hw, a.from, "--from-gpu"); !w.empty())
    std::cerr << "warning: " << w << "\n";
  problem.target_trials = target_steps(a, problem.target_hw);
  if (auto w = models::node_size_warning(problem.target_trials, problem.target_hw, a.trials, "--to-gpu"); !w.empty())
    std::cerr << "warning: " << w << "\n";
  problem.network = network_for(a);

  std::vector<double> batches;
  for (const auto& b : comma_list(a.batches, "--batches")) {
    const auto parsed = io::parse_finite(b);
    if (!parsed) throw InputError("", 0, "--batches", "'" + b + "' is not a number");
    const double batch = *parsed;
    if (!(batch >= 1) || batch != std::floor(batch) || batch > 1e9)
      throw InputError("", 0, "--batches", "each per-GPU batch must be a whole number from 1 to 1e9, got " + b);
    batches.push_back(batch);
  }
  std::vector<models::StepSample> at;
  for (const auto& p : comma_list(a.placements, "--placements"))
    for (const double batch : batches) {
      models::StepSample sample;
      try {
        sample = models::step_sample(p, batch);
      } catch (const InputError& e) {
        throw InputError("", 0, "--placements", e.message());
      }
      const int per_node = problem.target_hw.node.gpus_per_node;
      const bool too_big = per_node > 0 && sample.busiest_node() > per_node;
      if (too_big && !a.placements_given) continue;  // the default list's placements the target's nodes cannot hold
      if (too_big) {
        const std::string& origin = problem.target_hw.origin;
        const bool from_file = !origin.empty() && origin != "built-in";
        throw InputError("", 0, "--placements",
                         fmt::format("'{}' puts {} GPUs on a node, and {}'s node holds {} (for larger nodes, {}; "
                                     "docs/HARDWARE.md)",
                                     p, sample.busiest_node(), problem.target_hw.name, per_node,
                                     from_file ? fmt::format("give {} a gpus_per_node of {} or more", origin,
                                                             sample.busiest_node())
                                               : fmt::format("give a hardware file with base {} and gpus_per_node",
                                                             problem.target_hw.name)));
      }
      at.push_back(sample);
    }
  // A placement is one digit a node: "16" is 1 GPU on one node and 6 on another, not 16 GPUs.
  // Said for a placement whose nodes differ, which is rarely what is meant.
  std::vector<std::string> uneven;
  for (const auto& s : at)
    if (s.nodes() > 1 && s.busiest_node() * s.nodes() != s.gpus() &&
        std::find(uneven.begin(), uneven.end(), s.placement()) == uneven.end()) {
      uneven.push_back(s.placement());
      // What the digits would be as a count of GPUs, on the target's nodes.
      const int per_node = problem.target_hw.node.gpus_per_node > 0 ? problem.target_hw.node.gpus_per_node : 8;
      const int as_count = s.placement().size() <= 4 ? std::stoi(s.placement()) : 0;
      std::string counts = std::to_string(s.gpus_per_node.front());
      for (size_t i = 1; i < s.gpus_per_node.size(); ++i)
        counts += (i + 1 == s.gpus_per_node.size() ? " and " : ", ") + std::to_string(s.gpus_per_node[i]);
      std::cerr << fmt::format("note: placement {} is {} nodes with {} GPUs ({} in all): one digit a node{}\n",
                               s.placement(), s.nodes(), counts, s.gpus(),
                               as_count > 0 ? fmt::format("; {} GPUs on nodes of {} are {}", as_count, per_node,
                                                          even_placement(as_count, per_node))
                                            : "");
    }

  models::SplitTransferModel model;
  // A trace of many steps takes a while to fit (each row counts; about a fifth of a millisecond
  // a row on a small machine): said, so that a silent minute is not taken for a hang.
  if (problem.source.size() >= 20000)
    std::cerr << fmt::format("fitting the split model to {} measured steps of {}...\n", problem.source.size(), a.from);
  model.fit(problem);
  // A batch outside those the source measured is the fit's extrapolation on both GPUs.
  double lo = INFINITY, hi = 0;
  for (const auto& s : problem.source) lo = std::min(lo, s.batch), hi = std::max(hi, s.batch);
  std::vector<double> outside;
  for (const double v : batches)
    if (!problem.source.empty() && (v < lo || v > hi) && std::find(outside.begin(), outside.end(), v) == outside.end())
      outside.push_back(v);
  if (!outside.empty())
    std::cerr << fmt::format("note: per-GPU batch {} outside the {:g}..{:g} the source measured: the fitted terms "
                             "extrapolate there, on both GPUs\n",
                             fmt::join(outside, ", "), lo, hi);

  // So is a placement over more nodes, or more GPUs on a node, than any the source measured.
  int most_nodes = 0, most_per_node = 0;
  for (const auto& s : problem.source)
    most_nodes = std::max(most_nodes, s.nodes()), most_per_node = std::max(most_per_node, s.busiest_node());
  std::vector<std::string> placements_outside;
  for (const auto& s : at)
    if (!problem.source.empty() && (s.nodes() > most_nodes || s.busiest_node() > most_per_node) &&
        std::find(placements_outside.begin(), placements_outside.end(), s.placement()) == placements_outside.end())
      placements_outside.push_back(s.placement());
  if (!placements_outside.empty())
    std::cerr << fmt::format("note: placement {} past what the source measured (at most {} node{}, {} GPU{} on a "
                             "node): the communication and contention terms extrapolate there, and the interval "
                             "does not widen for it\n",
                             fmt::join(placements_outside, ", "), most_nodes, most_nodes == 1 ? "" : "s",
                             most_per_node, most_per_node == 1 ? "" : "s");

  nlohmann::json rows = nlohmann::json::array();
  for (const auto& s : at) {
    const auto parts = model.target_parts(s);
    const double factor = std::exp(scoring::kZ80 * *model.log_sd(s));
    rows.push_back({{"placement", s.placement()}, {"gpus", s.gpus()}, {"local_bsz", s.batch},
                    {"step_time_s", parts.total}, {"step_time_low80_s", parts.total / factor},
                    {"step_time_high80_s", parts.total * factor}, {"host_s", parts.host},
                    {"gpu_s", parts.gpu_fixed + parts.compute + parts.memory}, {"exposed_comm_s", parts.exposed_comm}});
  }
  if (!a.plot.empty()) {
    std::vector<scoring::TransferPredictedTime> predicted;
    std::vector<scoring::TransferMeasuredTime> measured, trials;
    std::vector<std::string> placements;
    for (size_t i = 0; i < at.size(); ++i) {
      const auto& r = rows[i];
      const std::string group = placement_group(at[i]);
      predicted.push_back({group, at[i].batch, r["step_time_s"].get<double>(), r["step_time_low80_s"].get<double>(),
                           r["step_time_high80_s"].get<double>(), r["host_s"].get<double>(), r["gpu_s"].get<double>(),
                           r["exposed_comm_s"].get<double>(), at[i].gpus(), at[i].nodes()});
      placements.push_back(group);
    }
    for (const auto& m : problem.source)
      if (std::find(placements.begin(), placements.end(), placement_group(m)) != placements.end())
        measured.push_back({placement_group(m), m.batch, m.step_s});
    for (const auto& m : problem.target_trials)
      if (std::find(placements.begin(), placements.end(), placement_group(m)) != placements.end())
        trials.push_back({placement_group(m), m.batch, m.step_s});
    draw(a.plot, scoring::transfer_prediction_panels(
                     predicted, measured,
                     {fmt::format("{}: step time on {} (measured) and {} (predicted){}",
                                  problem.network ? problem.network->name : a.from, problem.source_hw.name,
                                  problem.target_hw.name,
                                  problem.target_trials.empty()
                                      ? ""
                                      : fmt::format("\nthe prediction corrected by {} steps measured on {}",
                                                    problem.target_trials.size(), problem.target_hw.name)),
                      problem.source_hw.name, problem.target_hw.name, "seconds per step"},
                     trials));
  }
  if (!a.out.empty()) {
    std::string csv = "placement,local_bsz,step_time,host_s,gpu_s,exposed_comm_s,step_time_low80,step_time_high80\n";
    for (const auto& r : rows)
      csv += fmt::format("{},{},{},{},{},{},{},{}\n", r["placement"].get<std::string>(),
                         r["local_bsz"].get<double>(), r["step_time_s"].get<double>(), r["host_s"].get<double>(),
                         r["gpu_s"].get<double>(), r["exposed_comm_s"].get<double>(),
                         r["step_time_low80_s"].get<double>(), r["step_time_high80_s"].get<double>());
    write_whole_file(a.out, csv);
  }
  if (a.json) {
    nlohmann::json j = {{"from", a.from},
                        {"from_gpu", problem.source_hw.name},
                        {"to_gpu", problem.target_hw.name},
                        {"network", problem.network ? problem.network->name : ""},
                        {"target_trials", problem.target_trials.size()},
                        {"source_batches", problem.source.empty() ? nlohmann::json() : nlohmann::json{lo, hi}},
                        {"batches_outside_source", outside},
                        {"placements_outside_source", placements_outside},
                        {"ratios", scoring::ratios_json(model.ratios())},
                        {"interval",
                         "step_time_low80_s..step_time_high80_s: the 80% interval from the factors' posterior and the "
                         "source fit's misfit (how often such intervals held on measured GPU pairs: docs/TRANSFER.md)"},
                        {"rows", rows}};
    std::cout << io::json_text(j) << "\n";
    return;
  }
  std::cout << fmt::format("{} measured on {} ({} steps), predicted on {}{}{}\n", a.from, problem.source_hw.name,
                           problem.source.size(), problem.target_hw.name,
                           problem.target_trials.empty()
                               ? ", no step measured there"
                               : fmt::format(", corrected by {} steps measured there", problem.target_trials.size()),
                           problem.network ? " (layer graph " + problem.network->name + ")" : " (no layer graph)");
  std::cout << precision_line(scoring::ratios_json(model.ratios()));
  if (a.describe) std::cout << model.describe();
  std::cout << fmt::format("{:>10} {:>5} {:>9} {:>10} {:>21} {:>9} {:>9} {:>13}\n", "placement", "gpus", "local_bsz",
                           "step_s", "80% interval", "host_s", "gpu_s", "exposed_comm");
  for (const auto& r : rows)
    std::cout << fmt::format("{:>10} {:>5} {:>9g} {:>10.4g} {:>21} {:>9.4g} {:>9.4g} {:>13.4g}\n",
                             r["placement"].get<std::string>(), r["gpus"].get<int>(), r["local_bsz"].get<double>(),
                             r["step_time_s"].get<double>(),
                             fmt::format("{:.4g}-{:.4g}", r["step_time_low80_s"].get<double>(),
                                         r["step_time_high80_s"].get<double>()),
                             r["host_s"].get<double>(), r["gpu_s"].get<double>(), r["exposed_comm_s"].get<double>());
  std::cout << "step_s joins host and GPU as the fitted overlap says (their sum in series, the larger when they overlap "
               "fully); the 80% interval is the fit's own uncertainty (the factors' posterior and the source fit's "
               "misfit), not a guarantee; docs/TRANSFER.md gives the model, its measured errors and how often such "
               "intervals held\n";
  const bool across_nodes = std::any_of(at.begin(), at.end(), [](const auto& s) { return s.nodes() > 1; });
  if (model.ratios().inter_link_assumed && across_nodes)
    std::cerr << fmt::format(
        "note: {}'s network is one the catalog only assumes ({}); across nodes the measured cluster's is kept, "
        "scaled by {:.3g} (no faster than the nodes' own links allow). Give a hardware file with inter_node_bw_GBps "
        "for your cluster's (docs/HARDWARE.md)\n",
        problem.target_hw.node.inter_node_assumed ? problem.target_hw.name : problem.source_hw.name,
        problem.target_hw.node.inter_node_assumed ? problem.target_hw.node.inter_link
                                                  : problem.source_hw.node.inter_link,
        model.ratios().inter_link);
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
      "  trainplan transfer --samples t4-samples.csv --from-gpu t4 --to-gpu a100-40gb -o a100-samples.csv\n"
      "  trainplan plan --samples a100-samples.csv --hardware a100-40gb --target 0.9 --deadline 2h\n"
      "  trainplan plan --samples t4-samples.csv --from-gpu t4 --gpu t4,a100-40gb,h100 --target 0.9 --deadline 2h\n"
      "      (each GPU's plan at once; --price t4=0.53,... names the cheapest)\n"
      "Score the model first on traces of both GPUs: trainplan evaluate --transfer (docs/TRANSFER.md).");
  cmd->add_option("--from", a->from, "One network's trace directory measured on --from-gpu (Pollux format)");
  cmd->add_option("--samples", a->samples,
                  "Instead of --from: profiling samples measured on --from-gpu (a CSV or a profile store); -o writes "
                  "them with each epoch time predicted on --to-gpu, to plan there");
  cmd->add_option("--dataset-size", a->dataset_size,
                  "With --samples: training examples per epoch (default: the samples' dataset_size)")
      ->check(positive_number());
  cmd->add_option("--from-gpu", a->from_gpu, "The GPU the trace was measured on: a catalog name or a hardware file")
      ->required();
  cmd->add_option("--to-gpu", a->to_gpu, "The GPU to predict: a catalog name or a hardware file")->required();
  auto* placements = cmd->add_option("--placements", a->placements,
                                     "Placements to predict, comma-separated: GPUs per node, one digit a node (1, 4, "
                                     "44, 2222); with --from. The default leaves out those the --to-gpu's nodes "
                                     "cannot hold")
                          ->capture_default_str();
  cmd->add_option("--batches", a->batches, "Per-GPU batch sizes to predict, comma-separated (required with --from)");
  cmd->add_option("--trials", a->trials,
                  "Steps measured on the target GPU, which correct the prediction: a trace directory, or samples (a "
                  "CSV or a profile store)");
  cmd->add_option("--network", a->network,
                  "The network's layer graph (trainplan network); default: the --from directory's name, or the "
                  "samples' model, when known");
  cmd->add_option("-o,--out", a->out,
                  "Write the predictions as CSV (placement,local_bsz,step_time,...); with --samples, the samples on "
                  "the target");
  add_tf32_option(cmd, a->tf32);
  add_transfer_precision_options(cmd, a->precision);
  cmd->add_option("--plot", a->plot,
                  "Draw the predicted times (.png or .svg): by batch per GPU, each placement's (or worker count's) "
                  "prediction on --to-gpu with its 80% interval beside what --from-gpu measured; with --from, also "
                  "what a step of the widest placement is made of (host, GPU, exposed communication)");
  cmd->add_flag("--describe", a->describe, "Also print the source fit, the hardware ratios and the trials' corrections");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a, placements] {
    a->placements_given = placements->count() > 0;
    run_transfer(*a);
  });
}

CommandRegistrar reg(47, setup);

}  // namespace
}  // namespace trainplan::cli
