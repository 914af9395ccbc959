// The built-in workloads: command templates for the reference trainer
// `trainplan-train` (src/train), so that `trainplan profile --workload
// lenet-mnist` needs no template from the user.
#pragma once
#include <string>
#include <vector>

namespace trainplan::profile {

struct BuiltinWorkloadOptions {
  std::string trainer;       // path of trainplan-train; empty: find_trainer()
  std::string data_dir;      // --data-dir; empty: the trainer's default
  long train_subset = 0;     // --train-subset; 0: all training images
  long test_subset = 0;      // --test-subset; 0: all test images (evaluation is outside epoch_time_s)
  long seed = 1;
  int threads = 1;           // --threads (torch intra-op threads per rank)
  bool time_only = false;    // the template of a time trial (--time-only; no {epochs})
  // A time trial's --step-clock (the clock its stop rule watches): "wall",
  // "cpu" or "auto" (the trainer's choice per trial, the profiler's rule).
  std::string step_clock = "wall";
  // A time trial's --max-timed-s: wall-clock seconds of its timed phase at
  // most, checked every 5 steps (0: the trainer's step cap alone).
  double max_timed_s = 0;
};

// "lenet-mnist", "mlp-fashion".
const std::vector<std::string>& builtin_workloads();

// The template for `workload`. Throws InputError for an unknown workload or
// when trainplan-train cannot be found.
std::string builtin_template(const std::string& workload, const BuiltinWorkloadOptions& o);

// trainplan-train next to the running trainplan binary, else on $PATH;
// "" when neither exists.
std::string find_trainer();

}  // namespace trainplan::profile
