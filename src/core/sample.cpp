#include "core/sample.h"

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

std::vector<Sample> SampleSet::with_metric() const {
  std::vector<Sample> out;
  for (const auto& s : samples)
    if (s.metric) out.push_back(s);
  return out;
}

}  // namespace trainplan
