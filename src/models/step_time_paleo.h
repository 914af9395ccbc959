// Step time from the network's structure (PALEO, Qi et al. ICLR'17;
// docs/MODELS.md): the layer graph's costs (network_zoo.h) turned into seconds by a cost
// backend, then data parallelism simulated as a ring all-reduce.
//
// Per step at per-worker batch b on r workers over n nodes:
//   compute = 3 b F / (peak * efficiency)      F: forward flops per example;
//                                              backward = 2 x forward
//   memory  = (3 b A + 3 P_bytes) / memory_bw  A: activation bytes per example;
//                                              weights, gradients, update
//   sync    = 2 (r-1)/r * P_bytes / link_bw + 2 (r-1) latency   (r > 1)
//             link: PCIe within one node, the network across nodes
//   step    = compute + memory + sync          (PALEO: no overlap)
//   epoch   = N / (b r) * step
//
// Two models, side by side:
//  * "paleo" (faithful): the formula with the hardware's datasheet figures and
//    PALEO's single platform efficiency. It fits nothing: it predicts a
//    network that was never profiled, from its graph alone.
//  * "paleo-fit" (calibrated): the same four terms as features,
//    step = th1 compute + th2 memory + th3 sync_intra + th4 sync_inter + th0,
//    with th >= 0 fitted by NNLS on relative errors (rows scaled by 1/step).
//    th0 is a per-step overhead (framework, data loading, kernel launches),
//    which PALEO lacks and small networks are dominated by. A sync term that
//    the samples cannot identify (no multi-worker or no multi-node sample)
//    keeps its datasheet value (th = 1), and describe() says so.
// Both find the network from the samples' `model` field (a workload name
// such as "cifar10", or an architecture name) unless params name one.
#pragma once
#include <optional>
#include <string>

#include "structure/layer_graph.h"
#include "models/model.h"
#include "structure/hardware.h"

namespace trainplan::models {

struct PaleoHardware {
  std::string name = "NVIDIA T4 (fp32 8.1 TFLOP/s, 320 GB/s), PCIe 3.0 x16, 25 Gb Ethernet";
  double peak_flops = 8.1e12;        // fp32 peak, FLOP/s
  double memory_bytes_per_s = 320e9;  // device memory bandwidth
  double efficiency = 0.5;            // fraction of peak a layer reaches (PALEO's platform percent)
  structure::HardwareSpec links;                 // all-reduce bandwidths and latencies
  std::string gpu = "t4";                        // the GPU's catalog key (or file name), for the samples' check
  bool named = false;                            // from --hardware (paleo_hardware), not the default T4
};

// PALEO's figures for the node `spec` describes (trainplan's --hardware): its
// GPU's fp32 peak and memory bandwidth, PALEO's efficiency, its links.
PaleoHardware paleo_hardware(const structure::HardwareSpec& spec);

// The four cost terms of one step, in seconds under `hw`.
struct PaleoTerms {
  double compute = 0, memory = 0, sync_intra = 0, sync_inter = 0;
  double total() const { return compute + memory + sync_intra + sync_inter; }
};

// PALEO's cost of one step of data-parallel training of `g`.
PaleoTerms paleo_step_terms(const structure::LayerGraph& g, double batch, int workers, int nodes, const PaleoHardware& hw);

// One layer's share of compute + memory in a step at per-worker `batch`
// (the terms above restricted to the layer; weights' update traffic excluded).
double paleo_layer_seconds(const structure::Layer& l, double batch, const PaleoHardware& hw);
// The weights' update traffic of a step (the memory term's per-step part).
double paleo_update_seconds(const structure::LayerGraph& g, const PaleoHardware& hw);

// One measured step of one network, for calibrating the terms (possibly
// across networks: the factors are then the hardware's, not one model's).
struct PaleoObservation {
  const structure::LayerGraph* graph = nullptr;
  double batch = 0;
  int workers = 1, nodes = 1;
  double step_s = 0;
};

// Factors of the four terms and the per-step overhead:
// step = f[0] compute + f[1] memory + f[2] sync_intra + f[3] sync_inter + f[4].
struct PaleoFactors {
  double f[5] = {1, 1, 1, 1, 0};
  std::vector<std::string> notes;  // terms the observations could not identify
  double step(const structure::LayerGraph& g, double batch, int workers, int nodes, const PaleoHardware& hw) const;
};

// NNLS on relative errors (each row divided by its step time). A sync term no
// observation exercises keeps factor 1. Throws InputError with no observations.
PaleoFactors fit_paleo_factors(const std::vector<PaleoObservation>& obs, const PaleoHardware& hw);

struct PaleoParams {
  std::string network;              // architecture or workload name; empty: the samples' model
  std::optional<long> dataset_size;  // examples per epoch; empty: the samples'
  PaleoHardware hardware;
  int gpus_per_node = 4;            // for nodes when a sample or query gives 0
  bool calibrate = false;           // false: "paleo", true: "paleo-fit"
};

class PaleoModel : public TimeModel {
 public:
  explicit PaleoModel(PaleoParams p = {});
  std::string name() const override { return p_.calibrate ? "paleo-fit" : "paleo"; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::string describe() const override;

  // Seconds per step (after fit).
  double step_time(double batch, int workers, int nodes) const;
  const structure::LayerGraph& network() const { return *graph_; }  // after fit()
  // The fitted factors (1, 1, 1, 1 and 0 overhead for the uncalibrated model).
  const PaleoFactors& factors() const { return factors_; }
  // Whether the samples were all measured on the hardware of the datasheet
  // figures (a T4); describe() notes it when they were not (after fit()).
  bool hardware_matches_datasheet() const { return hardware_note_.empty(); }

 private:
  int nodes_for(int workers, int nodes) const;
  PaleoParams p_;
  const structure::LayerGraph* graph_ = nullptr;  // a built-in network (network_zoo.h)
  double n_ = 0;
  PaleoFactors factors_;
  std::string hardware_note_;  // when the samples' hardware is not the datasheet's
};

// The network the samples were measured on: params' name, else the samples'
// `model` field. Throws InputError naming the known networks if none matches.
const structure::LayerGraph& network_for(const SampleSet& samples, const std::string& requested);

}  // namespace trainplan::models
