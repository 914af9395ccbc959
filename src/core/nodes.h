// The node count of a data-parallel job when only its worker count is known.
#pragma once

namespace trainplan {

// Nodes that `workers` GPUs fill at `gpus_per_node` (>= 1) each, rounded up.
// Not (workers + gpus_per_node - 1) / gpus_per_node: that sum overflows int
// for a worker count near INT_MAX, which a request or option can carry.
inline int nodes_for(int workers, int gpus_per_node) {
  return workers / gpus_per_node + (workers % gpus_per_node != 0 ? 1 : 0);
}

}  // namespace trainplan
