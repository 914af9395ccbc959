#include "models/optimus_speed.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/error.h"
#include "numerics/nnls.h"

namespace trainplan::models {

const char* to_string(SpeedMode m) { return m == SpeedMode::kSync ? "sync" : "async"; }

SpeedMode parse_speed_mode(const std::string& s) {
  if (s == "sync") return SpeedMode::kSync;
  if (s == "async") return SpeedMode::kAsync;
  throw InputError("", 0, "mode", "expected 'sync' or 'async', got '" + s + "'");
}

Eigen::VectorXd OptimusSpeedModel::features(int p, int w, double M) const {
  Eigen::VectorXd x(parameters());
  if (p_.mode == SpeedMode::kSync)
    x << M / w, 1, double(w) / p, double(w), double(p);
  else
    x << 1, double(w) / p, double(w), double(p);
  return x;
}

void OptimusSpeedModel::fit(const std::vector<SpeedPoint>& pts) {
  const int k = parameters();
  if (static_cast<int>(pts.size()) < k)
    throw InputError("", 0, "", fmt::format("Optimus {} speed model: needs at least {} (p, w) points, got {}",
                                            to_string(p_.mode), k, pts.size()));
  Eigen::MatrixXd A(pts.size(), k);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto& q = pts[i];
    if (q.ps < 1 || q.workers < 1 || !(q.speed > 0) || !std::isfinite(q.speed) || !(q.global_batch > 0))
      throw InputError("", 0, "", "Optimus speed model: points need ps, workers >= 1, speed > 0 and a batch > 0");
    // Target 1/f (sync) or w/f (async); scaled by its inverse so that every row's target is 1.
    double target = p_.mode == SpeedMode::kSync ? 1 / q.speed : q.workers / q.speed;
    A.row(static_cast<Eigen::Index>(i)) = features(q.ps, q.workers, q.global_batch).transpose() / target;
  }
  theta_ = numerics::nnls(A, b).x;
  // Every coefficient at 0 predicts an infinite speed everywhere: the rows'
  // scales are too far apart for one fit (a speed off by many decades).
  if (!(theta_.array() > 0).any()) {
    double lo = INFINITY, hi = 0;
    for (const auto& q : pts) lo = std::min(lo, q.speed), hi = std::max(hi, q.speed);
    throw InputError("", 0, "speed",
                     fmt::format("Optimus {} speed model: no fit predicts a finite speed (the speeds run from {:g} to "
                                 "{:g}; is a row off by several decades?)",
                                 to_string(p_.mode), lo, hi));
  }
}

double OptimusSpeedModel::predict(int p, int w, double M) const {
  double inv = features(p, w, M).dot(theta_);
  if (!(inv > 0)) return INFINITY;
  return p_.mode == SpeedMode::kSync ? 1 / inv : w / inv;
}

std::string OptimusSpeedModel::describe() const {
  std::string s = p_.mode == SpeedMode::kSync ? "f(p,w) = 1 / (t0 M/w + t1 + t2 w/p + t3 w + t4 p)"
                                              : "f(p,w) = w / (t0 + t1 w/p + t2 w + t3 p)";
  for (int j = 0; j < theta_.size(); ++j) s += fmt::format("{}t{} = {:.6g}", j ? ", " : "; ", j, theta_(j));
  return s;
}

double speed_mre(const OptimusSpeedModel& m, const std::vector<SpeedPoint>& pts) {
  double num = 0, den = 0;
  for (const auto& q : pts) {
    num += std::abs(m.predict(q.ps, q.workers, q.global_batch) - q.speed);
    den += q.speed;
  }
  return den > 0 ? num / den : 0;
}

double speed_cv_mre(const std::vector<SpeedPoint>& pts, OptimusSpeedParams params, int folds, uint64_t seed) {
  if (folds < 2) throw InputError("", 0, "cv", "needs at least 2 folds");
  if (static_cast<int>(pts.size()) < folds) throw InputError("", 0, "cv", "more folds than points");
  // The smallest training set is n - ceil(n / folds) points; the model needs its parameters' worth.
  const int n = static_cast<int>(pts.size()), smallest = n - (n + folds - 1) / folds;
  const int needed = OptimusSpeedModel(params).parameters();
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
  std::vector<size_t> idx(pts.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  double num = 0, den = 0;
  for (int f = 0; f < folds; ++f) {
    std::vector<SpeedPoint> train, test;
    for (size_t k = 0; k < idx.size(); ++k) (static_cast<int>(k % folds) == f ? test : train).push_back(pts[idx[k]]);
    OptimusSpeedModel m(params);
    m.fit(train);
    for (const auto& q : test) {
      num += std::abs(m.predict(q.ps, q.workers, q.global_batch) - q.speed);
      den += q.speed;
    }
  }
  return num / den;
}

}  // namespace trainplan::models
