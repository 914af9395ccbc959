// Launch specifications for a chosen plan: a torchrun command line, an sbatch
// script (Slurm) and a Kubeflow PyTorchJob manifest (Kubernetes).
//
// The training command is a template in the syntax of `profile --cmd`
// (profile/command_template.h; docs/PROFILING.md, "Command templates"), so the
// command that was profiled is the command that is launched. {batch},
// {workers}, {epochs} and {nodes} take the plan's values; nothing is appended
// to the command. The batch and epochs also reach it as environment variables
// (TRAINPLAN_BATCH, TRAINPLAN_EPOCHS). The rank rule is profile's:
//   - a template without {rank} (and without {master_addr}/{master_port}) is
//     a script that a launcher starts once per rank: torchrun runs it (a
//     leading python/python3 is dropped, a .py script runs under Python, any
//     other program with --no-python);
//   - a template with them is started once per rank with each rank's values
//     from its environment: under torchrun through `bash -c` with $RANK,
//     $MASTER_ADDR and MASTER_PORT + 1 (torchrun's agent holds MASTER_PORT);
//     under Slurm as `srun --ntasks=R` with $SLURM_PROCID, the first node's
//     name and port 29500.
// An sbatch script takes whole nodes whole (--exclusive) and gives its tasks
// the node's CPUs ($SLURM_CPUS_ON_NODE, shared among a node's tasks).
#pragma once
#include <optional>
#include <string>

#include "core/config.h"

namespace trainplan::plan {

struct LaunchOptions {
  std::string train_cmd = "python train.py --batch {batch} --epochs {epochs}";  // a command template (see above)
  std::string job_name = "trainplan-job";
  int gpus_per_node = 0;   // per host (one OS); 0: unknown, all workers on one node
  double time_limit_s = 0; // > 0: Slurm --time (the plan's deadline)
  std::string image = "pytorch/pytorch:latest";  // container image (k8s)
  // Set for a plan that stops at the target (plan --early-stop): the epochs are
  // a budget, and TRAINPLAN_TARGET / TRAINPLAN_TARGET_DIRECTION (max or min)
  // tell the script when to stop. Environment only: a script that ignores them
  // still runs (it then trains the whole budget).
  std::optional<double> stop_at_target;
  std::string target_direction = "max";
  bool gpus = true;  // false: request no GPUs (a CPU cluster); the ranks are processes
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


std::string torchrun_command(const Config& c, const LaunchOptions& o);
std::string slurm_script(const Config& c, const LaunchOptions& o);
std::string k8s_pytorchjob(const Config& c, const LaunchOptions& o);

// How an sbatch script starts a node's task: with every CPU the job holds on
// the node (a step is otherwise given one), whatever the site's defaults.
inline constexpr const char* kSrunWithNodeCpus = "srun --cpus-per-task \"$SLURM_CPUS_ON_NODE\"";

// The rendezvous port an sbatch script sets, one of the job's own: two jobs
// each on part of a node would otherwise both listen on one port, and the
// second fail. 10000 to 29999, below Linux's ephemeral ports (32768 up).
inline constexpr const char* kMasterPortOfTheJob = "export MASTER_PORT=$((10000 + SLURM_JOB_ID % 20000))";

// Throws InputError (option --job-name) for a name that `kind` cannot carry:
// for every kind an empty name or one with control characters (a newline would
// start a directive of its own); for "k8s" anything but a DNS-1035 label (a-z,
// 0-9 and '-', starting with a letter, ending with a letter or digit), short
// enough that the operator's pods and services, NAME-master-0 and
// NAME-worker-I for the `nodes` - 1 workers, stay within 63 characters.
void check_job_name(const std::string& kind, const std::string& name, int nodes = 1);

// A Slurm time limit, HH:MM:SS rounded up to the second (hours past 99 as they are).
std::string slurm_time(double seconds);

// Each throws InputError (option --train-cmd) for a template that is empty or
// names an unknown placeholder, and check_job_name's errors.
// Dispatches on "torchrun", "slurm" or "k8s"; throws InputError otherwise.
std::string launch_spec(const std::string& kind, const Config& c, const LaunchOptions& o);

}  // namespace trainplan::plan
