// trainplan llm evaluate: the transformer time and memory models scored on
// published runs (Korthikanti et al. 2022, Megatron-LM's CI, runs at scale,
// NeuSight's, NVIDIA's NeMo tables) and on measured ones (--runs, --grid):
// from the datasheet, leaving a model or a configuration out, and calibrated
// on a few drawn runs (docs/LLM.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "app/llm_calibration.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "cli/llm_shape.h"
#include "cli/llm_time_report.h"
#include "core/error.h"
#include "io/gnuplot.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "io/korthikanti_csv.h"
#include "io/llm_config_csv.h"
#include "io/megatron_ci_csv.h"
#include "io/megatron_scale_csv.h"
#include "io/nemo_perf_csv.h"
#include "io/neusight_distributed_csv.h"
#include "io/output_path.h"
#include "io/transformer_runs_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "scoring/collective_law.h"
#include "scoring/llm_eval.h"
#include "scoring/llm_grid_eval.h"
#include "scoring/megatron_ci_eval.h"
#include "scoring/transformer_runs_eval.h"
#include "uncertainty/llm_cross_validation.h"

namespace trainplan::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Every "calibrated on k" evaluation, as a user (and a held-out set) calibrates:
// 5 measured configurations, the rest predicted, over 20 random draws.
constexpr int kCalibrationRuns = 5;
constexpr int kDraws = 20;

struct EvaluateArgs {
  std::string dir, ci_dir, runs, scale_dir, neusight_dir, nemo_dir, grid, gpu = "a100-80gb", fit = "auto";
  std::string grid_calibrate;  // --grid with --calibrate: also the grid predicted from this other measured grid
  double interval = 0.8;  // --grid, --scale, --neusight: coverage of the intervals scored (0: none)
  std::string plot;       // --grid: measured against predicted, and the collectives as measured (.png or .svg)
  bool json = false;
};

nlohmann::json summary_json(const scoring::LlmErrorSummary& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : s.rows)
    rows.push_back({{"model", r.model}, {"what", r.what}, {"published", r.published}, {"predicted", r.predicted},
                    {"relative_error", r.relative_error()}});
  nlohmann::json j = {{"rows", rows}, {"mean_abs_relative_error", s.mean_abs}, {"max_abs_relative_error", s.max_abs}};
  if (s.interval_coverage > 0)
    j["intervals"] = {{"coverage", s.interval_coverage}, {"covered", s.interval_covered}, {"rows", s.interval_rows},
                      {"mean_half_width", s.interval_mean_half_width}};
  return j;
}

std::string summary_text(const scoring::LlmErrorSummary& s, const char* unit) {
  std::string out;
  for (const auto& r : s.rows)
    out += fmt::format("  {:<13} {:<58} {:>10.4g} {:>10.4g} {:>+8.2f}%\n", r.model, r.what, r.published, r.predicted,
                       100 * r.relative_error());
  out += fmt::format("  mean |error| {:.2f}%, worst {:.2f}% ({} rows, {})\n", 100 * s.mean_abs, 100 * s.max_abs,
                     s.rows.size(), unit);
  return out;
}

// The file `name` in the folder an evaluation option names. A user who gives the file itself gets
// it; any other file, or a folder that is not there, is refused naming the option.
std::string data_file(const std::string& folder, const char* option, const char* name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(folder, ec)) {
    if (fs::path(folder).filename() == name) return folder;
    throw InputError("", 0, option, fmt::format("'{}' is a file; give the folder that holds {}", folder, name));
  }
  if (!fs::is_directory(folder, ec))
    throw InputError("", 0, option, fmt::format("no such folder: '{}' (the folder that holds {})", folder, name));
  return (fs::path(folder) / name).string();
}

void run_megatron_ci(const EvaluateArgs& a) {
  auto data = io::read_megatron_ci(data_file(a.ci_dir, "--megatron-ci", "megatron_ci_golden_iteration_time_memory.csv"));
  auto e = scoring::evaluate_megatron_ci(data.runs);
  int within = 0;
  for (const auto& g : e.ranking) within += g.within();
  // Calibrated on 5 drawn runs of each GPU, by each fit of llm predict --calibrate.
  nlohmann::json on_k = nlohmann::json::array();
  std::string on_k_text = fmt::format("calibrated on {} runs drawn from each GPU's ({} draws), the GPU's other runs "
                                      "predicted (llm predict --calibrate --fit F):\n",
                                      kCalibrationRuns, kDraws);
  for (const auto& fit : app::llm_fit_modes())
    for (const auto& c : scoring::evaluate_megatron_ci_calibrated_on(data.runs, app::llm_fit_candidates(fit),
                                                                     kCalibrationRuns, kDraws)) {
      on_k.push_back({{"fit", fit}, {"gpu", c.gpu}, {"k", c.k}, {"draws", c.draws}, {"predictions", c.predictions},
                      {"time_mape", c.time_mape}, {"time_worst", c.time_worst}, {"peak_mape", c.peak_mape}});
      on_k_text += fmt::format("  --fit {:<10} {:<10} time MAPE {:5.1f}% (worst {:.0f}%), peak {:5.1f}% ({} predictions)\n",
                               fit, c.gpu, 100 * c.time_mape, 100 * c.time_worst, 100 * c.peak_mape, c.predictions);
    }
  if (a.json) {
    nlohmann::json per = nlohmann::json::array(), rank = nlohmann::json::array();
    for (const auto& p : e.per_model)
      per.push_back({{"model", p.model}, {"rows", p.rows}, {"time_datasheet_mape", p.time_datasheet},
                     {"time_calibrated_mape", p.time_calibrated}, {"peak_datasheet_mape", p.peak_datasheet},
                     {"peak_calibrated_mape", p.peak_calibrated}});
    nlohmann::json row_predictions = nlohmann::json::array();
    for (const auto& x : e.rows) {
      const auto& r = *x.run;
      const auto& l = r.layout;
      row_predictions.push_back({{"line", r.line}, {"model", r.model}, {"gpu", r.gpu}, {"tp", l.tp}, {"pp", l.pp},
                                 {"dp", l.dp}, {"micro_batch", l.micro_batch}, {"global_batch", l.global_batch},
                                 {"recompute", structure::to_string(l.recompute)},
                                 {"time_s", r.iteration_s}, {"time_datasheet_s", x.time_datasheet},
                                 {"time_calibrated_s", x.time_calibrated}, {"peak_gib", r.peak_gib},
                                 {"peak_datasheet_gib", x.peak_datasheet}, {"peak_calibrated_gib", x.peak_calibrated}});
    }
    for (const auto& g : e.ranking)
      rank.push_back({{"group", g.key}, {"configurations", g.configurations}, {"fastest_s", g.fastest_s},
                      {"chosen_s", g.chosen_s}, {"fastest", g.fastest}, {"chosen", g.chosen}, {"within", g.within()}});
    std::cout << io::json_text(nlohmann::json{{"rows", e.rows.size()}, {"total_rows", data.total_rows}, {"excluded", data.excluded},
                                {"time_datasheet_mape", e.time_datasheet_mape},
                                {"time_calibrated_leave_model_out_mape", e.time_calibrated_mape},
                                {"peak_datasheet_mape", e.peak_datasheet_mape},
                                {"peak_calibrated_leave_model_out_mape", e.peak_calibrated_mape},
                                {"per_model", per}, {"ranking", rank}, {"ranking_within", within},
                                {"repeatability", {{"rows", e.repeated_rows},
                                                   {"time_mape_by_the_other_runs", e.time_repeat_mape},
                                                   {"time_calibrated_mape", e.time_calibrated_on_repeated_mape}}},
                                {"row_predictions", row_predictions},
                                {"calibrated_on_5", on_k}})
              << "\n";
    return;
  }
  std::cout << fmt::format("Megatron-LM CI golden values: {} of {} rows used; left out:\n", e.rows.size(), data.total_rows);
  for (const auto& [why, n] : data.excluded) std::cout << fmt::format("  {:>4}  {}\n", n, why);
  std::cout << fmt::format("{:<22} {:>5} {:>11} {:>11} {:>11} {:>11}\n", "model (left out)", "rows", "time sheet",
                           "time calib", "peak sheet", "peak calib");
  for (const auto& p : e.per_model)
    std::cout << fmt::format("{:<22} {:>5} {:>10.1f}% {:>10.1f}% {:>10.1f}% {:>10.1f}%\n", p.model, p.rows,
                             100 * p.time_datasheet, 100 * p.time_calibrated, 100 * p.peak_datasheet,
                             100 * p.peak_calibrated);
  std::cout << fmt::format("{:<22} {:>5} {:>10.1f}% {:>10.1f}% {:>10.1f}% {:>10.1f}%\n", "all (MAPE)", e.rows.size(),
                           100 * e.time_datasheet_mape, 100 * e.time_calibrated_mape, 100 * e.peak_datasheet_mape,
                           100 * e.peak_calibrated_mape);
  if (e.repeated_rows > 0)
    std::cout << fmt::format("repeatability: {} rows share their model, GPU, global batch and parallel configuration "
                             "with other rows;\n  each predicted by the median of the others: time MAPE {:.1f}% "
                             "(the calibrated model, left out as above, on the same rows: {:.1f}%)\n",
                             e.repeated_rows, 100 * e.time_repeat_mape, 100 * e.time_calibrated_on_repeated_mape);
  std::cout << on_k_text;
  std::cout << fmt::format("ranking: the predicted-fastest configuration measured within 3% of the fastest in {} of {} "
                           "groups\n", within, e.ranking.size());
  for (const auto& g : e.ranking)
    std::cout << fmt::format("  {} {:<44} {} configs; chosen {:.4g} s ({}), fastest {:.4g} s ({})\n",
                             g.within() ? "ok  " : "MISS", g.key, g.configurations, g.chosen_s, g.chosen, g.fastest_s,
                             g.fastest);
}

// The project's single-GPU runs: datasheet and leave-one-configuration-out.
void run_transformer_runs(const EvaluateArgs& a) {
  auto hw = io::resolve_llm_hardware(a.gpu, "--gpu");
  auto runs = io::read_transformer_runs(a.runs);
  auto e = scoring::evaluate_transformer_runs(runs, hw);
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& p : e.rows)
      rows.push_back({{"line", p.run->line}, {"model", p.run->model}, {"measured_s", p.run->iteration_s},
                      {"time_datasheet_s", p.time_datasheet}, {"time_calibrated_s", p.time_calibrated},
                      {"peak_gib", p.run->peak_bytes / kGiB}, {"peak_datasheet_gib", p.peak_datasheet / kGiB},
                      {"peak_calibrated_gib", p.peak_calibrated / kGiB}});
    std::cout << io::json_text(nlohmann::json{{"runs", a.runs}, {"gpu", hw.name}, {"rows", rows},
                                {"time_datasheet_mape", e.time_datasheet_mape},
                                {"time_calibrated_leave_configuration_out_mape", e.time_calibrated_mape},
                                {"peak_datasheet_mape", e.peak_datasheet_mape},
                                {"peak_calibrated_leave_configuration_out_mape", e.peak_calibrated_mape}})
              << "\n";
    return;
  }
  std::cout << fmt::format("{}: {} runs on {} (amp-fp32-master, fused attention, one GPU)\n", a.runs, runs.size(), hw.name);
  std::cout << fmt::format("{:<14} {:>4} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}\n", "model", "line", "meas_s", "sheet_s",
                           "calib_s", "peak_GiB", "sheet", "calib");
  for (const auto& p : e.rows)
    std::cout << fmt::format("{:<14} {:>4} {:>9.4f} {:>9.4f} {:>9.4f} {:>8.2f} {:>8.2f} {:>8.2f}\n", p.run->model,
                             p.run->line, p.run->iteration_s, p.time_datasheet, p.time_calibrated,
                             p.run->peak_bytes / kGiB, p.peak_datasheet / kGiB, p.peak_calibrated / kGiB);
  std::cout << fmt::format("time: datasheet mean |error| {:.1f}% (mean {:+.1f}%), calibrated leave-one-out {:.1f}%\n",
                           100 * e.time_datasheet_mape, 100 * e.time_datasheet_bias, 100 * e.time_calibrated_mape);
  std::cout << fmt::format("peak memory: datasheet mean |error| {:.1f}% (mean {:+.1f}%), calibrated leave-one-out {:.1f}%\n",
                           100 * e.peak_datasheet_mape, 100 * e.peak_datasheet_bias, 100 * e.peak_calibrated_mape);
}

// Published runs, per GPU: datasheet, leave one model out, and calibrated on
// 5 drawn runs (the other runs of that GPU predicted; 20 draws).
void report_published_runs(const std::string& path, const io::PublishedScaleRuns& data, const EvaluateArgs& a) {
  std::map<std::string, std::vector<io::PublishedIteration>> by_gpu;
  for (const auto& r : data.runs) by_gpu[r.gpu].push_back(r.iteration);
  nlohmann::json js = {{"file", path}, {"left_out", data.left_out}, {"gpus", nlohmann::json::object()}};
  std::string text = data.left_out.empty() ? fmt::format("{}: {} runs\n", path, data.runs.size())
                                           : fmt::format("{}: {} runs kept; left out:\n", path, data.runs.size());
  for (const auto& [why, n] : data.left_out) text += fmt::format("  {:>4}  {}\n", n, why);
  for (const auto& r : data.runs)
    if (!r.assumed.empty() || r.seconds_derived)
      text += fmt::format("  line {}: {}{}{}\n", r.iteration.run.line,
                          r.seconds_derived ? "seconds from the published TFLOP/s per GPU" : "",
                          r.seconds_derived && !r.assumed.empty() ? "; " : "",
                          r.assumed.empty() ? "" : "assumed " + fmt::format("{}", fmt::join(r.assumed, ", ")));
  for (const auto& [gpu, runs] : by_gpu) {
    const models::LlmTimeModel tm(io::resolve_llm_hardware(gpu, "--gpu"));
    const auto sheet = scoring::score_iterations(runs, tm);
    const auto lomo = scoring::score_iterations_leave_model_out(runs, tm);
    const auto k5 = scoring::score_iterations_calibrated_on(runs, tm, kCalibrationRuns, kDraws, 1, a.interval,
                                                            app::llm_fit_candidates(a.fit));
    js["gpus"][gpu] = {{"iteration_time", summary_json(sheet)},
                       {"iteration_time_calibrated_leave_model_out", summary_json(lomo)},
                       {"iteration_time_calibrated_on_5", summary_json(k5)}};
    text += fmt::format("\n{}: seconds per iteration, datasheet defaults\n", gpu);
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto& r = runs[i];
      text += fmt::format("  line {:>2} {:<12} tp {} pp {:>2} dp {:>2} ({:>4} GPUs) {:<5} {:>9.4g} {:>9.4g} {:>+7.2f}%\n",
                          r.run.line, r.run.model.substr(0, r.run.model.find(" (")), r.run.layout.tp, r.run.layout.pp,
                          r.run.layout.dp, r.run.layout.gpus(), structure::to_string(r.run.layout.recompute), r.seconds,
                          sheet.rows[i].predicted, 100 * sheet.rows[i].relative_error());
    }
    text += fmt::format("  datasheet: mean |error| {:.2f}%, worst {:.2f}% ({} runs)\n", 100 * sheet.mean_abs,
                        100 * sheet.max_abs, sheet.rows.size());
    if (lomo.rows.empty())
      text += "  calibrated, leave one model out: no other model to calibrate on\n";
    else
      text += fmt::format("  calibrated, leave one model out: mean |error| {:.2f}%, worst {:.2f}% ({} runs)\n",
                          100 * lomo.mean_abs, 100 * lomo.max_abs, lomo.rows.size());
    if (!k5.rows.empty())
      text += fmt::format("  calibrated on {} drawn runs, the others predicted ({} draws): mean |error| {:.2f}%, worst "
                          "{:.2f}% ({} predictions)\n",
                          kCalibrationRuns, kDraws, 100 * k5.mean_abs, 100 * k5.max_abs, k5.rows.size());
    // What another GPU's runs, calibrated there, say of this one's: the fitted fractions and
    // overheads moved (llm predict --calibrate-gpu).
    for (const auto& [other, other_runs] : by_gpu) {
      if (other == gpu) continue;
      const auto moved = scoring::score_iterations_calibrated_elsewhere(
          runs, tm, other_runs, models::LlmTimeModel(io::resolve_llm_hardware(other, "--gpu")),
          app::llm_fit_candidates(a.fit));
      js["gpus"][gpu]["iteration_time_calibrated_on_" + other] = summary_json(moved);
      text += fmt::format("  calibrated on every {} run ({}), moved to {}: mean |error| {:.2f}%, worst {:.2f}%\n", other,
                          other_runs.size(), gpu, 100 * moved.mean_abs, 100 * moved.max_abs);
    }
    if (k5.interval_rows > 0 && k5.interval_coverage > 0)
      text += fmt::format("    their {:.0f}% intervals (llm predict --interval, from the 5 runs' leave-one-out errors) "
                          "hold {} of {} ({:.0f}%), mean half-width {:.1f}%\n",
                          100 * k5.interval_coverage, k5.interval_covered, k5.interval_rows,
                          100.0 * k5.interval_covered / double(k5.interval_rows), 100 * k5.interval_mean_half_width);
  }
  std::cout << (a.json ? io::json_text(js) + "\n" : text);
}

void run_scale(const EvaluateArgs& a) {
  const std::string path = data_file(a.scale_dir, "--scale", "published_megatron_scale_results.csv");
  report_published_runs(path, io::read_published_scale_runs(path), a);
}

void run_nemo(const EvaluateArgs& a) {
  const std::string path = data_file(a.nemo_dir, "--nemo", "nvidia_nemo_megatron_bridge_perf_summary.csv");
  report_published_runs(path, io::read_nemo_perf_runs(path), a);
}

void run_neusight(const EvaluateArgs& a) {
  const std::string path = data_file(a.neusight_dir, "--neusight", "neusight_distributed_4gpu_measured.csv");
  report_published_runs(path, io::read_neusight_distributed(path), a);
}

// --grid --plot: each configuration's measured time against its prediction
// left out (the datasheet's beside it), and, where the grid measured its
// collectives, the ring steps against their bytes with the power law through them.
void plot_grid(const std::string& path, const scoring::GridEvaluation& e, const scoring::CollectiveLaw& law,
               const structure::HardwareProfile& hw) {
  io::PlotPanel fit{"iteration time, each configuration left out", "measured, s", "predicted, s", true, true};
  fit.key = "top left";
  io::PlotSeries calibrated{"calibrated on the others", {}, "points", io::plot_palette()[0]};
  io::PlotSeries datasheet{"datasheet", {}, "points", io::plot_palette()[1]};
  double lo = 1e300, hi = 0;
  for (const auto& p : e.rows) {
    const double m = *p.row->iteration_time_s;
    calibrated.points.push_back({m, p.time_calibrated});
    datasheet.points.push_back({m, p.time_datasheet});
    lo = std::min({lo, m, p.time_calibrated, p.time_datasheet}), hi = std::max({hi, m, p.time_calibrated, p.time_datasheet});
  }
  fit.series = {{"measured = predicted", {{lo, lo}, {hi, hi}}, "lines", "#999999"}, calibrated, datasheet};
  std::vector<io::PlotPanel> panels = {fit};
  if (law.fitted) {
    io::PlotPanel steps{"a collective's ring step, as measured", "bytes per step", "seconds per step", true, true};
    steps.key = "top left";
    io::PlotSeries tp{"tensor parallel", {}, "points", io::plot_palette()[0]};
    io::PlotSeries dp{"data parallel", {}, "points", io::plot_palette()[2]};
    for (const auto& st : law.steps) (std::string(st.group) == "tp" ? tp : dp).points.push_back({st.bytes, st.seconds});
    io::PlotSeries line{fmt::format("{:.3g} ms x (bytes / 64 KiB)^{:.2f}", 1e3 * law.seconds_at_64kib, law.exponent),
                        {}, "lines", io::plot_palette()[3]};
    for (int i = 0; i <= 40; ++i) {
      const double b = law.smallest_bytes * std::pow(law.largest_bytes / law.smallest_bytes, i / 40.0);
      line.points.push_back({b, law.seconds_at(b)});
    }
    steps.series = {line, tp, dp};
    if (hw.node.collective_latency_exponent > 0)
      steps.title += fmt::format(" ({} says {:g})", hw.name, hw.node.collective_latency_exponent);
    panels.push_back(steps);
  }
  io::render_plot(path, panels, 700, 520);
}

// A measured grid (`llm profile`): leave one configuration out, the models
// calibrated as `llm predict --calibrate --fit` calibrates them.
void run_grid(const EvaluateArgs& a) {
  if (!a.plot.empty()) io::check_plot_path(a.plot), io::require_gnuplot();
  auto hw = io::resolve_llm_hardware(a.gpu, "--gpu");
  auto grid = read_llm_configs_noted(a.grid, /*require_time=*/true);
  if (grid.rows.size() < 2)
    throw InputError(a.grid, 0, "", "holds one measured configuration: leaving one out needs at least two");
  auto e = scoring::evaluate_llm_grid(grid.rows, hw, app::llm_fit_candidates(a.fit), {}, a.interval);
  const auto on_k = scoring::score_llm_grid_on_k(grid.rows, hw, app::llm_fit_candidates(a.fit), kCalibrationRuns, kDraws);
  nlohmann::json on_k_json = nullptr;
  if (on_k.draws > 0) {
    on_k_json = {{"k", on_k.k},
                 {"draws", on_k.draws},
                 {"predictions", on_k.predictions},
                 {"time_mape", on_k.time_mape},
                 {"time_median", on_k.time_median},
                 {"time_worst", on_k.time_worst}};
    if (on_k.memory_predictions > 0) on_k_json["memory_mape"] = on_k.memory_mape, on_k_json["memory_worst"] = on_k.memory_worst;
  }
  // Calibrated on another grid (other configurations, as a user extrapolates
  // from what was measured), exactly as llm predict --calibrate does.
  nlohmann::json from_other = nullptr;
  std::string from_other_text;
  if (!a.grid_calibrate.empty()) {
    auto measured = io::read_llm_configs(a.grid_calibrate, /*require_time=*/true);
    models::LlmTimeModel tm(hw, app::llm_time_params_for_fit(a.fit));
    models::LlmMemoryModel mm;
    auto cal = app::calibrate_llm_models(measured, a.grid_calibrate, a.fit, tm, mm);
    const auto o = scoring::score_llm_grid_with(grid.rows, tm, mm);
    from_other = {{"calibrate", a.grid_calibrate}, {"fitted", cal.fitted}, {"rows", o.rows},
                  {"time_mape", o.time_mape}, {"time_worst", o.time_worst}};
    if (o.memory_rows > 0) from_other["memory_mape"] = o.memory_mape, from_other["memory_worst"] = o.memory_worst;
    from_other_text = fmt::format("calibrated on {} ({} rows, --fit {} chose {}): time MAPE {:.2f}%, worst {:.1f}%",
                                  a.grid_calibrate, measured.rows.size(), a.fit, cal.fitted, 100 * o.time_mape,
                                  100 * o.time_worst);
    if (o.memory_rows > 0)
      from_other_text += fmt::format("; peak memory MAPE {:.2f}%, worst {:.1f}%", 100 * o.memory_mape, 100 * o.memory_worst);
  }
  // The collectives' growth with their size, where the grid measured them.
  const auto law = scoring::measure_collective_law(grid.rows);
  nlohmann::json law_json = nullptr;
  std::string law_text;
  if (law.fitted) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& st : law.steps)
      steps.push_back({{"line", st.line}, {"group", st.group}, {"step_bytes", st.bytes}, {"step_seconds", st.seconds}});
    law_json = {{"steps", steps},
                {"exponent", law.exponent},
                {"seconds_at_64kib", law.seconds_at_64kib},
                {"hardware_collective_latency_exponent", hw.node.collective_latency_exponent}};
    law_text = fmt::format(
        "collectives as measured (tp_comm_s, dp_comm_s; {} steps of {:.0f} to {:.0f} bytes): a ring step took "
        "{:.3g} ms x (bytes / 64 KiB)^{:.2f} (least squares in logs); {}'s collective_latency_exponent is {:g}\n",
        law.steps.size(), law.smallest_bytes, law.largest_bytes, 1e3 * law.seconds_at_64kib, law.exponent, hw.name,
        hw.node.collective_latency_exponent);
  }
  // Drawn after the answer is printed, so that a chart that fails loses no answer.
  auto draw_chart = [&] {
    if (a.plot.empty()) return;
    std::cout.flush();
    plot_grid(a.plot, e, law, hw);
  };
  const auto& f = e.fitted_time;
  const double n = double(e.rows.size());
  // `--fit all` needs 8 configurations, `overheads` 3 (models::LlmTimeModel::fit);
  // with fewer a fit fits less, and the heading says so rather than name a fit
  // that did not run (each row's is fitted on the others: one fewer).
  std::set<std::string> fell_to;
  if (a.fit != "auto")
    for (const auto& m : e.left_out_fitted_modes)
      if (m != a.fit) fell_to.insert(m);
  const std::string fell_back =
      fell_to.empty() ? ""
                      : fmt::format(" (`{}` fitted as `{}` where fewer than {} configurations were left to fit)", a.fit,
                                    fmt::join(fell_to, "` or `"), a.fit == "all" ? 8 : 3);
  nlohmann::json intervals = nullptr;
  if (e.coverage > 0) {
    intervals = {{"coverage", e.coverage},
                 {"time_covered", e.time_covered},
                 {"time_rows", e.rows.size()},
                 {"time_mean_half_width", e.time_mean_half_width}};
    if (e.memory_rows > 0)
      intervals["memory_covered"] = e.memory_covered, intervals["memory_rows"] = e.memory_rows,
      intervals["memory_mean_half_width"] = e.memory_mean_half_width;
  }
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& p : e.rows) {
      const auto& l = p.row->layout;
      nlohmann::json j = {{"line", p.row->line}, {"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp},
                          {"micro_batch", l.micro_batch}, {"global_batch", l.global_batch},
                          {"measured_s", *p.row->iteration_time_s}, {"time_datasheet_s", p.time_datasheet},
                          {"time_calibrated_s", p.time_calibrated}, {"memory_datasheet_gib", p.memory_datasheet / kGiB}};
      if (p.row->memory_gib)
        j["memory_gib"] = *p.row->memory_gib, j["memory_calibrated_gib"] = p.memory_calibrated / kGiB;
      rows.push_back(j);
    }
    std::cout << io::json_text(nlohmann::json{{"grid", a.grid}, {"gpu", hw.name}, {"fit", a.fit}, {"rows", rows},
                                {"time_datasheet_mape", e.time_datasheet_mape},
                                {"time_calibrated_leave_configuration_out_mape", e.time_calibrated_mape},
                                {"time_calibrated_leave_configuration_out_worst", e.time_calibrated_worst},
                                {"memory_datasheet_mape", e.memory_datasheet_mape},
                                {"memory_calibrated_leave_configuration_out_mape", e.memory_calibrated_mape},
                                {"memory_calibrated_leave_configuration_out_worst", e.memory_calibrated_worst},
                                {"fitted_on_all", {{"fit", e.fitted_mode},
                                                   {"peak_fraction", f.gemm.peak_fraction},
                                                   {"memory_fraction", f.gemm.memory_fraction},
                                                   {"link_fraction", f.link_fraction},
                                                   {"link_latency_s", f.link_latency_s},
                                                   {"iteration_overhead_s", f.iteration_overhead_s},
                                                   {"layer_overhead_s", f.layer_overhead_s},
                                                   {"memory_overhead_gib", e.fitted_memory.overhead_bytes / kGiB},
                                                   {"time_in_sample_mape", e.time_in_sample_mape}}},
                                {"calibrated_on_drawn_rows", on_k_json},
                                {"measured_collectives", law_json},
                                {"plot", a.plot.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.plot)},
                                {"calibrated_on_other_grid", from_other},
                                {"intervals", intervals}})
              << "\n";
    note_json_answer_printed();  // a chart that fails after it adds no second document
    draw_chart();
    return;
  }
  std::cout << fmt::format("{}: {} configurations on {}; calibrated = fitted ({}) on the other rows{}\n", a.grid,
                           e.rows.size(), hw.name, a.fit, fell_back);
  std::cout << fmt::format("{:>4} {:>3} {:>3} {:>3} {:>3} {:>4} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}\n", "line",
                           "tp", "pp", "dp", "mb", "gb", "meas_s", "sheet_s", "calib_s", "error", "mem_GiB", "calib",
                           "error");
  for (const auto& p : e.rows) {
    const auto& l = p.row->layout;
    const double m = p.row->memory_gib.value_or(0);
    std::cout << fmt::format("{:>4} {:>3} {:>3} {:>3} {:>3} {:>4} {:>9.4f} {:>9.4f} {:>9.4f} {:>+6.1f}% {:>9.4f} {:>9.4f} "
                             "{:>+6.1f}%\n",
                             p.row->line, l.tp, l.pp, l.dp, l.micro_batch, l.global_batch, *p.row->iteration_time_s,
                             p.time_datasheet, p.time_calibrated, 100 * (p.time_calibrated / *p.row->iteration_time_s - 1),
                             m, p.memory_calibrated / kGiB, m > 0 ? 100 * (p.memory_calibrated / kGiB / m - 1) : 0.0);
  }
  std::cout << fmt::format("time: datasheet MAPE {:.1f}%; calibrated, leave one configuration out: MAPE {:.2f}%, worst "
                           "{:.1f}%\n",
                           100 * e.time_datasheet_mape, 100 * e.time_calibrated_mape, 100 * e.time_calibrated_worst);
  if (e.memory_rows > 0)
    std::cout << fmt::format("peak memory: datasheet MAPE {:.1f}%; calibrated, leave one configuration out: MAPE {:.2f}%, "
                             "worst {:.1f}% ({} rows)\n",
                             100 * e.memory_datasheet_mape, 100 * e.memory_calibrated_mape,
                             100 * e.memory_calibrated_worst, e.memory_rows);
  if (on_k.draws > 0) {
    std::cout << fmt::format("calibrated on {} rows drawn at random ({} draws, {} predictions of the other rows): time "
                             "MAPE {:.2f}%, median {:.2f}%, worst {:.1f}%",
                             on_k.k, on_k.draws, on_k.predictions, 100 * on_k.time_mape, 100 * on_k.time_median,
                             100 * on_k.time_worst);
    if (on_k.memory_predictions > 0)
      std::cout << fmt::format("; peak memory MAPE {:.2f}%, worst {:.1f}%", 100 * on_k.memory_mape,
                               100 * on_k.memory_worst);
    std::cout << "\n";
  }
  if (!from_other_text.empty()) std::cout << from_other_text << "\n";
  std::cout << fmt::format("fitted on all rows ({}): peak {:.3f}, memory {:.3f}, link {:.3f}, link latency {:.3g} s, "
                           "iteration overhead {:.3g} s, layer overhead {:.3g} s, memory overhead {:.4f} GiB; in-sample "
                           "time MAPE {:.2f}%\n",
                           e.fitted_mode, f.gemm.peak_fraction, f.gemm.memory_fraction, f.link_fraction,
                           f.link_latency_s, f.iteration_overhead_s, f.layer_overhead_s,
                           e.fitted_memory.overhead_bytes / kGiB, 100 * e.time_in_sample_mape);
  std::cout << law_text;
  if (!a.plot.empty()) std::cout << "chart: " << a.plot << "\n";
  if (e.coverage > 0) {
    std::cout << fmt::format("{:.0f}% intervals (llm predict --interval, from the other rows' cross-validated errors): "
                             "time holds {} of {} ({:.0f}%), mean half-width {:.1f}%",
                             100 * e.coverage, e.time_covered, e.rows.size(), 100 * e.time_covered / n,
                             100 * e.time_mean_half_width);
    if (e.memory_rows > 0)
      std::cout << fmt::format("; memory {} of {} ({:.0f}%), {:.1f}%", e.memory_covered, e.memory_rows,
                               100.0 * e.memory_covered / e.memory_rows, 100 * e.memory_mean_half_width);
    std::cout << "\n";
  }
  draw_chart();
}

void run_evaluate(const EvaluateArgs& a) {
  if (!a.scale_dir.empty()) run_scale(a);
  if (!a.neusight_dir.empty()) run_neusight(a);
  if (!a.nemo_dir.empty()) run_nemo(a);
  if (!a.grid.empty()) run_grid(a);
  if (!a.runs.empty()) run_transformer_runs(a);
  if (!a.ci_dir.empty()) run_megatron_ci(a);
  if (a.dir.empty()) return;
  auto hw = io::resolve_llm_hardware(a.gpu, "--gpu");
  auto times = io::read_korthikanti_iterations(data_file(a.dir, "--korthikanti", "korthikanti2022_megatron_a100_iteration_time.csv"));
  auto memory = io::read_korthikanti_memory(data_file(a.dir, "--korthikanti", "korthikanti2022_memory_per_gpu.csv"));
  auto ts = scoring::score_iterations(times, models::LlmTimeModel(hw));
  auto cs = scoring::score_iterations_leave_model_out(times, models::LlmTimeModel(hw));
  auto k5 = scoring::score_iterations_calibrated_on(times, models::LlmTimeModel(hw), kCalibrationRuns, kDraws, 1, 0,
                                                    app::llm_fit_candidates(a.fit));
  auto ms = scoring::score_memory(memory, models::LlmMemoryModel());
  if (a.json) {
    std::cout << io::json_text(nlohmann::json{{"gpu", hw.name},
                                {"iteration_time", summary_json(ts)},
                                {"iteration_time_calibrated_leave_model_out", summary_json(cs)},
                                {"iteration_time_calibrated_on_5", summary_json(k5)},
                                {"memory", summary_json(ms)}})
              << "\n";
    return;
  }
  std::cout << fmt::format("Korthikanti et al. 2022, Table 5: seconds per iteration on {}, datasheet defaults\n", hw.name);
  std::cout << fmt::format("  {:<13} {:<58} {:>10} {:>10} {:>9}\n", "model", "run", "published", "predicted", "error");
  std::cout << summary_text(ts, "seconds");
  std::cout << "The same, calibrated: efficiency factors fitted to the other models' runs (leave one model out)\n";
  std::cout << summary_text(cs, "seconds");
  if (!k5.rows.empty())
    std::cout << fmt::format("The same, calibrated on {} runs drawn at random, the other {} predicted ({} draws): mean "
                             "|error| {:.2f}%, worst {:.2f}% ({} predictions)\n",
                             kCalibrationRuns, times.size() - size_t(kCalibrationRuns), kDraws, 100 * k5.mean_abs,
                             100 * k5.max_abs, k5.rows.size());
  std::cout << "Korthikanti et al. 2022, Figures 1 and 7: memory per GPU (GiB, or % of no recomputation)\n";
  std::cout << summary_text(ms, "GiB or %");
}


void setup(CLI::App& root) {
  // Under `llm`, which cmd_llm.cpp adds first.
  auto* llm = root.get_subcommand("llm");
  auto ea = std::make_shared<EvaluateArgs>();
  auto* e = llm->add_subcommand("evaluate", "Score the time and memory models on published runs (Korthikanti et al. 2022, "
                                                "Megatron-LM's CI, runs at scale) or on measured ones (--runs, --grid)");
  e->add_option("--korthikanti", ea->dir,
                "The folder with korthikanti2022_megatron_a100_iteration_time.csv and korthikanti2022_memory_per_gpu.csv "
                "(../shared/data/llm)");
  e->add_option("--megatron-ci", ea->ci_dir,
                "The folder with megatron_ci_golden_iteration_time_memory.csv: datasheet and leave-one-model-out "
                "errors of time and peak memory, and whether the predicted-fastest configuration is the fastest");
  e->add_option("--runs", ea->runs,
                "Single-GPU runs in transformer-bench.py's CSV (examples/h100/transformer-training.csv; give --gpu h100)");
  e->add_option("--scale", ea->scale_dir,
                "The folder with published_megatron_scale_results.csv: Megatron-LM runs on 384 to 3,360 A100s, "
                "datasheet, leave one model out, and calibrated on 5 drawn runs");
  e->add_option("--neusight", ea->neusight_dir,
                "The folder with neusight_distributed_4gpu_measured.csv: NeuSight's 4-GPU data, tensor and pipeline "
                "parallel steps on one A100 or H100 node, scored as --scale scores its runs");
  e->add_option("--nemo", ea->nemo_dir,
                "The folder with nvidia_nemo_megatron_bridge_perf_summary.csv: NVIDIA's published NeMo pre-training "
                "runs of dense models on DGX H100, DGX B200 and GB200 NVL72 (BF16 and FP8), scored as --scale scores its runs");
  e->add_option("--grid", ea->grid,
                "A measured grid (llm profile's output, e.g. examples/cpu-gpt/grid.csv; give its --gpu, e.g. "
                "examples/cpu-gpt/cpu-2core.csv): leave-one-configuration-out errors of time and peak memory, and errors when calibrated on 5 rows drawn at random (20 draws)");
  e->add_option("--calibrate", ea->grid_calibrate,
                "With --grid: also predict the grid's rows from the models calibrated on this other measured grid "
                "(as llm predict --calibrate)");
  e->add_option("--plot", ea->plot,
                "With --grid: draw each configuration's measured time against its prediction left out and, where "
                "the grid measured its collectives (tp_comm_s, dp_comm_s), their ring steps against their bytes "
                "(.png or .svg)");
  e->add_option("--interval,--confidence", ea->interval,
                "With --grid, --scale, --neusight or --nemo: also score the intervals llm predict --interval gives at this coverage (0: none)")
      ->capture_default_str()
      ->check(coverage_or_none());
  add_llm_fit_option(e, ea->fit, "With --grid, --scale, --neusight, --nemo or --korthikanti: what calibration fits (as llm predict --fit)");
  e->add_option("--gpu", ea->gpu,
                "The GPU the runs used: required with --grid and --runs (their files do not name it); for "
                "--korthikanti its A100")
      ->capture_default_str();
  e->add_flag("--json", ea->json, "Print JSON");
  e->callback([ea, e] {
    if (ea->dir.empty() && ea->ci_dir.empty() && ea->runs.empty() && ea->grid.empty() && ea->scale_dir.empty() &&
        ea->neusight_dir.empty() && ea->nemo_dir.empty())
      throw InputError("nothing to evaluate: give --korthikanti, --megatron-ci, --runs, --scale, --neusight, --nemo or "
                       "--grid");
    // The other sets name each run's GPU; --gpu says what --korthikanti's, --grid's and --runs' ran on.
    if (e->get_option("--gpu")->count() > 0 && ea->dir.empty() && ea->grid.empty() && ea->runs.empty())
      throw InputError("", 0, "--gpu",
                       "goes with --korthikanti, --grid or --runs: --megatron-ci, --scale, --neusight and --nemo take "
                       "each run's GPU from the data");
    // A measured grid or set of runs is scored on the GPU it ran on, which the file does not name:
    // the A100 default, right for Korthikanti's runs, scored the H100 runs 92% off without a word.
    if (e->get_option("--gpu")->count() == 0 && (!ea->grid.empty() || !ea->runs.empty()))
      throw InputError("", 0, "--gpu",
                       fmt::format("give the GPU {}'s runs ran on (a catalog name or a hardware file: --gpu h100 for "
                                   "examples/h100/transformer-training.csv, --gpu examples/cpu-gpt/cpu-2core.csv for "
                                   "the shipped CPU grid)",
                                   !ea->grid.empty() ? "--grid" : "--runs"));
    const bool scores_draws =
        !ea->grid.empty() || !ea->scale_dir.empty() || !ea->neusight_dir.empty() || !ea->nemo_dir.empty();
    if (e->get_option("--interval")->count() > 0 && !scores_draws)
      throw InputError("", 0, "--interval", "goes with --grid, --scale, --neusight or --nemo: the intervals it scores");
    if (e->get_option("--fit")->count() > 0 && !scores_draws && ea->dir.empty())
      throw InputError("", 0, "--fit",
                       "goes with --grid, --scale, --neusight, --nemo or --korthikanti (--megatron-ci prints every "
                       "fit)");
    if (e->get_option("--gpu")->count() > 0 && !ea->dir.empty())
      if (const auto name = io::resolve_llm_hardware(ea->gpu, "--gpu").name; name != "a100-80gb")
        std::cerr << fmt::format("warning: Korthikanti et al.'s runs were measured on A100-SXM4-80GB; scored as {}, "
                                 "their errors compare two GPUs\n",
                                 name);
    if (!ea->grid_calibrate.empty() && ea->grid.empty())
      throw InputError("", 0, "--calibrate", "goes with --grid: the grid it predicts");
    if (!ea->plot.empty() && ea->grid.empty()) throw InputError("", 0, "--plot", "goes with --grid: the grid it draws");
    run_evaluate(*ea);
  });
}

CommandRegistrar reg(47, setup);

}  // namespace
}  // namespace trainplan::cli
