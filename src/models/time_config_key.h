// The key of a time configuration: what the time models' points
// (distinct_time_configs), the conformal folds and the measured
// configurations of an interval are told apart by. One worker with its nodes
// unknown (0) runs on one node, stated or not.
#pragma once
#include <tuple>

#include "core/sample.h"

namespace trainplan::models {

using TimeConfigKey = std::tuple<double, int, int>;  // batch, workers, nodes

inline TimeConfigKey time_config_key(double batch, int workers, int nodes) {
  return {batch, workers, workers == 1 && nodes == 0 ? 1 : nodes};
}
inline TimeConfigKey time_config_key(const Sample& s) { return time_config_key(s.batch, s.workers, s.nodes); }

}  // namespace trainplan::models
