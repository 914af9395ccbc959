// Where the simulated applications' step times come from. Their learning
// curves (the work a job has to do, and how a batch size changes it) always
// come from their own traces; their speed may come from elsewhere, so that a
// cluster of other GPUs can be simulated on the same jobs:
//  * kTrace: the traces' own placements.csv and scalability.csv (default);
//  * kOtherTraces: another folder of the same applications measured on other
//    GPUs (e.g. ../shared/data/sia-a100): its placements.csv and
//    scalability.csv replace each trace's;
//  * kTransfer: GPUs nobody measured: split-transfer (models/transfer_split.h)
//    fitted on each trace's steps moves them from `from` to `to`, and the
//    predictions are tabulated as a trace would hold them: 1 to `max_gpus`
//    GPUs (at most what the application's largest batch can use), each
//    spread evenly over the fewest nodes it fits in, each of the next seven
//    node counts, every doubling and the most nodes it can reach, at every
//    per-GPU batch the trace measured; with `trials`, the steps measured
//    on the target (the same applications' traces there, all their rows or
//    `target_trials` of them drawn by `seed`) correct the move as in
//    `transfer --trials`.
// In every case the replay oracle reads nodes of `gpus_per_node` GPUs, the
// cluster's, when it packs a job (a StepTimeSource left at its defaults
// keeps 4, the Pollux T4 traces' nodes).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/app_model.h"
#include "structure/gpu_catalog.h"

namespace trainplan::sim {

struct StepTimeSource {
  enum class Kind { kTrace, kOtherTraces, kTransfer };
  Kind kind = Kind::kTrace;
  std::string other_traces;         // kOtherTraces: the folder of traces
  structure::HardwareProfile from;  // kTransfer: the GPU the traces were measured on
  structure::HardwareProfile to;    // kTransfer: the GPU to simulate
  int gpus_per_node = 4;            // the cluster's node size
  int nodes = 16;                   // the cluster's nodes (kTransfer: how widely a job may spread)
  int max_gpus = 64;                // kTransfer: the largest job tabulated
  std::string trials;               // kTransfer: a folder of the applications' steps measured on `to` ("": none)
  int target_trials = -1;           // of each application's rows there, how many to use (-1: all)
  uint64_t seed = 1;                // which rows, when target_trials >= 0
  // A line for the report: where the step times came from.
  std::string describe() const;
};

// Throws InputError naming the option: trials without kTransfer,
// target_trials without trials, and kTransfer asked for nodes larger than
// the target GPU's node or of more than 9 GPUs (a placement is a string of
// digits, one per node).
void check_step_time_source(const StepTimeSource& src);

// Every application under `dir` (subdirectories with placements.csv), with
// its step times from `src`. Throws InputError (file, line, column) as the
// trace reader does. An application the other folder (kOtherTraces) or the
// trials folder (kTransfer) lacks is not loaded: it is listed in
// `unavailable` with the error naming that folder, for the jobs that use it.
struct LoadedApps {
  std::vector<std::shared_ptr<AppModel>> apps;
  std::map<std::string, InputError> unavailable;
};
LoadedApps load_apps(const std::string& dir, const StepTimeSource& src);

}  // namespace trainplan::sim
