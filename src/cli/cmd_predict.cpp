// trainplan predict: epoch time and metric at one configuration, each with a
// prediction interval from K-fold conformal prediction (uncertainty/conformal.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/number_text.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/json_text.h"
#include "profile/samples_file.h"
#include "uncertainty/conformal.h"
#include "app/predict.h"

namespace trainplan::cli {
namespace {

struct PredictArgs {
  // The question, its defaults app::PredictQuery's; epochs and nodes are
  // optional here (absent: the query's "not given").
  app::PredictQuery query;
  std::string samples;
  std::optional<double> epochs;  // not given: time only
  std::optional<int> nodes;      // not given: packed (app::node_packing)
  bool json = false;
  std::string comm_profile;
  std::string metric_range;  // --metric-range LO:HI; empty: SampleSet::metric_range()
  std::string hardware;  // --hardware: catalog name or hardware file; empty: the default prior
};

std::string interval_text(const std::optional<models::Interval>& iv, int folds, const char* unit,
                          const std::optional<uncertainty::IntervalBasis>& basis) {
  if (!iv) return "no interval (too few configurations to hold out)";
  std::string out = fmt::format("[{:.4g}, {:.4g}]{} at {:g}% ({}-fold conformal)", iv->lo, iv->hi, unit,
                                100 * iv->coverage, folds);
  // A width read off residuals that cannot carry the coverage is still
  // printed (it is the best the samples give), but not as a promise.
  if (basis && basis->in_sample)
    out += fmt::format(" -- in-sample at a measured configuration (from the model's misses on all {} samples): no "
                       "coverage promised",
                       basis->residuals);
  else if (basis && !basis->enough)
    out += fmt::format(" -- only {} held-out residuals, too few to promise {:g}% (at most {:.0f}%): the largest "
                       "was used",
                       basis->residuals, 100 * iv->coverage, 100.0 * double(basis->residuals) / double(basis->residuals + 1));
  return out;
}

// What the samples measured at this configuration, against the intervals: a
// measurement outside them is the better guide there.
void print_measured(const app::Prediction& p, double epochs) {
  const auto& m = p.measured;
  if (!m.epoch_time_s && !m.metric) return;
  auto where = [](const std::optional<bool>& inside) {
    return !inside ? std::string() : *inside ? " (inside the interval)" : " (OUTSIDE the interval)";
  };
  std::vector<std::string> parts;
  if (m.epoch_time_s)
    parts.push_back(fmt::format("epoch time {:.4g} s{}{}", *m.epoch_time_s,
                                m.time_spread ? fmt::format(" +-{:.1f}%", 100 * *m.time_spread) : "",
                                where(m.time_inside)));
  if (m.metric)
    parts.push_back(fmt::format("metric after {:g} epochs {:.4g}{}{}", epochs, *m.metric,
                                m.metric_rows > 1 ? fmt::format(" (mean of {} rows)", m.metric_rows) : "",
                                where(m.metric_inside)));
  // Moved samples hold predictions, not measurements (transfer --samples).
  std::cout << fmt::format("{} at this configuration: {}\n",
                           p.times_predicted_log_sd ? "in the samples (times predicted on another GPU)" : "measured",
                           fmt::join(parts, "; "));
  if (m.time_inside == false || m.metric_inside == false)
    std::cout << "  the models miss this configuration's own trial: trust the measurement here" <<
        (m.metric_inside == false ? " (plan holds the metric it plans on to the trials, docs/PLANNING.md)" : "") << "\n";
}

void run_predict(const PredictArgs& a) {
  const models::ModelParams params = model_params(a.comm_profile, a.hardware);
  app::PredictQuery q = a.query;
  // Given, they must be usable: a negative count would read as "not given".
  if (a.epochs && !(*a.epochs > 0)) throw InputError("", 0, "--epochs", "must be a number > 0");
  if (a.nodes && *a.nodes < 1) throw InputError("", 0, "--nodes", "must be >= 1");
  q.epochs = a.epochs.value_or(-1);
  q.nodes = a.nodes.value_or(-1);
  app::check_predict_query(q);
  SampleSet samples = read_samples_noted(a.samples);
  if (!a.metric_range.empty()) samples.declared_metric_range = parse_metric_range(a.metric_range, "--metric-range");
  samples.check_declared_metric_range(a.metric_range.empty() ? "metric_range" : "--metric-range", a.query.target);
  app::ModelSource src(std::move(samples), params);
  app::Progress progress;
  progress.choosing = [](const std::string& m) { std::cerr << m << "\n"; };
  if (!a.json) progress.fitting = [](const std::string& m) { std::cerr << m << "\n"; };
  const app::Prediction p = app::predict(src, q, progress);

  if (a.json) {
    std::cout << io::json_text(app::to_json(p)) << "\n";
    return;
  }
  const auto& tname = p.time_model;
  const auto& mname = p.metric_model;
  const auto& reason = p.reason;
  const int nodes = p.nodes;
  const double t = p.epoch_time_s, m = p.metric;
  const auto& tiv = p.time_interval;
  const auto& miv = p.metric_interval;
  const bool want_metric = a.epochs.has_value();
  const double epochs = a.epochs.value_or(0);
  if (!reason.empty()) std::cout << reason << (reason.back() == '\n' ? "" : "\n");
  std::cout << fmt::format("configuration: batch {} per worker, {} worker{}, {} node{} (global batch {})\n",
                           number_text(a.query.batch), a.query.workers, a.query.workers == 1 ? "" : "s",
                           nodes == 0 ? std::string("unknown") : std::to_string(nodes), nodes == 1 ? "" : "s",
                           number_text(a.query.batch * a.query.workers));
  if (!a.nodes) std::cout << fmt::format("  nodes: {}\n", p.nodes_from);
  // Outside what the samples ran, the interval (from the samples' own misses) says nothing of the
  // extrapolation; said here so that a confident-looking figure is read as what it is.
  if (p.past_most_workers())
    std::cout << fmt::format("  note: more workers than any sample ran ({}): the time model extrapolates, and the "
                             "interval does not cover that\n",
                             p.most_workers_sampled);
  if (p.past_most_nodes())
    std::cout << fmt::format("  note: more nodes than any sample ran on ({}): the time model extrapolates across "
                             "them, and the interval does not cover that\n",
                             p.most_nodes_sampled);
  if (p.batch_outside_sampled())
    std::cout << fmt::format("  note: a batch outside the sampled {:g}..{:g}: the time model extrapolates, and the "
                             "interval does not cover that\n",
                             p.smallest_batch_sampled, p.largest_batch_sampled);
  if (p.batch_past_dataset())
    std::cout << fmt::format("  note: the global batch {:g} is larger than the data set ({} examples): no epoch holds "
                             "one step of it\n",
                             a.query.batch * a.query.workers, *p.dataset_size);
  std::cout << fmt::format("epoch time ({}): {:.4g} s  {}\n", tname, t, interval_text(tiv, p.time_folds, " s", p.time_basis));
  if (p.times_predicted_log_sd && tiv)
    std::cout << fmt::format("  the interval includes the transfer's error, shared by every configuration (log sd "
                             "{:.3g}, joined in quadrature)\n",
                             *p.times_predicted_log_sd);
  if (want_metric) {
    std::cout << fmt::format("metric after {:g} epochs ({}, {} is better): {:.4g}  {}\n", epochs, mname,
                             p.direction == MetricDirection::kMax ? "higher" : "lower", m,
                             interval_text(miv, p.metric_folds, "", p.metric_basis));
    const bool up = p.direction == MetricDirection::kMax;
    if (miv && p.best_sampled_metric && (up ? miv->lo : miv->hi) == *p.best_sampled_metric &&
        m != *p.best_sampled_metric)
      std::cout << fmt::format("  the interval's {} end is held at the best sampled metric, {:.4g}: no trial measured "
                               "better, so no confidence is claimed beyond it\n",
                               up ? "lower" : "upper", *p.best_sampled_metric);
    if (p.past_every_sampled_epoch()) {
      // How far the extrapolation was checked, and whether this query is within it.
      const double longest = *p.last_sampled_epoch_any;
      std::string checked =
          "the extrapolation could not be checked (no trial ran past the epoch count two thirds of the trials "
          "stay within)";
      if (const auto& c = p.forward_check)
        checked = fmt::format("fitted on the trials up to {:g} epochs, the model missed the {} sample{} up to {:g} by "
                              "{:.1f}% at most (median {:.1f}%)",
                              c->cut, c->samples, c->samples == 1 ? "" : "s", c->last, 100 * c->max_abs_residual,
                              100 * c->median_abs_residual);
      std::cout << fmt::format("  past the longest trial ({:g} epochs), {:.3g}x: the model only extrapolates; {}",
                               longest, epochs / longest, checked);
      if (p.past_trusted_epochs())
        std::cout << fmt::format(
            ". Checked only to about {:g} epochs: at {:g} the prediction and its interval are not backed by any "
            "measurement (runs often keep improving where the model levels off); a trial of about {:g} epochs would "
            "check it\n",
            *p.trusted_through_epochs, epochs, epochs);
      else
        std::cout << fmt::format(". Within that check's reach (about {:g} epochs; docs/lab/MODELS-METRIC.md, \"Past the last "
                                 "sampled epoch\")\n",
                                 *p.trusted_through_epochs);
    }
    std::cout << fmt::format("time for {:g} epochs: {:.4g} s", epochs, t * epochs);
    if (tiv) std::cout << fmt::format("  [{:.4g}, {:.4g}] s", tiv->lo * epochs, tiv->hi * epochs);
    std::cout << "\n";
    if (p.metric_bound && p.time_bound)
      std::cout << fmt::format("one-sided at {:g}: metric {} {:.4g}, epoch time <= {:.4g} s (each on its own; "
                               "plan --bounds one-sided plans on these)\n",
                               a.query.confidence, p.direction == MetricDirection::kMax ? ">=" : "<=", *p.metric_bound,
                               *p.time_bound);
  } else if (!p.to_target) {
    std::cout << "metric: give --epochs to predict it, or --target for the epochs to reach it\n";
  }
  print_measured(p, epochs);
  if (p.to_target) {
    // The job's length: epochs to the target, and what they take.
    const auto& tt = *p.to_target;
    const char* cmp = p.direction == MetricDirection::kMax ? ">=" : "<=";
    if (!tt.epochs) {
      std::cout << fmt::format("to reach metric {} {:g} ({}): not within {} epochs at this configuration\n", cmp,
                               *a.query.target, mname, a.query.max_epochs);
    } else {
      auto ends = [&](const std::optional<int>& e) { return e ? std::to_string(*e) : fmt::format(">{}", a.query.max_epochs); };
      std::cout << fmt::format("to reach metric {} {:g} ({}): {} epochs [{}, {}] at {:g}%\n", cmp, *a.query.target, mname,
                               *tt.epochs, ends(tt.epochs_lo), ends(tt.epochs_hi), 100 * a.query.confidence);
      std::cout << fmt::format("  time to the target: {:.4g} s  [{}, {}] s (epochs x epoch time, both ends)\n",
                               *tt.time_s, tt.time_lo_s ? fmt::format("{:.4g}", *tt.time_lo_s) : "no interval",
                               tt.time_hi_s ? fmt::format("{:.4g}", *tt.time_hi_s) : "beyond the epoch limit");
      if (tt.held_to_runs > 0)
        std::cout << fmt::format("  held to the {} metric{} measured at this configuration, as plan holds its choices "
                                 "(a run that missed the target at as many epochs or more rules them out)\n",
                                 tt.held_to_runs, tt.held_to_runs == 1 ? "" : "s");
      if (!tt.epochs_hi && p.best_sampled_metric && !meets(*p.best_sampled_metric, *a.query.target, p.direction))
        std::cout << fmt::format("  the target is past the best sampled metric, {:.4g}: the interval's worse end is "
                                 "held there, so it never reaches the target with confidence\n",
                                 *p.best_sampled_metric);
    }
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<PredictArgs>();
  auto* cmd = root.add_subcommand(
      "predict",
      "Predict epoch time and (with --epochs) the metric at one configuration, each with a prediction interval.\n"
      "Intervals come from K-fold conformal prediction: each model is fitted on all samples for the point\n"
      "prediction, and on K training folds (configurations held out together) for out-of-fold relative residuals;\n"
      "the interval is prediction * (1 -/+ q), q the conformal quantile of those residuals at --confidence.");
  cmd->add_option("--samples", a->samples, "Profiling sample CSV (`trainplan sample` writes one)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--batch", a->query.batch, "Per-worker batch size")->required()->type_name("INT");
  cmd->add_option("--workers", a->query.workers, "Data-parallel workers (GPUs)")->required();
  cmd->add_option("--epochs", a->epochs, "Data epochs trained: predicts the metric after them (default: time only)");
  cmd->add_option("--target", a->query.target,
                  "Metric target: also predict the epochs and the time to reach it (the first epoch count that "
                  "meets it, on the point prediction and on each end of its interval)");
  cmd->add_option("--max-epochs", a->query.max_epochs, "With --target, the most epochs to look through")
      ->capture_default_str();
  cmd->add_option("--nodes", a->nodes,
                  "Nodes the workers span (default: packed at --gpus-per-node; the output says how they were packed)");
  cmd->add_option("--gpus-per-node", a->query.gpus_per_node,
                  "Workers a node holds, for packing when --nodes is not given [default: the node of --hardware when "
                  "given, else the most workers any sample ran on one node; when every sample ran on one node and "
                  "--workers exceeds them, that is an assumption and the output says so; 0: that default]")
      ->check(non_negative_number());
  cmd->add_option("--model", a->query.model,
                  "Registered model for both parts, or 'auto': per part, the lowest 5-fold CV MRE on the samples")
      ->capture_default_str();
  cmd->add_option("--time-model", a->query.time_model, "Epoch-time model (overrides --model for time)");
  cmd->add_option("--metric-model", a->query.metric_model, "Metric model (overrides --model for the metric)");
  cmd->add_option("--confidence", a->query.confidence, "Coverage of the intervals, in (0, 1)")->capture_default_str();
  cmd->add_option("--folds", a->query.folds, "Folds for the conformal residuals")->capture_default_str();
  cmd->add_option("--seed", a->query.seed, "Seed that deals configurations into folds")->capture_default_str()->check(seed_number());
  add_comm_profile_option(cmd, a->comm_profile);
  add_hardware_option(cmd, a->hardware);
  add_metric_range_option(cmd, a->metric_range);
  cmd->add_flag("--json", a->json, "Print the prediction as JSON");
  cmd->footer(
      "Example: trainplan predict --samples s.csv --batch 64 --workers 8 --epochs 30 \\\n"
      "           --time-model allreduce-physical --metric-model global-batch --confidence 0.9\n"
      "         trainplan predict --samples s.csv --batch 64 --workers 8 --target 0.93   # how long to 93%");
  cmd->callback([a, cmd] {
    // An option this prediction does not read is refused, as a misplaced one would otherwise pass unread.
    if (cmd->get_option("--max-epochs")->count() > 0 && !a->query.target)
      throw InputError("", 0, "--max-epochs", "bounds the search for --target's epochs: give --target");
    if (cmd->get_option("--gpus-per-node")->count() > 0 && a->nodes)
      throw InputError("", 0, "--gpus-per-node",
                       "packs the workers when --nodes is not given; with --nodes the node count is given: drop one");
    run_predict(*a);
  });
}

CommandRegistrar reg(31, setup);

}  // namespace
}  // namespace trainplan::cli
