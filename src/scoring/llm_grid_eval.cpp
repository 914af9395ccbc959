#include "scoring/llm_grid_eval.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "core/error.h"
#include "uncertainty/llm_cross_validation.h"

namespace trainplan::scoring {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Calibrated {
  models::LlmTimeModel time;
  models::LlmMemoryModel memory;
};

// The models calibrated as `llm predict --calibrate` does, on rows[i] for
// every i with use(i).
template <class Use>
Calibrated calibrate(const std::vector<io::LlmConfigRow>& rows, const structure::HardwareProfile& hw,
                     const std::vector<models::LlmTimeParams>& candidates, const models::LlmMemoryParams& mb, Use use) {
  std::vector<models::LlmTimeSample> ts;
  std::vector<models::LlmMemorySample> ms;
  io::LlmConfigTable used;
  for (size_t j = 0; j < rows.size(); ++j) {
    if (!use(j)) continue;
    ts.push_back({rows[j].spec, rows[j].layout, *rows[j].iteration_time_s});
    if (rows[j].memory_gib) ms.push_back({rows[j].spec, rows[j].layout, *rows[j].memory_gib * kGiB});
    used.rows.push_back(rows[j]);
  }
  const size_t chosen = candidates.size() > 1 ? uncertainty::select_by_cross_validation(used, hw, candidates) : 0;
  Calibrated c{models::LlmTimeModel(hw, candidates[chosen]), models::LlmMemoryModel(mb)};
  c.time.fit(ts);
  if (!ms.empty()) c.memory.fit(ms);
  return c;
}

// |predicted / measured - 1| of each row's time for which keep(j), and of
// its peak memory where it has one.
struct RowErrors {
  std::vector<double> time, memory;
};
template <class Keep>
void add_errors(RowErrors& e, const std::vector<io::LlmConfigRow>& rows, const models::LlmTimeModel& time,
                const models::LlmMemoryModel& memory, Keep keep) {
  for (size_t j = 0; j < rows.size(); ++j) {
    if (!keep(j)) continue;
    const auto& x = rows[j];
    e.time.push_back(std::abs(time.predict(x.spec, x.layout).iteration / *x.iteration_time_s - 1));
    if (x.memory_gib) e.memory.push_back(std::abs(memory.predict(x.spec, x.layout).total() / (*x.memory_gib * kGiB) - 1));
  }
}

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }
double worst(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

}  // namespace

GridEvaluation evaluate_llm_grid(const std::vector<io::LlmConfigRow>& rows, const structure::HardwareProfile& hw,
                                 const std::vector<models::LlmTimeParams>& time_candidates,
                                 const models::LlmMemoryParams& memory_base, double coverage) {
  if (time_candidates.empty()) throw std::invalid_argument("evaluate_llm_grid: no time parameters");
  const models::LlmTimeParams& time_base = time_candidates.front();
  if (rows.size() < 2) throw InputError("", 0, "", "at least two measured configurations are needed to leave one out");
  for (const auto& r : rows)
    if (!r.iteration_time_s) throw InputError("", r.line, "iteration_time_s", "a measured grid needs every iteration time");
  GridEvaluation e;
  models::LlmTimeModel sheet(hw, time_base);
  models::LlmMemoryModel bare(memory_base);
  const double n = double(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& x = rows[i];
    GridPrediction p;
    p.row = &x;
    p.time_datasheet = sheet.predict(x.spec, x.layout).iteration;
    p.memory_datasheet = bare.predict(x.spec, x.layout).total();
    Calibrated c = calibrate(rows, hw, time_candidates, memory_base, [&](size_t j) { return j != i; });
    e.left_out_fitted_modes.insert(c.time.fitted_mode());
    p.time_calibrated = c.time.predict(x.spec, x.layout).iteration;
    const double te = std::abs(p.time_calibrated / *x.iteration_time_s - 1);
    e.time_datasheet_mape += std::abs(p.time_datasheet / *x.iteration_time_s - 1) / n;
    e.time_calibrated_mape += te / n;
    e.time_calibrated_worst = std::max(e.time_calibrated_worst, te);
    if (x.memory_gib) {
      const double measured = *x.memory_gib * kGiB;
      p.memory_calibrated = c.memory.predict(x.spec, x.layout).total();
      const double me = std::abs(p.memory_calibrated / measured - 1);
      e.memory_datasheet_mape += std::abs(p.memory_datasheet / measured - 1);
      e.memory_calibrated_mape += me;
      e.memory_calibrated_worst = std::max(e.memory_calibrated_worst, me);
      ++e.memory_rows;
    }
    if (coverage > 0) {
      io::LlmConfigTable others;
      for (size_t j = 0; j < rows.size(); ++j)
        if (j != i) others.rows.push_back(rows[j]);
      const size_t chosen =
          time_candidates.size() > 1 ? uncertainty::select_by_cross_validation(others, hw, time_candidates) : 0;
      const auto cv = uncertainty::cross_validate_llm(others, models::LlmTimeModel(hw, time_candidates[chosen]),
                                                       models::LlmMemoryModel(memory_base));
      if (auto iv = uncertainty::conformal_interval(p.time_calibrated, cv.time_errors_by_configuration, coverage)) {
        e.time_covered += *x.iteration_time_s >= iv->lo && *x.iteration_time_s <= iv->hi;
        e.time_mean_half_width += iv->half_width / n;
      }
      if (x.memory_gib)
        if (auto iv = uncertainty::conformal_interval(p.memory_calibrated, cv.memory_errors_by_configuration, coverage)) {
          e.memory_covered += *x.memory_gib * kGiB >= iv->lo && *x.memory_gib * kGiB <= iv->hi;
          e.memory_mean_half_width += iv->half_width;
        }
    }
    e.rows.push_back(p);
  }
  e.coverage = coverage;
  if (e.memory_rows > 0) e.memory_mean_half_width /= e.memory_rows;
  if (e.memory_rows > 0) {
    e.memory_datasheet_mape /= e.memory_rows;
    e.memory_calibrated_mape /= e.memory_rows;
  }
  Calibrated all = calibrate(rows, hw, time_candidates, memory_base, [](size_t) { return true; });
  e.fitted_time = all.time.params();
  e.fitted_memory = all.memory.params();
  e.fitted_factors = all.time.fitted_factors();
  e.fitted_mode = all.time.fitted_mode();
  for (const auto& x : rows)
    e.time_in_sample_mape += std::abs(all.time.predict(x.spec, x.layout).iteration / *x.iteration_time_s - 1) / n;
  return e;
}

GridDrawScore score_llm_grid_on_k(const std::vector<io::LlmConfigRow>& rows, const structure::HardwareProfile& hw,
                                  const std::vector<models::LlmTimeParams>& time_candidates, size_t k, int draws,
                                  uint64_t first_seed, const models::LlmMemoryParams& memory_base) {
  if (time_candidates.empty()) throw std::invalid_argument("score_llm_grid_on_k: no time parameters");
  GridDrawScore s;
  s.k = int(k);
  if (rows.size() <= k || k == 0) return s;
  RowErrors e;
  for (int d = 0; d < draws; ++d) {
    std::mt19937_64 rng(first_seed + uint64_t(d));
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<bool> chosen(rows.size(), false);
    for (size_t j = 0; j < k; ++j) chosen[order[j]] = true;
    Calibrated c = calibrate(rows, hw, time_candidates, memory_base, [&](size_t j) { return bool(chosen[j]); });
    add_errors(e, rows, c.time, c.memory, [&](size_t j) { return !chosen[j]; });
    ++s.draws;
  }
  s.predictions = int(e.time.size());
  s.time_mape = mean(e.time), s.time_worst = worst(e.time);
  std::nth_element(e.time.begin(), e.time.begin() + e.time.size() / 2, e.time.end());
  s.time_median = e.time[e.time.size() / 2];
  s.memory_predictions = int(e.memory.size());
  if (!e.memory.empty()) s.memory_mape = mean(e.memory), s.memory_worst = worst(e.memory);
  return s;
}

GridScore score_llm_grid_with(const std::vector<io::LlmConfigRow>& rows, const models::LlmTimeModel& time,
                              const models::LlmMemoryModel& memory) {
  if (rows.empty()) throw std::invalid_argument("score_llm_grid_with: no rows");
  RowErrors e;
  add_errors(e, rows, time, memory, [](size_t) { return true; });
  GridScore s;
  s.rows = int(rows.size()), s.memory_rows = int(e.memory.size());
  s.time_mape = mean(e.time), s.time_worst = worst(e.time);
  if (!e.memory.empty()) s.memory_mape = mean(e.memory), s.memory_worst = worst(e.memory);
  return s;
}

}  // namespace trainplan::scoring
