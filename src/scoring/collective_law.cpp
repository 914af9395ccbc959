#include "scoring/collective_law.h"

#include <algorithm>
#include <cmath>

#include "models/llm_time.h"

namespace trainplan::scoring {

CollectiveLaw measure_collective_law(const std::vector<io::LlmConfigRow>& rows) {
  CollectiveLaw law;
  for (const auto& r : rows) {
    const auto c = models::llm_collectives(r.spec, r.layout);
    // One all-reduce over n ranks: 2(n - 1) steps of bytes / n.
    auto add = [&](const char* group, const std::optional<double>& seconds, double bytes, double count, int n) {
      if (!seconds || *seconds <= 0 || bytes <= 0 || count <= 0 || n <= 1) return;
      const double steps = 2.0 * (n - 1) * count;
      law.steps.push_back({r.line, group, bytes / n, *seconds / steps});
    };
    add("tp", r.tp_comm_s, c.tp_bytes, c.tp_count, r.layout.tp);
    add("dp", r.dp_comm_s, c.dp_bytes, 1, r.layout.dp);
  }
  if (law.steps.empty()) return law;
  const auto [least, most] = std::minmax_element(law.steps.begin(), law.steps.end(),
                                                 [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  law.smallest_bytes = least->bytes, law.largest_bytes = most->bytes;
  if (law.smallest_bytes == law.largest_bytes) return law;
  double mx = 0, my = 0;
  for (const auto& s : law.steps) mx += std::log(s.bytes / 65536.0), my += std::log(s.seconds);
  mx /= double(law.steps.size()), my /= double(law.steps.size());
  double sxy = 0, sxx = 0;
  for (const auto& s : law.steps) {
    const double x = std::log(s.bytes / 65536.0) - mx;
    sxy += x * (std::log(s.seconds) - my), sxx += x * x;
  }
  law.fitted = true;
  law.exponent = sxy / sxx;
  law.seconds_at_64kib = std::exp(my - law.exponent * mx);
  return law;
}

double CollectiveLaw::seconds_at(double bytes) const { return seconds_at_64kib * std::pow(bytes / 65536.0, exponent); }

}  // namespace trainplan::scoring
