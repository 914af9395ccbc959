// Mean relative error, equation 12 of Liang et al. 2022:
//   MRE = sum |pred - true| / sum |true|
// a ratio of sums, so large targets weigh more than in a mean of ratios.
#pragma once
#include <vector>

namespace trainplan::scoring {

// Throws std::invalid_argument if the lengths differ, the input is empty,
// a value is NaN/Inf, or sum |true| is 0.
double mre(const std::vector<double>& pred, const std::vector<double>& truth);

}  // namespace trainplan::scoring
