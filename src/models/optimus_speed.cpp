#include "models/optimus_speed.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
  return s + (p_.mode == SpeedMode::kSync ? " (f in steps/s; t0 in s per sample, t1-t4 in s)"
                                          : " (f in steps/s; t0-t3 in s)");
}

}  // namespace trainplan::models
