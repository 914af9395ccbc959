#include "models/metric_loss.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace trainplan::models {

MetricLoss MetricLoss::for_values(MetricDirection d, const std::vector<double>& values) {
  if (values.empty()) throw std::invalid_argument("MetricLoss: no values");
  auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  double lo = *lo_it, hi = *hi_it, range = std::max(hi - lo, 1e-12 * std::max(1.0, std::abs(hi)));
  MetricLoss t;
  t.direction = d;
  if (d == MetricDirection::kMax) {
    if (lo >= 0 && hi <= 1) t.offset = 1;
    else if (lo >= 0 && hi <= 100) t.offset = 100;
    else t.offset = hi + range;
  } else {
    t.offset = lo > 0 ? 0 : lo - range;
  }
  return t;
}

std::string MetricLoss::describe() const {
  if (direction == MetricDirection::kMax) return fmt::format("loss = {:g} - metric", offset);
  return offset == 0 ? std::string("loss = metric") : fmt::format("loss = metric - ({:g})", offset);
}

}  // namespace trainplan::models
