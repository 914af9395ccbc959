#include "core/sample.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

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

MetricRange parse_metric_range(const std::string& text, const std::string& field) {
  const auto colon = text.find(':');
  auto side = [&](const std::string& v, double unbounded) {
    if (v.empty()) return unbounded;
    try {
      size_t used = 0;
      const double x = std::stod(v, &used);
      if (used == v.size() && std::isfinite(x)) return x;
    } catch (const std::exception&) {
    }
    throw InputError("", 0, field, "expected LO:HI (numbers; a side may be empty), got '" + text + "'");
  };
  if (colon == std::string::npos)
    throw InputError("", 0, field, "expected LO:HI (numbers; a side may be empty), got '" + text + "'");
  MetricRange r{side(text.substr(0, colon), -1e300), side(text.substr(colon + 1), 1e300), "given (" + field + ")"};
  if (!(r.lo < r.hi)) throw InputError("", 0, field, "LO must be below HI, got '" + text + "'");
  return r;
}

std::string MetricRange::text() const {
  // The shortest text that reads back to the same bound: a range written to a samples file must
  // hold the samples it held when read (0.9796004 as 0.9796 would exclude a metric of 0.9796003).
  return (lo > -1e300 ? fmt::format("{}", lo) : std::string()) + ":" + (hi < 1e300 ? fmt::format("{}", hi) : std::string());
}

void SampleSet::check_declared_metric_range(const std::string& field, std::optional<double> target) const {
  if (!declared_metric_range) return;
  const MetricRange& r = *declared_metric_range;
  auto outside = [&](double v) { return v < r.lo || v > r.hi; };
  // The file's own range (its first line's metric_range=): the sample's line and metric are at fault, as
  // a cell outside a column's range is. An option's range is named as the option, with the sample's place.
  const bool own = field == "metric_range";
  for (const auto* v : {&samples, &curve})
    for (const auto& s : *v)
      if (s.metric && outside(*s.metric)) {
        const std::string what =
            fmt::format("{:g} (batch {:g}, {} worker{}, {:g} epochs) is outside the range {}, {}", *s.metric, s.batch,
                        s.workers, s.workers == 1 ? "" : "s", s.epochs, r.text(), r.from);
        if (own) throw InputError(source, s.line, "metric", what);
        throw InputError("", 0, field,
                         what + (s.line > 0 ? fmt::format(", at line {} of {}", s.line, source) : std::string()));
      }
  if (target && outside(*target))
    throw InputError("", 0, "--target",
                     fmt::format("{:g} is outside the metric's range {} ({}): no run can reach it", *target, r.text(),
                                 r.from));
}

MetricRange SampleSet::metric_range() const {
  if (declared_metric_range) return *declared_metric_range;
  bool any = false, unit = true, nonneg = true;
  for (const auto* v : {&samples, &curve})
    for (const auto& s : *v)
      if (s.metric) {
        any = true;
        unit = unit && *s.metric >= 0 && *s.metric <= 1;
        nonneg = nonneg && *s.metric >= 0;
      }
  if (any && unit && direction == MetricDirection::kMax)
    return {0, 1, "inferred: every sampled metric lies in [0, 1] and larger is better (declare metric_range=LO:HI "
                  "in the samples' first line if it can pass 1)"};
  if (any && nonneg)
    return {0, 1e300, "inferred: every sampled metric is >= 0 (declare metric_range=LO:HI in the samples' first line "
                      "if it can go below 0)"};
  return {-1e300, 1e300, "unbounded: some sampled metric is negative"};
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
