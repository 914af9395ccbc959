// How fast a Pollux-trace application trains at a configuration, as
// statistical progress per second (docs/SIMULATOR.md, "Job model").
//  * Work is statistical progress, in steps at the application's smallest
//    measured global batch (init batch): the trace's `progress` column. A
//    job is done after `epoch_limit` epochs of it (the least progress any
//    curve has after that many epochs, as in Pollux's simulator).
//  * One step at global batch B makes gain(B) = (var + sqr) / (var/s + sqr)
//    progress, s = B / init batch, from the gradient statistics measured at
//    the current epoch (linear in B between measured batches).
//  * A step's time comes from the replay oracle at the per-GPU (atomic)
//    batch; batches beyond max_local per GPU use gradient accumulation,
//    whose extra micro-steps cost the one-GPU step time (no sync).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "replay/replay_oracle.h"

namespace trainplan::sim {

// How one (GPUs, nodes, global batch) request is executed.
struct Execution {
  int atomic_batch = 0;  // per-GPU batch of one micro-step
  int accum_steps = 0;   // extra micro-steps per optimizer step
  int batch = 0;         // effective global batch = gpus * atomic * (accum + 1)
  double step_s = 0;     // seconds per optimizer step
};

class AppModel {
 public:
  explicit AppModel(std::shared_ptr<const replay::ReplayOracle> oracle);

  const std::string& name() const { return oracle_->name(); }
  const replay::ReplayOracle& oracle() const { return *oracle_; }
  int epochs() const { return static_cast<int>(boundaries_.size()); }
  double total_work() const { return boundaries_.back(); }
  // Progress at the end of epoch e (1-based, 1..epochs()).
  double boundary(int e) const { return boundaries_[e - 1]; }
  int init_batch() const { return init_batch_; }
  int max_batch() const { return max_batch_; }
  int min_local() const { return min_local_; }
  int max_local() const { return max_local_; }
  int gpus_per_node() const { return oracle_->gpus_per_node(); }

  // Execution of global batch `batch` on `gpus` GPUs over `nodes` nodes
  // (0: packed), or nullopt where the trace cannot time it.
  std::optional<Execution> execute(int gpus, int nodes, int batch) const;
  // Progress one step at global batch `batch` makes during epoch `epoch` (0-based).
  double gain(int batch, int epoch) const;
  // Progress per second; 0 where not feasible.
  double rate(int gpus, int nodes, int batch, int epoch) const;
  // The largest number of GPUs a global batch can use (>= min_local per GPU).
  int max_gpus(int batch) const { return std::max(1, batch / min_local_); }

 private:
  std::optional<double> step_time(int atomic, int gpus, int nodes) const;

  std::shared_ptr<const replay::ReplayOracle> oracle_;
  std::vector<double> boundaries_;
  std::vector<double> curve_batches_;                 // measured global batches, ascending
  std::vector<std::vector<std::pair<double, double>>> grad_;  // per curve, per epoch: (sqr, var)
  int init_batch_ = 0, max_batch_ = 0, min_local_ = 1, max_local_ = 1;
  // execute()'s answers by (gpus, nodes, batch).
  mutable std::map<std::tuple<int, int, int>, std::optional<Execution>> exec_cache_;
};

}  // namespace trainplan::sim
