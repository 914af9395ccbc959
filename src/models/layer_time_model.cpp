#include "models/layer_time_model.h"

#include <cmath>
#include <random>

#include "core/error.h"

namespace trainplan::models {

structure::Layer layer_of(const io::LayerTiming& t) {
  structure::GraphBuilder g("timed", "");
  if (t.kind == "linear") {
    g.sequence(1, t.in_features).linear(t.out_features);
  } else {
    g.image(t.in_channels, t.height, t.width);
    if (t.kind == "conv") g.conv(t.out_channels, t.kernel, t.stride, t.padding, /*bias=*/true);
    else if (t.kind == "pool") g.pool(t.kernel, t.stride, t.padding);
    else if (t.kind == "relu") g.relu();
    else if (t.kind == "batchnorm") g.batch_norm();
    else throw InputError("unknown layer kind '" + t.kind + "'");
  }
  return g.build().layers.front();
}

bool timed_kind(structure::LayerKind k) {
  return k == structure::LayerKind::kConv || k == structure::LayerKind::kLinear || k == structure::LayerKind::kPool || k == structure::LayerKind::kActivation ||
         k == structure::LayerKind::kNorm;
}

Eigen::RowVectorXd layer_features(const structure::Layer& l, double b) {
  Eigen::RowVectorXd x(9);
  x << (l.kind == structure::LayerKind::kConv), (l.kind == structure::LayerKind::kLinear), (l.kind == structure::LayerKind::kPool),
      (l.kind == structure::LayerKind::kActivation), (l.kind == structure::LayerKind::kNorm), std::log2(b), std::log10(b * l.flops + 1),
      std::log10(b * l.bytes + 1), std::log10(l.params + 1);
  return x;
}

// ---- MLP: x -> relu(x W1 + b1) -> relu(. W2 + b2) -> . W3 + b3 ----

void MlpRegressor::fit(const Eigen::MatrixXd& X0, const Eigen::VectorXd& y0) {
  if (X0.rows() != y0.size() || X0.rows() < 2) throw std::invalid_argument("mlp: X and y need the same rows, >= 2");
  if (!X0.allFinite() || !y0.allFinite()) throw std::invalid_argument("mlp: NaN or Inf in the training data");
  const Eigen::Index n = X0.rows(), d = X0.cols(), h = p_.hidden;
  mu_ = X0.colwise().mean();
  sd_ = ((X0.rowwise() - mu_).array().square().colwise().mean()).sqrt().matrix();
  for (Eigen::Index j = 0; j < d; ++j)
    if (!(sd_(j) > 1e-12)) sd_(j) = 1;
  y_mu_ = y0.mean();
  y_sd_ = std::sqrt((y0.array() - y_mu_).square().mean());
  if (!(y_sd_ > 1e-12)) y_sd_ = 1;
  const Eigen::MatrixXd X = (X0.rowwise() - mu_).array().rowwise() / sd_.array();
  const Eigen::VectorXd y = (y0.array() - y_mu_) / y_sd_;

  std::mt19937_64 rng(p_.seed);
  auto he = [&](Eigen::Index r, Eigen::Index c) {
    std::normal_distribution<double> N(0, std::sqrt(2.0 / double(r)));
    Eigen::MatrixXd W(r, c);
    for (Eigen::Index i = 0; i < W.size(); ++i) W.data()[i] = N(rng);
    return W;
  };
  W1_ = he(d, h), W2_ = he(h, h), W3_ = he(h, 1);
  b1_ = Eigen::RowVectorXd::Zero(h), b2_ = Eigen::RowVectorXd::Zero(h), b3_ = 0;

  // Adam state, one (m, v) pair per parameter block.
  struct Moments {
    Eigen::MatrixXd m, v;
  };
  auto zeros_like = [](const auto& A) { return Moments{Eigen::MatrixXd::Zero(A.rows(), A.cols()), Eigen::MatrixXd::Zero(A.rows(), A.cols())}; };
  Moments mW1 = zeros_like(W1_), mW2 = zeros_like(W2_), mW3 = zeros_like(W3_);
  Moments mb1 = zeros_like(b1_), mb2 = zeros_like(b2_);
  double mb3 = 0, vb3 = 0;
  const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  auto adam = [&](auto& P, Moments& s, const Eigen::MatrixXd& g, int t) {
    s.m = beta1 * s.m + (1 - beta1) * g;
    s.v = beta2 * s.v + (1 - beta2) * g.cwiseProduct(g);
    const double c1 = 1 - std::pow(beta1, t), c2 = 1 - std::pow(beta2, t);
    P.array() -= p_.learning_rate * (s.m.array() / c1) / ((s.v.array() / c2).sqrt() + eps);
  };
  // Buffers reused by every step: large temporaries allocated per step cost
  // more in the allocator (mmap and munmap) than the arithmetic.
  Eigen::MatrixXd Z1(n, h), A1(n, h), Z2(n, h), A2(n, h), d1(n, h), d2(n, h);
  Eigen::MatrixXd gW1(d, h), gW2(h, h), gW3(h, 1), gb1(1, h), gb2(1, h);
  Eigen::VectorXd err(n);
  for (int t = 1; t <= p_.epochs; ++t) {
    Z1.noalias() = X * W1_;
    Z1.rowwise() += b1_;
    A1 = Z1.cwiseMax(0.0);
    Z2.noalias() = A1 * W2_;
    Z2.rowwise() += b2_;
    A2 = Z2.cwiseMax(0.0);
    err.noalias() = A2 * W3_.col(0);
    err.array() += b3_ - y.array();
    mse_ = err.squaredNorm() / double(n);
    // Backpropagation of mean squared error / 2 plus the L2 penalty.
    err /= double(n);  // now d3
    gW3.noalias() = A2.transpose() * err;
    gW3 += p_.l2 * W3_;
    const double gb3 = err.sum();
    d2.noalias() = err * W3_.transpose();
    d2.array() *= (Z2.array() > 0).cast<double>();
    gW2.noalias() = A1.transpose() * d2;
    gW2 += p_.l2 * W2_;
    gb2 = d2.colwise().sum();
    d1.noalias() = d2 * W2_.transpose();
    d1.array() *= (Z1.array() > 0).cast<double>();
    gW1.noalias() = X.transpose() * d1;
    gW1 += p_.l2 * W1_;
    gb1 = d1.colwise().sum();
    adam(W1_, mW1, gW1, t), adam(W2_, mW2, gW2, t), adam(W3_, mW3, gW3, t);
    adam(b1_, mb1, gb1, t), adam(b2_, mb2, gb2, t);
    mb3 = beta1 * mb3 + (1 - beta1) * gb3, vb3 = beta2 * vb3 + (1 - beta2) * gb3 * gb3;
    b3_ -= p_.learning_rate * (mb3 / (1 - std::pow(beta1, t))) / (std::sqrt(vb3 / (1 - std::pow(beta2, t))) + eps);
  }
  mse_ *= y_sd_ * y_sd_;
}

Eigen::VectorXd MlpRegressor::predict(const Eigen::MatrixXd& X0) const {
  if (W1_.size() == 0) throw std::logic_error("mlp: predict before fit");
  if (X0.cols() != mu_.size()) throw std::invalid_argument("mlp: predict with a different number of columns");
  const Eigen::MatrixXd X = (X0.rowwise() - mu_).array().rowwise() / sd_.array();
  const Eigen::MatrixXd A1 = ((X * W1_).rowwise() + b1_).cwiseMax(0.0);
  const Eigen::MatrixXd A2 = ((A1 * W2_).rowwise() + b2_).cwiseMax(0.0);
  return ((A2 * W3_).col(0).array() + b3_) * y_sd_ + y_mu_;
}

// ---- the per-layer model ----

const char* to_string(LayerLearner l) { return l == LayerLearner::kMlp ? "mlp" : "boosted-trees"; }

LayerTimeModel::LayerTimeModel(LayerLearner learner, uint64_t seed) : learner_(learner), seed_(seed) {}

namespace {
// One feature row per timed layer.
Eigen::MatrixXd timing_features(const std::vector<io::LayerTiming>& timings) {
  Eigen::MatrixXd X(static_cast<Eigen::Index>(timings.size()), 9);
  for (size_t i = 0; i < timings.size(); ++i)
    X.row(static_cast<Eigen::Index>(i)) = layer_features(layer_of(timings[i]), timings[i].batch);
  return X;
}
}  // namespace

void LayerTimeModel::fit(const std::vector<io::LayerTiming>& timings) {
  if (timings.size() < 2) throw InputError("the per-layer model needs at least 2 layer timings");
  const Eigen::MatrixXd X = timing_features(timings);
  Eigen::VectorXd y(X.rows());
  for (size_t i = 0; i < timings.size(); ++i) y(static_cast<Eigen::Index>(i)) = std::log(timings[i].time_s);
  if (learner_ == LayerLearner::kMlp) {
    MlpParams p;
    p.seed = seed_;
    mlp_ = std::make_unique<MlpRegressor>(p);
    mlp_->fit(X, y);
  } else {
    numerics::BoostedTreesParams p;
    p.seed = seed_;
    trees_ = std::make_unique<numerics::BoostedTrees>(p);
    trees_->fit(X, y);
  }
}

Eigen::VectorXd LayerTimeModel::predict_rows(const Eigen::MatrixXd& X) const {
  return (mlp_ ? mlp_->predict(X) : trees_->predict(X)).array().exp();
}

double LayerTimeModel::predict(const structure::Layer& l, double batch) const { return predict_rows(layer_features(l, batch))(0); }

Eigen::VectorXd LayerTimeModel::predict(const std::vector<io::LayerTiming>& timings) const {
  return predict_rows(timing_features(timings));
}

double LayerTimeModel::step_time(const structure::LayerGraph& g, double batch) const {
  // All layers in one call: a tree ensemble pays per call, not per row.
  Eigen::MatrixXd X(static_cast<Eigen::Index>(g.layers.size()), 9);
  for (size_t i = 0; i < g.layers.size(); ++i) X.row(static_cast<Eigen::Index>(i)) = layer_features(g.layers[i], batch);
  return predict_rows(X).sum();
}

}  // namespace trainplan::models
