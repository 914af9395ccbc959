// GPUs free on each node, and where a job's GPUs go.
//  * kPack: a job that fits in one node takes the fullest node it fits in
//    (best fit); larger jobs take the emptiest nodes first.
//  * kSpread: every job takes GPUs from the emptiest node first, as the
//    Pollux artifact's Tiresias does; small jobs then scatter over nodes.
#pragma once
#include <vector>

namespace trainplan::sim {

enum class PlacementMode { kPack, kSpread };

class Cluster {
 public:
  Cluster(int nodes, int gpus_per_node, PlacementMode mode = PlacementMode::kPack);
  int nodes() const { return static_cast<int>(free_.size()); }
  int gpus_per_node() const { return gpus_per_node_; }
  int total_gpus() const { return nodes() * gpus_per_node_; }
  int free_gpus() const { return free_total_; }
  // Node index of each GPU given to a job of `gpus`; empty if not enough free.
  std::vector<int> place(int gpus);
  void release(const std::vector<int>& placement);
  // Distinct nodes in a placement.
  static int node_count(const std::vector<int>& placement);

 private:
  int emptiest() const;
  std::vector<int> free_;
  int gpus_per_node_;
  int free_total_;
  PlacementMode mode_;
};

}  // namespace trainplan::sim
