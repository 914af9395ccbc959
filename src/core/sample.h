// A profiling sample: one short training trial and what it measured.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace trainplan {

// Whether a larger metric is better (accuracy, F1) or a smaller one (loss, WER).
enum class MetricDirection { kMax, kMin };

const char* to_string(MetricDirection d);
// Parses "max" or "min"; throws InputError otherwise.
MetricDirection parse_direction(const std::string& s);
// Does metric `m` meet `target` under direction `d`? Is `a` better than `b`?
inline bool meets(double m, double target, MetricDirection d) {
  return d == MetricDirection::kMax ? m >= target : m <= target;
}
inline bool metric_better(double a, double b, MetricDirection d) {
  return d == MetricDirection::kMax ? a > b : a < b;
}


// The most epochs a query, a plan or a training log may name: no training
// runs longer, and every scan over epochs stays bounded.
inline constexpr int kMostEpochs = 1000000;

// The longest epoch a sample or a trial may report, seconds: no epoch lasts
// 30 years, and squared past about 1e154 a time overflows the fits' sums.
inline constexpr double kMostEpochSeconds = 1e9;
// The shortest: no epoch takes less than a nanosecond, and with both bounds
// the ratio of two epoch times stays finite.
inline constexpr double kLeastEpochSeconds = 1e-9;

// The largest magnitude a metric may have: accuracies, losses, scores and
// perplexities of a run that trains are far below it (a diverged one reads
// NaN or inf), and past about 1e154 a metric overflows the fits' sums and
// their cross-validated errors.
inline constexpr double kMostMetricMagnitude = 1e12;

// The largest relative uncertainty of a measured epoch time (time_spread):
// +-1000% is no measurement, and an interval scaled by more reaches infinity.
inline constexpr double kMostTimeSpread = 10;

struct Sample {
  double batch = 0;          // per-worker batch size
  int workers = 0;           // data-parallel workers (GPUs or processes)
  double epochs = 0;         // data epochs trained before the metric was measured
  double epoch_time_s = 0;   // wall time of one epoch, seconds
  std::optional<double> metric;  // validation metric after `epochs` epochs; empty if time-only
  int nodes = 0;             // machines the workers span; 0 when unknown
  std::string model;         // optional: workload name
  std::string hardware;      // optional: hardware description
  std::optional<double> grad_sqr;  // optional: squared gradient norm (noise-scale numerator)
  std::optional<double> grad_var;  // optional: gradient variance (noise-scale denominator)
  // optional: relative uncertainty of epoch_time_s (0.02: +-2%), as measured
  // (the 95% interval of the median step time, or the spread between repeats)
  std::optional<double> time_spread;
  long line = 0;  // the line of the file it was read from (0: not from a file), for messages

  double global_batch() const { return batch * workers; }
};

// The values a metric can take, and where that range comes from.
struct MetricRange {
  double lo = -1e300, hi = 1e300;  // +-1e300: unbounded on that side
  std::string from;                // for people: "given", or why it was inferred
  // "LO:HI", a side left empty where unbounded: what parse_metric_range reads.
  std::string text() const;
};

// Parses "LO:HI" (either side may be empty: unbounded); throws InputError
// naming `field` for anything else or for LO >= HI.
MetricRange parse_metric_range(const std::string& text, const std::string& field);

// A set of samples with the facts that hold for all of them.
struct SampleSet {
  std::vector<Sample> samples;
  // Points read off the learning curves of longer trials: after `epochs` of a
  // trial's epochs, the best metric it had reached by then. They cost no
  // training of their own. Models are fitted on `samples` alone (the trials);
  // the planner also holds its pessimistic side to these points
  // (uncertainty/measured_bounds.h).
  std::vector<Sample> curve;
  MetricDirection direction = MetricDirection::kMax;
  std::optional<long> dataset_size;  // training examples per epoch, when known
  std::string source;                // where the samples came from (a path), for messages
  // The metric's range when declared (the CSV's `metric_range=LO:HI`, or an
  // option); nullopt: inferred by metric_range().
  std::optional<MetricRange> declared_metric_range;
  // Empty when the epoch times were measured; else the hardware they were
  // predicted from (`trainplan transfer --samples`, the CSV's
  // `times_predicted_from=NAME`): errors and intervals fitted on them do not
  // include the transfer's own error.
  std::string times_predicted_from;
  // With times_predicted_from: how far the transfer may be off, as the
  // standard deviation of log(epoch time), one error every sample shares
  // (the transfer's factors move them all together), the median over the
  // moved samples (TransferModel::log_sd; the CSV's
  // `times_predicted_log_sd=X`). Planning at a confidence widens its
  // epoch-time bounds by it (uncertainty/pessimistic_model.h).
  std::optional<double> times_predicted_log_sd;
  // (batch, workers) whose training trials reported a NaN or infinite metric:
  // runs that diverged there. Planning never chooses them (the models, fitted
  // on the finite metrics, cannot know). Written in a CSV's format line as
  // diverged=BxR,BxR.
  std::set<std::pair<double, int>> diverged;

  bool empty() const { return samples.empty(); }
  size_t size() const { return samples.size(); }
  // True if at least one sample carries a metric.
  bool has_metric() const;
  // The samples that carry a metric.
  std::vector<Sample> with_metric() const;
  // Nodes that `workers` span when packed at the most workers per node any
  // sample recorded; 0 when no sample records its nodes.
  int packed_nodes(int workers) const;
  // The distinct non-empty `model` names of the samples.
  std::set<std::string> model_names() const;
  // Is `a` better than `b` under this set's direction?
  bool better(double a, double b) const {
    return direction == MetricDirection::kMax ? a > b : a < b;
  }
  // The best metric of any sample under this set's direction; nullopt when none carries one.
  std::optional<double> best_metric() const;
  // The range intervals on the metric are clipped to: the declared one, else
  // [0, 1] when every metric sampled (trials and curve points) lies in [0, 1]
  // and larger is better (accuracy, F1, AUC), else [0, inf) when every one is
  // >= 0 (a loss, an error rate), else unbounded.
  MetricRange metric_range() const;
  // Throws InputError naming `field` when a sampled metric (trial or curve
  // point) lies outside the declared range, or `target` does: a declared
  // range the data or the goal contradict is a mistake in the range.
  void check_declared_metric_range(const std::string& field, std::optional<double> target = std::nullopt) const;
  // The most epochs any sample with a metric ran; nullopt when none carries one.
  std::optional<double> last_metric_epoch() const;
  // Each measured run's metric samples, by (batch, workers): (epochs, metric)
  // pairs in increasing order; samples without a metric or epochs are left out.
  // With `with_curve`, the curve points too.
  std::map<std::pair<double, int>, std::vector<std::pair<double, double>>> metric_runs(bool with_curve = false) const;
  // Does metric `m` meet `target` under this set's direction?
  bool meets(double m, double target) const {
    return direction == MetricDirection::kMax ? m >= target : m <= target;
  }
};

}  // namespace trainplan
