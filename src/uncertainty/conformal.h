// Prediction intervals for any model by K-fold (cross-validated) conformal
// prediction on relative residuals.
//
//   fit():  the wrapped model is fitted once on all samples (the point
//           prediction); then K fresh copies are fitted, each leaving one fold
//           out, and every held-out sample gives a relative residual
//           |y - f_{-k}(x)| / |f_{-k}(x)|.
//   predict_interval(c):  q = the ceil((n+1) c)-th smallest of the n residuals
//           (the split-conformal rank, which guarantees coverage >= c for
//           exchangeable data), and the interval is f(x) * (1 -/+ q).
//
// Why this and not the bootstrap: it needs no model of the noise, gives
// finite-sample coverage under exchangeability, costs K extra fits (not
// hundreds), and works for any registered model, including step functions
// whose bootstrap distribution is poor. Relative residuals because both
// targets (seconds, metrics) have errors roughly proportional to their size.
// Folds keep samples of one configuration (batch, workers, nodes) together:
// samples that differ only in epochs share one epoch time and a correlated
// metric, and the planner asks about configurations it has not measured. For
// time models each held-out configuration counts once.
// When (n+1) c > n the largest residual is used, and describe() says the
// interval is too short to guarantee c.
//
// Time models, at a measured configuration: the out-of-fold residuals are the
// error of the model where it has no measurement. At a configuration the
// samples measured (same batch, workers and nodes) the prediction is anchored
// by that measurement, and the out-of-fold quantile overstates the error there
// (by the whole extrapolation error; e.g. 4-11% on the Pollux traces, where the
// in-sample error at measured configurations is ~0). There the interval uses
// the same conformal rank on the in-sample relative residuals of every sample
// (the misfit and the measurement noise of repeated samples), which carries
// no finite-sample guarantee: it says how far the fit is from what was
// measured, not how far a new run may be. Metric models keep the out-of-fold
// residuals everywhere: the planner asks about epochs that were not measured.
//
// Metric models, at a measured run (a (batch, workers) with >= 2 samples): a
// query there is an epoch of that run that was not sampled, an error the
// configuration folds never see (they hold the whole run out). So each run's
// samples are also dealt into run_folds folds and predicted by models that
// keep the rest of their run; those within-run residuals are binned by the
// gap |ln(e / e')| to the nearest sample e' of the run the fold kept, and a
// query on a measured run uses the wider of its configuration-rule quantile
// and its gap bin's (the rule only ever widens). On the Pollux traces, scored
// at every epoch of the sampled runs (bench intervals --points runs, seed 1),
// the metric's two-sided coverage at 0.9 was 0.60 with the configuration
// rule alone and is 0.72 with this one; runs extrapolated past their last
// sample remain under-covered (docs/lab/MODELS-METRIC.md).
//
// Metric models, past the best metric measured: the residuals come from
// samples inside the measured range and calibrate nothing beyond it, so the
// pessimistic end (the lower for a metric to maximise, the upper for one to
// minimise) of an interval or bound is held to the best metric among the
// fitted samples: no confidence is claimed for a metric no run has reached.
// On deepspeech2 (seed 1, every epoch of the sampled runs) the model put 1,423
// points past the lowest WER sampled, and the interval's upper end held at
// 0.39 of them; held, 0.63.
//
// One-sided bounds (predict_bound): the same ranks on the signed residuals of
// one side, so a bound at c holds with probability >= c on its own side,
// where the two-sided interval at c holds on each side with >= c and, with
// symmetric errors, about (1 + c) / 2. A model biased to one side gets a
// bound close to (or past) its prediction on the other.
//
// Metric models, Mondrian bins: a metric's error is not proportional to its
// size. Where the curve is steep in epochs, out-of-fold errors are large (a
// curve placed a little early or late is off by its slope); near the
// plateau, where a target usually lies, they are small. One pooled quantile
// is then too wide near the plateau and too narrow where the curve climbs
// (measured on the Pollux traces at 0.9: one-sided coverage 0.88-0.92 below
// half of the reachable range, 1.00 in its top fifth). So the out-of-fold
// residuals are split into up to `metric_bins` equal-count bins by a key,
// and a query uses the bin its key (under the full fit) falls in: Mondrian
// (conditional on a taxonomy of x) conformal prediction, whose coverage
// guarantee holds within each bin under exchangeability. The key is the
// model's own relative slope in epochs, |m(1.15 e) - m(e / 1.15)| / |m(e)|
// (default; at a held-out sample, under the fold's model), or the predicted
// metric. The slope separates steep from flat where the predicted value
// cannot: runs at different batches plateau at different levels, so one
// value is the plateau of one run and the climb of another (on the Pollux
// traces the out-of-fold error's 90% quantile grows from 0.4-1.2% in the
// flattest fifth to 1.2-7.1% in the steepest, seed 1).
//
// Metric models, between two sampled epochs of a measured run (the first
// sampled epoch < e < the last): the rules above calibrate this on residuals
// that are mostly extrapolations (whole runs held out; held-out first and
// last samples), and over-cover it: at 0.9 the two-sided coverage between
// samples was 0.97-0.98 on the Pollux traces (seeds 1-3), with the
// pessimistic end holding at 0.99. There the interval uses only the
// within-run residuals whose sample had kept samples of its run on both sides
// (an interpolation, like the query), each divided by its scale
//   (gap + between_gap_floor) * (slope + s0),
// gap the |ln(e / e')| to the nearest kept sample of its run, slope the bin
// key above under the fold's model, s0 the median slope of those residuals;
// the query's half-width is their conformal rank times its own scale. Both
// factors are where an interpolated curve errs: it is exact at the samples
// and drifts away from them, by more where the curve moves (a learning-rate
// drop placed an epoch late is off by its whole step). Normalised conformal
// prediction: the guarantee holds for exchangeable scaled residuals. Measured
// at every epoch of the sampled runs (seeds 1-8), the two-sided coverage
// between samples is 0.87-0.93 (pooled over traces), the pessimistic end's
// 0.94-0.96; on single traces it ranges from 0.76 (ncf, seed 1, 278 points
// on a few runs) to 0.98.
//
// Metric models, past the last epoch sampled on any configuration: the model
// only extrapolates there, and every residual above comes from inside the
// sampled epochs. Runs keep improving past them (later learning-rate drops,
// slow tails) where most models level off, and some runs improve less than
// the model extrapolates; at 0.9 on the Pollux traces (seeds 1-8) the
// optimistic end (the upper for a metric to maximise) covered 0.52-0.72
// there, and deepspeech2's pessimistic end 0.72-0.81. The beyond rule fits the
// model on the samples up to the epoch count below which 1 - beyond_holdout of
// them lie and predicts the rest (the forward residuals), each divided by
// ln(e / the last fitted epoch) + beyond_gap_floor; past the last sampled
// epoch a query's half-width is the wider of the rules above and their rank
// times its own ln(e / the last sampled epoch) + beyond_gap_floor, at both
// ends (the pessimistic end is still held to the best measured metric). It
// covers 0.79-0.99 at the optimistic end there (seeds 1-8), at widths from 2%
// (cifar10) to 50% (imagenet, whose forward fold straddles a learning-rate
// drop) (docs/lab/MODELS-METRIC.md, "Past the last sampled epoch").
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/model.h"
#include "models/registry.h"

namespace trainplan::uncertainty {

struct ConformalParams {
  int folds = 5;
  uint64_t seed = 1;  // shuffles configurations into folds
  // Metric models: Mondrian bins on the predicted metric (see below); at most
  // `metric_bins`, and only as many as give each bin `min_per_bin` residuals.
  int metric_bins = 3;
  int min_per_bin = 20;
  // What the metric's Mondrian bins split on: the predicted metric, or the
  // model's local slope in epochs (see below).
  enum class Taxonomy { kPredicted, kSlope };
  Taxonomy taxonomy = Taxonomy::kSlope;
  // Metric models at a measured run (batch, workers): the planner asks about
  // epochs of it that were not sampled. Within-run residuals (each run's
  // samples held out in turn, run_folds folds, binned by the epoch gap to the
  // run's nearest kept sample) widen the interval there where they are wider
  // than the configuration rule's; 0 or 1 turns this off.
  int run_folds = 3;
  // Metric models: the pessimistic end of an interval or bound (the lower for
  // a metric to maximise, the upper for one to minimise) never promises a
  // metric better than the best sample the model was fitted on (see below).
  bool hold_to_best_measured = true;
  // Metric models between two sampled epochs of a measured run: calibrate
  // there on the within-run residuals of samples that had kept samples of
  // their run on both sides, scaled by the distance to the nearer sample and
  // by the local slope (see below), instead of the rules above. false: the
  // rules above everywhere (the rule before 2026-11-25).
  bool between_rule = true;
  // The scale's floor in gap |ln(e / e')|: next to a sample the error does not
  // vanish (per-epoch noise, a curve misplaced by a fraction of an epoch).
  double between_gap_floor = 0.3;
  // Metric models past the last sampled epoch of every run: widen both ends
  // of an interval or bound to the forward residuals where they are wider
  // (see below). false: the rules above there too (before 2026-11-25).
  bool beyond_rule = true;
  // The samples at the latest `beyond_holdout` of the sampled epochs (by count)
  // are the forward fold; `beyond_gap_floor` is the floor of its scale.
  double beyond_holdout = 1.0 / 3;
  double beyond_gap_floor = 0.1;
  // Metric models: pin the wrapped model to each measured run's samples
  // (uncertainty/metric_run_pinned.h), in the full fit and in every fold's, so
  // the within-run residuals are those of pinned interpolations. false: the
  // model as registered.
  bool pin_runs = false;
};

using TimeFactory = std::function<std::unique_ptr<models::TimeModel>()>;
using MetricFactory = std::function<std::unique_ptr<models::MetricModel>()>;

// Residual store shared by both wrappers.
class ConformalResiduals {
 public:
  // Signed relative residuals (y - f(x)) / |f(x)|; NaN marks a sample whose
  // prediction was not finite (the worst residual on either side).
  void set(std::vector<double> signed_residuals);
  size_t size() const { return abs_.size(); }
  // The conformal quantile of |r| at coverage c in (0, 1); nullopt with no residuals.
  std::optional<double> quantile(double coverage) const;
  // One-sided: the conformal quantile at c of the shortfall -r (kLower) or of
  // the excess r (kUpper); the bound is f(x) -/+ q |f(x)|. May be negative
  // where the model errs to the other side.
  std::optional<double> one_sided(double coverage, models::BoundSide side) const;
  // True when `coverage` needs more residuals than there are.
  bool too_few(double coverage) const;
  std::string describe(const std::string& kind = "out-of-fold") const;

 private:
  std::vector<double> abs_, shortfall_, excess_;  // each sorted ascending
};

class ConformalTimeModel : public models::TimeModel {
 public:
  ConformalTimeModel(TimeFactory make, ConformalParams p = {});
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::optional<models::Interval> predict_interval(double batch, int workers, int nodes, double coverage) const override;
  std::optional<double> predict_bound(double batch, int workers, int nodes, double coverage,
                                      models::BoundSide side) const override;
  std::string describe() const override;
  const ConformalResiduals& residuals() const { return res_; }
  // In-sample relative residuals, used at measured configurations.
  const ConformalResiduals& in_sample_residuals() const { return res_in_; }
  bool measured(double batch, int workers, int nodes) const;

 private:
  TimeFactory make_;
  ConformalParams p_;
  std::unique_ptr<models::TimeModel> model_;
  std::string name_;
  ConformalResiduals res_, res_in_;
  std::set<std::tuple<double, int, int>> measured_;  // (batch, workers, nodes) of the samples
  std::vector<std::string> notes_;
};

class ConformalMetricModel : public models::MetricModel {
 public:
  ConformalMetricModel(MetricFactory make, ConformalParams p = {});
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, double epochs) const override;
  std::optional<models::Interval> predict_interval(double batch, int workers, double epochs, double coverage) const override;
  std::optional<double> predict_bound(double batch, int workers, double epochs, double coverage,
                                      models::BoundSide side) const override;
  std::string describe() const override;
  const ConformalResiduals& residuals() const { return res_; }
  // The Mondrian bins: upper edges of the bin key (bins - 1 of them) and residuals per bin.
  const std::vector<double>& bin_edges() const { return edges_; }
  const std::vector<ConformalResiduals>& bin_residuals() const { return bins_; }
  // The bin key of a query under the full fit: its slope or its prediction.
  double bin_key(double batch, int workers, double epochs) const;
  static constexpr double kSlopeStep = 1.15;  // epochs x and / this for the slope key

 private:
  MetricFactory make_;
  ConformalParams p_;
  std::unique_ptr<models::MetricModel> model_;
  std::string name_;
  ConformalResiduals res_;  // pooled
  MetricDirection direction_ = MetricDirection::kMax;
  std::optional<double> best_measured_;  // the best metric among the fitted samples
  // The side of an interval or bound that plans read: lower for a metric to maximise.
  models::BoundSide worse_side() const {
    return direction_ == MetricDirection::kMax ? models::BoundSide::kLower : models::BoundSide::kUpper;
  }
  // `v`, an end on the worse side, held to best_measured_.
  double held(double v) const;
  // The residual quantile at a query: `rank` of its Mondrian bin, widened on a
  // measured run to `rank` of its gap bin where that is wider (between two
  // samples of a run: the between rule instead), and past every sampled epoch
  // to the beyond rule's where that is wider.
  std::optional<double> rank_at(double y, double batch, int workers, double epochs,
                                const std::function<std::optional<double>(const ConformalResiduals&)>& rank) const;
  std::vector<double> edges_;
  std::vector<ConformalResiduals> bins_;
  std::string bins_text() const;
  const ConformalResiduals& residuals_at(double key) const;
  std::string within_run_text() const;
  std::string hold_text() const;
  // Within-run rule: the sorted sampled epochs of each measured (batch,
  // workers), and the residuals binned by gap (edges: bins - 1 upper edges).
  std::map<std::pair<double, int>, std::vector<double>> run_epochs_;
  std::vector<double> gap_edges_;
  std::vector<ConformalResiduals> gap_bins_;
  void fit_within_run(const SampleSet& with);
  // Between rule: the scaled residuals, the median slope s0, and the scale of
  // a query strictly between the first and last sampled epochs of its run
  // (nullopt elsewhere, or with too few residuals).
  ConformalResiduals between_;
  double between_slope_floor_ = 0;
  std::optional<double> between_scale(double y, double batch, int workers, double epochs) const;
  std::string between_text() const;
  // Beyond rule: the forward residuals, each divided by its scale
  // ln(e / last training epoch) + beyond_gap_floor; the last sampled epoch of
  // all runs; and the relative half-width at a query past it under `rank`
  // (nullopt elsewhere, or without the rule).
  ConformalResiduals beyond_;
  double last_sampled_epoch_ = 0;
  void fit_beyond(const SampleSet& with);
  std::optional<double> beyond_rank(double epochs,
                                    const std::function<std::optional<double>(const ConformalResiduals&)>& rank) const;
  std::string beyond_text() const;
  // The sorted sampled epochs of a measured run with >= 2 samples; nullptr elsewhere.
  const std::vector<double>* measured_run(double batch, int workers) const;
  // |ln(epochs / e)| to the nearest e of `sampled`.
  static double nearest_gap(const std::vector<double>& sampled, double epochs);
  // The gap bin of a query on a measured run with >= 2 samples; nullptr elsewhere.
  const ConformalResiduals* within_run_at(double batch, int workers, double epochs) const;
  // The bin key under model m, whose prediction there is y (computed once by the caller).
  double bin_key(const models::MetricModel& m, double y, double batch, int workers, double epochs) const;
  std::vector<std::string> notes_;
};

// Wrap a model given by its factory (called K+1 times per fit).
std::unique_ptr<models::TimeModel> with_conformal(TimeFactory make, ConformalParams p = {});
std::unique_ptr<models::MetricModel> with_conformal_metric(MetricFactory make, ConformalParams p = {});
// Wrap a registered model by name; throws InputError if it lacks that part.
std::unique_ptr<models::TimeModel> conformal_time_model(const std::string& name, ConformalParams p = {},
                                                        const models::ModelParams& mp = {});
std::unique_ptr<models::MetricModel> conformal_metric_model(const std::string& name, ConformalParams p = {},
                                                            const models::ModelParams& mp = {});

// Fold index of every sample: configurations (batch, workers, nodes) shuffled
// with `seed` and dealt round-robin into min(folds, configurations) folds.
std::vector<int> config_folds(const SampleSet& s, int folds, uint64_t seed);

}  // namespace trainplan::uncertainty
