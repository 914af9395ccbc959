// A profiling store of any size drawn from a closed-form ground truth plus
// noise, for scale tests and benchmarks (`trainplan sample --synthetic-rows`):
// many trials on a grid of (batch, workers), each with its learning curve,
// as a store holding every epoch line of every trial exports them.
//
// The truth (dataset of N examples, nodes = ceil(r / 4)):
//   epoch time  t(b, r) = N / (b r) * (0.004 + 0.0004 b + sync(r)),
//               sync = 0.01 (r - 1) / r + 0.006 (nodes - 1)
//   metric      m(B, e) = 0.95 - 0.85 exp(-x / 3), x = e (1 + 16/1024) / (1 + B/1024),
//               B = b r (accuracy: larger is better; large global batches
//               need more data epochs, as the noise-scale efficiency says).
// Each trial draws its (b, r) and its length e uniformly; its epoch time is
// the truth times (1 + time_noise z) for the whole trial, its curve the truth
// plus a per-trial offset and per-epoch noise, kept as the best so far (as a
// run that keeps its best checkpoint). Trials repeat configurations, so a
// large store holds many rows of the same (b, r, e).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/sample.h"

namespace trainplan::replay {

struct SyntheticStoreParams {
  size_t rows = 1000;  // rows drawn in all (trials and curve points), >= 1
  std::vector<int> batches = {16, 32, 64, 128, 256, 512};  // per-worker batches trials draw from
  int max_workers = 8;    // trials draw workers in 1..max_workers
  int max_epochs = 30;    // trials draw their length in 1..max_epochs
  // How a trial of e epochs is exported: kCurve, one trial row (epochs = e)
  // and its e - 1 earlier epochs as source=curve rows (docs/FORMATS.md);
  // kTrials, every epoch k as a trial row of k epochs (a store that counts a
  // run's first k epochs as a k-epoch trial, docs/PROFILING.md). kTrials is
  // the heavier case for the models, which fit the trials alone.
  enum class Form { kCurve, kTrials };
  Form form = Form::kCurve;
  double time_noise = 0.03;     // relative sd of a trial's epoch time
  double metric_noise = 0.004;  // sd of each epoch's metric
  double trial_noise = 0.004;   // sd of a trial's offset from the truth
  long dataset_size = 50000;
  // The rows' `model`: a network the zoo knows (structure/network_zoo.h), so
  // that the PALEO time models, which cost its layer graph, fit too.
  std::string model = "cifar10";
  uint64_t seed = 1;
};

// The truth the store is drawn from.
double synthetic_epoch_time(double batch, int workers, long dataset_size = 50000);
double synthetic_metric(double global_batch, double epochs);
inline int synthetic_nodes(int workers) { return (workers + 3) / 4; }

// Exactly p.rows rows (the last trial's curve cut short where needed; at
// least one trial). Deterministic in p.seed.
SampleSet synthetic_store(const SyntheticStoreParams& p);

}  // namespace trainplan::replay
