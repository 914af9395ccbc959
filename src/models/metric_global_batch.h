// The global-batch metric model ("global-batch"): the metric is a monotone
// function of effective epochs,
//   metric(b, r, e) = G(x(B, e)),   B = b*r,   x(B, e) = integral_0^e eff(B, e') de',
// where eff is the statistical efficiency of global batch B in the sense of
// Pollux (McCandlish et al.'s gradient noise scale): with phi the noise scale
// in units of a reference batch s,
//   eff(B, e) = (phi(e) + 1) / (phi(e) + B / s),
// or, with a sharper knee p (a searched parameter, 1 above),
//   eff(B, e) = ((1 + phi^-p) / (1 + (B / (s phi))^p))^(1/p).
// Small batches (B << s*phi) use every example fully; large ones only progress
// per step. The noise scale grows as training goes on, so phi depends on e:
//  * with gradient statistics (samples carry grad_sqr and grad_var):
//      log(grad_var/grad_sqr) = a + c log e + d log B  (least squares), and s,
//      the unknown batch the variance refers to, is found by a 1-D search;
//  * without them: phi(e) = theta * (e / e_ref)^c, with theta and c found by
//    a grid search (e_ref: the geometric mean of the sampled epochs).
// G is fitted on (log x, metric): by default a centred isotonic (PAVA)
// regression, increasing for max-direction metrics and decreasing for
// min-direction ones, interpolated linearly between block centroids; or an
// Optimus curve in x (option).
// Real runs at different batches deviate from one curve in x (a slow start,
// a late learning-rate drop), so by default a local correction is added: the
// kernel-weighted mean or median of G's residuals over (log2 B, ln x) or
// (log2 B, ln e) (learning-rate schedules are set in data epochs, so their
// effects line up there). Each statistic's axis, bandwidths and shrinkage are
// chosen by leave-one-out on its own loss (squared error for the mean,
// absolute for the median), and the statistic by leave-one-out absolute error. The
// corrected surface is tabulated at fit time on rows of log2 B, each with its
// own columns (G's knots kept exact) and made monotone along the row (running
// max, or min for loss-type metrics); interpolation linear along a row and
// between rows keeps each prediction monotone in epochs.
// The search keeps the parameters (and, by default, the family: statistics or
// fitted) with the least squared error of G on held-out runs (or in-sample).
#pragma once
#include <array>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "models/metric_loss.h"
#include "models/model.h"
#include "models/optimus_curve.h"
#include "models/pooled_samples.h"
#include "numerics/pava.h"
#include "models/tabulated_surface.h"

namespace trainplan::models {

struct GlobalBatchParams {
  enum class Noise { kAuto, kGradStats, kFitted };
  enum class Link { kIsotonic, kOptimus };
  // auto: search both the gradient-statistics trend (when >= min_grad_samples
  // samples carry statistics) and the fitted trend; the better fit wins.
  Noise noise = Noise::kAuto;
  // G's form: kIsotonic, an isotonic (PAVA) regression on ln x, centred with `centered`; or kOptimus, an
  // Optimus loss curve in x ("global-batch-curve"). Default: isotonic.
  Link link = Link::kIsotonic;
  bool centered = true;  // isotonic link: knots at block centroids (centred isotonic regression)
  // Isotonic link: G convolved with a Gaussian of this sd in ln x (0: none).
  // global-batch keeps G sharp (its local correction cannot restore a sharp
  // drop); global-batch-anchored smooths its base (metric_anchored.h).
  double link_smooth = 0;
  // Samples carrying gradient statistics (grad_sqr and grad_var > 0) that Noise::kAuto needs before it
  // searches the gradient-statistics trend (kGradStats ignores it and needs 4). Default: 8.
  size_t min_grad_samples = 8;
  int scale_grid = 49;                                   // log-spaced candidates for s or theta
  double scale_span = 256;                               // candidates span [B_min / span, B_max * span]
  std::vector<double> growth = {0, 0.5, 1, 1.5, 2};      // candidate c without gradient statistics
  // Candidate sharpness p of the efficiency's knee,
  //   eff = ((1 + phi^-p) / (1 + (B/(s*phi))^p))^(1/p);
  // p = 1 is Pollux's (phi+1)/(phi+B/s); p = 2 keeps eff near 1 further up
  // towards B = s*phi and then falls as 1/B, as deepspeech2's trace does
  // (batches 20 and 40 level in data epochs, 320 and 640 at 1/B). The search
  // picks p with the trend (docs/lab/MODELS-METRIC.md, "Knee sharpness").
  std::vector<double> sharpness = {1, 2};
  int integration_steps = 24;                            // midpoint rule for x(B, e)
  // Golden-section steps refining the grid's winner between its candidates (35%
  // apart on deepspeech2), scored as the grid scores them; 0: the grid alone.
  int refine_iterations = 8;
  // How the trend (phi's parameters and p) is chosen from the grid: by G's
  // in-sample squared error, or by its squared error on held-out runs
  // (configurations in order of global batch dealt into `noise_cv_folds`
  // folds, G refitted on the rest). Held-out is the default: with the second
  // candidate p, in-sample choice let imagenet's 5-fold CV MRE rise
  // (docs/lab/MODELS-METRIC.md, "Knee sharpness").
  enum class NoiseSelection { kInSample, kHeldOutRuns };
  // How the trend is chosen (NoiseSelection above). Default: held-out runs.
  NoiseSelection noise_selection = NoiseSelection::kHeldOutRuns;
  // Folds the runs (distinct global batch and workers) are dealt into for held-out selection: at least 2, at
  // most the runs; with one run the trend is chosen in sample. Default: 5.
  int noise_cv_folds = 5;
  // Local correction: a Gaussian-kernel smooth (weighted mean or median) of the
  // residuals of G over (log2 B, ln x) or (log2 B, ln e), shrunk to 0 where data
  // are sparse (prior weight `shrink` at 0); bandwidths and shrink chosen by leave-one-out.
  bool smooth_residuals = true;
  std::vector<double> bandwidth_batch = {0.125, 0.25, 0.5, 1, 2};  // octaves of B
  std::vector<double> bandwidth_x = {0.05, 0.1, 0.2, 0.4, 0.8};     // in ln x (or ln e)
  std::vector<double> shrink = {0.01, 0.03, 0.1, 0.3, 1, 3};
  // The second coordinate of the correction: effective epochs x (aligned with
  // G), data epochs e (where runs at neighbouring batches line up by data
  // seen), or auto: the one with the lower leave-one-out error.
  enum class Axis { kEffectiveEpochs, kDataEpochs, kAuto };
  Axis correction_axis = Axis::kAuto;
  // The correction's local statistic: the kernel-weighted mean of the residuals
  // (Nadaraya-Watson; bandwidths by leave-one-out squared error), their
  // kernel-weighted median (a sharp step, such as a learning-rate drop, instead
  // of a ramp; bandwidths by leave-one-out absolute error), or auto: both, and
  // the one with the lower leave-one-out absolute error, the scale of MRE.
  enum class Local { kMean, kMedian, kAuto };
  Local local = Local::kAuto;
  // Two scales: a first, broad weighted mean of the residuals (bandwidths
  // `broad_bandwidth_x` along epochs) carries a run's offset from G across
  // epochs where it has no sample near (deepspeech2's smallest batch sits
  // above G, in WER, at every epoch), and the local statistic above then
  // smooths what the broad one left, on its leave-one-out residuals.
  // kOne: the local statistic alone; kAuto: two scales where their
  // leave-one-out absolute error is lower (two scales scored better than
  // kAuto's choice in 5-fold CV on the Pollux traces, so kTwo is the default).
  enum class Scales { kOne, kTwo, kAuto };
  Scales scales = Scales::kTwo;
  std::vector<double> broad_bandwidth_x = {0.4, 0.8, 1.6, 3.2};
  bool monotone_batch = false;  // also force the corrected surface monotone in B at fixed x (worse for larger B)
  double grid_batch_step = 0.25;  // octaves between grid rows
  double grid_x_step = 0.05;      // ln x (or ln e) between regular grid columns (G's knots are added)
  // Samples of one configuration (batch, workers, epochs) are pooled into one
  // point weighted by their count (models/pooled_samples.h). Two steps cost
  // more than the points: the trend search refits G on them for each of its
  // ~530 candidates, and the correction's leave-one-out weighs every pair.
  // Each works on at most this many configurations, an even thinning in
  // order of (B, workers, e) beyond it; G and the measure of fit use them
  // all. 256 is above the paper's sampling plan (240 trials), whose fits
  // these caps do not touch, and keeps a fit on any number of
  // configurations near the cost of one on 256 (docs/lab/SCALING.md).
  size_t max_trend_points = 256;
  size_t max_correction_points = 256;
};

class GlobalBatchModel : public MetricModel {
 public:
  explicit GlobalBatchModel(GlobalBatchParams p = {}, std::string name = "global-batch")
      : p_(std::move(p)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, double epochs) const override;
  std::string describe() const override;

  // Effective epochs at global batch B after e data epochs, under the fit.
  double effective_epochs(double global_batch, double epochs) const;
  bool uses_grad_stats() const { return grad_; }
  double knee_sharpness() const { return noise_.p; }
  // The fitted noise-scale trend, log phi = a + c log(e / e_ref) at
  // reference batch s (with gradient statistics: a + c log e + d log B).
  struct Trend {
    double a = 0, c = 0, d = 0, s = 1, e_ref = 1;
  };
  Trend trend() const { return {noise_.a, noise_.c, noise_.d, noise_.s, noise_.e_ref}; }

  // One kernel smooth of the local correction (the broad one first, with two scales).
  struct Stage {
    double hb = 0, hx = 0, lam = 0;  // bandwidths (octaves of B, ln x or ln e) and shrink
    bool median = false;             // a weighted median (else a weighted mean)
  };
  // The fitted choices, read-only (for tests; describe() prints them).
  const GlobalBatchParams& params() const { return p_; }
  bool trend_chosen_on_held_out_runs() const { return held_out_; }  // else in-sample
  bool has_correction() const { return corrected_; }
  bool correction_along_data_epochs() const { return data_axis_; }  // else along effective epochs
  const std::vector<Stage>& correction_stages() const { return stages_; }
  // Forgets the trend searches kept so far (TrendCache below), so that a
  // benchmark times a fit that searches.
  static void clear_trend_cache();

 private:
  struct Noise {
    bool grad = false;
    double a = 0, c = 0, d = 0;  // log phi = a + c log e + d log B (grad); log phi = a + c log(e/e_ref) (fitted)
    double s = 1;                // reference batch (grad); B_ref (fitted)
    double e_ref = 1;
    double p = 1;  // sharpness of the knee at B = s*phi (1: Pollux's form)
  };
  static double x_of(const Noise& n, double B, double e, int steps);
  // eff at global batch B (lb = ln B) where ln(e'/e_ref) = le.
  static double efficiency(const Noise& n, double B, double lb, double le);
  // x_of at fixed points for the many trends of one e_ref that the search
  // scores: the logarithms x_of takes there (ln B, and ln(e'/e_ref) at the
  // rule's midpoints and at e) computed once, the rest as x_of computes it,
  // so the values are x_of's.
  class PointLogs {
   public:
    PointLogs(const std::vector<double>& B, const std::vector<double>& e, int steps, double e_ref);
    double e_ref() const { return e_ref_; }
    double x(const Noise& n, size_t i) const;

   private:
    const std::vector<double>& B_;
    const std::vector<double>& e_;
    int steps_;
    double e_ref_;
    std::vector<double> lb_, le_end_, le_mid_;  // le_mid_[i * steps + j]
  };
  // `coarse`: a cheaper Optimus-curve fit, for ranking grid candidates.
  // Points are pooled configurations: mean metric y, weight w, squared spread ss.
  // `sp`: each point's samples (their count and spread about y).
  double fit_link(const std::vector<double>& x, const std::vector<double>& y,
                  const std::vector<OptimusCurve::Spread>& sp, bool keep, bool coarse = false);
  // An Optimus curve in x fitted to (x, y) in loss units (`coarse`: the
  // cheaper fit that ranks grid candidates), and its metric at x.
  OptimusCurve fit_curve(const std::vector<double>& x, const std::vector<double>& y,
                         const std::vector<OptimusCurve::Spread>& sp, bool coarse) const;
  double curve_metric(const OptimusCurve& c, double x) const;
  double link(double lx) const;  // G at ln x
  double held_out_sse(const std::vector<double>& x, const std::vector<double>& y,
                      const std::vector<OptimusCurve::Spread>& sp, const std::vector<int>& fold) const;
  // The correction on the pooled configurations `pooled` (columns B, e and
  // x), fitted on at most max_correction_points of them.
  void fit_correction(const PooledMetricSamples& pooled, const std::vector<double>& B, const std::vector<double>& e,
                      const std::vector<double>& x, const std::vector<size_t>& subset);
  // Steps of fit(): the families of trends to search (each as its grid's
  // base), the grid search under a score, and the refinement of its winner.
  std::vector<Noise> trend_families(const std::vector<std::array<double, 3>>& grad_points, bool grad_ok, double e_ref,
                                    double b_ref) const;
  // The searched trend of recent fits, by every input of the search
  // (trend_key): a pure function, so a fit that finds its key skips the
  // search with the same result. Bounded; safe across threads.
  class TrendCache {
   public:
    static TrendCache& instance();
    bool find(const std::string& key, Noise& out);
    void add(const std::string& key, const Noise& n);
    void clear();

   private:
    static constexpr size_t kCapacity = 32;
    std::mutex mutex_;
    std::list<std::pair<std::string, Noise>> entries_;  // most recently used first
  };
  std::string trend_key(const std::vector<Noise>& bases, double lo, double hi, const std::vector<double>& B,
                        const std::vector<double>& e, const std::vector<double>& y, const std::vector<int>& workers,
                        const std::vector<OptimusCurve::Spread>& sp) const;
  Noise search_trend_grid(const std::vector<Noise>& bases, double lo, double hi,
                          const std::function<double(const Noise&)>& sse_of, double& best) const;
  void refine_trend(double step, const std::function<double(const Noise&)>& sse_of, Noise& best_n, double& best) const;
  // Steps of fit_correction(): the surface of link + correction(log2 B, u),
  // and the columns (u, ln x) of its row at global batch Bq.
  // The surface spans [lb_lo, lb_hi] x [u_lo, u_hi], the data's range, and a grid step beyond.
  // `correction` gives a row's values at global batch log2 B = qb and columns us.
  void tabulate_correction(double lb_lo, double lb_hi, double u_lo, double u_hi,
                           const std::function<std::vector<double>(double, const std::vector<double>&)>& correction);
  std::vector<std::pair<double, double>> row_columns(double Bq, const std::vector<double>& regular) const;

  GlobalBatchParams p_;
  std::string name_;
  MetricDirection dir_ = MetricDirection::kMax;
  Noise noise_;
  bool grad_ = false;            // the chosen trend came from gradient statistics
  bool grad_available_ = false;  // enough samples carried them
  bool held_out_ = false;        // the trend was chosen on held-out runs
  numerics::IsotonicCurve iso_;
  OptimusCurve curve_;
  MetricLoss loss_;
  double in_sample_rmse_ = 0;
  bool corrected_ = false;
  bool data_axis_ = false;
  std::vector<Stage> stages_;
  // The corrected surface, each row with its own columns u (ln x, or ln e
  // with the data axis).
  TabulatedSurface surface_;
  size_t n_ = 0;
};

}  // namespace trainplan::models
