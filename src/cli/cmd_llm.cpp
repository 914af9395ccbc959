// trainplan llm: transformer training under tensor, pipeline and data
// parallelism (docs/LLM.md). `predict` gives iteration time and memory per
// GPU for a CSV of configurations, from the datasheet or calibrated on
// measured iterations; `memory` breaks one configuration's memory down;
// `models` lists the zoo. `evaluate`, `plan` and `profile` live in their own
// files (cmd_llm_evaluate.cpp, cmd_llm_plan.cpp, cmd_llm_profile.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string_view>
#include <nlohmann/json.hpp>

#include "app/llm_calibration.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "cli/llm_shape.h"
#include "cli/llm_time_report.h"
#include "core/error.h"
#include "io/json_text.h"
#include "io/output_path.h"
#include "io/hardware_file.h"
#include "io/llm_config_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "plan/llm_planner.h"

namespace trainplan::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

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
// The rows predicted not to fit, tallied as they are predicted: the first
// few named, the rest counted (a file of a million rows keeps no more).
struct OverMemory {
  static constexpr size_t kListed = 10;
  std::vector<std::string> listed;
  size_t over = 0, rows = 0;
  void add(long line, double memory_gib, double headroom_gib) {
    ++rows;
    if (headroom_gib >= 0) return;
    if (++over <= kListed) listed.push_back(fmt::format("line {} ({:.2f} GiB, over by {:.2f})", line, memory_gib, -headroom_gib));
  }
};

void print_over_memory(const OverMemory& o, double gpu_gib, const std::string& gpu) {
  if (o.over == 0) return;
  std::string listed = fmt::format("{}", fmt::join(o.listed, ", "));
  if (o.over > o.listed.size()) listed += fmt::format(" and {} more", o.over - o.listed.size());
  std::cerr << fmt::format("note: {} of {} configurations are predicted not to fit in {}'s {:.2f} GiB per GPU: {}\n",
                           o.over, o.rows, gpu, gpu_gib, listed);
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
  if (json) std::cout << io::json_text(nlohmann::json{{"models", out}}) << "\n";
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
  note_catalog_alias(a.gpu, "--gpu");
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
  auto rejected_error = [&]() -> std::optional<InputError> {
    if (rejected.empty()) return std::nullopt;
    const size_t in_rows = in.rejected.size(), measured_rows = rejected.size() - in_rows;
    std::vector<std::string> parts;
    const size_t unsplit = in.table.malformed_rows().size();
    if (in_rows)
      parts.push_back(fmt::format("{} of {} rows not predicted (named above)", in_rows,
                                  in.table.rows().size() + unsplit));
    if (in_rows > unsplit && !a.out.empty() && a.out != "-")
      parts.push_back("their prediction cells in " + a.out + " are empty");
    if (unsplit && !a.out.empty() && a.out != "-")
      parts.push_back(fmt::format("{} whose fields do not match the header {} in {} without predictions, cut or "
                                  "padded to its columns",
                                  unsplit, unsplit == 1 ? "is" : "are", a.out));
    if (measured_rows)
      parts.push_back(fmt::format("{} measured row{} left out of the calibration{}", measured_rows,
                                  measured_rows == 1 ? "" : "s", in_rows ? "" : " (named above)"));
    return InputError(in_rows ? a.configs : a.calibrate, 0, "", fmt::format("{}", fmt::join(parts, "; ")));
  };
  auto report_rejected = [&] {
    if (auto e = rejected_error()) throw *e;
  };
  const bool time_interval = a.interval > 0 && cal && !cal->cv.time_errors_by_configuration.empty();
  const bool memory_interval = a.interval > 0 && cal && !cal->cv.memory_errors_by_configuration.empty();
  // Asked for, the interval columns are written even when the calibration
  // cannot give them (too few configurations to cross-validate): empty,
  // rather than missing from a file a script reads by its header.
  const bool time_columns = a.interval > 0 && cal;
  const bool memory_columns = a.interval > 0 && cal && (memory_interval || cal->memory_rows > 0);
  std::vector<std::string> columns = {"iteration_time_s", "memory_gib"};
  if (time_columns) columns.insert(columns.end(), {"iteration_time_lo_s", "iteration_time_hi_s"});
  if (memory_columns) columns.insert(columns.end(), {"memory_gib_lo", "memory_gib_hi"});
  bool short_of_coverage = false;
  std::vector<std::vector<double>> values;
  // Each row's answer in full where it is printed (the JSON, the table, the breakdown); a file
  // written alone needs only the values, and a million rows' JSON would take gigabytes.
  const bool row_answers = a.json || a.out.empty() || a.breakdown;
  nlohmann::json rows = nlohmann::json::array();
  OverMemory over_memory;
  for (const auto& r : in.rows) {
    auto t = tm.predict(r.spec, r.layout);
    auto m = mm.predict(r.spec, r.layout);
    values.push_back({t.iteration, m.total() / kGiB});
    over_memory.add(r.line, m.total() / kGiB, (hw.gpu.capacity_bytes() - m.total()) / kGiB);
    nlohmann::json j;
    if (row_answers) {
      j = {{"line", r.line}, {"precision", structure::to_string(r.layout.precision)}};
      j.update(fit_json(hw, m));
      j.update(llm_time_json(t, hw.gpu.dense_peak_tflops(r.layout.precision)));
      j.update(memory_json(m));
    }
    if (time_interval) {
      auto iv = *uncertainty::conformal_interval(t.iteration, cal->cv.time_errors_by_configuration, a.interval);
      values.back().insert(values.back().end(), {iv.lo, iv.hi});
      j["iteration_time_interval_s"] = {iv.lo, iv.hi};
      short_of_coverage |= iv.short_of_coverage;
    } else if (time_columns) {
      values.back().insert(values.back().end(), {NAN, NAN});
      j["iteration_time_interval_s"] = nullptr;
    }
    if (memory_interval) {
      auto iv = *uncertainty::conformal_interval(m.total() / kGiB, cal->cv.memory_errors_by_configuration, a.interval);
      values.back().insert(values.back().end(), {iv.lo, iv.hi});
      j["memory_gib_interval"] = {iv.lo, iv.hi};
      short_of_coverage |= iv.short_of_coverage;
    } else if (memory_columns) {
      values.back().insert(values.back().end(), {NAN, NAN});
      j["memory_gib_interval"] = nullptr;
    }
    if (row_answers) rows.push_back(j);
  }
  if (!a.out.empty()) {
    // The file's own columns of these names (measured times, say) give way to the predictions.
    for (const auto& c : columns)
      if (const int own = in.table.own_column(c); own >= 0)
        std::cerr << fmt::format("note: {}'s column '{}' is replaced by the prediction in {}\n", a.configs,
                                 in.table.header()[own], a.out == "-" ? "the output" : a.out);
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
          ? "no intervals: the calibration has fewer than two configurations to cross-validate (their columns are "
            "empty)"
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
    // The exit's error in the answer itself, as every failing --json answer has it.
    if (auto e = rejected_error()) out.update(json_error_fields(e->what(), kExitInputError, &*e));
    std::cout << io::json_text(out) << "\n";
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
    std::cerr << fmt::format("wrote {} rows to {}{}\n", in.table.rows().size() + in.table.malformed_fields().size(),
                             a.out == "-" ? "standard output" : a.out,
                             in.rejected.empty() ? "" : fmt::format(" ({} predicted)", values.size()));
    print_over_memory(over_memory, hw.gpu.capacity_bytes() / kGiB, hw.name);
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
  a.layout.tp_comm_overlap = a.overlap && a.layout.tp > 1 && a.layout.sequence_parallel;  // Megatron-LM's rule, as the planner's
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
    std::cout << io::json_text(j) << "\n";
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
                           l.micro_batch, l.global_batch, structure::to_string(l.recompute),
                           l.sequence_parallel ? ", sequence parallel" : "",
                           l.distributed_optimizer ? ", distributed optimizer" : "",
                           structure::to_string(l.precision));  // as read: "bf16-mixed" is bf16
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

void setup(CLI::App& root) {
  auto* llm = root.add_subcommand("llm", "Transformer training: iteration time and memory under tensor, pipeline and "
                                         "data parallelism (docs/LLM.md)");
  llm->require_subcommand(1);

  auto pa = std::make_shared<PredictArgs>();
  auto* p = llm->add_subcommand("predict", "Iteration time and memory per GPU for each configuration of a CSV");
  p->add_option("--configs", pa->configs,
                "CSV ('-': standard input): gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp (+ optional vocab,ffn_hidden,"
                "kv_groups,cp,virtual_stages,first_stage_layers,last_stage_layers,recompute,sequence_parallel,"
                "distributed_optimizer,flash_attention,dropout,gated_mlp,tied_embeddings,precision, ...; docs/LLM.md "
                "lists them all with their defaults: vocabulary 51,200, FFN 4 x hidden, no recomputation, and "
                "fp16 mixed precision, where llm plan takes bf16)")
      ->required();
  p->add_option("--gpu", pa->gpu, "A catalog name (trainplan hardware) or a hardware file")->required();
  p->add_option("--calibrate", pa->calibrate,
                "Measured iterations (the same columns + iteration_time_s, optional memory_gib): fit the efficiency "
                "factors (and the memory overhead)");
  p->add_option("--calibrate-gpu", pa->calibrate_gpu,
                "The GPU the --calibrate rows ran on, when not --gpu: fitted there, the fractions and overheads then "
                "price --gpu (your own runs on one GPU, a plan on another) [default: --gpu]");
  add_llm_fit_option(p, pa->fit);
  p->add_option("--interval,--confidence", pa->interval,
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
    if (pa->configs == "-" && pa->calibrate == "-")
      throw InputError("", 0, "--calibrate", "standard input is --configs' ('-'): give the measured rows as a file");
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
  m->callback([ma, m] {
    if (m->get_option("--overlap")->count() > 0 && ma->gpu.empty())
      throw InputError("", 0, "--overlap", "goes with --gpu: it changes the iteration time there, not the memory");
    run_memory(*ma);
  });
}

CommandRegistrar reg(46, setup);

}  // namespace
}  // namespace trainplan::cli
