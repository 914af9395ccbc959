// What `trainplan predict` and `POST /predict` compute, from a sample set to
// a prediction and its JSON, so that both give the same numbers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app/model_source.h"
#include "app/progress.h"
#include "core/sample.h"
#include "models/model.h"
#include "structure/hardware.h"
#include "uncertainty/metric_calibrators.h"

namespace trainplan::app {

struct PredictQuery {
  double batch = 0;     // per worker: > 0 and at most 1e9
  int workers = 0;      // >= 1
  double epochs = -1;   // < 0: time only; else > 0 and at most 1e6
  int nodes = -1;       // < 0: packed (node_packing); else 1 to workers
  int gpus_per_node = 0;  // > 0: pack the workers at this many a node when `nodes` is not given
  std::string model = "auto";
  std::string time_model, metric_model;  // override `model` per part when not empty
  double confidence = 0.9;
  int folds = 5;
  uint64_t seed = 1;
  std::optional<double> target;  // also: the epochs (and time) to reach this metric
  int max_epochs = 1000;         // how far to look for the target
};

// Throws InputError for a field outside the bounds PredictQuery states,
// confidence outside (0, 1), folds < 2, a non-finite target or max_epochs
// outside 1..1e6.
void check_predict_query(const PredictQuery& q);

// How `workers` are placed on nodes when the node count is not given, and
// why: at `gpus_per_node` a node when it is > 0, else at the hardware's node
// (`hardware`, from --hardware) when it states one, else at the most workers
// any sample ran on one node. `from` says which, for people; `assumed` is
// true when the samples cannot tell (every sample ran on one node, and
// `workers` is more than any of them ran there).
struct NodePacking {
  int nodes = 0;           // 0: unknown (the samples record no nodes)
  int gpus_per_node = 0;   // 0: unknown
  std::string from;
  bool assumed = false;
};
NodePacking node_packing(const SampleSet& s, int workers, int gpus_per_node,
                         const structure::HardwareSpec* hardware);

struct Prediction {
  PredictQuery query;  // as asked
  int nodes = 0;       // as used
  std::string nodes_from;  // why (NodePacking::from; "given" for --nodes)
  bool nodes_assumed = false;
  std::string time_model, metric_model;  // resolved names
  std::string reason;                    // how "auto" chose (empty when nothing was chosen)
  MetricDirection direction = MetricDirection::kMax;
  double epoch_time_s = 0;
  std::optional<models::Interval> time_interval;
  std::optional<double> time_bound;  // one-sided upper bound at the confidence
  // The samples' times_predicted_log_sd when their times were predicted on
  // another GPU: time_interval and time_bound include it.
  std::optional<double> times_predicted_log_sd;
  // What the time and metric intervals rest on (uncertainty::IntervalBasis):
  // in-sample residuals at a measured configuration, or too few held-out ones
  // for the confidence, promise no coverage, and the output says so.
  std::optional<uncertainty::IntervalBasis> time_basis, metric_basis;
  // Folds the conformal residuals were drawn from: the folds asked for, or
  // fewer when there are fewer configurations to hold out (time: of all the
  // samples; metric: of those with a metric).
  int time_folds = 0, metric_folds = 0;
  double metric = 0;
  std::optional<models::Interval> metric_interval;
  std::optional<double> metric_bound;  // one-sided bound on the worse side (lower for max, upper for min)
  // The best metric among the samples (when the metric was asked for): the
  // intervals' worse end is held there (uncertainty/conformal.h), so a target
  // better than it is never met with confidence.
  std::optional<double> best_sampled_metric;
  // With --epochs: the last epoch sampled on this (batch, workers), or on any
  // configuration when this one was not sampled (`last_sampled_run` says
  // which), and the last sampled on any configuration. Past the latter the
  // model only extrapolates: runs often keep improving there while it levels
  // off, and the interval is widened by the beyond rule (uncertainty/conformal.h;
  // measured in docs/lab/MODELS-METRIC.md, "Past the last sampled epoch").
  std::optional<double> last_sampled_epoch, last_sampled_epoch_any;
  // With --epochs: how far past the longest trial the metric model's
  // extrapolation was checked (uncertainty::BeyondRule::ForwardCheck: fitted
  // on the samples up to some epoch count, scored on the later ones), and the
  // epochs up to which a prediction is backed by that check (the longest
  // trial times the factor checked; the longest trial without a check).
  std::optional<uncertainty::BeyondRule::ForwardCheck> forward_check;
  std::optional<double> trusted_through_epochs;
  bool past_trusted_epochs() const { return trusted_through_epochs && query.epochs > *trusted_through_epochs; }
  bool last_sampled_run = false;
  bool past_last_sampled_epoch() const;
  bool past_every_sampled_epoch() const;
  // With query.target: the first epoch count at which the metric meets the
  // target, on the point prediction and on each end of its interval at the
  // confidence (nullopt: not within query.max_epochs), and the time to it:
  // epochs x epoch time, its range from the favourable ends of both parts
  // to the unfavourable ones.
  struct ToTarget {
    std::optional<int> epochs, epochs_lo, epochs_hi;
    std::optional<double> time_s, time_lo_s, time_hi_s;
    // Runs measured at this configuration that the epochs are held to, as
    // `plan` holds its choices (one that met the target by e epochs makes e
    // enough; one that missed it at e or more rules e out); 0: none.
    int held_to_runs = 0;
  };
  std::optional<ToTarget> to_target;
  // What the samples measured at this very configuration, beside what the
  // models say of it: the epoch time of (batch, workers, nodes), pooled as the
  // time models pool it (models::distinct_time_configs), and with --epochs the
  // mean metric of the rows at (batch, workers, epochs). A measurement outside
  // its interval means the models miss this configuration; `plan` holds its
  // choices to such trials (uncertainty/measured_bounds.h), an interval does not.
  struct Measured {
    std::optional<double> epoch_time_s, time_spread;
    std::optional<double> metric;
    int metric_rows = 0;
    std::optional<bool> time_inside, metric_inside;  // nullopt: no value or no interval
  };
  Measured measured;
  // What the samples ran: the most workers, the smallest and largest
  // per-worker batch, and the data set's size when they state it. A query
  // outside them rests on the time model's extrapolation (and a global batch
  // past the data set is no epoch at all), which the interval does not cover.
  int most_workers_sampled = 0;
  int most_nodes_sampled = 0;  // 0: no sample states its nodes
  double smallest_batch_sampled = 0, largest_batch_sampled = 0;
  std::optional<long> dataset_size;
  // The hardware the samples' times were predicted from (`trainplan
  // transfer`); empty for measured times.
  std::string times_predicted_from;
  bool past_most_workers() const { return most_workers_sampled > 0 && query.workers > most_workers_sampled; }
  // More nodes than any sample ran on: the time across them is the model's
  // extrapolation.
  bool past_most_nodes() const { return most_nodes_sampled > 0 && nodes > most_nodes_sampled; }
  bool batch_outside_sampled() const {
    return largest_batch_sampled > 0 && (query.batch < smallest_batch_sampled || query.batch > largest_batch_sampled);
  }
  bool batch_past_dataset() const { return dataset_size && query.batch * query.workers > double(*dataset_size); }
};


// What `trainplan predict` computes. Throws InputError (bad query, --epochs on
// time-only samples, unknown model).
Prediction predict(ModelSource& src, const PredictQuery& q, const Progress& progress = {});
// The JSON of `trainplan predict --json`.
nlohmann::json to_json(const Prediction& p);

}  // namespace trainplan::app
