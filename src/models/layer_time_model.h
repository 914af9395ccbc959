// Justus et al. 2018's per-layer time model (docs/MODELS.md): a regressor
// trained on the measured forward + backward time of single layers, and a
// network's step time as the sum over its layers, T_b = sum_l t(l, b).
//
// Features of a layer at batch b: its kind (conv, linear, pool, activation,
// norm: one-hot) and, in place of the raw hyperparameters, what they imply
// (log2 b, log10 of b * flops, of b * activation bytes, of the weights) from
// the layer graph's cost rules (layer_graph.h), so that a timed layer and a
// layer of a network in network_zoo.h are described alike. Target: log time.
//
// Learners: an MLP (Justus: faithful; two hidden ReLU layers, Adam on the
// mean squared error of log time, inputs standardised) or gradient-boosted
// trees (boosted_trees.h).
#pragma once
#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "io/layer_timing_csv.h"
#include "numerics/boosted_trees.h"
#include "structure/layer_graph.h"

namespace trainplan::models {

// The layer graph entry of a timed layer (its costs), from its shape.
structure::Layer layer_of(const io::LayerTiming& t);

// Feature row of layer `l` at per-worker batch `b`.
Eigen::RowVectorXd layer_features(const structure::Layer& l, double batch);
// True when the learner saw the layer's kind (the rest are extrapolations).
bool timed_kind(structure::LayerKind k);

struct MlpParams {
  int hidden = 64;       // units in each of the two hidden layers
  int epochs = 3000;     // full-batch Adam steps
  double learning_rate = 3e-3;
  double l2 = 1e-4;
  uint64_t seed = 1;
};

// A small multilayer perceptron for regression (Eigen, no framework).
class MlpRegressor {
 public:
  explicit MlpRegressor(MlpParams p = {}) : p_(p) {}
  void fit(const Eigen::MatrixXd& X, const Eigen::VectorXd& y);
  Eigen::VectorXd predict(const Eigen::MatrixXd& X) const;
  double training_mse() const { return mse_; }

 private:
  MlpParams p_;
  Eigen::RowVectorXd mu_, sd_;
  double y_mu_ = 0, y_sd_ = 1, mse_ = 0;
  Eigen::MatrixXd W1_, W2_, W3_;
  Eigen::RowVectorXd b1_, b2_;
  double b3_ = 0;
};

enum class LayerLearner { kMlp, kBoostedTrees };
const char* to_string(LayerLearner l);

class LayerTimeModel {
 public:
  explicit LayerTimeModel(LayerLearner learner = LayerLearner::kMlp, uint64_t seed = 1);
  // Throws InputError with no timings.
  void fit(const std::vector<io::LayerTiming>& timings);
  // Seconds of forward + backward of layer `l` at batch `b`.
  double predict(const structure::Layer& l, double batch) const;
  // The same for each timed layer (at its own batch), in one call.
  Eigen::VectorXd predict(const std::vector<io::LayerTiming>& timings) const;
  // The network's step at batch b: the sum over its layers.
  double step_time(const structure::LayerGraph& g, double batch) const;

 private:
  Eigen::VectorXd predict_rows(const Eigen::MatrixXd& X) const;  // seconds, from feature rows
  LayerLearner learner_;
  uint64_t seed_;
  std::unique_ptr<MlpRegressor> mlp_;
  std::unique_ptr<numerics::BoostedTrees> trees_;
};

}  // namespace trainplan::models
