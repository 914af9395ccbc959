#include "scoring/mre.h"

#include <cmath>
#include <stdexcept>

namespace trainplan::scoring {

double mre(const std::vector<double>& pred, const std::vector<double>& truth) {
  if (pred.size() != truth.size()) throw std::invalid_argument("mre: predictions and truths differ in number");
  if (pred.empty()) throw std::invalid_argument("mre: nothing to score");
  double err = 0, total = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    if (!std::isfinite(pred[i])) throw std::invalid_argument("mre: the model predicted NaN or Inf");
    if (!std::isfinite(truth[i])) throw std::invalid_argument("mre: a true value is NaN or Inf");
    err += std::fabs(pred[i] - truth[i]);
    total += std::fabs(truth[i]);
  }
  if (total == 0) throw std::invalid_argument("mre: the true values sum to 0");
  return err / total;
}

}  // namespace trainplan::scoring
