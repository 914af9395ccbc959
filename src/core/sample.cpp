#include "core/sample.h"

#include <algorithm>

#include "core/nodes.h"
#include "core/error.h"

namespace trainplan {

const char* to_string(MetricDirection d) { return d == MetricDirection::kMax ? "max" : "min"; }

MetricDirection parse_direction(const std::string& s) {
  if (s == "max") return MetricDirection::kMax;
  if (s == "min") return MetricDirection::kMin;
  throw InputError("metric direction must be 'max' or 'min', got '" + s + "'");
}

bool SampleSet::has_metric() const {
  for (const auto& s : samples)
    if (s.metric) return true;
  return false;
}

int SampleSet::packed_nodes(int workers) const {
  int per_node = 0;
  for (const auto& x : samples)
    if (x.nodes > 0) per_node = std::max(per_node, nodes_for(x.workers, x.nodes));
  return per_node > 0 ? nodes_for(workers, per_node) : 0;
}

std::set<std::string> SampleSet::model_names() const {
  std::set<std::string> names;
  for (const auto& s : samples)
    if (!s.model.empty()) names.insert(s.model);
  return names;
}

std::map<std::pair<double, int>, std::vector<std::pair<double, double>>> SampleSet::metric_runs(bool with_curve) const {
  std::map<std::pair<double, int>, std::vector<std::pair<double, double>>> runs;
  auto add = [&](const std::vector<Sample>& v) {
    for (const auto& s : v)
      if (s.metric && s.epochs > 0) runs[{s.batch, s.workers}].push_back({s.epochs, *s.metric});
  };
  add(samples);
  if (with_curve) add(curve);
  for (auto& [key, run] : runs) std::sort(run.begin(), run.end());
  return runs;
}

std::optional<double> SampleSet::best_metric() const {
  std::optional<double> best;
  for (const auto& s : samples)
    if (s.metric && (!best || better(*s.metric, *best))) best = *s.metric;
  return best;
}

std::optional<double> SampleSet::last_metric_epoch() const {
  std::optional<double> last;
  for (const auto& s : samples)
    if (s.metric) last = std::max(last.value_or(s.epochs), s.epochs);
  return last;
}

std::vector<Sample> SampleSet::with_metric() const {
  std::vector<Sample> out;
  for (const auto& s : samples)
    if (s.metric) out.push_back(s);
  return out;
}

}  // namespace trainplan
