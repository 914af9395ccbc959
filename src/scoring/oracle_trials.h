// The workers split's multi-node training trials when an oracle can run any
// placement: the trials a profiler would spend to learn how the inter-node
// cost grows with the node count (docs/lab/EVALUATION.md, "workers split").
#pragma once
#include <vector>

#include "core/sample.h"
#include "scoring/splits.h"
#include "replay/replay_oracle.h"

namespace trainplan::scoring {

// At most rule.multi_node_train trials at distinct node counts: the smallest
// and the largest node count among `test`'s multi-node samples; at each node
// count n, the most workers (r <= n * gpus_per_node: full nodes, "44" and
// "4444"), or with TrialShape::kOnePerNode the fewest (r >= n: "11" and
// "1111"), spread as evenly as possible, whose placement the oracle measures at a batch of the
// training grid `train` -- the batch nearest the grid's rule.trial_batch_quantile
// (lower quartile for the first trial, upper for the second) first. Node
// counts with no measured (r, batch) are skipped. Time-only samples (epochs 1).
SampleSet oracle_multi_node_trials(const replay::ReplayOracle& oracle, const SampleSet& train, const SampleSet& test,
                                   const WorkersSplitRule& rule = {});

}  // namespace trainplan::scoring
