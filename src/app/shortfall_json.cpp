#include "app/shortfall_json.h"

#include <cmath>

namespace trainplan::app {

nlohmann::json to_json(const std::optional<InfeasibleError::Shortfall>& s) {
  nlohmann::json j = nlohmann::json::object();
  if (!s) return j;
  j["failing"] = s->constraint;
  nlohmann::json f = {{"limit", s->limit}, {"closest", s->closest}, {"unit", s->unit}};
  if (s->constraint == "deadline") {
    f["over"] = s->closest - s->limit;
    // A deadline so short that the ratio overflows has none to give.
    if (const double share = s->closest / s->limit - 1; s->limit > 0 && std::isfinite(share)) f["over_fraction"] = share;
  } else if (s->constraint == "target") {
    f["short_by"] = std::abs(s->closest - s->limit);
  }
  j["shortfall"] = std::move(f);
  nlohmann::json c = nlohmann::json::object();
  // Counts as whole numbers, as the plan's own configurations give them.
  for (const auto& [name, value] : s->configuration)
    if (name == "batch" || name == "workers" || name == "epochs" || name == "nodes") c[name] = std::llround(value);
    else c[name] = value;
  j["closest"] = std::move(c);
  return j;
}

}  // namespace trainplan::app
