#include "replay/comm_calibration.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/median.h"

namespace trainplan::replay {

structure::CommProfile comm_profile_of(const ReplayOracle& oracle, const CommCalibrationOptions& opts) {
  // Batches measured both on one GPU and on "11".
  std::set<double> measured;
  for (const auto& row : oracle.trace().placements)
    if (row.placement == "1" && oracle.measured_step_time(row.local_bsz, 2, 2)) measured.insert(row.local_bsz);
  std::vector<double> small(measured.begin(), measured.end());
  if (static_cast<int>(small.size()) > opts.batches) small.resize(opts.batches);

  structure::CommProfile p;
  p.source = oracle.name();
  for (int n = 2; n <= opts.max_nodes; ++n)
    for (int k = 1; k <= opts.max_gpus_per_node; ++k) {
      std::vector<double> ratios;
      for (double b : small) {
        auto t1 = oracle.measured_step_time(b, 1, 1), t11 = oracle.measured_step_time(b, 2, 2),
             t = oracle.measured_step_time(b, n * k, n);
        if (t1 && t11 && t && *t11 > *t1 && *t > *t1) ratios.push_back((*t - *t1) / (*t11 - *t1));
      }
      if (!ratios.empty()) p.set(n, k, median(ratios));
    }
  return p;
}

structure::CommProfile comm_profile_from(const std::vector<const ReplayOracle*>& oracles, const CommCalibrationOptions& opts) {
  std::map<std::pair<int, int>, std::vector<double>> all;
  std::string names, left_out;
  for (const auto* o : oracles) {
    auto p = comm_profile_of(*o, opts);
    if (p.empty()) {
      left_out += (left_out.empty() ? "" : ", ") + o->name();
      continue;
    }
    names += (names.empty() ? "" : ", ") + o->name();
    for (const auto& [key, v] : p.table()) all[key].push_back(v);
  }
  if (all.empty())
    throw InputError("communication profile: no trace has two-node steps with one GPU each (\"11\") slower than its "
                     "one-GPU steps (\"1\") at the same batch, which is what it measures the cross-node all-reduce "
                     "by");
  structure::CommProfile out;
  for (const auto& [key, v] : all) out.set(key.first, key.second, median(v));
  out.source = "median of traces: " + names;
  // Said, not dropped silently: a median of two traces is weaker than of six.
  if (!left_out.empty())
    out.source += " (left out, no \"11\" step slower than \"1\" at a batch both measured: " + left_out + ")";
  return out;
}

}  // namespace trainplan::replay
