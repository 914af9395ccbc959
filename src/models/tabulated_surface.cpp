#include "models/tabulated_surface.h"

#include <algorithm>

namespace trainplan::models {

double TabulatedSurface::Row::at(double q) const {
  if (q <= u.front()) return v.front();
  if (q >= u.back()) return v.back();
  size_t k = static_cast<size_t>(std::upper_bound(u.begin(), u.end(), q) - u.begin()) - 1;
  double t = (q - u[k]) / (u[k + 1] - u[k]);
  return (1 - t) * v[k] + t * v[k + 1];
}

void TabulatedSurface::Row::make_monotone(MetricDirection dir) {
  for (size_t k = 1; k < v.size(); ++k)
    v[k] = dir == MetricDirection::kMax ? std::max(v[k], v[k - 1]) : std::min(v[k], v[k - 1]);
}

double TabulatedSurface::at(double log2b, double q) const {
  const int nb = static_cast<int>(rows.size());
  if (nb == 1) return rows.front().at(q);
  double fi = std::clamp((log2b - lb0) / db, 0.0, double(nb - 1));
  int i = std::min(static_cast<int>(fi), nb - 2);
  double s = fi - i;
  return (1 - s) * rows[i].at(q) + s * rows[i + 1].at(q);
}

}  // namespace trainplan::models
