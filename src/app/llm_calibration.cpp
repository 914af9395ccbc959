#include "app/llm_calibration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "core/median.h"

namespace trainplan::app {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// How much slower than measured the fitted model may still predict, at the
// median, before the rows are called faster than the GPU's peak.
constexpr double kFasterThanThePeak = 1.1;
// In-sample mean |relative error| past which a calibration is reported as
// not fitting its rows: repeats of one layout on a busy machine stay far under it.
constexpr double kMisfitToWarn = 0.25;
}  // namespace

const std::vector<std::string>& llm_fit_modes() {
  static const std::vector<std::string> modes = {"efficiency", "overheads", "all", "auto"};
  return modes;
}

models::LlmTimeParams llm_time_params_for_fit(const std::string& fit) {
  models::LlmTimeParams p;
  p.fit_overheads = fit == "overheads";
  p.fit_all = fit == "all";
  return p;
}

std::vector<models::LlmTimeParams> llm_fit_candidates(const std::string& fit) {
  if (fit != "auto") return {llm_time_params_for_fit(fit)};
  return {llm_time_params_for_fit("efficiency"), llm_time_params_for_fit("overheads"), llm_time_params_for_fit("all")};
}

namespace {

// ("3, 7", 3.0) for each configuration measured more than once whose
// slowest iteration is over 1.5 times its fastest.
std::vector<std::pair<std::string, double>> diverging_repeats(const io::LlmConfigTable& m) {
  std::map<std::string, std::vector<std::pair<long, double>>> by_key;
  for (const auto& r : m.rows)
    if (r.iteration_time_s) by_key[io::configuration_key(r)].push_back({r.line, *r.iteration_time_s});
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [key, runs] : by_key) {
    if (runs.size() < 2) continue;
    double lo = runs.front().second, hi = lo;
    std::string lines;
    for (const auto& [line, t] : runs) {
      lo = std::min(lo, t), hi = std::max(hi, t);
      lines += (lines.empty() ? "" : ", ") + std::to_string(line);
    }
    if (hi > 1.5 * lo) out.push_back({lines, hi / lo});
  }
  return out;
}

}  // namespace

LlmCalibration calibrate_llm_models_on(const io::LlmConfigTable& measured, const std::string& source,
                                       const std::string& fit, const structure::HardwareProfile& measured_hw,
                                       models::LlmTimeModel& time, models::LlmMemoryModel& memory) {
  if (measured_hw.name == time.hardware().name) return calibrate_llm_models(measured, source, fit, time, memory);
  models::LlmTimeModel there(measured_hw, time.params());
  LlmCalibration c = calibrate_llm_models(measured, source, fit, there, memory);
  time = models::LlmTimeModel(time.hardware(), there.params());
  return c;
}

LlmCalibration calibrate_llm_models(const io::LlmConfigTable& measured, const std::string& source,
                                    const std::string& fit, models::LlmTimeModel& time,
                                    models::LlmMemoryModel& memory) {
  std::vector<models::LlmTimeSample> ts;
  std::vector<models::LlmMemorySample> ms;
  for (const auto& r : measured.rows) {
    // read_llm_configs(require_time) guarantees it; a table read without it is the caller's mistake.
    if (!r.iteration_time_s) throw InputError(source, r.line, "iteration_time_s", "a measured row needs its iteration time");
    ts.push_back({r.spec, r.layout, *r.iteration_time_s});
    if (r.memory_gib) ms.push_back({r.spec, r.layout, *r.memory_gib * kGiB});
  }
  LlmCalibration c;
  c.fitted = fit;
  std::string chosen_for_its_error;  // why auto chose an implausible fit, when it did
  if (fit == "auto") {
    const auto candidates = llm_fit_candidates(fit);
    const auto choice = uncertainty::choose_by_cross_validation(measured, time.hardware(), candidates);
    const size_t chosen = choice.chosen;
    time = models::LlmTimeModel(time.hardware(), candidates[chosen]);
    c.fitted = llm_fit_modes()[chosen];
    if (choice.implausible_by_error())
      chosen_for_its_error = fmt::format(
          "it predicts the measured rows it was not fitted to within {:.1f}% at the mean, against {:.1f}% for {}, so "
          "the rows' time grows with their work as a slower GPU's would. If they ran on another GPU than {}, say "
          "which with --calibrate-gpu",
          100 * choice.cv_error[chosen], 100 * choice.cv_error[choice.best_believed],
          llm_fit_modes()[choice.best_believed], time.hardware().name);
    for (size_t i = 0; i < candidates.size(); ++i)
      if (i != chosen && choice.implausible[i])
        c.passed_over.push_back(fmt::format("{}: {}", llm_fit_modes()[i], *choice.implausible[i]));
  }
  c.cv = uncertainty::cross_validate_llm(measured, time, memory);
  time.fit(ts);
  if (!ms.empty()) memory.fit(ms);
  if (time.fitted_mode() != c.fitted) {
    c.warnings.push_back(fmt::format(
        "{} needs {}, and these rows time as {} distinct: the efficiency fractions were fitted instead",
        c.fit == "auto" ? "--fit auto chose " + c.fitted + ", which" : "--fit " + c.fitted,
        c.fitted == "all" ? "8 rows of 8 distinct configurations" : "3 distinct configurations",
        time.fitted_configurations()));
    c.fitted = time.fitted_mode();
  }
  // The same configuration measured far apart: repeats that disagree so much
  // are a busy or changing machine, and the fit can only split the difference.
  for (const auto& [lines, ratio] : diverging_repeats(measured))
    c.warnings.push_back(fmt::format("lines {} are one configuration measured {:.2g}x apart: the fit splits the "
                                     "difference (check those runs: another job on the machine, a first iteration "
                                     "counted, another software version)",
                                     lines, ratio));
  // A measured row the memory model puts far past the GPU's memory ran in
  // another layout than its columns say (a GPU count, a tp or a pp misread).
  // By the model without the fitted overhead: an absurd measured memory
  // would otherwise make every layout look misread.
  const double gpu_bytes = time.hardware().gpu.capacity_bytes();
  // The first few are named, the rest counted.
  const models::LlmMemoryModel bare;
  constexpr size_t kNamed = 10;
  size_t misread = 0;
  for (const auto& r : measured.rows) {
    const double need = bare.predict(r.spec, r.layout).total();
    if (need > 1.5 * gpu_bytes && ++misread <= kNamed)
      c.warnings.push_back(fmt::format("{}:{}: this layout needs {:.0f} GiB per GPU by the memory model, more than "
                                       "{}'s {} could hold: check its gpus, tp, pp and dp",
                                       source, r.line, need / kGiB, time.hardware().name,
                                       time.hardware().gpu.memory_text()));
  }
  if (misread > kNamed)
    c.warnings.push_back(fmt::format("{}: {} more measured rows need more than 1.5 times {}'s memory by the memory "
                                     "model (of {} rows)",
                                     source, misread - kNamed, time.hardware().name, measured.rows.size()));
  c.source = source;
  c.fit = fit;
  c.rows = long(ts.size());
  c.memory_rows = long(ms.size());
  c.fitted_factors = time.fitted_factors();
  c.time = time.params();
  c.memory_overhead_bytes = memory.params().overhead_bytes;
  const auto implausible = uncertainty::implausible_fit(time, llm_time_params_for_fit(c.fitted));
  if (implausible && !chosen_for_its_error.empty())
    c.warnings.push_back(
        fmt::format("--fit auto chose {} although {}: {}", c.fitted, *implausible, chosen_for_its_error));
  else if (const auto& why = implausible)
    c.warnings.push_back(fmt::format(
        "{}: the measured iterations spend their time where the model's kernels and collectives do not (host "
        "overhead, small kernels), and a model of another size priced with this fit can be far off (a larger "
        "one far too slow). With three or more distinct configurations, --fit overheads carries that cost instead",
        *why));
  std::vector<double> ratios;
  size_t worst = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& x = ts[i];
    ratios.push_back(time.predict(x.spec, x.layout).iteration / x.seconds);
    c.time_mean_abs_relative_error += std::abs(ratios.back() - 1) / ts.size();
    if (std::abs(std::log(ratios.back())) > std::abs(std::log(ratios[worst]))) worst = i;
  }
  // A fit that cannot reproduce its own rows (its factors at their bounds)
  // predicts nothing worth having: the rows are of another GPU, unit or layout
  // than their columns say, or not of this model's kind of work at all.
  if (c.time_mean_abs_relative_error > kMisfitToWarn && !implausible)  // the floor's warning says it already
    c.warnings.push_back(fmt::format(
        "the calibrated model misses its own measured rows by {:.0f}% at the mean (worst {}:{}: {:.4g} s predicted "
        "against {:.4g} s measured): its predictions are not to be trusted. Check that iteration_time_s is seconds per "
        "iteration of the whole global batch on {}, and the layout columns",
        100 * c.time_mean_abs_relative_error, source, measured.rows[worst].line, ratios[worst] * ts[worst].seconds,
        ts[worst].seconds, time.hardware().name));
  // Measured iterations faster than the datasheet allows at its full peak,
  // bandwidth and links are not a slow GPU: they are the wrong GPU, another
  // unit than seconds per iteration of the global batch, or another layout.
  const double median_ratio = median(ratios);
  if (c.time.gemm.peak_fraction >= 1 - 1e-4 && median_ratio > kFasterThanThePeak)
    c.warnings.push_back(fmt::format(
        "the measured iterations are faster than {} can run them even at its full datasheet peak (at the median "
        "the fitted model still predicts {:.2g}x the measured time): check the GPU, that iteration_time_s is seconds "
        "per iteration of the whole global batch, and the layout columns",
        time.hardware().name, median_ratio));
  if (!ms.empty()) {
    c.memory_mean_abs_relative_error = 0;
    for (const auto& x : ms) c.memory_mean_abs_relative_error += std::abs(memory.predict(x.spec, x.layout).total() / x.bytes - 1) / ms.size();
    // A peak no GPU of this kind could have held was measured elsewhere, or in other units than
    // GiB. The datasheet's "80 GB" is the card's 80 GiB (allocators report up to about 79 GiB),
    // so the figure is read as GiB here, the larger reading.
    for (const auto& r : measured.rows)
      if (r.memory_gib &&
          *r.memory_gib > std::max(time.hardware().gpu.memory_gb, time.hardware().gpu.capacity_bytes() / kGiB))
        c.warnings.push_back(fmt::format("{}:{}: memory_gib {:g} is more than {}'s {}: the row ran on another "
                                         "GPU, or its figure is not GiB per GPU",
                                         source, r.line, *r.memory_gib, time.hardware().name,
                                         time.hardware().gpu.memory_text()));
    // As for the time: a memory model that misses its own rows by far predicts nothing worth having.
    if (c.memory_mean_abs_relative_error > kMisfitToWarn)
      c.warnings.push_back(fmt::format(
          "the calibrated memory model misses its own measured rows by {:.0f}% at the mean: check that memory_gib is "
          "the peak per GPU in GiB (of the most loaded stage), and the layout columns",
          100 * c.memory_mean_abs_relative_error));
  }
  return c;
}

nlohmann::json to_json(const LlmCalibration& c) {
  nlohmann::json j = {{"measured", c.source}, {"fit", c.fit}, {"fitted", c.fitted}, {"rows", c.rows}, {"memory_rows", c.memory_rows},
                      {"fitted_factors", c.fitted_factors}, {"peak_fraction", c.time.gemm.peak_fraction},
                      {"link_fraction", c.time.link_fraction}, {"memory_fraction", c.time.gemm.memory_fraction},
                      {"memory_overhead_gib", c.memory_overhead_bytes / kGiB},
                      {"mean_abs_relative_error", c.time_mean_abs_relative_error}};
  if (c.memory_rows > 0) j["memory_mean_abs_relative_error"] = c.memory_mean_abs_relative_error;
  j["warnings"] = c.warnings;
  j["passed_over"] = c.passed_over;
  auto or_null = [](double x) { return x < 0 ? nlohmann::json(nullptr) : nlohmann::json(x); };
  j["cv"] = {{"folds", c.cv.folds},
             {"time_mean_abs_relative_error", or_null(c.cv.time_mean_abs_relative_error)},
             {"memory_mean_abs_relative_error", or_null(c.cv.memory_mean_abs_relative_error)},
             {"time_errors", c.cv.time_errors},
             {"memory_errors", c.cv.memory_errors}};
  if (c.fitted != "efficiency") {
    j["iteration_overhead_s"] = c.time.iteration_overhead_s;
    j["layer_overhead_s"] = c.time.layer_overhead_s;
    j["link_latency_s"] = c.time.link_latency_s;
  }
  return j;
}

std::string describe(const LlmCalibration& c) {
  std::string s = fmt::format("calibrated on {} ({} row{}){}: {} factor(s): peak {:.3f}, link {:.3f}, memory {:.3f}",
                              c.source, c.rows, c.rows == 1 ? "" : "s",
                              c.fit == "auto" ? " by the fit that cross-validates best, " + c.fitted : "",
                              c.fitted_factors, c.time.gemm.peak_fraction, c.time.link_fraction,
                              c.time.gemm.memory_fraction);
  if (c.fitted != "efficiency")
    s += fmt::format("; overheads {:.4g} s per iteration, {:.4g} s per layer and micro-batch; link latency {:.4g} s",
                     c.time.iteration_overhead_s, c.time.layer_overhead_s, c.time.link_latency_s);
  if (c.memory_rows > 0)
    s += fmt::format("; memory overhead {:.2f} GiB ({} row{}, mean |error| {:.2f}%)", c.memory_overhead_bytes / kGiB,
                     c.memory_rows, c.memory_rows == 1 ? "" : "s", 100 * c.memory_mean_abs_relative_error);
  s += fmt::format("; mean |error| {:.2f}%", 100 * c.time_mean_abs_relative_error);
  for (const auto& p : c.passed_over) s += "; passed over " + p;
  if (c.cv.folds > 0) {
    s += fmt::format("; cross-validated ({} folds) {:.2f}%", c.cv.folds, 100 * c.cv.time_mean_abs_relative_error);
    if (c.cv.memory_mean_abs_relative_error >= 0)
      s += fmt::format(", memory {:.2f}%", 100 * c.cv.memory_mean_abs_relative_error);
  }
  return s;
}

}  // namespace trainplan::app
