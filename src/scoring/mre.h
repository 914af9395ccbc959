// Mean relative error, equation 12 of Liang et al. 2022:
//   MRE = sum |pred - true| / sum |true|
// a ratio of sums, so large targets weigh more than in a mean of ratios.
#pragma once
#include <vector>

#include "core/sample.h"

namespace trainplan::scoring {

// Throws std::invalid_argument if the lengths differ, the input is empty,
// a value is NaN/Inf, or sum |true| is 0.
double mre(const std::vector<double>& pred, const std::vector<double>& truth);

// Throws InputError naming the samples' file and its metric column when
// samples carry a metric and every one is 0: no relative error is defined,
// so no metric model can be scored or chosen.
void require_scoreable_metric(const SampleSet& samples);

}  // namespace trainplan::scoring
