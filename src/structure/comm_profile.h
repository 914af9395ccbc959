// A cluster's communication profile: how the exposed cost of synchronising
// gradients across nodes grows with the node count n and the GPUs per node k,
// relative to two nodes with one GPU each (rho(2, 1) = 1).
//
// Why: on the Pollux T4 cluster the inter-node cost is not the ring
// all-reduce's 2(r-1)/r: it grows with k (PCIe shared with the NIC) and is not
// monotone in n. Two multi-node trials cannot identify that shape, but the
// shape is a property of the cluster, not of the model, so it can be measured
// once (from any earlier jobs on the same cluster, `trainplan comm-profile`)
// and used as a prior; a model's own trials then fit only the scale.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace trainplan::structure {

class CommProfile {
 public:
  // Adds rho for n >= 2 nodes with k >= 1 GPUs each (value > 0).
  void set(int nodes, int gpus_per_node, double rho);
  bool empty() const { return rho_.empty(); }
  const std::map<std::pair<int, int>, double>& table() const { return rho_; }

  // rho for `workers` spread over `nodes` (>= 2) nodes: k = workers / nodes,
  // linear between the table's integer k at that n, and linear in n between
  // tabulated node counts; held at the nearest tabulated value outside.
  double at(int workers, int nodes) const;

  // Where the profile came from (free text, for describe() and JSON).
  std::string source;

  nlohmann::json to_json() const;
  // Throws InputError naming `file` on a malformed profile.
  static CommProfile from_json(const nlohmann::json& j, const std::string& file = "");
  static CommProfile load(const std::string& path);
  void save(const std::string& path) const;

 private:
  double at_nodes(int nodes, double k) const;  // nodes must be tabulated
  std::map<std::pair<int, int>, double> rho_;  // (nodes, gpus per node) -> rho
};

}  // namespace trainplan::structure
