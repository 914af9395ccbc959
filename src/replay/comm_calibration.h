// Measures a cluster's communication profile (structure/comm_profile.h) from
// Pollux-format traces recorded on that cluster.
//
// Per trace, at each of its `batches` smallest measured per-GPU batches (where
// the sync cost is least hidden behind compute):
//   rho_trace(n, k) = (t(n x k) - t(1)) / (t(2 x 1) - t(1))
// the exposed step-time excess over one GPU of the placement with k GPUs on
// each of n nodes, relative to two nodes with one GPU each; the median over
// those batches (batches where t(2 x 1) <= t(1) are skipped). The profile is
// the median over traces.
#pragma once
#include <string>
#include <vector>

#include "structure/comm_profile.h"
#include "replay/replay_oracle.h"

namespace trainplan::replay {

struct CommCalibrationOptions {
  int batches = 3;        // smallest measured batches used per trace
  int max_nodes = 4;      // node counts 2..max_nodes
  int max_gpus_per_node = 4;
};

// One trace's rho table (entries it cannot measure are absent).
structure::CommProfile comm_profile_of(const ReplayOracle& oracle, const CommCalibrationOptions& opts = {});

// The median over `oracles` of their tables; `source` names them. Throws
// InputError if no trace measures "11" against "1".
structure::CommProfile comm_profile_from(const std::vector<const ReplayOracle*>& oracles,
                                      const CommCalibrationOptions& opts = {});

}  // namespace trainplan::replay
