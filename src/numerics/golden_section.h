// Golden-section search for a minimum of a function of one variable on
// [a, b]: f at the bracket's two interior points, then `iterations` more
// evaluations, each narrowing the bracket to the side of the lower value
// (by the golden ratio, so each step reuses one interior point). The better
// interior point is never dropped, so the lowest value seen is among the
// last two. f is called in that order and returns the value to minimise;
// callers that want more of a point (its fit) keep it from inside f.
// Returns the x of the lowest value seen (on ties, the later interior one
// of the last two).
#pragma once
#include <cmath>

namespace trainplan::numerics {

template <class F>
double golden_section_minimize(F&& f, double a, double b, int iterations) {
  const double r = 0.5 * (std::sqrt(5.0) - 1);
  double c = b - r * (b - a), d = a + r * (b - a);
  double fc = f(c), fd = f(d);
  for (int it = 0; it < iterations; ++it) {
    if (fc < fd) {
      b = d, d = c, fd = fc;
      c = b - r * (b - a);
      fc = f(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + r * (b - a);
      fd = f(d);
    }
  }
  return fc < fd ? c : d;
}

}  // namespace trainplan::numerics
