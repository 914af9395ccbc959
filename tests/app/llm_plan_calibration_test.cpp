// Calibrated transformer planning (app/llm_plan_request.h,
// app/llm_calibration.h): measured iterations synthesised with a slower peak
// fraction and a memory overhead make every configuration slower, the plan
// dearer, and the calibration recovers the factor and the overhead it was
// made with; without measured rows the plan is the datasheet's, unchanged.
#include "app/llm_plan_request.h"

#include <gtest/gtest.h>

#include "app/llm_calibration.h"
#include "app/llm_measured_rows.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "structure/gpu_catalog.h"
#include "structure/transformer.h"

namespace {

using namespace trainplan;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

plan::LlmPlanOptions options() {
  plan::LlmPlanOptions o;
  o.max_gpus = 64;
  o.tokens = 30e9;
  o.global_batch = 512;
  return o;
}

TEST(LlmPlanCalibration, SlowerMeasuredFactorsLengthenThePlanAndAreRecovered) {
  auto hw = *structure::find_builtin_hardware("h100");
  auto spec = *structure::find_transformer("gpt3-1.3b");
  const double datasheet_peak = models::LlmTimeParams{}.gemm.peak_fraction;
  app::LlmPlanMeasured m{io::parse_llm_configs(tptest::llm_measured_csv(hw, 0.6, 3.0), "measured", true), "measured"};

  auto base = app::make_llm_plan(spec, hw, options());
  auto cal = app::make_llm_plan(spec, hw, options(), &m);
  ASSERT_FALSE(base.result.top.empty());
  ASSERT_FALSE(cal.result.top.empty());
  EXPECT_FALSE(base.calibration.has_value());
  ASSERT_TRUE(cal.calibration.has_value());

  const auto& c = *cal.calibration;
  EXPECT_EQ(c.rows, 7);
  EXPECT_EQ(c.memory_rows, 7);
  EXPECT_EQ(c.fitted_factors, 3);
  EXPECT_NEAR(c.time.gemm.peak_fraction / (0.6 * datasheet_peak), 1, 0.05);
  EXPECT_NEAR(c.memory_overhead_bytes / kGiB, 3.0, 0.01);
  EXPECT_LT(c.time_mean_abs_relative_error, 0.01);

  // Every configuration is slower, so the cheapest one costs more and takes longer than the datasheet says.
  EXPECT_GT(cal.result.top.front().gpu_hours, 1.2 * base.result.top.front().gpu_hours);
  models::LlmTimeModel datasheet(hw);
  for (const auto& x : cal.result.top)
    EXPECT_GT(x.iteration_s, 1.2 * datasheet.predict(spec, x.layout).iteration) << plan::describe(x.layout);
  EXPECT_GT(cal.result.top.front().train_s, base.result.top.front().train_s);
  // The calibrated memory model, its overhead included, is what decides what fits.
  models::LlmMemoryModel datasheet_memory;
  for (const auto& x : cal.result.top)
    EXPECT_NEAR((x.memory_bytes - datasheet_memory.predict(spec, x.layout).total()) / kGiB, 3.0, 0.01);

  auto j = app::to_json(cal);
  ASSERT_TRUE(j.contains("calibration")) << j.dump();
  EXPECT_EQ(j["calibration"]["rows"], 7);
  EXPECT_NEAR(j["calibration"]["peak_fraction"].get<double>(), c.time.gemm.peak_fraction, 1e-12);
  EXPECT_NEAR(j["calibration"]["memory_overhead_gib"].get<double>(), 3.0, 0.01);
  EXPECT_FALSE(app::to_json(base).contains("calibration"));
}

// The datasheet's own iterations calibrate to the datasheet: the same plan.
TEST(LlmPlanCalibration, DatasheetRowsLeaveThePlanAsItWas) {
  auto hw = *structure::find_builtin_hardware("h100");
  auto spec = *structure::find_transformer("gpt3-1.3b");
  app::LlmPlanMeasured m{io::parse_llm_configs(tptest::llm_measured_csv(hw, 1.0, 0.0), "measured", true), "measured"};
  auto base = app::make_llm_plan(spec, hw, options());
  auto cal = app::make_llm_plan(spec, hw, options(), &m);
  ASSERT_FALSE(cal.result.top.empty());
  EXPECT_EQ(plan::describe(cal.result.top.front().layout), plan::describe(base.result.top.front().layout));
  EXPECT_NEAR(cal.result.top.front().train_s / base.result.top.front().train_s, 1, 1e-3);
}

}  // namespace
