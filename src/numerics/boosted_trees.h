// Gradient-boosted regression trees through XGBoost's C API (libxgboost-dev):
// the learner of the graph-feature models (Horus; docs/MODELS.md).
// Deterministic: one thread and a fixed seed.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <memory>

namespace trainplan::numerics {

struct BoostedTreesParams {
  int rounds = 300;
  int max_depth = 4;
  double learning_rate = 0.1;
  double min_child_weight = 1;
  double subsample = 1;
  uint64_t seed = 1;
};

class BoostedTrees {
 public:
  explicit BoostedTrees(BoostedTreesParams p = {});
  ~BoostedTrees();
  BoostedTrees(const BoostedTrees&) = delete;
  BoostedTrees& operator=(const BoostedTrees&) = delete;

  // Squared-error regression of y on the rows of X. Throws std::runtime_error
  // with XGBoost's message on failure, std::invalid_argument on bad shapes or NaN.
  void fit(const Eigen::MatrixXd& X, const Eigen::VectorXd& y);
  Eigen::VectorXd predict(const Eigen::MatrixXd& X) const;
  bool fitted() const { return booster_ != nullptr; }

 private:
  BoostedTreesParams p_;
  void* booster_ = nullptr;  // BoosterHandle
  long columns_ = 0;
};

}  // namespace trainplan::numerics
