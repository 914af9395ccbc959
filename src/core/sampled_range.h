// What a sample set ran, for saying when a query lies past it: the time model
// only extrapolates there, and intervals fitted on the samples' own misses do
// not cover that.
#pragma once
#include <optional>
#include <utility>

#include "core/sample.h"

namespace trainplan {

// The most workers any sample ran; 0 for no sample.
int most_workers_sampled(const SampleSet& s);

// The most nodes any sample states it ran on; 0 when none states its nodes.
int most_nodes_sampled(const SampleSet& s);

// The smallest and largest per-worker batch sampled; nullopt for no sample.
std::optional<std::pair<double, double>> batch_range_sampled(const SampleSet& s);

}  // namespace trainplan
