#include "scoring/mre.h"

#include <cmath>
#include <stdexcept>

#include "core/error.h"

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

void require_scoreable_metric(const SampleSet& samples) {
  bool any = false;
  for (const auto& x : samples.samples)
    if (x.metric) {
      if (*x.metric != 0) return;
      any = true;
    }
  if (any)
    throw InputError(samples.source, 0, "metric",
                     "every metric value is 0: a relative error (MRE) is not defined, so no metric model can be "
                     "scored; check the column, or leave it empty to plan by time alone");
}

}  // namespace trainplan::scoring
