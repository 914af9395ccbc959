#include "scoring/model_choice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "core/cancel.h"
#include "core/error.h"
#include "scoring/evaluate.h"
#include "scoring/mre.h"
#include "models/registry.h"

namespace trainplan::scoring {

ModelChoice choose_models(const std::string& time_name, const std::string& metric_name, const SampleSet& samples,
                          int folds, uint64_t seed, const models::ModelParams& params) {
  ModelChoice c;
  c.time_model = time_name;
  c.metric_model = metric_name;
  bool want_metric = samples.has_metric();
  if (time_name != "auto" && (metric_name != "auto" || !want_metric)) {
    c.reason = fmt::format("time model '{}', metric model '{}' (as given)", time_name, want_metric ? metric_name : "none");
    return c;
  }
  scoring::EvalOptions opts;
  opts.cv_folds = folds;
  opts.seed = seed;
  double best_t = 0, best_m = 0;
  std::string bt, bm;
  // Every candidate of a part is scored on the same folds, made once.
  std::vector<std::string> time_names, metric_names;
  for (const auto* e : models::ModelRegistry::instance().all()) {
    check_cancelled();
    if (time_name == "auto" && e->make_time && e->time_auto == models::AutoChoice::kIncluded)
      time_names.push_back(e->name);
    if (want_metric && metric_name == "auto" && e->make_metric && e->metric_auto == models::AutoChoice::kIncluded)
      metric_names.push_back(e->name);
  }
  if (!metric_names.empty()) require_scoreable_metric(samples);
  const auto pick = [&](const std::vector<std::string>& names, ModelPart part, double& best, std::string& chosen) {
    if (names.empty()) return;
    const std::vector<std::optional<double>> cv = parts_cv_mre(names, part, samples, opts, params);
    for (size_t i = 0; i < names.size(); ++i)
      if (cv[i] && (chosen.empty() || *cv[i] < best)) best = *cv[i], chosen = names[i];
  };
  pick(time_names, ModelPart::kTime, best_t, bt);
  pick(metric_names, ModelPart::kMetric, best_m, bm);
  const auto folds_of = [&](ModelPart part) { return cv_folds_for(part_configs(part, samples), folds); };
  std::string why;
  // Too few configurations to hold any out: say how many there are and what to do.
  const auto none_scored = [&](ModelPart part, const char* what, const char* option, const char* example) {
    const size_t n = part_configs(part, samples);
    // What the samples hold, so that a grid thinned by failed trials is seen as such.
    std::set<double> batches, epochs;
    std::set<int> workers;
    for (const auto& x : samples.samples) batches.insert(x.batch), workers.insert(x.workers), epochs.insert(x.epochs);
    return InputError(samples.source, 0, "--model",
                      fmt::format("auto (the default): no registered {} model could be cross-validated on these "
                                  "samples ({} distinct configuration(s) with a {}: batches {}, workers {}, epochs {}; "
                                  "too few to hold some out and predict them); profile a larger grid (3 batches x 2 "
                                  "worker counts x 2 epoch counts is enough; trials that failed are left out of it: "
                                  "`trainplan samples list --store S --failed` says why), or name the model with {} "
                                  "(e.g. {})",
                                  what, n, what, fmt::join(batches, ","), fmt::join(workers, ","),
                                  fmt::join(epochs, ","), option, example));
  };
  if (time_name == "auto") {
    if (bt.empty()) throw none_scored(ModelPart::kTime, "time", "--time-model", "per-batch-extrapolation");
    c.time_model = bt;
    c.time_cv = best_t;
    c.time_folds = folds_of(ModelPart::kTime);
    why = fmt::format("time model '{}' (auto: lowest {} CV MRE {:.2f}%)", bt, cv_name(c.time_folds, folds),
                      100 * best_t);
  } else {
    why = fmt::format("time model '{}' (as given)", time_name);
  }
  if (!want_metric) {
    why += ", no metric model (time-only samples)";
  } else if (metric_name == "auto") {
    if (bm.empty()) throw none_scored(ModelPart::kMetric, "metric", "--metric-model", "global-batch-anchored");
    c.metric_model = bm;
    c.metric_cv = best_m;
    c.metric_folds = folds_of(ModelPart::kMetric);
    why += fmt::format(", metric model '{}' (auto: lowest {} CV MRE {:.2f}%)", bm, cv_name(c.metric_folds, folds),
                       100 * best_m);
  } else {
    why += fmt::format(", metric model '{}' (as given)", metric_name);
  }
  c.reason = why;
  return c;
}

}  // namespace trainplan::scoring
