// Published facts about the six Pollux applications (from shared/data/README.md):
// metric direction, dataset size and the epoch limit Pollux used.
#pragma once
#include <optional>
#include <string>

#include "core/sample.h"

namespace trainplan::replay {

struct AppInfo {
  std::string name;
  MetricDirection direction = MetricDirection::kMax;
  long dataset_size = 0;  // 0: derive it from the smallest-batch validation curve
  int epoch_limit = 0;    // Pollux's per-model epoch limit
  std::string metric_name;
};

// Facts for a known application name, or nullopt.
std::optional<AppInfo> known_app(const std::string& name);

}  // namespace trainplan::replay
