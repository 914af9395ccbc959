// Leaderboard output for `trainplan evaluate`: the JSON document and the
// human-readable table (docs/lab/EVALUATION.md describes both).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scoring/evaluate.h"

namespace trainplan::scoring {

struct DatasetScores {
  std::string name;
  std::string description;  // one line: where the samples came from, how many
  std::vector<ModelScore> models;
};

// {"in_sample_mre":x,"cv_mre":x,"extrapolation_mre":{"workers":x,"workers_one_per_node":x,"batch":x},"fit_ms":x[,"note":"..."]}
// with null for missing numbers; MRE as a fraction.
nlohmann::json to_json(const PartScore& p);
// {"seed":..,"cv":..,"datasets":{"<name>":{"<model>":{"time":{...},"metric":{...}}}}}
nlohmann::json to_json(const std::vector<DatasetScores>& sets, const EvalOptions& opts);

// One table per data set, MRE as percentages, "—" for a missing part, and
// the notes below each table.
std::string format_table(const std::vector<DatasetScores>& sets, const EvalOptions& opts);

}  // namespace trainplan::scoring
