// Gradient-boosted regression trees through XGBoost's C API (libxgboost-dev):
// the learner of the graph-feature models (Horus; docs/MODELS.md).
// Deterministic: one thread and a fixed seed.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <memory>

namespace trainplan::numerics {

struct BoostedTreesParams {
  // Boosting rounds, each adding one tree. Default: 300.
  int rounds = 300;
  // Deepest a tree may grow (XGBoost's max_depth). Default: 4.
  int max_depth = 4;
  // Shrinkage of each tree's contribution (XGBoost's eta). Default: 0.1.
  double learning_rate = 0.1;
  // Least sum of row weights (hessians; with squared error and unweighted rows, the rows) a child of a split
  // must hold (XGBoost's min_child_weight). Default: 1.
  double min_child_weight = 1;
  // Share of the training rows drawn for each round's tree (XGBoost's subsample); 1: all. Default: 1.
  double subsample = 1;
  // XGBoost's random seed. Default: 1.
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
