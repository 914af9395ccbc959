// The data sets `trainplan evaluate` scores (docs/lab/EVALUATION.md): sample
// files as they are, or every Pollux trace under a directory, sampled with a
// plan, with the workers split's test pool and multi-node trials drawn from the
// trace itself.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scoring/evaluate.h"

namespace trainplan::scoring {

// One data set per file, named after the file's stem (its path when two files
// share a stem). Appends one line per file to `descriptions`. Throws
// InputError on a file that cannot be read.
std::vector<EvalData> datasets_from_sample_files(const std::vector<std::string>& paths,
                                                 std::vector<std::string>& descriptions);

struct TraceDatasetOptions {
  std::string plan = "paper";  // replay::named_plan for the scored samples
  uint64_t seed = 1;           // of the sampling plans
  // Communication profile for the time models: "auto" (measured on the other
  // traces under the directory, leave one out), "none", or a JSON file.
  std::string comm_profile = "auto";
};

// One data set per Pollux trace under `dir` (or `dir` itself): samples drawn
// with o.plan; the workers split's test side from the 'wide' plan (r = 1..16)
// restricted to 8..16 workers; the split's multi-node trials from the trace
// (oracle_trials.h), on full nodes and on one GPU per node. Appends one line
// per trace to `descriptions`.
std::vector<EvalData> datasets_from_traces(const std::string& dir, const TraceDatasetOptions& o,
                                           std::vector<std::string>& descriptions);

}  // namespace trainplan::scoring
