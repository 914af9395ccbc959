#include "numerics/boosted_trees.h"

#include <xgboost/c_api.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainplan::numerics {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string("XGBoost ") + what + ": " + XGBGetLastError());
}

// A DMatrix from an Eigen matrix (row-major floats), freed on scope exit.
struct Matrix {
  DMatrixHandle h = nullptr;
  explicit Matrix(const Eigen::MatrixXd& X) {
    std::vector<float> data(static_cast<size_t>(X.size()));
    for (Eigen::Index i = 0; i < X.rows(); ++i)
      for (Eigen::Index j = 0; j < X.cols(); ++j) data[i * X.cols() + j] = static_cast<float>(X(i, j));
    check(XGDMatrixCreateFromMat(data.data(), X.rows(), X.cols(), std::numeric_limits<float>::quiet_NaN(), &h),
          "matrix");
  }
  ~Matrix() { XGDMatrixFree(h); }
};

}  // namespace

BoostedTrees::BoostedTrees(BoostedTreesParams p) : p_(p) {}

BoostedTrees::~BoostedTrees() {
  if (booster_) XGBoosterFree(booster_);
}

void BoostedTrees::fit(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  if (X.rows() != y.size() || X.rows() == 0) throw std::invalid_argument("boosted trees: X and y need the same, nonzero rows");
  if (!X.allFinite() || !y.allFinite()) throw std::invalid_argument("boosted trees: NaN or Inf in the training data");
  if (booster_) XGBoosterFree(booster_), booster_ = nullptr;
  Matrix d(X);
  std::vector<float> label(y.data(), y.data() + y.size());
  check(XGDMatrixSetFloatInfo(d.h, "label", label.data(), label.size()), "labels");
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&d.h, 1, &b), "create");
  booster_ = b;
  auto set = [&](const char* k, const std::string& v) { check(XGBoosterSetParam(b, k, v.c_str()), k); };
  set("objective", "reg:squarederror");
  set("nthread", "1");
  set("seed", std::to_string(p_.seed));
  set("max_depth", std::to_string(p_.max_depth));
  set("eta", std::to_string(p_.learning_rate));
  set("min_child_weight", std::to_string(p_.min_child_weight));
  set("subsample", std::to_string(p_.subsample));
  set("verbosity", "0");
  for (int i = 0; i < p_.rounds; ++i) check(XGBoosterUpdateOneIter(b, i, d.h), "update");
  columns_ = X.cols();
}

Eigen::VectorXd BoostedTrees::predict(const Eigen::MatrixXd& X) const {
  if (!booster_) throw std::logic_error("boosted trees: predict before fit");
  if (X.cols() != columns_) throw std::invalid_argument("boosted trees: predict with a different number of columns");
  Matrix d(X);
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(booster_, d.h, 0, 0, 0, &n, &out), "predict");
  Eigen::VectorXd y(static_cast<Eigen::Index>(n));
  for (bst_ulong i = 0; i < n; ++i) y(static_cast<Eigen::Index>(i)) = out[i];
  return y;
}

}  // namespace trainplan::numerics
