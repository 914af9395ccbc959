// Predicting a network's data-parallel step time on a GPU it was never
// profiled on: fitted on every step measured on the source hardware, plus
// K measured steps on the target (K may be 0), it predicts the target's step
// time at any placement and per-GPU batch.
//
// The interface follows the registry's: a parameters struct at construction,
// fit() then predict(), fitted state in const accessors. Methods register by
// name with a TransferModelRegistrar, so `evaluate --transfer` scores every
// one of them on the same splits (docs/TRANSFER.md).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "structure/gpu_catalog.h"
#include "structure/layer_graph.h"

namespace trainplan::models {

// One measured (or queried) step: GPUs used on each node, the per-GPU batch,
// the seconds per step and the part of it spent waiting for the gradients'
// synchronisation, when measured.
struct StepSample {
  std::vector<int> gpus_per_node;  // one entry per node, each >= 1
  double batch = 0;
  double step_s = 0;
  std::optional<double> sync_s;

  int gpus() const;
  int nodes() const { return static_cast<int>(gpus_per_node.size()); }
  int busiest_node() const;  // GPUs on the fullest node
  // "1234"-style placement text (digits; nodes with more than 9 GPUs as "[12]").
  std::string placement() const;
};

// The precision of the source training's matrix work: kAuto leaves it to the
// model (SplitTransferParams::precision says how it guesses); kFp32 (fp32
// code: convolutions on TF32 where the GPU has them, dense layers as
// GpuSpec::fp32_matmul_tf32 says) or kMixed (automatic mixed precision,
// fp16 tensor cores).
enum class Precision { kAuto, kFp32, kMixed };
const char* to_string(Precision p);
// The Precision whose to_string is `name`; nullopt for any other text.
std::optional<Precision> precision_named(const std::string& name);

// What the training runs its matrix work in, as the user says it: where it
// was profiled (kAuto: guessed from the source's speed) and on the target
// (kAuto: as profiled). A plain Precision is the profiled one.
struct TrainingPrecision {
  TrainingPrecision(Precision profiled_ = Precision::kAuto, Precision target_ = Precision::kAuto)
      : profiled(profiled_), target(target_) {}
  Precision profiled, target;
};

struct TransferProblem {
  std::vector<StepSample> source;         // every step measured on the source hardware
  structure::HardwareProfile source_hw;
  structure::HardwareProfile target_hw;
  std::vector<StepSample> target_trials;  // K steps measured on the target (may be empty)
  // The network's layer graph when known (network_zoo.h), else null: it
  // splits the per-example work into compute- and memory-bound parts.
  const structure::LayerGraph* network = nullptr;
  // What the user says the training ran in (kAuto: the model's guess), and
  // will run in on the target when that differs (kAuto: the same).
  TrainingPrecision precision;
};

// A predicted step split into the parts a hardware change scales differently,
// seconds. host: per-step work on the CPU side (framework, launches, input
// pipeline), the machine's; gpu_fixed: per-step GPU work (weights update);
// compute, memory: per-example GPU work bound by the arithmetic peak and by
// memory bandwidth; comm: the all-reduce before overlap; exposed_comm: what
// of it the step waits for. total is the prediction; it is not the plain sum,
// because host and GPU work overlap, and so do compute and communication.
struct StepParts {
  double host = 0, gpu_fixed = 0, compute = 0, memory = 0, comm = 0, exposed_comm = 0, total = 0;
};

class TransferModel {
 public:
  virtual ~TransferModel() = default;
  virtual std::string name() const = 0;
  // Throws InputError when the problem cannot support a fit (no source rows,
  // a step time <= 0).
  virtual void fit(const TransferProblem& problem) = 0;
  // Seconds per step on the target at `at`'s placement and batch (its step_s
  // and sync_s are ignored). Call only after fit().
  virtual double predict(const StepSample& at) const = 0;
  // The same prediction split into parts, for methods that model them.
  virtual std::optional<StepParts> parts(const StepSample&) const { return std::nullopt; }
  // The source-side fit's prediction at `at` (seconds per step on the source
  // hardware), for methods that have one.
  virtual std::optional<double> predict_source(const StepSample&) const { return std::nullopt; }
  // The standard deviation of log(step) at `at`: how far the prediction may
  // be off, for methods that quantify it (an interval at coverage c is the
  // prediction times exp(+-z sd), z the normal quantile). nullopt for
  // methods that do not.
  virtual std::optional<double> log_sd(const StepSample&) const { return std::nullopt; }
  virtual std::string describe() const { return ""; }
};

using TransferFactory = std::function<std::unique_ptr<TransferModel>()>;

struct TransferEntry {
  std::string name;
  std::string summary;
  int order = 0;  // listing order (ours first, then the baselines)
  TransferFactory make;
};

class TransferRegistry {
 public:
  static TransferRegistry& instance();
  void add(TransferEntry e);
  // Throws InputError naming the known methods when `name` is unknown.
  const TransferEntry& get(const std::string& name) const;
  // In listing order.
  std::vector<const TransferEntry*> all() const;

 private:
  std::vector<TransferEntry> entries_;
};

struct TransferModelRegistrar {
  TransferModelRegistrar(int order, const std::string& name, const std::string& summary, TransferFactory make) {
    TransferRegistry::instance().add({name, summary, order, std::move(make)});
  }
};

// A warning when `steps` put more GPUs on a node than `hw`'s nodes hold (a
// trace measured on other nodes than the catalog's, whose links then price
// its all-reduce), naming `where` and `option` and the links a hardware file
// would state; empty when they fit or the node size is not stated.
std::string node_size_warning(const std::vector<StepSample>& steps, const structure::HardwareProfile& hw,
                              const std::string& where, const std::string& option);

// Samples built from placement text ("24") and numbers, for tests and readers.
StepSample step_sample(const std::string& placement, double batch, double step_s = 0,
                       std::optional<double> sync_s = std::nullopt);

}  // namespace trainplan::models
