#include "scoring/llm_eval.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <tuple>

#include "uncertainty/llm_cross_validation.h"

namespace trainplan::scoring {

namespace {

void summarise(LlmErrorSummary& s) {
  for (const auto& r : s.rows) {
    double e = std::abs(r.relative_error());
    s.mean_abs += e / s.rows.size();
    s.max_abs = std::max(s.max_abs, e);
  }
}

std::string layout_label(const structure::ParallelLayout& l) {
  return structure::to_string(l.recompute) + (l.sequence_parallel ? "+sp" : "");
}

}  // namespace

LlmErrorSummary score_iterations(const std::vector<io::PublishedIteration>& runs, const models::LlmTimeModel& model) {
  LlmErrorSummary s;
  for (const auto& r : runs)
    s.rows.push_back({r.run.model, layout_label(r.run.layout), r.seconds,
                      model.predict(r.run.spec, r.run.layout).iteration});
  summarise(s);
  return s;
}

namespace {
// What "one model" is when it is left out: its architecture, not the name a
// table gives it (NeMo's LLAMA3_70B and LLAMA3-70B, the scale table's "GPT-3
// 175B" and "GPT 175B" are one shape under two names). The vocabulary and the
// sequence are left out of it, as tables round or pad them differently.
std::tuple<int, int, int, int, int> architecture(const structure::TransformerSpec& s) {
  return {s.layers, s.hidden, s.heads, s.kv(), s.ffn()};
}
}  // namespace

LlmErrorSummary score_iterations_leave_model_out(const std::vector<io::PublishedIteration>& runs,
                                                 const models::LlmTimeModel& model) {
  LlmErrorSummary s;
  for (const auto& held : runs) {
    std::vector<models::LlmTimeSample> others;
    for (const auto& r : runs)
      if (architecture(r.run.spec) != architecture(held.run.spec)) others.push_back({r.run.spec, r.run.layout, r.seconds});
    if (others.empty()) continue;
    models::LlmTimeModel m(model.hardware(), model.params());
    m.fit(others);
    s.rows.push_back({held.run.model, layout_label(held.run.layout), held.seconds,
                      m.predict(held.run.spec, held.run.layout).iteration});
  }
  summarise(s);
  return s;
}

LlmErrorSummary score_iterations_calibrated_on(const std::vector<io::PublishedIteration>& runs,
                                               const models::LlmTimeModel& model, size_t k, int seeds,
                                               uint64_t first_seed, double coverage,
                                               const std::vector<models::LlmTimeParams>& candidates) {
  LlmErrorSummary s;
  s.interval_coverage = coverage;
  if (runs.size() <= k) return s;
  for (int i = 0; i < seeds; ++i) {
    std::mt19937_64 rng(first_seed + uint64_t(i));
    std::vector<size_t> order(runs.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<models::LlmTimeSample> fit_on;
    for (size_t j = 0; j < k; ++j) fit_on.push_back({runs[order[j]].run.spec, runs[order[j]].run.layout, runs[order[j]].seconds});
    io::LlmConfigTable measured;
    for (const auto& x : fit_on) measured.rows.push_back(io::measured_config_row(0, x.spec, x.layout, x.seconds));
    const size_t chosen =
        candidates.size() > 1 ? uncertainty::select_by_cross_validation(measured, model.hardware(), candidates) : 0;
    const models::LlmTimeParams start = candidates.empty() ? model.params() : candidates[chosen];
    models::LlmTimeModel m(model.hardware(), start);
    m.fit(fit_on);
    uncertainty::LlmCrossValidation cv;
    if (coverage > 0)
      cv = uncertainty::cross_validate_llm(measured, models::LlmTimeModel(model.hardware(), start), models::LlmMemoryModel());
    for (size_t j = k; j < order.size(); ++j) {
      const auto& held = runs[order[j]];
      const double predicted = m.predict(held.run.spec, held.run.layout).iteration;
      s.rows.push_back({held.run.model, layout_label(held.run.layout), held.seconds, predicted});
      if (auto iv = uncertainty::conformal_interval(predicted, cv.time_errors_by_configuration, coverage); iv && coverage > 0) {
        s.interval_covered += held.seconds >= iv->lo && held.seconds <= iv->hi;
        s.interval_mean_half_width += iv->half_width;
        ++s.interval_rows;
      }
    }
  }
  if (s.interval_rows > 0) s.interval_mean_half_width /= double(s.interval_rows);
  summarise(s);
  return s;
}

LlmErrorSummary score_iterations_calibrated_elsewhere(const std::vector<io::PublishedIteration>& target_runs,
                                                      const models::LlmTimeModel& target_model,
                                                      const std::vector<io::PublishedIteration>& source_runs,
                                                      const models::LlmTimeModel& source_model,
                                                      const std::vector<models::LlmTimeParams>& candidates) {
  LlmErrorSummary s;
  if (source_runs.empty()) return s;
  std::vector<models::LlmTimeSample> fit_on;
  io::LlmConfigTable measured;
  for (const auto& r : source_runs) {
    fit_on.push_back({r.run.spec, r.run.layout, r.seconds});
    measured.rows.push_back(io::measured_config_row(0, r.run.spec, r.run.layout, r.seconds));
  }
  const size_t chosen =
      candidates.size() > 1 ? uncertainty::select_by_cross_validation(measured, source_model.hardware(), candidates) : 0;
  models::LlmTimeModel fitted(source_model.hardware(), candidates.empty() ? source_model.params() : candidates[chosen]);
  fitted.fit(fit_on);
  const models::LlmTimeModel moved(target_model.hardware(), fitted.params());
  for (const auto& r : target_runs)
    s.rows.push_back({r.run.model, layout_label(r.run.layout), r.seconds, moved.predict(r.run.spec, r.run.layout).iteration});
  summarise(s);
  return s;
}

LlmErrorSummary score_memory(const std::vector<io::PublishedMemory>& rows, const models::LlmMemoryModel& model) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  LlmErrorSummary s;
  for (const auto& r : rows) {
    const auto& spec = r.run.spec;
    const auto& l = r.run.layout;
    double predicted = 0;
    if (r.metric == "params_grads_optimizer_GiB_per_gpu") {
      predicted = model.predict_stage(spec, l, 0).layer_states / kGiB;
    } else if (r.metric == "activations_GiB_per_gpu") {
      predicted = model.predict_stage(spec, l, 0).activations / kGiB;
    } else if (r.metric == "activation_memory_pct_of_no_recompute_no_seqpar") {
      auto base = l;
      base.recompute = structure::Recompute::kNone, base.sequence_parallel = false;
      predicted = 100 * models::layer_activation_bytes(spec, l) / models::layer_activation_bytes(spec, base);
    } else {
      continue;
    }
    s.rows.push_back({r.run.model, r.metric + " " + r.mode, r.value, predicted});
  }
  summarise(s);
  return s;
}

}  // namespace trainplan::scoring
