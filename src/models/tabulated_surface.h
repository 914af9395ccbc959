// A metric surface tabulated at fit time, so that predictions are cheap and
// monotone in epochs: rows at log2 B = lb0 + i*db, each a piecewise-linear
// function of a column coordinate u (ln x or ln e), constant beyond its ends;
// linear between the two nearest rows, clamped to the first and the last.
// A row made monotone stays so between columns, and a blend of two
// monotone rows is monotone, so every prediction is monotone in u.
#pragma once
#include <vector>

#include "core/sample.h"

namespace trainplan::models {

struct TabulatedSurface {
  struct Row {
    std::vector<double> u, v;  // columns, increasing, and the values there
    double at(double q) const;
    // Running max (kMax) or min (kMin) along the row.
    void make_monotone(MetricDirection dir);
  };
  double lb0 = 0, db = 1;
  std::vector<Row> rows;

  double at(double log2b, double u) const;
};

}  // namespace trainplan::models
