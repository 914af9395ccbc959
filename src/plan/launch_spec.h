// Launch specifications for a chosen plan: a torchrun command line, an sbatch
// script (Slurm) and a Kubeflow PyTorchJob manifest (Kubernetes). The batch
// and epochs reach the training script as arguments (--batch-size, --epochs)
// and as environment variables (TRAINPLAN_BATCH, TRAINPLAN_EPOCHS).
#pragma once
#include <optional>
#include <string>

#include "core/config.h"

namespace trainplan::plan {

struct LaunchOptions {
  std::string train_cmd = "python train.py";  // the script and its own arguments
  std::string job_name = "trainplan-job";
  int gpus_per_node = 0;   // 0: unknown, all workers on one node
  double time_limit_s = 0; // > 0: Slurm --time (the plan's deadline)
  std::string image = "pytorch/pytorch:latest";  // container image (k8s)
  // Set for a plan that stops at the target (plan --early-stop): the epochs are
  // a budget, and TRAINPLAN_TARGET / TRAINPLAN_TARGET_DIRECTION (max or min)
  // tell the script when to stop. Environment only: a script that ignores them
  // still runs (it then trains the whole budget).
  std::optional<double> stop_at_target;
  std::string target_direction = "max";
};

// How `workers` processes are laid out: torchrun and Slurm need the same count
// on every node, so nodes is the smallest count >= ceil(workers / gpus_per_node)
// that divides workers.
struct Layout {
  int nodes = 1;
  int per_node = 1;
  bool regrouped = false;  // nodes differs from ceil(workers / gpus_per_node)
};
Layout layout_for(int workers, int gpus_per_node);

// The train command without a leading "python"/"python3" (torchrun runs the script).
std::string script_of(const std::string& train_cmd);

std::string torchrun_command(const Config& c, const LaunchOptions& o);
std::string slurm_script(const Config& c, const LaunchOptions& o);
std::string k8s_pytorchjob(const Config& c, const LaunchOptions& o);

// Dispatches on "torchrun", "slurm" or "k8s"; throws InputError otherwise.
std::string launch_spec(const std::string& kind, const Config& c, const LaunchOptions& o);

}  // namespace trainplan::plan
