#include "sim/cluster.h"

#include <algorithm>

namespace trainplan::sim {

Cluster::Cluster(int nodes, int gpus_per_node, PlacementMode mode)
    : free_(nodes, gpus_per_node), gpus_per_node_(gpus_per_node), free_total_(nodes * gpus_per_node), mode_(mode) {}

int Cluster::emptiest() const {
  int best = -1;
  for (int i = 0; i < nodes(); ++i)
    if (free_[i] > 0 && (best < 0 || free_[i] > free_[best])) best = i;
  return best;
}

std::vector<int> Cluster::place(int gpus) {
  std::vector<int> p;
  if (gpus < 1 || gpus > free_total_) return p;
  if (mode_ == PlacementMode::kPack && gpus <= gpus_per_node_) {
    int best = -1;
    for (int i = 0; i < nodes(); ++i)
      if (free_[i] >= gpus && (best < 0 || free_[i] < free_[best])) best = i;
    if (best >= 0) {
      free_[best] -= gpus;
      free_total_ -= gpus;
      return std::vector<int>(gpus, best);
    }
  }
  while (static_cast<int>(p.size()) < gpus) {
    int n = emptiest();
    int take = std::min(free_[n], gpus - static_cast<int>(p.size()));
    for (int k = 0; k < take; ++k) p.push_back(n);
    free_[n] -= take;
    free_total_ -= take;
  }
  return p;
}

void Cluster::release(const std::vector<int>& placement) {
  for (int n : placement) ++free_[n];
  free_total_ += static_cast<int>(placement.size());
}

int Cluster::node_count(const std::vector<int>& placement) {
  std::vector<int> v = placement;
  std::sort(v.begin(), v.end());
  return static_cast<int>(std::unique(v.begin(), v.end()) - v.begin());
}

}  // namespace trainplan::sim
