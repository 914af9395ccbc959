// trainplan evaluate: score registered models (in-sample, cross-validated and
// extrapolated MRE, fit time) on sample files or on replayed Pollux traces.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "experiments/plan_benchmark_seeds.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "io/output_path.h"
#include "scoring/cross_model.h"
#include "scoring/datasets.h"
#include "scoring/layer_time_eval.h"
#include "io/layer_timing_csv.h"
#include "scoring/evaluate_plot.h"
#include "scoring/report.h"
#include "scoring/transfer_eval.h"
#include "scoring/transfer_plot.h"
#include "io/gnuplot.h"
#include "models/registry.h"

namespace trainplan::cli {
namespace {

namespace fs = std::filesystem;

struct EvaluateArgs {
  bool tf32 = false;  // --tf32, with --transfer
  models::TrainingPrecision precision;  // --precision, --target-precision, with --transfer
  std::vector<std::string> samples;
  std::string data;
  std::string models = "all";
  std::string plan = "paper";
  int cv = 5;
  uint64_t seed = 1;
  bool json = false;
  bool describe = false;
  std::string comm_profile = "auto";
  std::string plot;
  bool cross_model = false;
  std::string layer_timings;
  std::string hardware;  // --hardware, with --samples
  bool transfer = false;
  std::string from, from_gpu, to, to_gpu, seeds, rows_out, network;
  int target_trials = 0;
  bool models_given = false;
};

// Refuses the first of `options` given on the command line, saying `why`:
// accepted and then unread, an option would make a user believe it had an
// effect.
void refuse_given(const CLI::App& cmd, std::initializer_list<const char*> options, const char* why) {
  for (const char* option : options)
    if (cmd.get_option(option)->count() > 0) throw InputError("", 0, option, why);
}

std::vector<std::string> model_names(const std::string& spec) {
  auto& reg = models::ModelRegistry::instance();
  const auto names = distinct_comma_list(spec, "--models");
  if (std::find(names.begin(), names.end(), "all") != names.end()) {
    if (names.size() > 1) throw InputError("", 0, "--models", "'all' names every model: give it alone");
    return reg.names();
  }
  for (const auto& name : names) {
    try {
      reg.get(name);  // names the known models
    } catch (const InputError& e) {
      throw InputError("", 0, "--models", e.message());
    }
  }
  return names;
}

// The traces' files under `root` (the folder itself, or one folder a
// network), which --rows-out must not replace.
std::vector<std::pair<std::string, std::string>> trace_files(const std::string& root, const std::string& option) {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  auto add = [&](const fs::path& dir) {
    for (const char* f : {"placements.csv", "scalability.csv"})
      if (fs::exists(dir / f, ec)) out.push_back({(dir / f).string(), option + " trace's " + f});
  };
  add(root);
  if (fs::is_directory(root, ec))
    for (const auto& e : fs::directory_iterator(root, ec))
      if (e.is_directory(ec)) add(e.path());
  return out;
}

void run_transfer(const EvaluateArgs& a, const CLI::App& cmd) {
  if (!a.data.empty() || !a.samples.empty())
    throw InputError("--transfer scores trace folders: give --from DIR and --to DIR, not --data or --samples");
  refuse_given(cmd, {"--cv", "--plan", "--cross-model", "--layer-timings", "--comm-profile"}, "does not go with --transfer");
  if (a.from.empty()) throw InputError("", 0, "--from", "--transfer needs --from DIR (the profiled GPU's traces)");
  if (a.to.empty()) throw InputError("", 0, "--to", "--transfer needs --to DIR (the target GPU's traces)");
  if (a.from_gpu.empty()) throw InputError("", 0, "--from-gpu", "--transfer needs --from-gpu NAME or a hardware file");
  if (a.to_gpu.empty()) throw InputError("", 0, "--to-gpu", "--transfer needs --to-gpu NAME or a hardware file");
  scoring::TransferEvalOptions o;
  // A trace's own placements.csv (or scalability.csv) given for its folder.
  auto trace_folder = [](const std::string& path, const char* option) {
    const std::filesystem::path p(path);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec) ||
        (p.filename() != "placements.csv" && p.filename() != "scalability.csv"))
      return path;
    // Absolute: a folder named "." or ".." would name no network to pair by.
    const std::string folder = std::filesystem::absolute(p, ec).lexically_normal().parent_path().string();
    std::cerr << fmt::format("note: {} {} is a trace's file: reading its folder, {}\n", option, path, folder);
    return folder;
  };
  o.from = trace_folder(a.from, "--from"), o.to = trace_folder(a.to, "--to");
  // A --to that is the --from trace (in-sample) is refused per pair by
  // scoring::evaluate_transfer.
  o.from_hw = io::resolve_hardware(a.from_gpu, "--from-gpu");
  o.to_hw = io::resolve_hardware(a.to_gpu, "--to-gpu");
  note_catalog_alias(a.from_gpu, "--from-gpu");
  note_catalog_alias(a.to_gpu, "--to-gpu");
  o.from_hw.gpu.fp32_matmul_tf32 = o.to_hw.gpu.fp32_matmul_tf32 = a.tf32;
  o.precision = a.precision;
  o.target_trials = a.target_trials;
  o.rows_out = a.rows_out;
  if (!a.rows_out.empty()) {
    auto inputs = trace_files(o.from, "--from");
    for (auto& f : trace_files(o.to, "--to")) inputs.push_back(std::move(f));
    inputs.push_back(hardware_file_input(a.from_gpu, "--from-gpu"));
    inputs.push_back(hardware_file_input(a.to_gpu, "--to-gpu"));
    io::check_output_path(a.rows_out, "--rows-out", inputs);
  }
  o.network = a.network;
  if (a.target_trials < 0) throw InputError("", 0, "--target-trials", "must be >= 0, got " + std::to_string(a.target_trials));
  o.seeds = a.seeds.empty() ? std::vector<uint64_t>{a.seed} : experiments::parse_seed_list(a.seeds);
  if (a.models_given && a.models != "all") {
    o.methods = distinct_comma_list(a.models, "--models");
    o.headline = o.methods.front();
  }
  if (!a.plot.empty()) io::check_plot_path(a.plot), io::require_gnuplot();  // a bad name fails before any fit
  // A network's fits take seconds with several seeds: say which is being scored.
  o.progress = [](const std::string& what) { std::cerr << "evaluate --transfer: " << what << "\n"; };
  auto rep = scoring::evaluate_transfer(o);
  // Scored without them, and said: an unreadable trace is still bad input
  // (exit 2, below), which the JSON answer says as every failing answer does.
  std::optional<InputError> unreadable;
  if (!rep.unreadable.empty()) {
    const InputError& first = rep.unreadable.front();
    unreadable.emplace(first.file(), first.line(), first.field(),
                       fmt::format("{}; {} network{} left out ({} trace{} could not be read), the others scored",
                                   first.message(), rep.unreadable.size(), rep.unreadable.size() == 1 ? "" : "s",
                                   rep.unreadable.size(), rep.unreadable.size() == 1 ? "" : "s"));
  }
  if (a.json) {
    nlohmann::json j = scoring::transfer_json(rep);
    if (unreadable) j.update(json_error_fields(unreadable->what(), kExitInputError, &*unreadable));
    // A path or message may quote bytes that are not UTF-8.
    std::cout << io::json_text(j) << "\n";
  } else {
    std::cout << scoring::format_transfer(rep);
  }
  if (a.json) note_json_answer_printed();  // a chart that fails after it adds no second document
  if (!a.plot.empty()) {
    auto panels = scoring::transfer_panels(rep);
    if (panels.empty()) throw InputError("", 0, "--plot", "no network was scored, so there is nothing to draw");
    io::render_plot(a.plot, panels, 640, 640, std::min<int>(3, static_cast<int>(panels.size())));
    std::cerr << fmt::format("plot of the predicted step times against the measured ones -> {}\n", a.plot);
  }
  // The JSON carries them too; on stderr they reach whoever reads only "mre".
  if (a.json) {
    // An unreadable trace is said once, as an error, below.
    for (const auto& s : rep.skipped)
      if (std::none_of(rep.unreadable.begin(), rep.unreadable.end(),
                       [&](const InputError& e) { return s.find(e.what()) != std::string::npos; }))
        std::cerr << "skipped: " << s << "\n";
    for (const auto& w : rep.warnings) std::cerr << "warning: " << w << "\n";
  }
  if (a.describe && !a.json)
    for (const auto& n : rep.networks)
      if (!n.describe.empty()) std::cout << "\n" << n.network << ":\n" << n.describe;
  if (unreadable) {
    if (a.json) note_json_answer_printed();
    for (size_t i = 1; i < rep.unreadable.size(); ++i) std::cerr << "error: " << rep.unreadable[i].what() << "\n";
    throw *unreadable;
  }
}

void run_evaluate(const EvaluateArgs& a, const CLI::App& cmd) {
  if (a.transfer) return run_transfer(a, cmd);
  for (const auto* opt : {&a.from, &a.to, &a.from_gpu, &a.to_gpu, &a.network})
    if (!opt->empty()) throw InputError("--from, --to, --from-gpu, --to-gpu and --network go with --transfer");
  refuse_given(cmd, {"--seeds", "--rows-out", "--target-trials", "--tf32", "--precision", "--target-precision"},
               "goes with --transfer");
  if (cmd.get_option("--plan")->count() > 0 && a.data.empty())
    throw InputError("", 0, "--plan", "goes with --data: it draws the samples scored from the traces");
  if (!a.layer_timings.empty()) {
    // The leaderboard's options, which the per-layer scores do not read.
    refuse_given(cmd, {"--models", "--comm-profile", "--describe", "--cross-model", "--hardware"},
                 "does not go with --layer-timings");
    if (!a.data.empty()) throw InputError("--layer-timings scores the per-layer model: give --samples (or nothing), not --data");
    if (a.cv < 2) throw InputError("", 0, "--cv", "need at least 2 folds, got " + std::to_string(a.cv));
    if (!a.plot.empty()) io::check_plot_path(a.plot), io::require_gnuplot();
    auto rep = scoring::evaluate_layer_times(io::read_layer_timings(a.layer_timings), a.samples, a.cv, a.seed);
    std::cout << (a.json ? scoring::layer_times_json(rep) + "\n" : scoring::format_layer_times(rep));
    if (a.json) note_json_answer_printed();
    if (!a.plot.empty()) {
      io::render_plot(a.plot, scoring::layer_time_panels(rep), 700, 520);
      if (!a.json) std::cout << "chart: " << a.plot << "\n";
    }
    return;
  }
  if (a.cross_model) {
    refuse_given(cmd, {"--models", "--comm-profile", "--describe", "--plot", "--plan", "--hardware"},
                 "does not go with --cross-model");
    if (a.data.empty() || !a.samples.empty()) throw InputError("--cross-model scores traces: give --data DIR, not --samples");
    if (a.cv < 2) throw InputError("", 0, "--cv", "need at least 2 folds, got " + std::to_string(a.cv));
    auto rep = scoring::evaluate_cross_model(a.data, {a.cv, a.seed});
    std::cout << (a.json ? scoring::cross_model_json(rep) + "\n" : scoring::format_cross_model(rep));
    return;
  }
  if (a.samples.empty() == a.data.empty()) throw InputError("give either --samples FILE... or --data DIR (one of them)");
  if (a.cv < 2) throw InputError("", 0, "--cv", "need at least 2 folds, got " + std::to_string(a.cv));
  if (!a.plot.empty()) {  // a bad name fails before any fit
    std::vector<std::pair<std::string, std::string>> inputs;
    for (const auto& f : a.samples) inputs.push_back({f, "--samples"});
    io::check_plot_path(a.plot, inputs);
    io::require_gnuplot();
  }
  auto names = model_names(a.models);
  scoring::EvalOptions opts;
  opts.cv_folds = a.cv;
  opts.seed = a.seed;

  std::vector<std::string> descriptions;
  auto data = a.data.empty() ? scoring::datasets_from_sample_files(a.samples, descriptions)
                             : scoring::datasets_from_traces(a.data, {a.plan, a.seed, a.comm_profile}, descriptions);
  if (a.data.empty() && a.comm_profile != "auto" && a.comm_profile != "none") {
    auto p = std::make_shared<structure::CommProfile>(structure::CommProfile::load(a.comm_profile));
    for (size_t i = 0; i < data.size(); ++i) {
      data[i].model_params.comm_profile = p;
      descriptions[i] += "; communication profile: " + a.comm_profile;
    }
  }
  if (!a.hardware.empty()) {
    // The traces' hardware is their own (a T4 cluster); samples name none.
    if (!a.data.empty()) throw InputError("", 0, "--hardware", "goes with --samples: the traces of --data carry their own");
    const auto hw = model_params("", a.hardware).hardware;
    for (size_t i = 0; i < data.size(); ++i) {
      data[i].model_params.hardware = hw;
      descriptions[i] += "; hardware: " + a.hardware;
    }
  }
  bool progress = !a.data.empty();

  auto& reg = models::ModelRegistry::instance();
  std::vector<scoring::DatasetScores> scores;
  for (size_t i = 0; i < data.size(); ++i) {
    scoring::DatasetScores ds{data[i].name, descriptions[i], {}};
    for (size_t m = 0; m < names.size(); ++m) {
      if (progress)
        std::cerr << fmt::format("evaluate: dataset {}/{} {}: model {}/{} {}\n", i + 1, data.size(), data[i].name, m + 1,
                                 names.size(), names[m]);
      ds.models.push_back(scoring::evaluate_model(reg.get(names[m]), data[i], opts));
    }
    scores.push_back(std::move(ds));
  }

  if (a.json) {
    auto j = scoring::to_json(scores, opts);
    if (a.describe)  // each part's fitted parameters (full fit), as the text prints them
      for (const auto& ds : scores)
        for (const auto& m : ds.models) {
          if (!m.time.describe.empty()) j["datasets"][ds.name][m.model]["time"]["describe"] = m.time.describe;
          if (!m.metric.describe.empty()) j["datasets"][ds.name][m.model]["metric"]["describe"] = m.metric.describe;
        }
    std::cout << io::json_text(j) << "\n";
    note_json_answer_printed();
  } else {
    std::cout << scoring::format_table(scores, opts);
    if (a.describe)
      for (const auto& ds : scores)
        for (const auto& m : ds.models)
          for (const auto* p : {&m.time, &m.metric})
            if (!p->describe.empty()) std::cout << ds.name << ": " << p->describe << "\n";
  }
  if (!a.plot.empty()) {
    auto panels = scoring::evaluate_panels(scores);
    if (panels.empty()) throw InputError("", 0, "--plot", "no model could be cross-validated, so there is nothing to draw");
    io::render_plot(a.plot, panels, 700, 560, 2);
    std::cerr << fmt::format("plot of the cross-validated predictions against the measurements -> {}\n", a.plot);
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<EvaluateArgs>();
  auto* cmd = root.add_subcommand(
      "evaluate",
      "Score models: in-sample, k-fold cross-validated and extrapolated MRE (sum|pred-true|/sum|true|), and fit time");
  cmd->footer(
      "Data: --samples scores each sample CSV (dataset name = file stem); --data DIR samples every Pollux trace\n"
      "under DIR with --plan, and draws the workers-extrapolation test set (8..16 workers) with plan 'wide'.\n"
      "Extrapolation: 'x-workers' trains on single-node samples with workers <= 4 plus two multi-node samples at\n"
      "distinct node counts (with --data: trials drawn from the trace at the smallest and largest node count of the\n"
      "test set, on full nodes, lower and upper quartile training batch), tests on 8..16 workers; 'x-w-1pn': same with\n"
      "one GPU per node in the two trials (\"11\", \"1111\": cheaper, but blind to the GPUs-per-node cost);\n"
      "'batch' trains on the smaller half of the distinct per-worker batches, tests on the rest.\n"
      "Time is scored on distinct (batch, workers, nodes); metric on samples that carry one. See docs/MODELS.md.\n"
      "Communication profile (--comm-profile): the cluster's inter-node cost shape given to the time models that\n"
      "use one; 'auto' with --data measures it on the other traces under DIR (leave one out), see\n"
      "`trainplan comm-profile`.\n"
      "Examples:\n"
      "  trainplan evaluate --samples cifar10.csv --model isotonic-mi --cv 5\n"
      "  trainplan evaluate --data ../shared/data/pollux-t4 --models all --json\n"
      "  trainplan evaluate --data ../shared/data/pollux-t4 --models all --plot leaderboard.png\n"
      "Transfer to a GPU never profiled (--transfer, docs/TRANSFER.md): fits on every row of --from's traces plus\n"
      "--target-trials rows of --to's placements.csv drawn by --seed, predicts the other rows of --to; --models\n"
      "names transfer methods (the first is \"mre\"'s; default all, split-transfer first). GPU names: the\n"
      "hardware catalog (`trainplan hardware`) or a hardware file (docs/HARDWARE.md).\n"
      "  trainplan evaluate --transfer --from ../shared/data/pollux-t4 --from-gpu t4 --to ../shared/data/sia-a100 \\\n"
      "      --to-gpu a100-40gb --target-trials 3 --seeds 1-8 --json");
  cmd->add_option("-s,--samples", a->samples, "Sample CSV file(s) to score on (repeatable)");
  cmd->add_option("-d,--data", a->data, "Directory of Pollux-format traces (or one trace) to sample and score on");
  cmd->add_option("-m,--model,--models", a->models, "Model name, comma-separated names, or 'all' (every registered model)")
      ->capture_default_str()
      ->each([a](const std::string&) { a->models_given = true; });
  cmd->add_option("--cv,--folds", a->cv, "Cross-validation folds (>= 2)")->capture_default_str();
  auto* seed = cmd->add_option("--seed", a->seed, "Seed for the fold shuffle (and, with --data, for the sampling plans)")
                   ->capture_default_str()->check(seed_number());
  cmd->add_option("--plan", a->plan, "With --data: sampling plan for the scored samples (paper, small, wide)")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON (MRE as fractions, null where a number is missing, with a note)");
  cmd->add_flag("--cross-model", a->cross_model,
                "With --data: predict each trace's step times from the other traces only (structure models: PALEO "
                "and Horus-style graph features with XGBoost, leave one network out; docs/lab/MODELS-TIME.md)");
  cmd->add_option("--layer-timings", a->layer_timings,
                  "Score Justus et al.'s per-layer model on a layer-timing CSV (trainplan-layer-bench), by K-fold CV; "
                  "with --samples, also each known network's step time as the sum of its layers (docs/lab/MODELS-TIME.md)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--transfer", a->transfer,
                "Score step-time transfer between GPUs: --from DIR --from-gpu NAME --to DIR --to-gpu NAME "
                "[--target-trials K] [--seed S | --seeds 1-8]");
  cmd->add_option("--from", a->from, "With --transfer: trace folder(s) measured on the profiled GPU (Pollux format)");
  cmd->add_option("--from-gpu", a->from_gpu, "With --transfer: the profiled GPU, a catalog name or a hardware file");
  cmd->add_option("--to", a->to, "With --transfer: trace folder(s) of the same networks on the target GPU");
  cmd->add_option("--to-gpu", a->to_gpu, "With --transfer: the target GPU, a catalog name or a hardware file");
  add_tf32_option(cmd, a->tf32);
  add_transfer_precision_options(cmd, a->precision);
  cmd->add_option("--target-trials", a->target_trials,
                  "With --transfer: rows of --to's placements.csv measured as trials (fitted on, not scored)")
      ->capture_default_str();
  cmd->add_option("--network", a->network,
                  "With --transfer of one network's folders: its layer graph (trainplan network), where the folders' "
                  "names do not say it [default: the folders' names]");
  cmd->add_option("--rows-out", a->rows_out,
                  "With --transfer: write every predicted row (first seed) to this CSV: network, method, seed, "
                  "placement, local_bsz, step_time, predicted");
  cmd->add_option("--seeds", a->seeds, "With --transfer: one evaluation per seed (e.g. 1-8 or 1,3,5); median and spread")
      ->excludes(seed);
  cmd->add_flag("--describe", a->describe, "Also print each model's fitted parameters (full fit)");
  cmd->add_option("--hardware", a->hardware,
                  "With --samples: the GPU and links the samples ran on, a catalog name or a hardware file (the "
                  "structure models' datasheet, the all-reduce models' interconnect prior; default: a T4 node's)");
  cmd->add_option("--comm-profile", a->comm_profile,
                  "Communication profile for the time models: 'auto' (with --data: leave-one-out over the other "
                  "traces; with --samples: none), 'none', or a JSON FILE from `trainplan comm-profile`")
      ->capture_default_str();
  cmd->add_option("--plot", a->plot,
                  "Draw with gnuplot (.png or .svg) each model's cross-validated predictions against the measurements: "
                  "one row per data set, epoch time (log-log) and metric, the 6 models with the lowest CV MRE per panel; "
                  "with --transfer, each network's predicted step times on the target against the measured ones (the "
                  "first seed), every method and the target trials; with --layer-timings, each layer's predicted time "
                  "against the measured one");
  cmd->callback([a, cmd] { run_evaluate(*a, *cmd); });
}

CommandRegistrar reg(40, setup);

}  // namespace
}  // namespace trainplan::cli
