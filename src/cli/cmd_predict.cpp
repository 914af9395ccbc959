// trainplan predict: epoch time and metric at one configuration, each with a
// prediction interval from K-fold conformal prediction (models/conformal.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "io/sample_csv.h"
#include "models/conformal.h"
#include "models/registry.h"
#include "plan/model_choice.h"

namespace trainplan::cli {
namespace {

struct PredictArgs {
  std::string samples;
  double batch = 0;
  int workers = 0;
  double epochs = -1;  // < 0: not given
  int nodes = -1;      // < 0: derived from the samples
  std::string model = "auto";
  std::string time_model, metric_model;
  double confidence = 0.9;
  int folds = 5;
  uint64_t seed = 1;
  bool json = false;
  std::string comm_profile;
};

// Nodes for `workers` when not given: as many GPUs a node as the samples used
// at most; 0 (unknown) when the samples record no nodes.
int derive_nodes(const SampleSet& s, int workers) {
  int per_node = 0;
  for (const auto& x : s.samples)
    if (x.nodes > 0) per_node = std::max(per_node, (x.workers + x.nodes - 1) / x.nodes);
  return per_node > 0 ? (workers + per_node - 1) / per_node : 0;
}

std::string interval_text(const std::optional<models::Interval>& iv, int folds, const char* unit) {
  if (!iv) return "no interval (too few configurations to hold out)";
  return fmt::format("[{:.4g}, {:.4g}]{} at {:g}% ({}-fold conformal)", iv->lo, iv->hi, unit, 100 * iv->coverage,
                     folds);
}

nlohmann::json interval_json(const std::optional<models::Interval>& iv, int folds) {
  if (!iv) return nullptr;
  return {{"lo", iv->lo}, {"hi", iv->hi}, {"coverage", iv->coverage},
          {"method", fmt::format("{}-fold conformal, relative residuals", folds)}};
}

void run_predict(const PredictArgs& a) {
  apply_comm_profile(a.comm_profile);
  if (!(a.batch > 0)) throw InputError("--batch must be > 0 (per-worker batch size)");
  if (a.workers < 1) throw InputError("--workers must be >= 1");
  if (!(a.confidence > 0 && a.confidence < 1)) throw InputError("--confidence must be strictly between 0 and 1");
  if (a.folds < 2) throw InputError("--folds must be >= 2");
  SampleSet s = io::read_samples_csv(a.samples);
  const bool want_metric = a.epochs >= 0;
  if (want_metric && !s.has_metric())
    throw InputError(a.samples, 0, "metric", "--epochs asks for the metric, but the samples carry no metric");
  std::string tname = a.time_model.empty() ? a.model : a.time_model;
  std::string mname = a.metric_model.empty() ? a.model : a.metric_model;
  std::string reason;
  if (tname == "auto" || (want_metric && mname == "auto")) {
    std::cerr << "choosing models by 5-fold cross-validation...\n";
    auto c = plan::choose_models(tname, want_metric ? mname : "auto", s);
    tname = c.time_model;
    if (want_metric) mname = c.metric_model;
    reason = c.reason;
  }
  const int nodes = a.nodes >= 0 ? a.nodes : derive_nodes(s, a.workers);
  models::ConformalParams cp{a.folds, a.seed};

  if (!a.json) std::cerr << fmt::format("fitting {} and {} held-out copies...\n", tname, a.folds);
  auto tm = models::conformal_time_model(tname, cp);
  tm->fit(s);
  double t = tm->predict(a.batch, a.workers, nodes);
  auto tiv = tm->predict_interval(a.batch, a.workers, nodes, a.confidence);

  std::unique_ptr<models::MetricModel> mm;
  double m = 0;
  std::optional<models::Interval> miv;
  if (want_metric) {
    if (!a.json) std::cerr << fmt::format("fitting {} and {} held-out copies...\n", mname, a.folds);
    mm = models::conformal_metric_model(mname, cp);
    mm->fit(s);
    m = mm->predict(a.batch, a.workers, a.epochs);
    miv = mm->predict_interval(a.batch, a.workers, a.epochs, a.confidence);
  }

  if (a.json) {
    nlohmann::json j;
    j["config"] = {{"batch", a.batch}, {"workers", a.workers}, {"nodes", nodes}};
    if (want_metric) j["config"]["epochs"] = a.epochs;
    j["epoch_time_s"] = {{"model", tname}, {"value", t}, {"interval", interval_json(tiv, a.folds)}};
    if (want_metric) {
      j["metric"] = {{"model", mname}, {"value", m}, {"direction", to_string(s.direction)},
                     {"interval", interval_json(miv, a.folds)}};
      j["total_time_s"] = t * a.epochs;
    } else {
      j["metric"] = nullptr;
    }
    if (!reason.empty()) j["choice"] = reason;
    std::cout << j.dump(2) << "\n";
    return;
  }
  if (!reason.empty()) std::cout << reason << (reason.back() == '\n' ? "" : "\n");
  std::cout << fmt::format("configuration: batch {:g} per worker, {} workers, {} nodes (global batch {:g})\n", a.batch,
                           a.workers, nodes == 0 ? std::string("unknown") : std::to_string(nodes),
                           a.batch * a.workers);
  std::cout << fmt::format("epoch time ({}): {:.4g} s  {}\n", tname, t, interval_text(tiv, a.folds, " s"));
  if (want_metric) {
    std::cout << fmt::format("metric after {:g} epochs ({}, {} is better): {:.4g}  {}\n", a.epochs, mname,
                             s.direction == MetricDirection::kMax ? "higher" : "lower", m,
                             interval_text(miv, a.folds, ""));
    std::cout << fmt::format("time for {:g} epochs: {:.4g} s", a.epochs, t * a.epochs);
    if (tiv) std::cout << fmt::format("  [{:.4g}, {:.4g}] s", tiv->lo * a.epochs, tiv->hi * a.epochs);
    std::cout << "\n";
  } else {
    std::cout << "metric: give --epochs to predict it\n";
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<PredictArgs>();
  auto* cmd = root.add_subcommand(
      "predict",
      "Predict epoch time and (with --epochs) the metric at one configuration, each with a prediction interval.\n"
      "Intervals come from K-fold conformal prediction: each model is fitted on all samples for the point\n"
      "prediction, and on K training folds (configurations held out together) for out-of-fold relative residuals;\n"
      "the interval is prediction * (1 -/+ q), q the conformal quantile of those residuals at --confidence.");
  cmd->add_option("--samples", a->samples, "Profiling sample CSV (`trainplan sample` writes one)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--batch", a->batch, "Per-worker batch size")->required();
  cmd->add_option("--workers", a->workers, "Data-parallel workers (GPUs)")->required();
  cmd->add_option("--epochs", a->epochs, "Data epochs trained: predicts the metric after them (default: time only)");
  cmd->add_option("--nodes", a->nodes,
                  "Nodes the workers span (default: packed at the largest GPUs per node seen in the samples)");
  cmd->add_option("--model", a->model,
                  "Registered model for both parts, or 'auto': per part, the lowest 5-fold CV MRE on the samples")
      ->capture_default_str();
  cmd->add_option("--time-model", a->time_model, "Epoch-time model (overrides --model for time)");
  cmd->add_option("--metric-model", a->metric_model, "Metric model (overrides --model for the metric)");
  cmd->add_option("--confidence", a->confidence, "Coverage of the intervals, in (0, 1)")->capture_default_str();
  cmd->add_option("--folds", a->folds, "Folds for the conformal residuals")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed that deals configurations into folds")->capture_default_str();
  add_comm_profile_option(cmd, a->comm_profile);
  cmd->add_flag("--json", a->json, "Print the prediction as JSON");
  cmd->footer(
      "Example: trainplan predict --samples s.csv --batch 64 --workers 8 --epochs 30 \\\n"
      "           --time-model allreduce-physical --metric-model global-batch --confidence 0.9");
  cmd->callback([a] { run_predict(*a); });
}

CommandRegistrar reg(31, setup);

}  // namespace
}  // namespace trainplan::cli
