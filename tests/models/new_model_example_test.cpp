// The smallest complete time model, and the one line that makes it a
// registered model that `evaluate`, `fit`, `plan` and "auto" can use
// (docs/DEVELOPING.md quotes this file). In src/models/ the registrar sits
// at namespace scope in the model's .cpp; here it runs inside the test, so
// that the model exists only in this test's process.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/error.h"
#include "models/config_pooled_time_model.h"
#include "models/registry.h"
#include "scoring/evaluate.h"
#include "scoring/model_choice.h"

namespace {

using namespace trainplan;

// Parameters: a struct given at construction, defaults documented.
struct ConstantStepParams {
  double min_step_s = 1e-6;  // the smallest step time a fit may report
};

// Epoch time = (dataset / global batch) x one step time, the mean step time
// of the samples: perfect scaling in workers, no batch effect.
class ConstantStepModel : public models::TimeModel {
 public:
  explicit ConstantStepModel(ConstantStepParams p = {}) : p_(p) {}
  std::string name() const override { return "constant-step"; }
  void fit(const SampleSet& s) override {
    if (s.empty()) throw InputError(s.source, 0, "", "constant-step: no samples to fit");
    n_ = s.dataset_size ? double(*s.dataset_size) : 1.0;
    double sum = 0;
    for (const auto& x : s.samples) sum += x.epoch_time_s * x.batch * x.workers / n_;
    step_s_ = std::max(p_.min_step_s, sum / double(s.size()));
  }
  double predict(double batch, int workers, int) const override { return n_ / (batch * workers) * step_s_; }
  // Fitted state, for code and tests to inspect.
  double step_s() const { return step_s_; }

 private:
  ConstantStepParams p_;
  double n_ = 1, step_s_ = 0;
};

SampleSet samples_with_step(double step_s) {
  SampleSet s;
  s.dataset_size = 1200;
  for (int r : {1, 2, 4})
    for (double b : {16.0, 32.0, 64.0}) {
      Sample x;
      x.batch = b;
      x.workers = r;
      x.nodes = 1;
      x.epochs = 1;
      x.epoch_time_s = 1200.0 / (b * r) * step_s;
      s.samples.push_back(x);
    }
  return s;
}

TEST(NewModelExample, OneRegistrationLineMakesItAModelEveryVerbCanUse) {
  // The registration line. AutoChoice::kExcluded keeps it out of "auto";
  // leave the argument out to have "auto" cross-validate it.
  static models::TimeModelRegistrar reg(
      "constant-step", "epoch time from the samples' mean step time (an example)",
      [] { return std::make_unique<ConstantStepModel>(); }, models::AutoChoice::kExcluded);

  const SampleSet s = samples_with_step(0.25);
  auto made = models::ModelRegistry::instance().make_time("constant-step");
  made->fit(s);
  // The registry hands every time model one point per configuration
  // (models/config_pooled_time_model.h); the fitted model is its inner().
  const auto& fitted = dynamic_cast<const models::ConfigPooledTimeModel&>(*made).inner();
  EXPECT_DOUBLE_EQ(dynamic_cast<const ConstantStepModel&>(fitted).step_s(), 0.25);
  EXPECT_DOUBLE_EQ(made->predict(48, 5, 2), 1200.0 / (48 * 5) * 0.25);

  // Scored like every registered model: exact data, so zero error.
  scoring::EvalData data;
  data.name = "example";
  data.samples = s;
  auto score = scoring::evaluate_model(models::ModelRegistry::instance().get("constant-step"), data, {});
  ASSERT_TRUE(score.time.cv_mre.has_value());
  EXPECT_NEAR(*score.time.cv_mre, 0.0, 1e-12);

  // Excluded from "auto": the choice names another model.
  auto choice = scoring::choose_models("auto", "auto", s);
  EXPECT_NE(choice.time_model, "constant-step");
}

}  // namespace
