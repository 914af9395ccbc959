#include "uncertainty/llm_cross_validation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace trainplan::uncertainty {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kMaxFolds = 20;

// Mean |predicted / measured - 1| (as every other error this project
// reports) from errors e = measured / predicted - 1.
double mean_abs(const std::vector<double>& errors) {
  double s = 0;
  for (double e : errors) s += std::abs(1 / (1 + e) - 1);
  return errors.empty() ? -1 : s / double(errors.size());
}

// Each row's fold: configurations numbered in order of first appearance,
// one fold each up to kMaxFolds, else round-robin. 0 folds with fewer than
// two configurations.
std::vector<int> assign_folds(const io::LlmConfigTable& measured, int& folds, std::vector<int>& config) {
  std::map<std::string, int> index;
  config.assign(measured.rows.size(), 0);
  for (size_t i = 0; i < measured.rows.size(); ++i)
    config[i] = index.try_emplace(io::configuration_key(measured.rows[i]), int(index.size())).first->second;
  const int n = int(index.size());
  folds = n < 2 ? 0 : std::min(n, kMaxFolds);
  std::vector<int> fold(config);
  for (int& c : fold) c = folds > 0 ? c % folds : 0;
  return fold;
}

// One error per configuration from per-row ones: the mean of its rows'
// measured values over the (shared) prediction, minus 1. Rows without an
// error are skipped.
std::vector<double> by_configuration(const std::vector<int>& config, const std::vector<std::optional<double>>& measured,
                                     const std::vector<std::optional<double>>& predicted) {
  std::map<int, std::pair<double, int>> sum;  // configuration -> (sum of measured, rows)
  std::map<int, double> pred;
  for (size_t i = 0; i < config.size(); ++i) {
    if (!measured[i] || !predicted[i]) continue;
    auto& s = sum[config[i]];
    s.first += *measured[i], ++s.second;
    pred[config[i]] = *predicted[i];
  }
  std::vector<double> out;
  for (const auto& [c, s] : sum) out.push_back(s.first / s.second / pred[c] - 1);
  return out;
}

}  // namespace

LlmCrossValidation cross_validate_llm(const io::LlmConfigTable& measured, const models::LlmTimeModel& time0,
                                      const models::LlmMemoryModel& memory0) {
  LlmCrossValidation cv;
  if (measured.rows.empty()) return cv;
  std::vector<int> config;
  const std::vector<int> fold = assign_folds(measured, cv.folds, config);
  if (cv.folds == 0) return cv;
  std::vector<double> time_err(measured.rows.size(), 0);
  std::vector<std::optional<double>> memory_err(measured.rows.size());
  std::vector<std::optional<double>> time_meas(measured.rows.size()), time_pred(measured.rows.size());
  std::vector<std::optional<double>> memory_meas(measured.rows.size()), memory_pred(measured.rows.size());
  for (int f = 0; f < cv.folds; ++f) {
    std::vector<models::LlmTimeSample> ts;
    std::vector<models::LlmMemorySample> ms;
    for (size_t i = 0; i < measured.rows.size(); ++i) {
      if (fold[i] == f) continue;
      const auto& r = measured.rows[i];
      ts.push_back({r.spec, r.layout, *r.iteration_time_s});
      if (r.memory_gib) ms.push_back({r.spec, r.layout, *r.memory_gib * kGiB});
    }
    models::LlmTimeModel time = time0;
    models::LlmMemoryModel memory = memory0;
    time.fit(ts);
    if (!ms.empty()) memory.fit(ms);
    for (size_t i = 0; i < measured.rows.size(); ++i) {
      if (fold[i] != f) continue;
      const auto& r = measured.rows[i];
      time_meas[i] = *r.iteration_time_s, time_pred[i] = time.predict(r.spec, r.layout).iteration;
      time_err[i] = *time_meas[i] / *time_pred[i] - 1;
      // A memory error only where the other folds measured memory too.
      if (r.memory_gib && !ms.empty()) {
        memory_meas[i] = *r.memory_gib * kGiB, memory_pred[i] = memory.predict(r.spec, r.layout).total();
        memory_err[i] = *memory_meas[i] / *memory_pred[i] - 1;
      }
    }
  }
  cv.time_errors = time_err;
  for (const auto& e : memory_err)
    if (e) cv.memory_errors.push_back(*e);
  cv.time_errors_by_configuration = by_configuration(config, time_meas, time_pred);
  cv.memory_errors_by_configuration = by_configuration(config, memory_meas, memory_pred);
  cv.time_mean_abs_relative_error = mean_abs(cv.time_errors);
  cv.memory_mean_abs_relative_error = mean_abs(cv.memory_errors);
  return cv;
}


std::optional<LlmInterval> conformal_interval(double predicted, const std::vector<double>& errors, double coverage) {
  if (errors.empty()) return std::nullopt;
  std::vector<double> a;
  for (double e : errors) a.push_back(std::abs(e));
  std::sort(a.begin(), a.end());
  const double n = double(a.size());
  const double rank = std::ceil((n + 1) * coverage);
  LlmInterval iv;
  iv.short_of_coverage = rank > n;
  iv.half_width = a[size_t(std::clamp(rank, 1.0, n)) - 1];
  iv.lo = std::max(0.0, predicted * (1 - iv.half_width));
  iv.hi = predicted * (1 + iv.half_width);
  return iv;
}

std::optional<std::string> implausible_fit(const models::LlmTimeModel& fitted, const models::LlmTimeParams& base) {
  // Only fits that moved the fractions. Beside fitted overheads (`all`),
  // which take the host's delays, only the floor and the peak rules apply:
  // a fraction at its floor, or products at under half the peak they run at
  // where measured, is then the products themselves priced slow (rows of
  // another GPU than the one named, most often).
  if (base.fit_overheads || fitted.fitted_factors() == 0 || fitted.fitted_mode() == "overheads") return std::nullopt;
  const bool beside_overheads = fitted.fitted_mode() == "all";
  const auto& p = fitted.params();
  std::vector<std::string> floored;
  const std::pair<const char*, double> fractions[] = {
      {"peak", p.gemm.peak_fraction}, {"link", p.link_fraction}, {"memory", p.gemm.memory_fraction}};
  for (const auto& [name, f] : fractions)
    if (f <= models::kFractionFloor + 1e-4) floored.push_back(name);
  if (!floored.empty())
    return fmt::format("the {} fraction{} went to the floor ({})", fmt::join(floored, ", "),
                       floored.size() == 1 ? "" : "s", models::kFractionFloor);
  // Products at the datasheet's peak itself, which no GPU sustains, beside a
  // link or memory at under half its datasheet share: the fit has traded
  // kernels faster than any measured for slow collectives or streaming, where
  // the rows' time is something else (host delays). Rows simply faster than
  // the GPU can run them put every fraction high instead, and are called out
  // by calibrate_llm_models.
  const double link_share = p.link_fraction / base.link_fraction;
  const double memory_share = p.gemm.memory_fraction / base.gemm.memory_fraction;
  const bool link_least = link_share <= memory_share;
  const double least_share = link_least ? link_share : memory_share;
  if (!beside_overheads && p.gemm.peak_fraction >= 1 - 1e-4 && least_share < kLeastPeakScale)
    return fmt::format(
        "the peak fraction went to its ceiling, 1 (the datasheet peak itself, against {:.3g} measured), and the {} "
        "fraction to {:.3g} of the datasheet's",
        base.gemm.peak_fraction, link_least ? "link" : "memory", least_share);
  // A link or memory at a tenth of its datasheet share or less, whatever the
  // peak: collectives of megabytes and element-wise passes over tensors of
  // megabytes run at a third or more of their link's and memory's rates, so
  // the fit is pricing something else (host delays) as slow transfers.
  if (!beside_overheads && least_share <= kLeastStreamScale)
    return fmt::format("the {} fraction went to {:.3g} of the datasheet's", link_least ? "link" : "memory", least_share);
  if (p.gemm.peak_fraction < kLeastPeakScale * base.gemm.peak_fraction)
    return fmt::format("the peak fraction went to {:.3g}, under half the datasheet's {:.3g}", p.gemm.peak_fraction,
                       base.gemm.peak_fraction);
  return std::nullopt;
}

bool FitChoice::implausible_by_error() const {
  return chosen < implausible.size() && implausible[chosen] &&
         std::any_of(implausible.begin(), implausible.end(), [](const auto& why) { return !why; });
}

FitChoice choose_by_cross_validation(const io::LlmConfigTable& measured, const structure::HardwareProfile& hw,
                                     const std::vector<models::LlmTimeParams>& candidates) {
  FitChoice c;
  c.implausible.assign(candidates.size(), std::nullopt);
  c.best_believed = candidates.size();
  std::vector<models::LlmTimeSample> all;
  for (const auto& r : measured.rows)
    if (r.iteration_time_s) all.push_back({r.spec, r.layout, *r.iteration_time_s});
  if (!all.empty() && candidates.size() > 1)
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].fit_overheads) continue;
      models::LlmTimeModel m(hw, candidates[i]);
      m.fit(all);
      c.implausible[i] = implausible_fit(m, candidates[i]);
    }
  const auto first_believed =
      std::find_if(c.implausible.begin(), c.implausible.end(), [](const auto& why) { return !why; });
  if (candidates.size() < 2) return c;
  std::vector<double> error(candidates.size(), INFINITY);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const auto cv = cross_validate_llm(measured, models::LlmTimeModel(hw, candidates[i]), models::LlmMemoryModel());
    if (cv.folds == 0) {  // nothing to cross-validate: the first believed
      c.chosen = first_believed == c.implausible.end() ? 0 : size_t(first_believed - c.implausible.begin());
      return c;
    }
    error[i] = cv.time_mean_abs_relative_error;
  }
  c.cv_error = error;
  auto best_of = [&](bool believed_only) {
    size_t best = candidates.size();
    for (size_t i = 0; i < candidates.size(); ++i)
      if ((!believed_only || !c.implausible[i]) && (best == candidates.size() || error[i] < error[best])) best = i;
    return best;
  };
  const size_t believed = best_of(true), any = best_of(false);
  c.best_believed = believed;
  // Models far apart in size: the training FLOPs per token of the largest
  // measured and the smallest.
  double least = INFINITY, most = 0;
  for (const auto& x : all) {
    const double per_token = models::llm_model_flops(x.spec, x.layout) / (double(x.layout.global_batch) * x.spec.seq);
    least = std::min(least, per_token), most = std::max(most, per_token);
  }
  const bool sizes_apart = most >= kImplausibleFitSizeSpan * least;
  if (believed == candidates.size())
    c.chosen = any;  // every fit implausible: the rows' own best
  else if (c.implausible[any] && sizes_apart && std::isfinite(error[believed]) && error[any] < error[believed] &&
           error[any] <= kImplausibleFitErrorShare * error[believed])
    c.chosen = any;  // the held-out rows show what the rules guess against
  else
    c.chosen = believed;
  return c;
}

size_t select_by_cross_validation(const io::LlmConfigTable& measured, const structure::HardwareProfile& hw,
                                  const std::vector<models::LlmTimeParams>& candidates) {
  return choose_by_cross_validation(measured, hw, candidates).chosen;
}

}  // namespace trainplan::uncertainty
