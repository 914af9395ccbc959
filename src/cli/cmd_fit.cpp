// trainplan fit: fit a registered epoch-time model and metric model to
// profiling samples and show what they learned (describe()) and how well they
// reproduce the samples (in-sample MRE, equation 12).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/json_text.h"
#include "scoring/evaluate.h"
#include "scoring/fit_plot.h"
#include "scoring/in_sample.h"
#include "scoring/mre.h"
#include "io/gnuplot.h"
#include "profile/samples_file.h"
#include "models/registry.h"
#include "scoring/model_choice.h"

namespace trainplan::cli {
namespace {

struct FitArgs {
  std::string samples;
  std::string model = "auto";
  std::string time_model, metric_model;
  bool json = false;
  bool model_given = false;
  std::string comm_profile;
  std::string hardware;  // --hardware: catalog name or hardware file; empty: the default prior
  std::string plot;
};

struct PartResult {
  std::string model, describe;
  double mre = 0;
  size_t n = 0;
  std::shared_ptr<const models::TimeModel> time;      // the fitted part, for --plot
  std::shared_ptr<const models::MetricModel> metric;
};

PartResult fit_time(const std::string& name, const SampleSet& s, const models::ModelParams& params) {
  const auto& e = models::ModelRegistry::instance().get(name);
  if (!e.make_time) throw InputError("model '" + name + "' has no epoch-time part (see `trainplan fit --help`)");
  std::shared_ptr<models::TimeModel> m = e.make_time(params);
  m->fit(s);
  auto score = scoring::in_sample_time(*m, s);
  return {name, m->describe(), score.mre, score.n, m, nullptr};
}

PartResult fit_metric(const std::string& name, const SampleSet& s, const models::ModelParams& params) {
  const auto& e = models::ModelRegistry::instance().get(name);
  if (!e.make_metric) throw InputError("model '" + name + "' has no metric part (see `trainplan fit --help`)");
  std::shared_ptr<models::MetricModel> m = e.make_metric(params);
  m->fit(s);
  auto score = scoring::in_sample_metric(*m, s);
  return {name, m->describe(), score.mre, score.n, nullptr, m};
}

void run_fit(const FitArgs& a) {
  const models::ModelParams params = model_params(a.comm_profile, a.hardware);
  if (!a.plot.empty()) io::check_plot_path(a.plot, {{a.samples, "--samples"}}), io::require_gnuplot();
  SampleSet s = read_samples_noted(a.samples);
  s.check_declared_metric_range("metric_range");  // as predict and plan check it
  auto& reg = models::ModelRegistry::instance();
  // A name no model has, named with the option that gave it.
  for (const auto& [option, name] : {std::pair{"--model", a.model}, std::pair{"--time-model", a.time_model},
                                     std::pair{"--metric-model", a.metric_model}}) {
    if (name.empty() || name == "auto") continue;
    try {
      reg.get(name);
    } catch (const InputError& e) {
      throw InputError("", 0, option, e.message());
    }
  }
  std::string tname = a.time_model.empty() ? a.model : a.time_model;
  std::string mname = a.metric_model.empty() ? a.model : a.metric_model;
  // A part named alone is fitted alone; --model NAME fits the parts NAME has.
  bool only_metric = a.time_model.empty() && !a.metric_model.empty() && !a.model_given;
  bool only_time = a.metric_model.empty() && !a.time_model.empty() && !a.model_given;
  bool want_time = !only_metric && (tname == "auto" || !a.time_model.empty() || reg.get(tname).make_time);
  bool want_metric = !only_time && (mname == "auto" || !a.metric_model.empty() || reg.get(mname).make_metric);
  if (want_metric && !s.has_metric()) {
    if (!a.metric_model.empty() || !want_time)
      throw InputError(a.samples, 0, "metric", "the samples carry no metric, so no metric model can be fitted");
    want_metric = false;
  }
  if (!want_time && !want_metric) throw InputError("model '" + a.model + "' has neither part to fit");
  std::string reason;
  if ((want_time && tname == "auto") || (want_metric && mname == "auto")) {
    std::cerr << "choosing models by 5-fold cross-validation...\n";
    auto c = scoring::choose_models(want_time ? tname : "auto", want_metric ? mname : "auto", s, 5, 1, params);
    if (want_time) tname = c.time_model;
    if (want_metric) mname = c.metric_model;
    reason = c.reason;
  }
  std::optional<PartResult> t, m;
  if (want_time) {
    if (!a.json) std::cerr << fmt::format("fitting time model {}...\n", tname);
    t = fit_time(tname, s, params);
  }
  if (want_metric) {
    if (!a.json) std::cerr << fmt::format("fitting metric model {}...\n", mname);
    m = fit_metric(mname, s, params);
  }
  // Drawn after the answer is printed, so that a chart that fails loses no answer.
  auto draw_chart = [&] {
    if (a.plot.empty()) return;
    std::cout.flush();
    auto panels = scoring::fit_panels(s, t ? t->time.get() : nullptr, m ? m->metric.get() : nullptr);
    io::render_plot(a.plot, panels);
    std::cerr << fmt::format("plot of the fitted curves over the samples -> {}\n", a.plot);
  };
  if (a.json) {
    nlohmann::json j;
    j["samples"] = a.samples;
    j["n_samples"] = s.size();
    j["direction"] = to_string(s.direction);
    auto part = [](const std::optional<PartResult>& p, const char* unit) {
      if (!p) return nlohmann::json(nullptr);
      return nlohmann::json{{"model", p->model}, {"in_sample_mre", p->mre}, {"n_scored", p->n}, {"scored", unit},
                            {"describe", p->describe}};
    };
    j["time"] = part(t, "distinct (batch, workers, nodes)");
    j["metric"] = part(m, "samples with a metric");
    if (!reason.empty()) j["choice"] = reason;
    // Predicted on other hardware: the errors above leave the transfer's own out (as POST /fit says).
    if (!s.times_predicted_from.empty()) j["times_predicted_from"] = s.times_predicted_from;
    if (s.times_predicted_log_sd) j["times_predicted_log_sd"] = *s.times_predicted_log_sd;
    std::cout << io::json_text(j) << "\n";
    note_json_answer_printed();  // a chart that fails after it adds no second document
    draw_chart();
    return;
  }
  std::cout << fmt::format("samples: {} ({} samples, {} with a metric; metric {})\n", a.samples, s.size(),
                           s.with_metric().size(), to_string(s.direction));
  if (!reason.empty()) std::cout << reason << (reason.back() == '\n' ? "" : "\n");
  if (t)
    std::cout << fmt::format("time model {}: in-sample MRE {:.2f}% over {} configurations\n{}\n", t->model,
                             100 * t->mre, t->n, t->describe);
  if (m)
    std::cout << fmt::format("metric model {}: in-sample MRE {:.2f}% over {} samples\n{}\n", m->model, 100 * m->mre,
                             m->n, m->describe);
  if (!s.has_metric()) std::cout << "metric: none (time-only samples)\n";
  draw_chart();
}

void setup(CLI::App& root) {
  auto a = std::make_shared<FitArgs>();
  auto* cmd = root.add_subcommand(
      "fit",
      "Fit an epoch-time model and a metric model to profiling samples; print their parameters and in-sample MRE.\n"
      "In-sample MRE (equation 12) shows how well a model reproduces the samples it saw; for the error on unseen\n"
      "configurations use `trainplan evaluate` (cross-validation) or the intervals of `trainplan predict`.");
  cmd->add_option("--samples", a->samples, "Profiling sample CSV (`trainplan sample` writes one)")
      ->required()
      ->check(CLI::ExistingFile);
  auto* model_opt = cmd->add_option(
      "--model", a->model,
      "Registered model for both parts (or the parts it has), or 'auto': per part, the lowest 5-fold CV MRE");
  model_opt->capture_default_str();
  cmd->add_option("--time-model", a->time_model,
                  "Epoch-time model (overrides --model; given alone, only the time part is fitted)");
  cmd->add_option("--metric-model", a->metric_model,
                  "Metric model, e.g. global-batch, optimus-curve (overrides --model; given alone, only the metric part)");
  add_comm_profile_option(cmd, a->comm_profile);
  add_hardware_option(cmd, a->hardware);
  cmd->add_flag("--json", a->json, "Print the result as JSON");
  cmd->add_option("--plot", a->plot,
                  "Draw the fitted curves over the samples with gnuplot (.png or .svg): epoch time against workers "
                  "for a few batches, and the metric against epochs for a few configurations");
  std::string known;
  for (const auto* e : models::ModelRegistry::instance().all())
    known += fmt::format("  {:<24} {}{}{}\n", e->name, e->make_time ? "time" : "", e->make_time && e->make_metric ? "+" : "",
                         e->make_metric ? "metric" : "");
  cmd->footer("Registered models (parts):\n" + known +
              "Example: trainplan fit --samples s.csv --time-model allreduce-physical --metric-model global-batch");
  cmd->callback([a, model_opt] {
    a->model_given = model_opt->count() > 0;
    run_fit(*a);
  });
}

CommandRegistrar reg(30, setup);

}  // namespace
}  // namespace trainplan::cli
