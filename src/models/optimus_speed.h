// Optimus's resource-speed model (Peng et al., EuroSys'18; docs/MODELS.md):
// the training speed f (steps/s) of a parameter-server job with p servers and
// w workers, global batch M:
//   asynchronous  f(p, w) = w * (t0 + t1 w/p + t2 w + t3 p)^-1
//   synchronous   f(p, w) = (t0 M/w + t1 + t2 w/p + t3 w + t4 p)^-1
// Both are linear in theta after taking w/f or 1/f, and are fitted by NNLS
// (theta >= 0). Rows are scaled by f, so the fit minimises the relative error
// of 1/f, which to first order is the relative error of f (the metric is MRE).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

namespace trainplan::models {

enum class SpeedMode { kSync, kAsync };
const char* to_string(SpeedMode m);
SpeedMode parse_speed_mode(const std::string& s);  // "sync" | "async"; InputError otherwise

struct SpeedPoint {
  int ps = 0;
  int workers = 0;
  double global_batch = 0;  // M
  double speed = 0;         // steps/s, > 0
};

struct OptimusSpeedParams {
  SpeedMode mode = SpeedMode::kSync;
};

class OptimusSpeedModel {
 public:
  explicit OptimusSpeedModel(OptimusSpeedParams p = {}) : p_(p) {}
  // Throws InputError if there are fewer points than parameters or a point is not positive.
  void fit(const std::vector<SpeedPoint>& points);
  double predict(int ps, int workers, double global_batch) const;
  const Eigen::VectorXd& theta() const { return theta_; }
  SpeedMode mode() const { return p_.mode; }
  std::string describe() const;
  // The regressors of one point (the row of the linear form).
  Eigen::VectorXd features(int ps, int workers, double global_batch) const;
  int parameters() const { return p_.mode == SpeedMode::kSync ? 5 : 4; }

 private:
  OptimusSpeedParams p_;
  Eigen::VectorXd theta_;
};

}  // namespace trainplan::models
