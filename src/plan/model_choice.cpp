#include "plan/model_choice.h"

#include <fmt/format.h>

#include "core/error.h"
#include "eval/evaluate.h"
#include "models/registry.h"

namespace trainplan::plan {

ModelChoice choose_models(const std::string& time_name, const std::string& metric_name, const SampleSet& samples,
                          int folds, uint64_t seed) {
  ModelChoice c{time_name, metric_name, ""};
  bool want_metric = samples.has_metric();
  if (time_name != "auto" && (metric_name != "auto" || !want_metric)) {
    c.reason = fmt::format("time model '{}', metric model '{}' (as given)", time_name, want_metric ? metric_name : "none");
    return c;
  }
  eval::EvalOptions opts;
  opts.cv_folds = folds;
  opts.seed = seed;
  opts.cv_only = true;
  eval::EvalData data;
  data.name = "plan";
  data.samples = samples;
  double best_t = 0, best_m = 0;
  std::string bt, bm;
  for (const auto* e : models::ModelRegistry::instance().all()) {
    bool need_t = time_name == "auto" && e->make_time;
    bool need_m = want_metric && metric_name == "auto" && e->make_metric;
    if (!need_t && !need_m) continue;
    models::ModelEntry only = *e;  // score only the parts still to choose
    if (!need_t) only.make_time = nullptr;
    if (!need_m) only.make_metric = nullptr;
    auto s = eval::evaluate_model(only, data, opts);
    if (need_t && s.time.cv_mre && (bt.empty() || *s.time.cv_mre < best_t)) best_t = *s.time.cv_mre, bt = e->name;
    if (need_m && s.metric.cv_mre && (bm.empty() || *s.metric.cv_mre < best_m)) best_m = *s.metric.cv_mre, bm = e->name;
  }
  std::string why;
  if (time_name == "auto") {
    if (bt.empty()) throw InputError(samples.source, 0, "", "--model auto: no registered time model could be cross-validated on these samples");
    c.time_model = bt;
    why = fmt::format("time model '{}' (auto: lowest {}-fold CV MRE {:.2f}%)", bt, folds, 100 * best_t);
  } else {
    why = fmt::format("time model '{}' (as given)", time_name);
  }
  if (!want_metric) {
    why += ", no metric model (time-only samples)";
  } else if (metric_name == "auto") {
    if (bm.empty()) throw InputError(samples.source, 0, "", "--model auto: no registered metric model could be cross-validated on these samples");
    c.metric_model = bm;
    why += fmt::format(", metric model '{}' (auto: lowest {}-fold CV MRE {:.2f}%)", bm, folds, 100 * best_m);
  } else {
    why += fmt::format(", metric model '{}' (as given)", metric_name);
  }
  c.reason = why;
  return c;
}

}  // namespace trainplan::plan
