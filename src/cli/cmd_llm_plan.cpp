// trainplan llm plan: the Megatron-LM configuration (tp, pp, virtual stages,
// dp, micro-batch, recomputation, sequence parallelism, distributed
// optimizer) that trains a token budget at the least GPU-hours under a
// deadline, or in the least time under a GPU-hour budget, by exhaustive
// search (plan/llm_planner.h); --emit prints it as a torchrun command line or
// an sbatch script (plan/llm_launch.h); --calibrate ranks the configurations
// with the time and memory models fitted to measured iterations, as `llm
// predict --calibrate` fits them (app/llm_calibration.h). Nothing qualifies:
// exit 3 naming the constraint that fails and by how much. Several GPUs
// (--gpu a100-80gb,h100) answer "what if we had other GPUs": each GPU's best
// plan side by side, exit 3 only when none has one; --price puts a cost on
// each and names the cheapest, --cost-budget asks for the least time within
// what the training may cost.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <vector>
#include <nlohmann/json.hpp>

#include "app/llm_plan_on_gpus.h"
#include "app/llm_plan_request.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "cli/llm_shape.h"
#include "cli/llm_time_report.h"
#include "core/error.h"
#include "io/gnuplot.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "io/llm_config_csv.h"
#include "models/llm_time.h"
#include "plan/llm_launch.h"
#include "plan/merged_frontier.h"
#include "plan/plan_plot.h"
#include "plan/frontier.h"
#include "plan/llm_planner.h"

namespace trainplan::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct PlanArgs {
  LlmShapeArgs shape;
  std::string gpu, precision, emit, script = "pretrain_gpt.py", calibrate, fit = "auto";
  std::string job_name = "trainplan-llm";
  std::string calibrate_gpu;  // the GPU the --calibrate rows ran on ("": --gpu)
  plan::LlmPlanOptions options;
  double reserve_gib = plan::LlmPlanOptions{}.memory_reserve_bytes / kGiB;
  double interval = 0.8;
  std::string price;         // a GPU-hour's price: one number, or NAME=PRICE per --gpu
  double cost_budget = 0;    // what the training may cost, in the price's currency (0: none)
  bool json = false;
  bool breakdown = false;  // where each listed configuration's iteration goes
  bool top_given = false;  // --top given: with several --gpu, each GPU's alternatives listed too
  std::string plot;  // the cost-time frontier as a chart (.png or .svg)
  int gpus = 0;      // --gpus: exactly this many (min and max); 0: not given
};

// Each listed configuration's time breakdown (cli/llm_time_report.h) from
// the model the plan ranked with, keyed by its rank.
nlohmann::json breakdowns(const app::LlmPlanOutcome& o) {
  const models::LlmTimeModel model(o.hardware, o.time_params);
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < o.result.top.size(); ++i) {
    const auto& l = o.result.top[i].layout;
    nlohmann::json j = llm_time_json(model.predict(o.spec, l), o.hardware.gpu.dense_peak_tflops(l.precision));
    j["rank"] = long(i + 1);
    rows.push_back(j);
  }
  return rows;
}

// What each deadline costs: the frontier, one row per point, with the
// deadline from which it is the cheapest.
void print_frontier(const std::vector<plan::LlmCandidate>& front, double price) {
  std::cout << fmt::format("\nwhat a deadline costs: the cheapest configuration that fits, by the training time it allows "
                           "({} points, fastest first)\n{:>10} {:>10}{} {:>5}  {}\n",
                           front.size(), "train_h", "GPU-hours", price > 0 ? fmt::format(" {:>10}", "cost") : "", "gpus",
                           "configuration");
  for (const auto& c : front)
    std::cout << fmt::format("{:>10.4g} {:>10.4g}{} {:>5}  {}\n", plan::ceil_significant(c.train_s / 3600), c.gpu_hours,
                             price > 0 ? fmt::format(" {:>10.4g}", c.gpu_hours * price) : "", c.layout.gpus(),
                             plan::describe(c.layout));
}

void plot_frontier(const std::string& path, const app::LlmPlanOutcome& o) {
  io::PlotPanel panel;
  panel.title = fmt::format("{} on {}: what a deadline costs", o.spec.name.empty() ? "transformer" : o.spec.name,
                            o.hardware.name);
  panel.xlabel = "training time (h)";
  panel.ylabel = "GPU-hours";
  panel.logx = panel.logy = true;
  panel.key = "top right";
  const auto& frontier = o.result.frontier;
  double first = INFINITY, last = 0, lo = INFINITY, hi = 0;
  for (const auto& c : frontier)
    first = std::min(first, c.train_s / 3600), last = std::max(last, c.train_s / 3600),
    lo = std::min(lo, c.gpu_hours), hi = std::max(hi, c.gpu_hours);
  const double deadline_h = o.options.deadline_s > 0 ? o.options.deadline_s / 3600 : 0;
  // The steps run past the slowest point (a frontier of one point is a step, not nothing), and
  // far enough right to show the deadline when it lies beyond them.
  const double right = std::max(last * std::pow(10.0, 0.25), deadline_h * 1.3);
  io::PlotSeries front{"cheapest that fits within the time", {}, "steps", io::plot_palette()[0]};
  for (const auto& c : frontier) front.points.push_back({c.train_s / 3600, c.gpu_hours});
  if (!front.points.empty()) front.points.push_back({right, front.points.back().second});
  panel.series.push_back(front);
  if (!o.result.top.empty())
    panel.series.push_back({"chosen", {{o.result.top.front().train_s / 3600, o.result.top.front().gpu_hours}}, "points",
                            io::plot_palette()[1]});
  if (deadline_h > 0) {
    panel.xrange = {{std::min(first, deadline_h) / std::pow(10.0, 0.1), right}};
    panel.series.push_back({fmt::format("deadline {:.4g} h", deadline_h), {{deadline_h, lo / 1.15}, {deadline_h, hi * 1.15}},
                            "lines lw 1 dt 3", "#d62728"});
  }
  io::render_plot(path, {panel});
}

// Several GPUs: each one's frontier as a step (cost with prices, else
// GPU-hours, which compare within a GPU only) and each one's chosen plan.
void plot_gpu_frontiers(const std::string& path, const std::vector<app::LlmPlanOutcome>& outcomes,
                        const std::vector<double>& prices) {
  std::vector<plan::FrontierLine> lines;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const auto& r = outcomes[i].result;
    const double price = prices.empty() ? 1.0 : prices[i];
    plan::FrontierLine l{outcomes[i].hardware.name, {}, std::nullopt};
    for (const auto& c : r.frontier) l.points.push_back({c.train_s / 3600, c.gpu_hours * price});
    if (!r.top.empty()) l.chosen = {{r.top.front().train_s / 3600, r.top.front().gpu_hours * price}};
    lines.push_back(std::move(l));
  }
  const auto& spec = outcomes.front().spec;
  io::render_plot(path, {plan::frontier_lines_panel(
                            lines, outcomes.front().options.deadline_s / 3600,
                            fmt::format("{}: what a deadline costs on each GPU{}", spec.name.empty() ? "transformer" : spec.name,
                                        prices.empty() ? "" : " (the lowest step is the GPU to rent)"),
                            "training time (h)", "h", prices.empty() ? "GPU-hours" : "cost (price x GPU-hours)", true)});
}

// "gpt3-175b (174.6B parameters), 3e+11 tokens, global batch 1536 x 2048 tokens: 95368 iterations"
std::string job_line(const structure::TransformerSpec& s, const plan::LlmPlanOptions& o, long iterations) {
  return fmt::format("{} ({:.4g}B parameters), {:.4g} tokens, global batch {} x {} tokens: {} iterations",
                     s.name.empty() ? "transformer" : s.name, s.total_params() / 1e9, o.tokens, o.global_batch, s.seq,
                     iterations);
}

// "fewest GPU-hours within 1440 h": the objective and its limits.
std::string objective_line(const char* objective, const plan::LlmPlanOptions& o) {
  return fmt::format("{}{}{}", objective, o.deadline_s > 0 ? fmt::format(" within {:.4g} h", o.deadline_s / 3600) : "",
                     o.cost_budget > 0          ? fmt::format(" within a cost of {:.4g}", o.cost_budget)
                     : o.gpu_hour_budget > 0    ? fmt::format(" within {:.4g} GPU-hours", o.gpu_hour_budget)
                                                : "");
}

// A line on stderr every 5 s of a search that has run 5 s: most take
// milliseconds, and one of millions of layouts (a huge --max-gpus with
// --max-cp and --uneven-end-stages) minutes, which should not look hung.
std::function<void(long)> search_progress(const std::string& gpu) {
  const auto start = std::chrono::steady_clock::now();
  auto next = std::make_shared<double>(5.0);
  return [start, next, gpu](long enumerated) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s < *next) return;
    *next = s + 5;
    std::cerr << fmt::format("searching on {}: {:.3g} configurations in {:.0f} s so far\n", gpu, double(enumerated), s);
  };
}

// The options for one GPU: its price beside the shared options (the planner turns a cost budget into the GPU-hours it buys there).
// Without --precision, each GPU's default (bf16; fp16 on a GPU whose tensor cores take fp16 only).
plan::LlmPlanOptions options_for(const PlanArgs& a, double price, const structure::HardwareProfile& hw) {
  plan::LlmPlanOptions o = a.options;
  o.price_per_gpu_hour = price;
  o.cost_budget = a.cost_budget;
  if (a.precision.empty()) o.precision = structure::default_training_precision(hw);
  o.on_progress = search_progress(hw.name);
  return o;
}

app::LlmPlanOutcome plan_or_name_the_option(const structure::TransformerSpec& s, const structure::HardwareProfile& hw,
                                            const plan::LlmPlanOptions& options, const app::LlmPlanMeasured* measured) {
  try {
    return app::make_llm_plan(s, hw, options, measured);
  } catch (const InputError& e) {
    if (!e.file().empty() || e.field().empty()) throw;
    // The planner's fields are its options' names; the CLI's are dashed, and some are named otherwise.
    static const std::map<std::string, std::string> renamed = {{"price_per_gpu_hour", "price"},
                                                               {"memory_reserve_bytes", "reserve-gib"},
                                                               {"deadline_s", "deadline"},
                                                               {"gpu_hour_budget", "gpu-budget"},
                                                               {"top_k", "top"}};
    const auto r = renamed.find(e.field());
    std::string f = r != renamed.end() ? r->second : e.field();
    std::replace(f.begin(), f.end(), '_', '-');
    throw InputError("", 0, "--" + f, e.message());
  }
}

// --calibrate's rows, measured on `there` (a row that GPU cannot run is no measurement of it).
app::LlmPlanMeasured read_measured(const PlanArgs& a, const structure::HardwareProfile& there) {
  auto rows = read_llm_configs_noted(a.calibrate, /*require_time=*/true);
  io::require_hardware_support(rows, there);
  return app::LlmPlanMeasured{std::move(rows), a.calibrate, a.fit, a.interval, there};
}

// Each GPU's best plan, one line each; the JSON holds every GPU's full answer.
void run_comparison(const structure::TransformerSpec& s, const std::vector<structure::HardwareProfile>& gpus,
                    const std::vector<double>& prices, const PlanArgs& a, const app::LlmPlanMeasured* measured) {
  std::vector<app::LlmPlanOutcome> planned;
  for (size_t i = 0; i < gpus.size(); ++i)
    planned.push_back(plan_or_name_the_option(s, gpus[i], options_for(a, prices[i], gpus[i]), measured));
  for (const auto& o : planned) {
    for (const auto& n : o.result.notes) std::cerr << "note: " << o.hardware.name << ": " << n << "\n";
    if (const auto note = app::reserve_note(o, planned.size() > 1))
      std::cerr << "note: " << o.hardware.name << ": " << *note << "\n";
  }
  const bool priced = prices.front() > 0;
  const app::LlmGpuComparison cmp = app::compare_llm_plans(std::move(planned), priced ? prices : std::vector<double>{});
  const auto& outcomes = cmp.plans;
  const bool any = cmp.any();
  // Per GPU with a plan, its chosen plan's cost (with prices) and training time, for the gaps.
  std::vector<std::string> names;
  std::vector<std::optional<double>> costs, hours;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const auto& top = outcomes[i].result.top;
    names.push_back(outcomes[i].hardware.name);
    costs.push_back(top.empty() ? std::nullopt : std::optional(top.front().gpu_hours * prices[i]));
    hours.push_back(top.empty() ? std::nullopt : std::optional(top.front().train_s / 3600));
  }
  const std::optional<size_t> cheapest = cmp.cheapest, fastest = cmp.fastest;
  // Under a budget the objective is time: the plan that trains soonest.
  const bool least_time = outcomes.front().minimises_time();
  const std::vector<plan::MergedPoint>& merged = cmp.frontier;
  // Drawn after the answer is printed, so that a chart that fails loses no answer.
  const bool any_frontier = std::any_of(outcomes.begin(), outcomes.end(),
                                        [](const app::LlmPlanOutcome& o) { return !o.result.frontier.empty(); });
  if (!a.plot.empty() && !any_frontier)
    std::cerr << "note: no chart: no GPU has a configuration that fits, so there is no frontier to draw\n";
  const bool draw = !a.plot.empty() && any_frontier;
  if (a.json) {
    nlohmann::json j = app::to_json(cmp);
    // The whole answer, each GPU's reason in it, with the failure's fields a script reads on any verb.
    if (!any)
      j["error"] = "no GPU in --gpu has a configuration that qualifies (each GPU's reason is in its plan)",
      j["exit_code"] = kExitInfeasible, j["infeasible"] = true;
    std::cout << io::json_text(j) << "\n";
    note_json_answer_printed();
  } else {
    std::cout << job_line(s, a.options, outcomes.front().result.iterations) << "; "
              << objective_line(outcomes.front().objective(), outcomes.front().options) << "\n";
    if (measured)
      std::cout << fmt::format("calibrated on {} ({} rows measured on {}): its fitted fractions and overheads price "
                               "each GPU\n",
                               a.calibrate, measured->table.rows.size(), measured->hardware->name);
    std::cout << fmt::format("{:<16} {:>5} {:>3} {:>3} {:>3} {:>3} {:>5} {:>3} {:<9} {:>9} {:>9} {:>10} {:>8} {:>5}{}\n", "gpu",
                             "gpus", "tp", "cp", "pp", "vpp", "dp", "mb", "recompute", "iter_s", "train_h", "GPU-hours",
                             "mem_GiB", "MFU", priced ? fmt::format(" {:>10} {:>10}", "price", "cost") : "");
    for (size_t i = 0; i < outcomes.size(); ++i) {
      const auto& o = outcomes[i];
      if (o.result.top.empty()) {
        std::cout << fmt::format("{:<16} {}: {}\n", o.hardware.name, o.result.failing, o.result.explanation);
        continue;
      }
      // The chosen plan; with --top, the GPU's alternatives under it (#2, #3, ...).
      for (size_t k = 0; k < (a.top_given ? o.result.top.size() : 1); ++k) {
        const auto& c = o.result.top[k];
        const auto& l = c.layout;
        std::cout << fmt::format("{:<16} {:>5} {:>3} {:>3} {:>3} {:>3} {:>5} {:>3} {:<9} {:>9.4g} {:>9.4g} {:>10.4g} {:>8.2f} {:>4.0f}%{}\n",
                                 k == 0 ? o.hardware.name : fmt::format("  #{}", k + 1), l.gpus(), l.tp, l.cp, l.pp,
                                 l.virtual_stages, l.dp, l.micro_batch, structure::to_string(l.recompute),
                                 c.iteration_s, c.train_s / 3600, c.gpu_hours, c.memory_bytes / kGiB,
                                 100 * app::model_flop_utilisation(o, c).mfu,
                                 priced ? fmt::format(" {:>10.4g} {:>10.4g}", prices[i], c.gpu_hours * prices[i]) : "");
      }
    }
    for (const auto& o : outcomes)
      if (a.precision.empty() && o.options.precision != structure::Precision::kBf16)
        std::cout << fmt::format("{} planned in {}: {} (--precision to choose)\n", o.hardware.name,
                                 structure::to_string(o.options.precision),
                                 o.options.precision == structure::Precision::kFp16 ? "its tensor cores take fp16 only"
                                                                                    : "it has no tensor cores");
    if (least_time && fastest) {
      std::cout << "fastest: " << best_and_gaps(names, hours, *fastest, fmt::format("{:.4g} h", *hours[*fastest])) << "\n";
    } else if (cheapest) {
      std::cout << "cheapest: " << best_and_gaps(names, costs, *cheapest, fmt::format("cost {:.4g}", *costs[*cheapest]))
                << "\n";
    } else if (!priced && !least_time) {
      std::cout << "(GPU-hours of different GPUs cost differently: --price a100-80gb=P,h100=Q adds each plan's cost "
                   "and names the cheapest)\n";
    }
    if (a.options.frontier && priced) {
      std::cout << fmt::format("\nwhat a deadline costs, every GPU: the cheapest GPU and configuration by the training "
                               "time it allows ({} points, fastest first)\n{:>10} {:<16} {:>10} {:>10} {:>5}  {}\n",
                               merged.size(), "train_h", "gpu", "GPU-hours", "cost", "gpus", "configuration");
      for (const auto& m : merged) {
        const auto& c = outcomes[m.option].result.frontier[m.point];
        std::cout << fmt::format("{:>10.4g} {:<16} {:>10.4g} {:>10.4g} {:>5}  {}\n", plan::ceil_significant(c.train_s / 3600),
                                 outcomes[m.option].hardware.name, c.gpu_hours, c.gpu_hours * prices[m.option],
                                 c.layout.gpus(), plan::describe(c.layout));
      }
    } else if (a.options.frontier) {
      for (const auto& o : outcomes) {
        std::cout << "\n" << o.hardware.name << ":";
        if (o.result.frontier.empty()) std::cout << " no configuration fits\n";
        else print_frontier(o.result.frontier, 0);
      }
    }
    if (draw) std::cout << "chart: " << a.plot << " (each GPU's cost-time frontier)\n";
  }
  if (draw) plot_gpu_frontiers(a.plot, outcomes, priced ? prices : std::vector<double>{});
  if (!any) throw InfeasibleError("no GPU in --gpu has a configuration that qualifies (each GPU's reason is above)");
}

void run_plan(PlanArgs a) {
  auto s = resolve_llm_shape(a.shape);
  if (a.gpus > 0) a.options.min_gpus = a.options.max_gpus = a.gpus;
  if (!a.precision.empty()) {
    auto pr = structure::parse_precision(a.precision);
    if (!pr) throw InputError("", 0, "--precision", "must be fp16, bf16, fp32, amp-fp32-master or fp8");
    a.options.precision = *pr;
  }
  a.options.memory_reserve_bytes = a.reserve_gib * kGiB;
  if (!a.emit.empty() && a.emit != "torchrun" && a.emit != "slurm")
    throw InputError("", 0, "--emit", "must be torchrun or slurm, not '" + a.emit + "'");
  if (!a.emit.empty() && a.options.precision == structure::Precision::kAmpFp32Master)
    throw InputError("", 0, "--emit",
                     "writes a Megatron-LM launch, and Megatron-LM has no PyTorch-AMP mode (amp-fp32-master): its "
                     "--bf16 keeps bf16 weights with fp32 main weights; plan with --precision bf16 to emit one");
  // The launch goes to stdout alone, to be redirected into a script.
  // With --json it is the answer's "launch" instead.
  if (!a.emit.empty() && !a.json && (a.options.frontier || a.breakdown || !a.plot.empty()))
    throw InputError("", 0, "--emit", std::string("prints the launch alone on stdout (or, with --json, in the "
                                                  "answer's \"launch\"): drop ") +
                                          (a.options.frontier ? "--frontier"
                                           : a.breakdown      ? "--breakdown"
                                                              : "--plot"));
  if (!a.calibrate_gpu.empty() && a.calibrate.empty())
    throw InputError("", 0, "--calibrate-gpu", "goes with --calibrate: the GPU its measured rows ran on");
  const auto names = comma_list(a.gpu, "--gpu");
  if (names.size() > 1) {
    if (!a.emit.empty()) throw InputError("", 0, "--emit", "launches one GPU's plan: give one --gpu");
    if (a.breakdown)
      throw InputError("", 0, "--breakdown", "says where one GPU's listed configurations spend an iteration: give one --gpu");
    if (!a.plot.empty()) io::check_plot_path(a.plot), io::require_gnuplot(), a.options.frontier = true;
    if (!a.calibrate.empty() && a.calibrate_gpu.empty())
      throw InputError("", 0, "--calibrate",
                       "with several --gpu, give --calibrate-gpu: the GPU the measured rows ran on, whose fitted "
                       "fractions and overheads then price each");
    std::vector<structure::HardwareProfile> gpus;
    for (const auto& n : names) {
      gpus.push_back(io::resolve_llm_hardware(n, "--gpu"));
      note_catalog_alias(n, "--gpu");
      for (size_t i = 0; i + 1 < gpus.size(); ++i)
        if (gpus[i].name == gpus.back().name)
          throw InputError("", 0, "--gpu",
                           gpus[i].origin == gpus.back().origin
                               ? fmt::format("'{}' and '{}' are the same GPU ({})", names[i], n, gpus[i].name)
                               : fmt::format("'{}' and '{}' are both named {}: the comparison tells GPUs apart by name; "
                                             "give the hardware file's GPU another name",
                                             names[i], n, gpus[i].name));
    }
    std::optional<app::LlmPlanMeasured> measured;
    if (!a.calibrate.empty()) measured = read_measured(a, io::resolve_llm_hardware(a.calibrate_gpu, "--calibrate-gpu"));
    run_comparison(s, gpus, prices_for(a.price, names, gpus), a, measured ? &*measured : nullptr);
    return;
  }
  auto hw = io::resolve_llm_hardware(a.gpu, "--gpu");
  note_catalog_alias(a.gpu, "--gpu");
  const double price = prices_for(a.price, names, {hw}).front();
  a.options = options_for(a, price, hw);
  if (!a.plot.empty()) io::check_plot_path(a.plot), io::require_gnuplot(), a.options.frontier = true;
  // Read before planning, so that a bad measured file is named by its own line and column.
  std::optional<app::LlmPlanMeasured> measured;
  if (!a.calibrate.empty()) {
    measured = read_measured(a, a.calibrate_gpu.empty() ? hw : io::resolve_llm_hardware(a.calibrate_gpu, "--calibrate-gpu"));
    if (measured->hardware->name != hw.name)
      std::cerr << fmt::format("note: calibrated on {}'s runs ({}), their fractions and overheads moved to {}; no "
                               "interval (the cross-validated errors are {}'s)\n",
                               measured->hardware->name, a.calibrate, hw.name, measured->hardware->name);
  }
  app::LlmPlanOutcome outcome = plan_or_name_the_option(s, hw, a.options, measured ? &*measured : nullptr);
  const plan::LlmPlanResult& r = outcome.result;
  int per_node = a.options.gpus_per_node > 0 ? a.options.gpus_per_node : std::max(1, hw.node.gpus_per_node);
  const char* objective = outcome.objective();

  for (const auto& n : r.notes) std::cerr << "note: " << n << "\n";
  // The launch alone goes to stdout, so that `> job.sh` never holds anything else.
  if (!a.emit.empty() && r.top.empty() && !a.json) throw InfeasibleError(r.failing + ": " + r.explanation);
  std::string launch;
  if (!a.emit.empty() && !r.top.empty()) {
    plan::LlmLaunchOptions lo;
    // A launcher's node is one operating system: a GB200 NVL72's tray of 4, not its NVLink domain.
    lo.gpus_per_node = hw.node.gpus_per_host > 0 ? std::min(per_node, hw.node.gpus_per_host) : per_node;
    lo.nvlink_domain_gpus = per_node;
    lo.train_iters = r.iterations;
    lo.script = a.script;
    lo.job_name = a.job_name;
    lo.deadline_s = a.options.deadline_s > 0 ? a.options.deadline_s : 0;
    lo.predicted_s = r.top.front().train_s;
    launch = plan::megatron_launch_spec(a.emit, s, r.top.front().layout, lo);
    if (!a.json) {
      std::cout << launch;
      return;
    }
  }
  // Drawn after the answer is printed (a chart that fails loses no answer), also when nothing
  // meets the deadline: the frontier then shows what a later deadline buys.
  if (!a.plot.empty() && r.frontier.empty())
    std::cerr << "note: no chart: no configuration fits, so there is no frontier to draw\n";
  const bool draw = !a.plot.empty() && !r.frontier.empty();
  if (a.json) {
    nlohmann::json j = app::to_json(outcome);
    if (a.breakdown) {
      const auto parts = breakdowns(outcome);
      for (size_t i = 0; i < parts.size(); ++i) j["top"][i]["breakdown"] = parts[i];
      if (!parts.empty()) j["chosen"]["breakdown"] = parts[0];
    }
    if (!launch.empty()) j["launch"] = {{"kind", a.emit}, {"spec", launch}};
    if (!r.failing.empty())
      j["error"] = r.failing + ": " + r.explanation, j["exit_code"] = kExitInfeasible, j["infeasible"] = true;
    std::cout << io::json_text(j) << "\n";
    note_json_answer_printed();
    if (draw) plot_frontier(a.plot, outcome);
    if (!r.failing.empty()) throw InfeasibleError(r.failing + ": " + r.explanation);
    return;
  }
  std::cout << job_line(s, a.options, r.iterations)
            << fmt::format("; {} ({}, {} per node)\n", hw.name, hw.gpu.memory_text(), per_node);
  const auto& o = a.options;
  std::cout << fmt::format("searched {} configurations {}: {} fit in {:.2f} GiB per GPU, {} qualify; {}\n",
                           r.enumerated,
                           o.min_gpus == o.max_gpus ? fmt::format("of {} GPU{}", o.max_gpus, o.max_gpus == 1 ? "" : "s")
                           : o.min_gpus > 1         ? fmt::format("of {} to {} GPUs", o.min_gpus, o.max_gpus)
                                                    : fmt::format("up to {} GPUs", o.max_gpus),
                           r.fit, r.capacity_bytes / kGiB, r.qualified, objective_line(objective, a.options));
  if (outcome.calibration) {
    std::cout << app::describe(*outcome.calibration) << "\n";
    for (const auto& w : outcome.calibration->warnings) std::cerr << "warning: " << w << "\n";
  }
  if (r.top.empty()) {
    // Nothing meets the deadline or budget: the frontier says what would.
    if (a.options.frontier && !r.frontier.empty()) print_frontier(r.frontier, price);
    if (draw) {
      std::cout << "chart: " << a.plot << " (the cost-time frontier)\n";
      plot_frontier(a.plot, outcome);
    }
    throw InfeasibleError(r.failing + ": " + r.explanation);
  }
  // The end stages' layers, in a column of their own where any listed layout gives them.
  const bool any_uneven =
      std::any_of(r.top.begin(), r.top.end(), [](const plan::LlmCandidate& c) { return c.layout.uneven(); });
  // The attention kernel, in a column of its own where the listed layouts differ in it (--max-cp
  // searches cp 1 with either kernel).
  const bool mixed_attention =
      std::any_of(r.top.begin(), r.top.end(), [&](const plan::LlmCandidate& c) {
        return c.layout.fused_attention() != r.top.front().layout.fused_attention();
      });
  std::cout << fmt::format("{:>4} {:>5} {:>3} {:>3} {:>3} {:>3} {:>5} {:>3} {:<9} {:>2} {:>4} {:>9} {:>9} {:>10}{} {:>8} {:>8} {:>5}{}{}\n",
                           "rank", "gpus", "tp", "cp", "pp", "vpp", "dp", "mb", "recompute", "sp", "dopt", "iter_s",
                           "train_h", "GPU-hours", price > 0 ? fmt::format(" {:>10}", "cost") : "", "mem_GiB",
                           "free_GiB", "MFU", any_uneven ? "  end_stages" : "", mixed_attention ? "  attention" : "");
  for (size_t i = 0; i < r.top.size(); ++i) {
    const auto& c = r.top[i];
    const auto& l = c.layout;
    const std::string ends =
        !any_uneven ? ""
                    : fmt::format("  {:>10}", l.uneven() ? fmt::format("{},{}", l.first_stage_layers, l.last_stage_layers)
                                                         : std::string("even"));
    std::cout << fmt::format("{:>4} {:>5} {:>3} {:>3} {:>3} {:>3} {:>5} {:>3} {:<9} {:>2} {:>4} {:>9.4g} {:>9.4g} {:>10.4g}{} "
                             "{:>8.2f} {:>8.2f} {:>4.0f}%{}{}\n",
                             i + 1, l.gpus(), l.tp, l.cp, l.pp, l.virtual_stages, l.dp, l.micro_batch,
                             structure::to_string(l.recompute), l.sequence_parallel ? "y" : "n",
                             l.distributed_optimizer ? "y" : "n", c.iteration_s, c.train_s / 3600, c.gpu_hours,
                             price > 0 ? fmt::format(" {:>10.4g}", c.gpu_hours * price) : "", c.memory_bytes / kGiB,
                             c.headroom_bytes / kGiB, 100 * app::model_flop_utilisation(outcome, c).mfu, ends,
                             mixed_attention ? fmt::format("  {:>9}", l.fused_attention() ? "fused" : "unfused") : "");
  }
  const auto& c = r.top.front();
  const auto u = app::model_flop_utilisation(outcome, c);
  std::cout << fmt::format("chosen: {} on {}; predicted memory {:.2f} GiB per GPU, headroom {:.2f} GiB of {}; "
                           "model FLOP utilisation {:.0f}% ({:.4g} of {}'s {:g} TFLOP/s per GPU){}\n",
                           plan::describe(c.layout) +
                               (c.layout.cp == 1 && c.layout.flash_attention && !a.options.flash_attention
                                    ? ", fused attention (as cp > 1 runs)"
                                    : ""),
                           c.layout.gpus() == 1 ? "1 GPU" : fmt::format("{} GPUs", c.layout.gpus()),
                           c.memory_bytes / kGiB, c.headroom_bytes / kGiB,
                           hw.gpu.memory_text(), 100 * u.mfu, u.tflops_per_gpu, structure::to_string(c.layout.precision),
                           u.peak_tflops,
                           price > 0 ? fmt::format("; cost {:.4g} ({:.4g} GPU-hours at {:g})", c.gpu_hours * price,
                                                   c.gpu_hours, price)
                                     : "");
  if (auto iv = outcome.train_time_interval(c))
    std::cout << fmt::format("training time {:.4g} h, {:.0f}% interval {:.4g} to {:.4g} h (from the calibration's "
                             "cross-validated errors{})\n",
                             c.train_s / 3600, 100 * outcome.interval, iv->lo / 3600, iv->hi / 3600,
                             iv->short_of_coverage ? "; too few measured rows to promise that coverage" : "");
  if (const auto note = app::reserve_note(outcome)) std::cout << "note: " << *note << "\n";
  if (a.breakdown) print_llm_time_breakdown(breakdowns(outcome), "rank");
  if (a.options.frontier) print_frontier(r.frontier, price);
  if (draw) {
    std::cout << "chart: " << a.plot << " (the cost-time frontier)\n";
    plot_frontier(a.plot, outcome);
  }
}

void setup(CLI::App& root) {
  auto* llm = root.get_subcommand("llm");
  auto a = std::make_shared<PlanArgs>();
  auto* p = llm->add_subcommand("plan", "The Megatron-LM configuration that trains a token budget at the least "
                                        "GPU-hours (or time), by exhaustive search");
  p->footer("Example:\n  trainplan llm plan --model gpt3-175b --gpu h100 --max-gpus 1024 --tokens 300e9 "
            "--global-batch 1536 --deadline 720h --emit slurm\n"
            "  trainplan llm plan --model gpt3-6.7b --gpu h100 --max-gpus 64 --tokens 1e11 --global-batch 512 "
            "--calibrate measured.csv\n"
            "Exit 3 when nothing fits or meets the deadline or budget, naming the constraint and by how much.");
  add_llm_shape_options(p, a->shape);
  p->add_option("--gpu", a->gpu,
                "A catalog name (trainplan hardware) or a hardware file; several, comma-separated "
                "(a100-80gb,h100,h200), compare each GPU's best plan")
      ->required();
  auto* max_gpus = p->add_option("--max-gpus", a->options.max_gpus, "Most GPUs (tp x cp x pp x dp)")->capture_default_str();
  auto* min_gpus = p->add_option("--min-gpus", a->options.min_gpus, "Fewest GPUs (tp x cp x pp x dp)")->capture_default_str();
  p->add_option("--gpus", a->gpus,
                "Exactly this many GPUs (--min-gpus and --max-gpus both): the best layout on the GPUs you have, "
                "where the default objective, the fewest GPU-hours, would also try fewer")
      ->excludes(max_gpus)
      ->excludes(min_gpus)
      ->check(positive_number());
  p->add_option("--max-cp", a->options.max_cp,
                "Most context-parallel ranks (Megatron-Core's --context-parallel-size), searched in powers of two "
                "that split the sequence into 2 x cp chunks; 1: none")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  p->add_option("--gpus-per-node", a->options.gpus_per_node,
                "GPUs per node, for nodes of another size than the hardware's (their links out of the node scaled "
                "with their GPUs); 0: the hardware's")
      ->capture_default_str()
      ->check(non_negative_number());
  p->add_flag("--uneven-end-stages", a->options.uneven_end_stages,
              "Also try the pipeline splits that count the embedding and the loss as a layer each (Megatron-Core's "
              "--account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split): end stages a "
              "layer lighter, and stage counts that divide layers + 2 (Llama 3.1 405B's 126 layers on 8 stages)");
  p->add_option("--tokens", a->options.tokens, "Tokens to train (e.g. 300e9)")->required();
  p->add_option("--global-batch", a->options.global_batch, "Sequences per iteration")->required();
  add_duration_option(p, "--deadline", a->options.deadline_s, "Longest training time (default: none)");
  p->add_option("--gpu-budget", a->options.gpu_hour_budget,
                "GPU-hours available: minimise the time within them (0: minimise GPU-hours)")
      ->capture_default_str();
  p->add_option("--price", a->price,
                "What a GPU-hour costs, in any currency: one number, or a price for each --gpu "
                "(a100-80gb=1.8,h100=3.2); adds each plan's cost and, with several GPUs, names the cheapest");
  p->add_option("--cost-budget", a->cost_budget,
                "What the training may cost, in --price's currency: minimise the time within it, on each GPU the "
                "GPU-hours it buys there (0: none)")
      ->capture_default_str();
  p->add_option("--top", a->options.top_k, "Alternatives to list")->capture_default_str();
  p->add_flag("--frontier", a->options.frontier,
              "Also list what each deadline costs: the configurations that fit and that no other beats on both "
              "training time and GPU-hours; with several --gpu and --price, the cheapest GPU and configuration for "
              "every training time");
  p->add_option("--plot", a->plot,
                "Draw that frontier (.png or .svg; implies --frontier); with several --gpu, each GPU's, its plan and "
                "the deadline");
  p->add_option("--precision", a->precision,
                 "fp16, bf16, fp32, amp-fp32-master or fp8 (default: bf16; fp16 on a GPU whose tensor cores take fp16 "
                 "only, as Volta and Turing; fp32 on one without tensor cores, as Pascal; `trainplan hardware` lists "
                 "each GPU's units)");
  p->add_option("--reserve-gib", a->reserve_gib,
                "GiB per GPU kept free for what the memory model leaves out (CUDA context, NCCL, fragmentation)")
      ->capture_default_str();
  p->add_flag("--flash-attention", a->options.flash_attention,
              "Fused attention (FlashAttention-style kernels: Transformer Engine's cuDNN fused attention, emitted as "
              "--attention-backend fused; fp16, bf16 or fp8 only): no s^2 activations");
  p->add_flag_callback("--no-dropout", [a] { a->options.dropout = false; },
              "No attention or hidden dropout (p = 0, as Llama recipes): no dropout masks stored or kernels run");
  p->add_flag("--overlap", a->options.overlap,
              "Communication overlapped with computation (Megatron-Core's --overlap-grad-reduce, "
              "--overlap-param-gather, --tp-comm-overlap; NeMo's recipes): the data-parallel reduction behind the "
              "backward pass, the weights' gather behind the next forward, tensor-parallel collectives beside the products");
  p->add_flag("--grad-reduce-in-bf16", a->options.grad_reduce_in_bf16,
              "Gradients accumulated and reduced in bf16 (Megatron-LM's --grad-reduce-in-bf16; NeMo's FP8 "
              "recipes): 2 bytes a parameter instead of 4, half the data-parallel bytes");
  p->add_flag("--fp32-residual", a->options.fp32_residual,
              "An fp32 residual stream (Megatron's --fp32-residual-connection; PyTorch autocast over an fp32 "
              "embedding): the layer inputs kept for the backward take 4 bytes an element");
  p->add_option("--calibrate-gpu", a->calibrate_gpu,
                "The GPU the --calibrate rows ran on, when not --gpu: fitted there, their fractions and overheads then "
                "price --gpu, or each of several (as llm predict --calibrate-gpu) [default: --gpu; with several "
                "--gpu, required with --calibrate]");
  p->add_option("--calibrate", a->calibrate,
                "Measured iterations (llm predict's columns plus iteration_time_s, optional memory_gib; any shapes): "
                "rank with the time and memory models fitted to them, as llm predict --calibrate does");
  add_llm_fit_option(p, a->fit);
  p->add_option("--interval,--confidence", a->interval,
                "With --calibrate: the coverage of the training time's interval, from the calibration's "
                "cross-validated errors (0: none)")
      ->capture_default_str()
      ->check(coverage_or_none());
  p->add_flag("--json", a->json, "Print JSON");
  p->add_flag("--breakdown", a->breakdown,
              "Also say where each listed configuration's iteration goes: products, memory-bound kernels, "
              "tensor/context-, pipeline- and data-parallel communication, the pipeline's bubble, the optimizer "
              "(as llm predict --breakdown)");
  p->add_option("--emit", a->emit, "Print the chosen configuration as a Megatron-LM launch: torchrun or slurm");
  p->add_option("--script", a->script, "Megatron-LM's training script for --emit")->capture_default_str();
  p->add_option("--job-name", a->job_name, "Job name for --emit slurm")->capture_default_str();
  p->callback([a, p] {
    if (p->get_option("--interval")->count() > 0 && a->calibrate.empty())
      throw InputError("", 0, "--interval", "needs --calibrate: the interval comes from the calibration's errors");
    if (p->get_option("--fit")->count() > 0 && a->calibrate.empty())
      throw InputError("", 0, "--fit", "needs --calibrate: it says what the calibration on measured rows fits");
    a->top_given = p->get_option("--top")->count() > 0;
    if (p->get_option("--script")->count() > 0 && a->emit.empty())
      throw InputError("", 0, "--script", "goes with --emit: the launch it names the training script of");
    if (p->get_option("--job-name")->count() > 0 && a->emit != "slurm")
      throw InputError("", 0, "--job-name", "names the job --emit slurm writes: give --emit slurm");
    run_plan(*a);
  });
}

CommandRegistrar reg(48, setup);

}  // namespace
}  // namespace trainplan::cli
