// A plain description of the hardware a data-parallel job runs on, used as a
// prior where the samples cannot identify a step-time term (for example the
// inter-node all-reduce cost when every sample ran on one node).
// Defaults: AWS g4dn-style nodes, NVIDIA T4 GPUs on PCIe 3.0, 25 Gb/s Ethernet
// (the Pollux cluster's GPUs on a common network: a prior for a cluster not
// described, not the Pollux cluster's own 50 Gb/s, which the catalog's `t4`
// entry holds); `source` says whether a spec is that default or was chosen,
// so that a model citing it can say so.
#pragma once
#include <string>

namespace trainplan::structure {

struct HardwareSpec {
  std::string name = "T4 / PCIe 3.0 x16 / 25 Gb Ethernet";
  double intra_node_bytes_per_s = 10e9;  // effective PCIe 3.0 x16 all-reduce bandwidth, bytes/s
  double inter_node_bytes_per_s = 25e9 / 8;  // 25 Gb/s Ethernet, bytes/s
  double intra_node_latency_s = 20e-6;  // per-step sync latency within a node (prior a = 2x this)
  double inter_node_latency_s = 100e-6;  // per-step sync latency across nodes, TCP (prior a = 2x this)
  // GPUs (workers) in one node, which packs workers into nodes where the
  // node count is not given; 0: not stated (the samples' packing is used).
  int gpus_per_node = 0;
  // GPUs under one operating system, where fewer than gpus_per_node (a GB200
  // NVL72's compute tray of 4 in an NVLink domain of 72): the nodes a launch
  // lays ranks out on. 0: gpus_per_node.
  int gpus_per_host = 0;
  // The node's GPU, for the models that price compute and memory from a
  // datasheet (PALEO): its catalog key or hardware file name, its fp32 peak
  // and its memory bandwidth. Defaults: the T4's.
  std::string gpu = "t4";
  double fp32_flops = 8.1e12;
  double memory_bytes_per_s = 320e9;
  // Where the figures come from: empty for the defaults above, else the
  // catalog entry or hardware file they were read from.
  std::string source;
};

}  // namespace trainplan::structure
