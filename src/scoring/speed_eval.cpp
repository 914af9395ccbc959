#include "scoring/speed_eval.h"

#include <fmt/format.h>

#include "core/error.h"
#include "scoring/mre.h"
#include "scoring/splits.h"

namespace trainplan::scoring {

double speed_mre(const models::OptimusSpeedModel& m, const std::vector<models::SpeedPoint>& points) {
  std::vector<double> pred, truth;
  for (const auto& q : points) pred.push_back(m.predict(q.ps, q.workers, q.global_batch)), truth.push_back(q.speed);
  return mre(pred, truth);
}

double speed_cv_mre(const std::vector<models::SpeedPoint>& points, models::OptimusSpeedParams params, int folds,
                    uint64_t seed) {
  if (folds < 2) throw InputError("", 0, "--cv", "needs at least 2 folds");
  const int n = static_cast<int>(points.size());
  if (n < folds) throw InputError("", 0, "--cv", fmt::format("{} folds, more than the {} points", folds, n));
  // The smallest training set is n - ceil(n / folds) points; the model needs its parameters' worth.
  const int smallest = n - (n + folds - 1) / folds;
  const int needed = models::OptimusSpeedModel(params).parameters();
  if (smallest < needed) {
    int enough = folds;
    while (enough <= n && n - (n + enough - 1) / enough < needed) ++enough;
    throw InputError("", 0, "--cv",
                     enough <= n ? fmt::format("{}-fold CV trains on as few as {} of the {} points, where the model "
                                               "needs {}: give --cv {} or more",
                                               folds, smallest, n, needed, enough)
                                 : fmt::format("{} points leave too few to train on when some are held out (the model "
                                               "needs {})",
                                               n, needed));
  }
  std::vector<double> pred, truth;
  for (const auto& fold : kfold(points.size(), folds, seed)) {
    std::vector<bool> held(points.size(), false);
    for (size_t i : fold) held[i] = true;
    std::vector<models::SpeedPoint> train;
    for (size_t i = 0; i < points.size(); ++i)
      if (!held[i]) train.push_back(points[i]);
    models::OptimusSpeedModel m(params);
    m.fit(train);
    for (size_t i : fold)
      pred.push_back(m.predict(points[i].ps, points[i].workers, points[i].global_batch)), truth.push_back(points[i].speed);
  }
  return mre(pred, truth);
}

}  // namespace trainplan::scoring
