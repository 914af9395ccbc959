// trainplan llm: transformer training under tensor, pipeline and data
// parallelism (docs/LLM.md). `predict` gives iteration time and memory per
// GPU for a CSV of configurations, from the datasheet or calibrated on
// measured iterations; `memory` breaks one configuration's memory down;
// `evaluate` scores both models on Korthikanti et al. 2022's runs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <string_view>
#include <nlohmann/json.hpp>

#include "app/llm_calibration.h"
#include "cli/command.h"
#include "cli/llm_shape.h"
#include "cli/llm_time_report.h"
#include "core/error.h"
#include "io/gnuplot.h"
#include "io/output_path.h"
#include "io/hardware_file.h"
#include "io/korthikanti_csv.h"
#include "io/megatron_scale_csv.h"
#include "io/nemo_perf_csv.h"
#include "io/neusight_distributed_csv.h"
#include "io/llm_config_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "plan/llm_planner.h"
#include "io/megatron_ci_csv.h"
#include "scoring/llm_eval.h"
#include "uncertainty/llm_cross_validation.h"
#include "scoring/collective_law.h"
#include "scoring/llm_grid_eval.h"
#include "scoring/megatron_ci_eval.h"
#include "scoring/transformer_runs_eval.h"
#include "io/transformer_runs_csv.h"

namespace trainplan::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Every "calibrated on k" evaluation, as a user (and a held-out set) calibrates:
// 5 measured configurations, the rest predicted, over 20 random draws.
constexpr int kCalibrationRuns = 5;
constexpr int kDraws = 20;

nlohmann::json memory_json(const models::LlmMemoryBreakdown& m) {
  return {{"memory_gib", m.total() / kGiB}, {"stage", m.stage}, {"weights_gib", m.weights / kGiB},
          {"gradients_gib", m.gradients / kGiB}, {"optimizer_gib", m.optimizer / kGiB},
          {"activations_gib", m.activations / kGiB}, {"embedding_logits_gib", m.embedding_logits / kGiB},
          {"recompute_working_gib", m.recompute_working / kGiB}, {"overhead_gib", m.overhead / kGiB}};
}

// Over or under the GPU's memory, in GiB (negative: over), and whether it fits: as `llm predict`
// and `llm memory` say it.
nlohmann::json fit_json(const structure::HardwareProfile& hw, const models::LlmMemoryBreakdown& m) {
  const double headroom_gib = (hw.gpu.capacity_bytes() - m.total()) / kGiB;
  return {{"fits_memory", headroom_gib >= 0}, {"headroom_gib", headroom_gib}};
}

nlohmann::json params_json(const models::LlmTimeModel& tm, const models::LlmMemoryModel& mm) {
  const auto& p = tm.params();
  return {{"gpu", tm.hardware().name}, {"fitted_factors", tm.fitted_factors()},
          {"peak_fraction", p.gemm.peak_fraction}, {"memory_fraction", p.gemm.memory_fraction},
          {"link_fraction", p.link_fraction}, {"memory_overhead_gib", mm.params().overhead_bytes / kGiB},
          {"iteration_overhead_s", p.iteration_overhead_s}, {"layer_overhead_s", p.layer_overhead_s}};
}

// ---- predict ----

struct PredictArgs {
  std::string configs, gpu, calibrate, out, fit = "auto";
  std::string calibrate_gpu;  // the GPU the --calibrate rows ran on ("": --gpu)
  double interval = 0;  // coverage of the prediction intervals; 0: none
  bool json = false;
  bool breakdown = false;
};

// With -o the table is not printed: say on stderr which rows are predicted
// not to fit, and by how much, so that nobody launches them unawares.
void print_over_memory(const nlohmann::json& rows, double gpu_gib, const std::string& gpu) {
  std::vector<std::string> over;
  for (const auto& j : rows)
    if (!j["fits_memory"].get<bool>())
      over.push_back(fmt::format("line {} ({:.2f} GiB, over by {:.2f})", j["line"].get<long>(),
                                 j["memory_gib"].get<double>(), -j["headroom_gib"].get<double>()));
  if (over.empty()) return;
  constexpr size_t kListed = 10;
  std::string listed;
  for (size_t i = 0; i < over.size() && i < kListed; ++i) listed += (i ? ", " : "") + over[i];
  if (over.size() > kListed) listed += fmt::format(" and {} more", over.size() - kListed);
  std::cerr << fmt::format("note: {} of {} configurations are predicted not to fit in {}'s {:.2f} GiB per GPU: {}\n",
                           over.size(), rows.size(), gpu, gpu_gib, listed);
}

// The zoo, one model a line (or JSON): what --model takes.
void list_models(bool json) {
  nlohmann::json out = nlohmann::json::array();
  if (!json)
    std::cout << fmt::format("{:<16} {:>9} {:>6} {:>6} {:>5} {:>4} {:>6} {:>6} {:>7}  {}\n", "name", "params", "layers",
                             "hidden", "heads", "kv", "ffn", "seq", "vocab", "source");
  for (const auto& z : structure::transformer_zoo()) {
    if (json) {
      out.push_back({{"name", z.name}, {"parameters", z.total_params()}, {"layers", z.layers}, {"hidden", z.hidden},
                     {"heads", z.heads}, {"kv_groups", z.kv()}, {"ffn_hidden", z.ffn()}, {"gated_mlp", z.gated_mlp},
                     {"seq", z.seq}, {"vocab", z.vocab}, {"source", z.source}});
      continue;
    }
    const double b = z.total_params() / 1e9;
    std::cout << fmt::format("{:<16} {:>9} {:>6} {:>6} {:>5} {:>4} {:>6} {:>6} {:>7}  {}\n", z.name,
                             fmt::format("{:.4g}B", b), z.layers, z.hidden, z.heads, z.kv(), z.ffn(), z.seq, z.vocab,
                             z.source);
  }
  if (json) std::cout << nlohmann::json{{"models", out}}.dump(2) << "\n";
}

void run_predict(const PredictArgs& a) {
  if (a.out == "-" && a.json)
    throw InputError("", 0, "--out", "'-' writes the CSV to standard output, where --json goes too: give one of them");
  if (a.interval > 0 && a.calibrate.empty())
    throw InputError("", 0, "--interval", "needs --calibrate: the intervals come from the calibration's cross-validated errors");
  if (!a.calibrate_gpu.empty() && a.calibrate.empty())
    throw InputError("", 0, "--calibrate-gpu", "goes with --calibrate: the GPU its measured rows ran on");
  io::check_output_path(a.out, "--out",
                        {{a.configs, "--configs"}, {a.calibrate, "--calibrate"}, hardware_file_input(a.gpu, "--gpu"),
                         hardware_file_input(a.calibrate_gpu, "--calibrate-gpu")});
  auto hw = io::resolve_llm_hardware(a.gpu, "--gpu");
  // Measured on another GPU: fitted there, then its fractions and overheads price --gpu.
  const std::optional<structure::HardwareProfile> measured_hw =
      a.calibrate_gpu.empty() ? std::nullopt : std::optional(io::resolve_llm_hardware(a.calibrate_gpu, "--calibrate-gpu"));
  const bool moved = measured_hw && measured_hw->name != hw.name;
  if (moved && a.interval > 0)
    throw InputError("", 0, "--interval",
                     "not with --calibrate-gpu " + measured_hw->name + ": the calibration's cross-validated errors are " +
                         measured_hw->name + "'s, and say nothing of the move to " + hw.name);
  // A bad row is named and left out; the others are predicted and written, and the exit is still 2.
  auto in = read_llm_configs_noted(a.configs, /*require_time=*/false, io::RowErrors::kSkip);
  io::require_hardware_support(in, hw, io::RowErrors::kSkip);
  models::LlmTimeModel tm(hw, app::llm_time_params_for_fit(a.fit));
  models::LlmMemoryModel mm;
  std::optional<app::LlmCalibration> cal;
  // Each row left out is named as soon as it is known, before anything that may fail after it.
  for (const auto& e : in.rejected) std::cerr << "error: " << e.what() << "\n";
  std::vector<InputError> rejected = in.rejected;
  if (!a.calibrate.empty()) {
    auto measured = read_llm_configs_noted(a.calibrate, /*require_time=*/true, io::RowErrors::kSkip);
    io::require_hardware_support(measured, moved ? *measured_hw : hw, io::RowErrors::kSkip);
    for (const auto& e : measured.rejected) std::cerr << "error: " << e.what() << "\n";
    rejected.insert(rejected.end(), measured.rejected.begin(), measured.rejected.end());
    cal = app::calibrate_llm_models_on(measured, a.calibrate, a.fit, moved ? *measured_hw : hw, tm, mm);
  }
  // After the answer: one error that sets the exit.
  auto report_rejected = [&] {
    if (rejected.empty()) return;
    const size_t in_rows = in.rejected.size(), measured_rows = rejected.size() - in_rows;
    std::vector<std::string> parts;
    const size_t unsplit = in.table.malformed_rows().size();
    if (in_rows)
      parts.push_back(fmt::format("{} of {} rows not predicted (named above)", in_rows,
                                  in.table.rows().size() + unsplit));
    if (in_rows > unsplit && !a.out.empty() && a.out != "-")
      parts.push_back("their prediction cells in " + a.out + " are empty");
    if (unsplit && !a.out.empty() && a.out != "-")
      parts.push_back(fmt::format("{} whose fields do not match the header {} not in {}", unsplit,
                                  unsplit == 1 ? "is" : "are", a.out));
    if (measured_rows)
      parts.push_back(fmt::format("{} measured row{} left out of the calibration{}", measured_rows,
                                  measured_rows == 1 ? "" : "s", in_rows ? "" : " (named above)"));
    throw InputError(in_rows ? a.configs : a.calibrate, 0, "", fmt::format("{}", fmt::join(parts, "; ")));
  };
  const bool time_interval = a.interval > 0 && cal && !cal->cv.time_errors_by_configuration.empty();
  const bool memory_interval = a.interval > 0 && cal && !cal->cv.memory_errors_by_configuration.empty();
  std::vector<std::string> columns = {"iteration_time_s", "memory_gib"};
  if (time_interval) columns.insert(columns.end(), {"iteration_time_lo_s", "iteration_time_hi_s"});
  if (memory_interval) columns.insert(columns.end(), {"memory_gib_lo", "memory_gib_hi"});
  bool short_of_coverage = false;
  std::vector<std::vector<double>> values;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : in.rows) {
    auto t = tm.predict(r.spec, r.layout);
    auto m = mm.predict(r.spec, r.layout);
    values.push_back({t.iteration, m.total() / kGiB});
    nlohmann::json j = {{"line", r.line}, {"precision", structure::to_string(r.layout.precision)}};
    j.update(fit_json(hw, m));
    j.update(llm_time_json(t, hw.gpu.dense_peak_tflops(r.layout.precision)));
    j.update(memory_json(m));
    if (time_interval) {
      auto iv = *uncertainty::conformal_interval(t.iteration, cal->cv.time_errors_by_configuration, a.interval);
      values.back().insert(values.back().end(), {iv.lo, iv.hi});
      j["iteration_time_interval_s"] = {iv.lo, iv.hi};
      short_of_coverage |= iv.short_of_coverage;
    }
    if (memory_interval) {
      auto iv = *uncertainty::conformal_interval(m.total() / kGiB, cal->cv.memory_errors_by_configuration, a.interval);
      values.back().insert(values.back().end(), {iv.lo, iv.hi});
      j["memory_gib_interval"] = {iv.lo, iv.hi};
      short_of_coverage |= iv.short_of_coverage;
    }
    rows.push_back(j);
  }
  if (!a.out.empty()) {
    // The file's own columns of these names (measured times, say) give way to the predictions.
    for (const auto& c : columns)
      if (in.table.has_column(c))
        std::cerr << fmt::format("note: {}'s column '{}' is replaced by the prediction in {}\n", a.configs,
                                 in.table.header()[in.table.column(c)], a.out == "-" ? "the output" : a.out);
    // One row of values for each row of the file: a row left out has its prediction cells empty
    // (a measured time of its own in that column would read as a prediction), the rest as it was.
    // in.rows keeps the file's order, so one pass pairs them.
    std::vector<std::vector<double>> all;
    size_t next = 0;
    for (const auto& row : in.table.rows())
      all.push_back(next < in.rows.size() && in.rows[next].line == row.line ? values[next++]
                                                                            : std::vector<double>(columns.size(), NAN));
    io::write_llm_predictions(a.out, in.table, columns, all);
  }
  const std::string interval_note =
      a.interval <= 0 ? ""
      : !time_interval
          ? "no intervals: the calibration has fewer than two configurations to cross-validate"
          : fmt::format("{:.0f}% intervals from the cross-validated errors of {} configurations{}", 100 * a.interval,
                        cal->cv.time_errors_by_configuration.size(),
                        short_of_coverage ? " (too few measurements to promise that coverage: the widest error used)" : "");
  if (a.json) {
    nlohmann::json out = {{"configs", a.configs}, {"model", params_json(tm, mm)}, {"rows", rows}};
    if (cal) out["model"]["fitted_factors"] = cal->fitted_factors;  // fitted where the measured rows ran
    if (cal) {
      out["calibration_mean_abs_relative_error"] = cal->time_mean_abs_relative_error;
      out["calibration"] = app::to_json(*cal);
      out["calibration"]["gpu"] = moved ? measured_hw->name : hw.name;  // where the measured rows ran
    }
    if (a.interval > 0) out["interval"] = {{"coverage", a.interval}, {"note", interval_note}};
    if (!rejected.empty()) {
      out["rejected"] = nlohmann::json::array();
      for (const auto& e : rejected)
        out["rejected"].push_back({{"file", e.file()}, {"line", e.line()}, {"field", e.field()}, {"error", e.message()}});
    }
    std::cout << out.dump(2) << "\n";
    note_json_answer_printed();
    report_rejected();
    return;
  }
  if (cal) {
    std::cerr << fmt::format("calibrated on {}{}: {} factor(s) fitted; fractions: peak {:.3f}, link {:.3f}, memory {:.3f}; mean |error| {:.2f}%\n",
                             a.calibrate, moved ? " (measured on " + measured_hw->name + ")" : "", cal->fitted_factors,
                             tm.params().gemm.peak_fraction, tm.params().link_fraction,
                             tm.params().gemm.memory_fraction, 100 * cal->time_mean_abs_relative_error);
    if (moved)
      std::cerr << fmt::format("  moved to {}: the fitted fractions and overheads price its datasheet (docs/LLM.md, "
                               "\"Calibrated on another GPU\"); the errors above are {}'s\n",
                               hw.name, measured_hw->name);
    if (cal->cv.folds > 0)
      std::cerr << fmt::format("  cross-validated ({} folds, each configuration predicted by a fit without it): mean "
                               "|error| {:.2f}%{}\n",
                               cal->cv.folds, 100 * cal->cv.time_mean_abs_relative_error,
                               cal->cv.memory_mean_abs_relative_error >= 0
                                   ? fmt::format(", memory {:.2f}%", 100 * cal->cv.memory_mean_abs_relative_error)
                                   : "");
    if (cal->memory_rows > 0)
      std::cerr << fmt::format("  memory: a constant overhead of {:.2f} GiB per GPU fitted to the {} rows with memory_gib; "
                               "mean |error| {:.2f}%\n",
                               cal->memory_overhead_bytes / kGiB, cal->memory_rows, 100 * cal->memory_mean_abs_relative_error);
    if (cal->fit == "auto") {
      // Every fit passed over (or not possible on so few configurations): the one kept is said as such.
      const bool kept_though_passed_over =
          std::any_of(cal->passed_over.begin(), cal->passed_over.end(),
                      [&](const std::string& p) { return p.rfind(cal->fitted + ":", 0) == 0; });
      if (kept_though_passed_over)
        std::cerr << "  --fit auto found no fit it believes on these rows; " << cal->fitted
                  << " is the one they allow (warnings below)\n";
      else
        std::cerr << "  --fit auto chose " << cal->fitted << ": it cross-validates best on the measured rows\n";
      for (const auto& p : cal->passed_over) std::cerr << "  --fit auto passed over " << p << "\n";
    }
    if (cal->fitted != "efficiency")
      std::cerr << fmt::format("  overheads: {:.4g} s per iteration, {:.4g} s per layer and micro-batch; link latency "
                               "{:.4g} s\n",
                               tm.params().iteration_overhead_s, tm.params().layer_overhead_s,
                               tm.params().link_latency_s);
    if (!interval_note.empty()) std::cerr << "  " << interval_note << "\n";
    for (const auto& w : cal->warnings) std::cerr << "  warning: " << w << "\n";
  }
  if (!a.out.empty()) {
    std::cerr << fmt::format("wrote {} rows to {}{}\n", in.table.rows().size(), a.out == "-" ? "standard output" : a.out,
                             in.rejected.empty() ? "" : fmt::format(" ({} predicted)", values.size()));
    print_over_memory(rows, hw.gpu.capacity_bytes() / kGiB, hw.name);
    if (a.breakdown && a.out != "-") print_llm_time_breakdown(rows, "line");  // not into the CSV
    if (a.breakdown && a.out == "-")
      std::cerr << "note: --breakdown is not printed with -o - (it would mix with the CSV): give -o FILE, or --json\n";
    report_rejected();
    return;
  }
  std::cout << fmt::format("{:>6} {:>14} {:>11} {:>12} {:>12} {:>5}{}\n", "line", "iteration_s", "memory_GiB", "headroom_GiB",
                           "TFLOP/s/GPU", "MFU",
                           time_interval ? fmt::format(" {:>23}", fmt::format("{:.0f}% iteration_s", 100 * a.interval)) : "");
  for (const auto& j : rows)
    std::cout << fmt::format("{:>6} {:>14.4g} {:>11.2f} {:>12} {:>12.1f} {:>4.0f}%{}\n", j["line"].get<long>(),
                             j["iteration_time_s"].get<double>(), j["memory_gib"].get<double>(),
                             j["fits_memory"].get<bool>()
                                 ? fmt::format("{:.2f}", j["headroom_gib"].get<double>())
                                 : fmt::format("OVER {:.2f}", -j["headroom_gib"].get<double>()),
                             j["model_tflops_per_gpu"].get<double>(), 100 * j["mfu"].get<double>(),
                             time_interval ? fmt::format(" {:>11.4g}-{:<11.4g}", j["iteration_time_interval_s"][0].get<double>(),
                                                         j["iteration_time_interval_s"][1].get<double>())
                                           : "");
  if (a.breakdown) print_llm_time_breakdown(rows, "line");
  report_rejected();
}

// ---- memory ----

struct MemoryArgs {
  LlmShapeArgs shape;
  std::string gpu;
  structure::ParallelLayout layout;
  std::string recompute = "none", precision = "fp16";
  bool overlap = false;  // --overlap: as llm plan's, for the iteration time with --gpu
  bool json = false;
};

void run_memory(MemoryArgs a) {
  structure::TransformerSpec s = resolve_llm_shape(a.shape);
  auto rc = structure::parse_recompute(a.recompute);
  if (!rc) throw InputError("", 0, "--recompute", "must be none, selective or full");
  auto pr = structure::parse_precision(a.precision);
  if (!pr) throw InputError("", 0, "--precision", "must be fp16, bf16, fp32, amp-fp32-master or fp8");
  a.layout.recompute = *rc, a.layout.precision = *pr;
  // The overlaps llm plan --overlap sets, where the layout allows each.
  a.layout.overlap_grad_reduce = a.overlap;
  a.layout.overlap_param_gather = a.overlap && a.layout.distributed_optimizer;
  a.layout.tp_comm_overlap = a.overlap && a.layout.tp > 1;
  // Not given: a full pipeline, pp micro-batches a replica (2·pp interleaved,
  // whose first stage warms up with 2(pp - 1) + (vpp - 1)·pp chunks). The
  // first stage then holds as many micro-batches' activations as any longer
  // iteration; one micro-batch would understate a pipeline's memory pp-fold.
  if (a.layout.global_batch == 0) {
    const double batch =
        double(a.layout.micro_batch) * a.layout.dp * a.layout.pp * (a.layout.virtual_stages > 1 ? 2 : 1);
    if (batch > 1e9)  // in double: the product of four options may pass int's range
      throw InputError("", 0, "--micro-batch",
                       fmt::format("micro-batch x dp x pp{} = {:g} sequences, more than 1e9: give --global-batch",
                                   a.layout.virtual_stages > 1 ? " x 2" : "", batch));
    a.layout.global_batch = static_cast<int>(batch);
  }
  // A configuration column as the option that sets it ("micro_batch" is --micro-batch).
  auto option_of = [](std::string field) {
    std::replace(field.begin(), field.end(), '_', '-');
    return "--" + field;
  };
  if (auto p = structure::check_layout(s, a.layout)) throw InputError("", 0, option_of(p->field), p->message);
  models::LlmMemoryModel mm;
  auto m = mm.predict(s, a.layout);
  nlohmann::json j = memory_json(m);
  j["params_total"] = s.total_params();
  std::optional<models::LlmTimeBreakdown> t;
  std::optional<structure::HardwareProfile> hw;
  if (!a.gpu.empty()) {
    hw = io::resolve_llm_hardware(a.gpu, "--gpu");
    // As llm predict refuses such a row.
    if (auto p = structure::missing_unit(*hw, a.layout)) throw InputError("", 0, option_of(p->field), p->message);
    t = models::LlmTimeModel(*hw).predict(s, a.layout);
    j["time"] = llm_time_json(*t, hw->gpu.dense_peak_tflops(a.layout.precision));
    j["gpu_memory_gb"] = hw->gpu.memory_gb;
    j["gpu_capacity_gib"] = hw->gpu.capacity_bytes() / kGiB;
    j.update(fit_json(*hw, m));
    j["plan_reserve_gib"] = plan::LlmPlanOptions{}.memory_reserve_bytes / kGiB;
  }
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  const auto& l = a.layout;
  std::cout << fmt::format("{} ({:.4g}B parameters), tp {} cp {} pp {} dp {} vpp {}{}, micro-batch {}, global batch {}, "
                           "recompute {}{}{}, {}\n",
                           s.name.empty() ? "transformer" : s.name, s.total_params() / 1e9, l.tp, l.cp, l.pp, l.dp,
                           l.virtual_stages,
                           l.uneven() ? fmt::format(" (stage layers: first {}, between {}, last {})",
                                                    structure::stage_layers(s, l, 0),
                                                    l.pp > 2 ? std::to_string(structure::stage_layers(s, l, 1)) : "-",
                                                    structure::stage_layers(s, l, l.pp - 1))
                                      : "",
                           l.micro_batch, l.global_batch, a.recompute,
                           l.sequence_parallel ? ", sequence parallel" : "",
                           l.distributed_optimizer ? ", distributed optimizer" : "", a.precision);
  std::cout << fmt::format("memory per GPU, stage {} (the most loaded):\n", m.stage);
  for (auto [name, v] : {std::pair{"weights", m.weights}, {"gradients", m.gradients}, {"optimizer", m.optimizer},
                         {"activations", m.activations}, {"embedding/logits", m.embedding_logits},
                         {"recompute working", m.recompute_working}, {"overhead", m.overhead}, {"total", m.total()}})
    if (v > 0 || std::string_view(name) == "total") std::cout << fmt::format("  {:<17} {:>9.2f} GiB\n", name, v / kGiB);
  if (hw) {
    const double headroom = j["headroom_gib"].get<double>(), reserve = j["plan_reserve_gib"].get<double>();
    const std::string fit =
        headroom < 0 ? fmt::format("does NOT fit ({:.2f} GiB over)", -headroom)
        : headroom < reserve
            ? fmt::format("fits with {:.2f} GiB to spare (llm plan keeps {:g} GiB free, so it would not choose this)",
                          headroom, reserve)
            : fmt::format("fits ({:.2f} GiB to spare)", headroom);
    std::cout << fmt::format("{}: {} per GPU, {}; iteration {:.4g} s ({:.1f} model TFLOP/s per GPU, MFU {:.0f}%)\n",
                             hw->name, hw->gpu.memory_text(), fit, t->iteration,
                             j["time"]["model_tflops_per_gpu"].get<double>(), 100 * j["time"]["mfu"].get<double>());
  }
}

// ---- evaluate ----

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
    std::cout << nlohmann::json{{"rows", e.rows.size()}, {"total_rows", data.total_rows}, {"excluded", data.excluded},
                                {"time_datasheet_mape", e.time_datasheet_mape},
                                {"time_calibrated_leave_model_out_mape", e.time_calibrated_mape},
                                {"peak_datasheet_mape", e.peak_datasheet_mape},
                                {"peak_calibrated_leave_model_out_mape", e.peak_calibrated_mape},
                                {"per_model", per}, {"ranking", rank}, {"ranking_within", within},
                                {"repeatability", {{"rows", e.repeated_rows},
                                                   {"time_mape_by_the_other_runs", e.time_repeat_mape},
                                                   {"time_calibrated_mape", e.time_calibrated_on_repeated_mape}}},
                                {"row_predictions", row_predictions},
                                {"calibrated_on_5", on_k}}
                     .dump(2)
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
    std::cout << nlohmann::json{{"runs", a.runs}, {"gpu", hw.name}, {"rows", rows},
                                {"time_datasheet_mape", e.time_datasheet_mape},
                                {"time_calibrated_leave_configuration_out_mape", e.time_calibrated_mape},
                                {"peak_datasheet_mape", e.peak_datasheet_mape},
                                {"peak_calibrated_leave_configuration_out_mape", e.peak_calibrated_mape}}
                     .dump(2)
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
  std::cout << (a.json ? js.dump(2) + "\n" : text);
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
  if (!a.plot.empty()) io::check_plot_path(a.plot);
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
  if (!a.plot.empty()) plot_grid(a.plot, e, law, hw);
  const auto& f = e.fitted_time;
  const double n = double(e.rows.size());
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
    std::cout << nlohmann::json{{"grid", a.grid}, {"gpu", hw.name}, {"fit", a.fit}, {"rows", rows},
                                {"time_datasheet_mape", e.time_datasheet_mape},
                                {"time_calibrated_leave_configuration_out_mape", e.time_calibrated_mape},
                                {"time_calibrated_leave_configuration_out_worst", e.time_calibrated_worst},
                                {"memory_datasheet_mape", e.memory_datasheet_mape},
                                {"memory_calibrated_leave_configuration_out_mape", e.memory_calibrated_mape},
                                {"memory_calibrated_leave_configuration_out_worst", e.memory_calibrated_worst},
                                {"fitted_on_all", {{"peak_fraction", f.gemm.peak_fraction},
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
                                {"intervals", intervals}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << fmt::format("{}: {} configurations on {}; calibrated = fitted ({}) on the other rows\n", a.grid,
                           e.rows.size(), hw.name, a.fit);
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
  std::cout << fmt::format("fitted on all rows: peak {:.3f}, memory {:.3f}, link {:.3f}, link latency {:.3g} s, "
                           "iteration overhead {:.3g} s, layer overhead {:.3g} s, memory overhead {:.4f} GiB; in-sample "
                           "time MAPE {:.2f}%\n",
                           f.gemm.peak_fraction, f.gemm.memory_fraction, f.link_fraction, f.link_latency_s,
                           f.iteration_overhead_s, f.layer_overhead_s, e.fitted_memory.overhead_bytes / kGiB,
                           100 * e.time_in_sample_mape);
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
    std::cout << nlohmann::json{{"gpu", hw.name},
                                {"iteration_time", summary_json(ts)},
                                {"iteration_time_calibrated_leave_model_out", summary_json(cs)},
                                {"iteration_time_calibrated_on_5", summary_json(k5)},
                                {"memory", summary_json(ms)}}
                     .dump(2)
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
  auto* llm = root.add_subcommand("llm", "Transformer training: iteration time and memory under tensor, pipeline and "
                                         "data parallelism (docs/LLM.md)");
  llm->require_subcommand(1);

  auto pa = std::make_shared<PredictArgs>();
  auto* p = llm->add_subcommand("predict", "Iteration time and memory per GPU for each configuration of a CSV");
  p->add_option("--configs", pa->configs,
                "CSV: gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp (+ optional vocab,ffn_hidden,"
                "virtual_stages,recompute,sequence_parallel,distributed_optimizer,precision)")
      ->required();
  p->add_option("--gpu", pa->gpu, "A catalog name (trainplan hardware) or a hardware file")->required();
  p->add_option("--calibrate", pa->calibrate,
                "Measured iterations (the same columns + iteration_time_s, optional memory_gib): fit the efficiency "
                "factors (and the memory overhead)");
  p->add_option("--calibrate-gpu", pa->calibrate_gpu,
                "The GPU the --calibrate rows ran on, when not --gpu: fitted there, the fractions and overheads then "
                "price --gpu (your own runs on one GPU, a plan on another) [default: --gpu]");
  add_llm_fit_option(p, pa->fit);
  p->add_option("--interval", pa->interval,
                "With --calibrate: also give each prediction's interval at this coverage (e.g. 0.8), from the "
                "calibration's cross-validated errors; adds iteration_time_lo_s, iteration_time_hi_s (and with "
                "memory_gib rows memory_gib_lo, memory_gib_hi) to --out")
      ->check(coverage_or_none());
  p->add_option("-o,--out", pa->out,
                 "Write the configurations with iteration_time_s and memory_gib appended ('-': standard output)");
  p->add_flag("--breakdown", pa->breakdown,
              "Also print where each row's iteration goes: compute, memory-bound kernels, tensor- (and "
              "context-), pipeline- and data-parallel communication, the pipeline bubble, the optimizer step");
  p->add_flag("--json", pa->json, "Print JSON with each row's breakdown");
  p->callback([pa, p] {
    if (p->get_option("--fit")->count() > 0 && pa->calibrate.empty())
      throw InputError("", 0, "--fit", "needs --calibrate: it says what the calibration on measured rows fits");
    run_predict(*pa);
  });

  auto models_json = std::make_shared<bool>(false);
  auto* zoo = llm->add_subcommand("models", "The zoo: the transformers --model names, with their shapes and sources");
  zoo->add_flag("--json", *models_json, "Print JSON");
  zoo->callback([models_json] { list_models(*models_json); });

  auto ma = std::make_shared<MemoryArgs>();
  auto* m = llm->add_subcommand("memory", "Memory per GPU of one configuration, by part");
  m->footer("Example:\n  trainplan llm memory --model megatron-175b --tp 8 --pp 8 --virtual-stages 3 "
            "--global-batch 64 --recompute selective --sequence-parallel --gpu a100-80gb");
  add_llm_shape_options(m, ma->shape);
  m->add_option("--tp", ma->layout.tp, "Tensor-parallel ranks")->capture_default_str();
  m->add_option("--cp", ma->layout.cp, "Context-parallel ranks (each sequence split over them)")->capture_default_str();
  m->add_option("--pp", ma->layout.pp, "Pipeline stages")->capture_default_str();
  m->add_option("--dp", ma->layout.dp, "Data-parallel replicas")->capture_default_str();
  m->add_option("--virtual-stages", ma->layout.virtual_stages, "Model chunks per stage (interleaved 1F1B)")->capture_default_str();
  m->add_option("--first-stage-layers", ma->layout.first_stage_layers,
                "Layers on the first pipeline stage (Megatron's --decoder-first-pipeline-num-layers; 0: the even share)")
      ->capture_default_str();
  m->add_option("--last-stage-layers", ma->layout.last_stage_layers,
                "Layers on the last pipeline stage (--decoder-last-pipeline-num-layers; 0: the even share)")
      ->capture_default_str();
  m->add_option("--micro-batch", ma->layout.micro_batch, "Sequences per micro-batch")->capture_default_str();
  ma->layout.global_batch = 0;
  m->add_option("--global-batch", ma->layout.global_batch,
                "Sequences per iteration, a multiple of micro-batch x dp (default: a full pipeline, micro-batch x dp "
                "x pp, twice that interleaved: the most activations the schedule holds)");
  m->add_option("--recompute", ma->recompute, "none, selective or full")->capture_default_str();
  m->add_flag("--sequence-parallel", ma->layout.sequence_parallel, "Sequence parallelism");
  m->add_flag("--distributed-optimizer", ma->layout.distributed_optimizer, "Shard the optimizer states across dp");
  m->add_flag_callback("--no-dropout", [ma] { ma->layout.dropout = false; }, "No attention or hidden dropout: no dropout masks stored");
  m->add_flag("--fp32-residual", ma->layout.fp32_residual, "An fp32 residual stream (--fp32-residual-connection)");
  m->add_flag("--grad-reduce-in-bf16", ma->layout.grad_reduce_in_bf16,
              "Gradients kept and reduced in bf16 (--grad-reduce-in-bf16): 2 bytes a parameter instead of 4");
  m->add_flag("--flash-attention", ma->layout.flash_attention, "Fused attention: no s^2 activations");
  m->add_flag("--overlap", ma->overlap,
              "With --gpu: communication overlapped with computation, as llm plan --overlap prices it (the "
              "data-parallel reduction, the weights' gather with the distributed optimizer, tensor-parallel "
              "collectives where tp > 1)");
  m->add_option("--precision", ma->precision, "fp16, bf16, fp32, amp-fp32-master or fp8")->capture_default_str();
  m->add_option("--gpu", ma->gpu, "Also say whether it fits and the iteration time on this GPU");
  m->add_flag("--json", ma->json, "Print JSON");
  m->callback([ma] { run_memory(*ma); });

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
  e->add_option("--interval", ea->interval,
                "With --grid, --scale, --neusight or --nemo: also score the intervals llm predict --interval gives at this coverage (0: none)")
      ->capture_default_str()
      ->check(coverage_or_none());
  add_llm_fit_option(e, ea->fit, "With --grid, --scale, --neusight, --nemo or --korthikanti: what calibration fits (as llm predict --fit)");
  e->add_option("--gpu", ea->gpu, "The GPU the runs used")->capture_default_str();
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

CommandRegistrar reg(46, setup);

}  // namespace
}  // namespace trainplan::cli
