#include "app/transfer_samples.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/nodes.h"
#include "core/median.h"
#include "models/transfer_split.h"
#include "scoring/transfer_eval.h"
#include "structure/network_zoo.h"

namespace trainplan::app {

std::vector<int> sample_placement(int workers, int nodes, int gpus_per_node) {
  if (workers < 1) throw InputError("", 0, "workers", fmt::format("must be >= 1, got {}", workers));
  if (nodes == 0) nodes = nodes_for(workers, std::max(1, gpus_per_node));
  if (nodes < 1 || workers < nodes)
    throw InputError("", 0, "nodes", fmt::format("{} workers cannot span {} nodes", workers, nodes));
  std::vector<int> p(nodes, workers / nodes);
  for (int i = 0; i < workers % nodes; ++i) ++p[nodes - 1 - i];
  return p;
}

std::vector<models::StepSample> trial_steps(SampleSet trials, std::optional<long> job_dataset_size,
                                            const std::string& target, int gpus_per_node) {
  if (!trials.times_predicted_from.empty())
    throw InputError(trials.source, 0, "times_predicted_from",
                     fmt::format("these trials' epoch times were predicted from {} by `trainplan transfer`, not "
                                 "measured on {}: give samples measured there",
                                 trials.times_predicted_from, target));
  if (!trials.dataset_size) trials.dataset_size = job_dataset_size;
  return sample_steps(trials, gpus_per_node);
}

namespace {

// How far (either way) a trial may sit from the fitted model before it is said.
constexpr double kTrialMisfit = 2.0;

// An epoch of fewer examples than one global batch is one short step, not a
// fraction of one: such a sample says the dataset size is not the samples'.
double steps_per_epoch(const SampleSet& set, const Sample& s) {
  const double global = s.batch * s.workers;
  if (global > double(*set.dataset_size))
    throw InputError(set.source, 0, "dataset_size",
                     fmt::format("batch {:g} on {} worker{} is {:g} examples a step, more than the dataset size {}: "
                                 "an epoch would be less than one step (is the dataset size right?)",
                                 s.batch, s.workers, s.workers == 1 ? "" : "s", global, *set.dataset_size));
  return double(*set.dataset_size) / global;
}

void check_dataset_size(const SampleSet& set) {
  if (!set.dataset_size || *set.dataset_size <= 0)
    throw InputError(set.source, 0, "dataset_size",
                     "moving samples to another GPU needs the dataset size, to turn epoch times into step times "
                     "(write it on the samples' first line, '# trainplan: dataset_size=N', or give it with "
                     "--dataset-size N)");
}

}  // namespace

std::vector<models::StepSample> sample_steps(const SampleSet& set, int gpus_per_node) {
  check_dataset_size(set);
  if (set.samples.empty()) throw InputError(set.source, 0, "", "no trials to take step times from");
  std::map<std::tuple<double, int, int>, std::vector<double>> steps;  // (batch, workers, nodes) -> s per step
  for (const auto& s : set.samples) steps[{s.batch, s.workers, s.nodes}].push_back(s.epoch_time_s / steps_per_epoch(set, s));
  std::vector<models::StepSample> out;
  for (auto& [key, times] : steps) {
    auto [batch, workers, nodes] = key;
    models::StepSample x;
    try {
      x.gpus_per_node = sample_placement(workers, nodes, gpus_per_node);
    } catch (const InputError& e) {
      throw InputError(set.source, 0, e.field(), e.message());
    }
    x.batch = batch;
    x.step_s = median(times);
    out.push_back(std::move(x));
  }
  return out;
}

SampleSet transferred_samples(const SampleSet& set, const models::TransferModel& model, const std::string& source,
                              const std::string& target, int gpus_per_node) {
  check_dataset_size(set);
  SampleSet out = set;
  // Moved twice, they are still the first hardware's measurements.
  if (out.times_predicted_from.empty()) out.times_predicted_from = source;
  std::vector<double> sds;  // of the trials, not the curve points (which repeat their configurations)
  auto move = [&](Sample& s, bool trial) {
    // Run on the target's nodes, packed as a plan there packs them.
    models::StepSample at;
    at.gpus_per_node = sample_placement(s.workers, 0, gpus_per_node);
    at.batch = s.batch;
    s.nodes = at.nodes();
    s.epoch_time_s = model.predict(at) * steps_per_epoch(set, s);
    s.hardware = target;
    s.time_spread.reset();
    if (auto sd = trial ? model.log_sd(at) : std::nullopt) sds.push_back(*sd);
  };
  for (auto& s : out.samples) move(s, true);
  for (auto& s : out.curve) move(s, false);
  if (!sds.empty()) {
    const double sd = median(sds);
    const double before = set.times_predicted_log_sd.value_or(0);
    out.times_predicted_log_sd = std::sqrt(before * before + sd * sd);
  }
  return out;
}

SamplesTransfer transfer_samples(const SampleSet& set, const structure::HardwareProfile& from,
                                 const structure::HardwareProfile& to, std::vector<models::StepSample> trials,
                                 const structure::LayerGraph* network, models::TrainingPrecision precision) {
  SamplesTransfer t;
  t.source = from.name, t.target = to.name;
  // A catalog GPU in the hardware column that is not `from` is likely a slip; the caller's word holds.
  // So is one that names no GPU of the catalog at all (a CPU's samples).
  std::set<std::string> labels, labelled, unknown;
  for (const auto& s : set.samples)
    if (!s.hardware.empty()) labels.insert(s.hardware);
  for (const auto& label : labels) {
    const auto hw = structure::find_builtin_hardware_in(label);
    if (hw && hw->name != from.name) labelled.insert(hw->name);
    if (!hw && label != from.name) unknown.insert(label.substr(0, 60));
  }
  if (!labelled.empty())
    t.notes.push_back(fmt::format("the samples' hardware column names {}, not {}: predicting from {}",
                                  fmt::join(labelled, ", "), from.name, from.name));
  if (!unknown.empty() && labelled.empty())
    t.notes.push_back(fmt::format("the samples' hardware column says '{}', no GPU of the catalog: they are moved "
                                  "as if measured on {}",
                                  fmt::join(unknown, "', '"), from.name));
  if (!network) {
    const auto names = set.model_names();
    if (names.size() == 1) network = structure::find_network(*names.begin());
  }
  models::TransferProblem problem;
  problem.source_hw = from, problem.target_hw = to;
  problem.source = sample_steps(set, from.node.gpus_per_node);
  problem.target_trials = std::move(trials);
  problem.network = network;
  problem.precision = precision;
  models::SplitTransferModel model;
  model.fit(problem);
  for (const auto& n : model.notes()) t.notes.push_back(n);
  // A trial the fitted factors cannot come near: a bad measurement, or a
  // different machine than --to-gpu names. Said, not dropped: it is the user's.
  for (const auto& trial : problem.target_trials) {
    const double fitted = model.predict(trial), off = trial.step_s / fitted;
    if (off > kTrialMisfit || off < 1 / kTrialMisfit)
      t.notes.push_back(fmt::format("the trial at batch {:g} on {} GPU{} took {:.4g} s a step, {:.3g}x what the fitted "
                                    "model gives there ({:.4g} s): the model cannot explain it (a bad measurement, or "
                                    "not a {}?)",
                                    trial.batch, trial.gpus(), trial.gpus() == 1 ? "" : "s", trial.step_s, off, fitted,
                                    to.name));
  }
  if (from.name == to.name)
    t.notes.push_back(fmt::format("--from-gpu and --to-gpu are both {}: only the placement on its nodes changes, and "
                                  "the interval is another machine's host's",
                                  to.name));
  t.moved = transferred_samples(set, model, from.name, to.name, to.node.gpus_per_node);
  t.network = network ? network->name : "";
  t.source_steps = problem.source.size();
  t.target_trials = problem.target_trials.size();
  t.ratios = scoring::ratios_json(model.ratios());
  t.description = model.describe();
  // Each configuration once, with the median of its trials: what the fit took.
  std::map<std::tuple<double, int, int>, std::vector<double>> measured;
  for (const auto& s : set.samples) measured[{s.batch, s.workers, s.nodes}].push_back(s.epoch_time_s);
  std::set<std::tuple<double, int, int>> seen;
  for (size_t i = 0; i < set.samples.size(); ++i) {
    const auto& s = set.samples[i];
    if (!seen.insert({s.batch, s.workers, s.nodes}).second) continue;
    SamplesTransfer::Configuration c;
    c.batch = s.batch, c.workers = s.workers, c.nodes = s.nodes, c.target_nodes = t.moved.samples[i].nodes;
    c.measured_s = median(measured.at({s.batch, s.workers, s.nodes})), c.predicted_s = t.moved.samples[i].epoch_time_s;
    models::StepSample at;
    at.gpus_per_node = sample_placement(s.workers, 0, to.node.gpus_per_node);
    at.batch = s.batch;
    if (const auto sd = model.log_sd(at)) {
      const double factor = std::exp(scoring::kZ80 * *sd);
      c.low80_s = c.predicted_s / factor, c.high80_s = c.predicted_s * factor;
    }
    // The speed-up the model sees: its own fit of the source at the measured
    // placement against its prediction on the target, without the fit's
    // misses at this configuration (which measured / predicted would count);
    // the source's departure at this batch, which the prediction carries, on
    // both sides.
    models::StepSample there;
    there.gpus_per_node = sample_placement(s.workers, s.nodes, from.node.gpus_per_node);
    there.batch = s.batch;
    c.speed_up = model.source_with_departure(there) * steps_per_epoch(set, s) / c.predicted_s;
    t.configurations.push_back(c);
  }
  std::sort(t.configurations.begin(), t.configurations.end(), [](const auto& a, const auto& b) {
    return std::tie(a.batch, a.workers, a.nodes) < std::tie(b.batch, b.workers, b.nodes);
  });
  return t;
}

nlohmann::json to_json(const SamplesTransfer& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : t.configurations)
    rows.push_back({{"batch", c.batch},
                    {"workers", c.workers},
                    {"nodes", c.nodes},
                    {"target_nodes", c.target_nodes},
                    {"source_epoch_time_s", c.measured_s},
                    {"target_epoch_time_s", c.predicted_s},
                    {"target_epoch_time_low80_s", c.low80_s ? nlohmann::json(*c.low80_s) : nlohmann::json(nullptr)},
                    {"target_epoch_time_high80_s", c.high80_s ? nlohmann::json(*c.high80_s) : nlohmann::json(nullptr)},
                    {"speed_up", c.speed_up}});
  const auto& sd = t.moved.times_predicted_log_sd;
  return {{"from_gpu", t.source},
          {"to_gpu", t.target},
          {"network", t.network},
          {"target_trials", t.target_trials},
          {"ratios", t.ratios},
          {"times_predicted_log_sd", sd ? nlohmann::json(*sd) : nlohmann::json(nullptr)},
          {"configurations", rows},
          {"notes", t.notes}};
}

}  // namespace trainplan::app
