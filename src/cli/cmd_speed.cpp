// trainplan speed: fit Optimus's resource-speed model f(p, w) to measured
// parameter-server speeds (DL2's config_speed.txt) and report theta with
// in-sample and cross-validated MRE, per model.
#include <fmt/format.h>
#include <algorithm>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/dl2_speed.h"
#include "io/json_text.h"
#include "models/optimus_speed.h"
#include "scoring/speed_eval.h"

namespace trainplan::cli {
namespace {

struct SpeedArgs {
  std::string data;
  std::string model = "all";
  std::string mode = "sync";
  std::string unit = "samples";
  int cv = 5;
  uint64_t seed = 1;
  bool keep_stalled = false;
  bool json = false;
};

void run_speed(const SpeedArgs& a) {
  auto mode = models::parse_speed_mode(a.mode);
  auto unit = io::parse_dl2_speed_unit(a.unit);
  if (a.cv < 2) throw InputError("", 0, "--cv", "needs at least 2 folds");
  auto table = io::read_dl2_speed(a.data);
  std::set<std::string> known, modes_seen;
  for (const auto& r : table.rows) known.insert(r.model), modes_seen.insert(r.mode);
  std::vector<std::string> names;
  if (a.model == "all") {
    names.assign(known.begin(), known.end());
  } else {
    if (!known.count(a.model)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw InputError(a.data, 0, "model", "no rows for model '" + a.model + "' (models in the file: " + list + ")");
    }
    names = {a.model};
  }
  nlohmann::json out = nlohmann::json::array();
  // With several models, one that cannot be fitted is said and the others are fitted; a model named
  // alone that cannot be is an error.
  const bool several = names.size() > 1;
  std::optional<InputError> first_error;
  size_t fitted = 0, most_points = 0;
  // The text answer, printed once every model is fitted: a refusal of --cv
  // below prints none of it.
  std::ostringstream text;
  // One model fitted and printed; InputError when it cannot be.
  auto fit_one = [&](const std::string& name) {
    std::vector<models::SpeedPoint> pts;
    int stalled = 0;
    for (const auto& r : table.rows) {
      if (r.model != name || r.sync() != (mode == models::SpeedMode::kSync)) continue;
      if (r.stalled() && (!a.keep_stalled || !(r.job_speed(unit) > 0))) {  // 1/f needs f > 0
        ++stalled;
        continue;
      }
      pts.push_back({r.num_ps, r.num_workers, double(r.total_batch), r.job_speed(unit)});
    }
    if (pts.empty()) {
      std::string list;
      for (const auto& m : modes_seen) list += (list.empty() ? "" : ", ") + m;
      throw InputError(a.data, 0, "mode", fmt::format("no {} rows for model '{}' (modes in the file: {})",
                                                      models::to_string(mode), name, list));
    }
    models::OptimusSpeedParams params{mode};
    models::OptimusSpeedModel m(params);
    try {
      m.fit(pts);
    } catch (const InputError& e) {  // the model's own message names neither the file nor the model
      throw InputError(a.data, 0, "model",
                       fmt::format("model '{}' ({} rows): {}", name, models::to_string(mode), e.message()));
    }
    // After the fit, whose "needs at least N points" comes first where both apply.
    most_points = std::max(most_points, pts.size());
    if (size_t(a.cv) > pts.size() && !several)
      throw InputError("", 0, "--cv", fmt::format("{} folds for the {} {} rows of model '{}': give at most {}", a.cv,
                                                  pts.size(), models::to_string(mode), name, pts.size()));
    double in_mre = scoring::speed_mre(m, pts);
    // A model with too few rows for these folds is fitted and shown without
    // its CV, rather than stopping every other model's.
    std::optional<double> cv_mre;
    std::string cv_note;
    if (size_t(a.cv) > pts.size()) {
      cv_note = InputError("", 0, "--cv", fmt::format("{} folds for its {} rows", a.cv, pts.size())).what();
    } else {
      try {
        cv_mre = scoring::speed_cv_mre(pts, params, a.cv, a.seed);
      } catch (const InputError& e) {
        cv_note = e.what();
      }
    }
    ++fitted;
    nlohmann::json j = {{"model", name},       {"mode", models::to_string(mode)}, {"unit", io::to_string(unit)}, {"points", pts.size()},
                        {"stalled_dropped", stalled}, {"theta", std::vector<double>(m.theta().data(), m.theta().data() + m.theta().size())},
                        {"in_sample_mre", in_mre}, {"cv_mre", cv_mre ? nlohmann::json(*cv_mre) : nlohmann::json(nullptr)},
                        {"cv_folds", a.cv}, {"seed", a.seed}, {"equation", m.describe()}};
    if (!cv_note.empty()) j["cv_note"] = cv_note;
    out.push_back(j);
    if (!a.json) {
      text << fmt::format("{} ({}, speeds read as {}/s per worker): {} (p, w) points", name, models::to_string(mode),
                               io::to_string(unit), pts.size());
      if (stalled) text << fmt::format(", {} stalled runs dropped (a worker with speed 0)", stalled);
      text << "\n  " << m.describe() << "\n";
      text << fmt::format("  MRE in-sample {:.2f}%, {}-fold CV {}\n", 100 * in_mre, a.cv,
                               cv_mre ? fmt::format("{:.2f}%", 100 * *cv_mre) : "not possible: " + cv_note);
    }
  };
  for (const auto& name : names) {
    try {
      fit_one(name);
    } catch (const InputError& e) {
      if (!several) throw;
      if (!first_error) first_error = e;
      out.push_back({{"model", name}, {"mode", models::to_string(mode)}, {"error", e.what()}});
      if (!a.json) text << fmt::format("{} ({}): not fitted: {}\n", name, models::to_string(mode), e.what());
    }
  }
  if (fitted == 0 && first_error) {
    std::cout << text.str();  // each model's reason, before the first's error
    throw *first_error;
  }
  // Folds no model has rows for are a mistake in --cv, as for one model named alone.
  if (fitted > 0 && size_t(a.cv) > most_points)
    throw InputError("", 0, "--cv", fmt::format("{} folds, but no model has more than {} rows: give at most {}", a.cv,
                                                most_points, most_points));
  if (a.json) std::cout << io::json_text(out) << "\n";
  else std::cout << text.str();
}

void setup(CLI::App& root) {
  auto args = std::make_shared<SpeedArgs>();
  auto* cmd = root.add_subcommand(
      "speed",
      "Fit Optimus's resource-speed model f(p, w) (parameter servers p, workers w) to measured job speeds\n"
      "(DL2 config_speed.txt tuples) by NNLS, and report theta with in-sample and cross-validated MRE.\n"
      "Job speed f (steps/s) from the per-worker entries: --unit samples (default) reads them as samples/s\n"
      "(sync f = sum / M), --unit steps as steps/s (sync f = mean; the README's reading).\n"
      "Example: trainplan speed --data ../shared/data/dl2/config_speed.txt --model resnet-50 --cv 5");
  cmd->add_option("--data", args->data, "DL2 speed table: lines (model, mode, batch, num_ps, num_workers, [speeds], [ps cpu], [worker cpu])")
      ->required();
  cmd->add_option("--model", args->model, "Model name in the table (e.g. resnet-50, vgg-16) or 'all'")->capture_default_str();
  cmd->add_option("--mode", args->mode, "Speed model: sync (fits dist_sync rows) or async (fits dist_async rows)")
      ->check(CLI::IsMember({"sync", "async"}))
      ->capture_default_str();
  cmd->add_option("--unit", args->unit, "What a per-worker speed counts: samples (samples/s) or steps (steps/s)")
      ->check(CLI::IsMember({"samples", "steps"}))
      ->capture_default_str();
  cmd->add_option("--cv,--folds", args->cv, "Cross-validation folds (>= 2)")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed for the fold assignment")->capture_default_str()->check(seed_number());
  cmd->add_flag("--keep-stalled", args->keep_stalled, "Keep runs in which some (not all) workers reported speed 0 (dropped by default)");
  cmd->add_flag("--json", args->json, "Print results as JSON");
  cmd->callback([args] { run_speed(*args); });
}

CommandRegistrar reg(60, setup);

}  // namespace
}  // namespace trainplan::cli
