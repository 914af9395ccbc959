// Scores Justus et al.'s per-layer model (models/layer_time_model.h):
//  * per layer: K-fold cross-validated error on the layer timings;
//  * per network: the sum over a known network's layers against the step
//    time its single-worker samples measured (epoch time x b / N), at each
//    measured batch.
#pragma once
#include <string>
#include <vector>

#include "io/gnuplot.h"
#include "io/layer_timing_csv.h"

namespace trainplan::scoring {

struct LayerCvScore {
  std::string learner;
  double mape = 0;  // mean |pred - true| / true over held-out layers
  double mre = 0;   // sum |pred - true| / sum true
  std::vector<std::pair<double, double>> points;  // (measured, out-of-fold prediction) per layer
};

struct NetworkStepRow {
  double batch = 0;
  int samples = 0;          // single-worker samples at this batch
  double measured_s = 0;    // median step time of those samples
  double mlp_s = 0, trees_s = 0;
};

struct NetworkStepScore {
  std::string source, network;
  std::vector<NetworkStepRow> rows;
  double mlp_mre = 0, trees_mre = 0;
  std::vector<std::string> notes;
};

struct LayerTimeReport {
  int layers = 0;
  int folds = 5;
  std::vector<LayerCvScore> cv;
  std::vector<NetworkStepScore> networks;
};

LayerTimeReport evaluate_layer_times(const std::vector<io::LayerTiming>& timings,
                                     const std::vector<std::string>& sample_files, int folds, uint64_t seed);
std::string format_layer_times(const LayerTimeReport& r);
// Charts: out-of-fold prediction against measurement per layer (log-log, the
// line y = x), then one panel per network, step time against batch.
std::vector<io::PlotPanel> layer_time_panels(const LayerTimeReport& r);
std::string layer_times_json(const LayerTimeReport& r);

}  // namespace trainplan::scoring
