// Leave-one-configuration-out scoring of the transformer models on a measured
// grid: on a grid the model itself generated (known efficiency fractions and
// memory overhead), calibration recovers the truth, so the held-out errors
// vanish; the datasheet's errors do not.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "io/hardware_file.h"
#include "scoring/llm_grid_eval.h"

using namespace trainplan;

namespace {

std::vector<io::LlmConfigRow> synthetic_grid(const structure::HardwareProfile& hw, const models::LlmTimeParams& truth,
                                             double overhead_bytes) {
  structure::TransformerSpec spec;
  spec.layers = 4, spec.hidden = 128, spec.heads = 4, spec.seq = 64, spec.vocab = 256;
  spec.tied_embeddings = false;
  models::LlmTimeModel tm(hw, truth);
  models::LlmMemoryModel mm({overhead_bytes});
  std::vector<io::LlmConfigRow> rows;
  long line = 2;
  for (auto [tp, pp, dp] : {std::tuple{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {1, 1, 2}})
    for (int mb : {1, 2, 4, 8}) {
      io::LlmConfigRow r;
      r.line = line++;
      r.spec = spec;
      r.layout.tp = tp, r.layout.pp = pp, r.layout.dp = dp, r.layout.micro_batch = mb, r.layout.global_batch = 16;
      r.layout.precision = structure::Precision::kFp32;
      r.iteration_time_s = tm.predict(r.spec, r.layout).iteration;
      r.memory_gib = mm.predict(r.spec, r.layout).total() / (1024.0 * 1024 * 1024);
      rows.push_back(r);
    }
  return rows;
}

}  // namespace

TEST(LlmGridEval, RecoversAGridTheModelGenerated) {
  auto hw = io::resolve_hardware("a100-80gb");
  models::LlmTimeParams truth;
  truth.gemm.peak_fraction = 0.3, truth.link_fraction = 0.4, truth.gemm.memory_fraction = 0.5;
  auto rows = synthetic_grid(hw, truth, 5e6);
  // Without the prior on the fractions (LlmTimeParams::fraction_prior_log_sd)
  // the fit recovers the truth; with it, within a per cent.
  models::LlmTimeParams no_prior;
  no_prior.fraction_prior_log_sd = 0;
  auto e = scoring::evaluate_llm_grid(rows, hw, {no_prior});
  EXPECT_LT(scoring::evaluate_llm_grid(rows, hw).time_calibrated_mape, 0.01);
  ASSERT_EQ(e.rows.size(), rows.size());
  EXPECT_LT(e.time_calibrated_mape, 1e-3);
  EXPECT_LT(e.memory_calibrated_mape, 1e-6);
  EXPECT_EQ(e.memory_rows, int(rows.size()));
  // The defaults (0.74, 0.8, 0.7) are not the truth, so the datasheet misses.
  EXPECT_GT(e.time_datasheet_mape, 0.05);
  EXPECT_NEAR(e.fitted_time.gemm.peak_fraction, 0.3, 1e-3);
  EXPECT_NEAR(e.fitted_memory.overhead_bytes, 5e6, 1);
}

// The intervals' score: with every row but one exactly the model's, the
// intervals are about as narrow as the one odd row allows; the odd row itself
// falls outside its interval (the others' errors are ~0) and every other row
// inside its own (whose errors include the odd row's).
TEST(LlmGridEval, ScoresTheIntervalsOfEachRowLeftOut) {
  auto hw = io::resolve_hardware("a100-80gb");
  models::LlmTimeParams truth;
  truth.gemm.peak_fraction = 0.3, truth.link_fraction = 0.4, truth.gemm.memory_fraction = 0.5;
  auto rows = synthetic_grid(hw, truth, 5e6);
  *rows[5].iteration_time_s *= 1.25;
  auto e = scoring::evaluate_llm_grid(rows, hw, {models::LlmTimeParams{}}, {}, 0.95);
  EXPECT_DOUBLE_EQ(e.coverage, 0.95);
  EXPECT_EQ(e.time_covered, int(rows.size()) - 1);
  EXPECT_EQ(e.memory_covered, int(rows.size()));
  EXPECT_GT(e.time_mean_half_width, 0.0);
  EXPECT_LT(e.time_mean_half_width, 0.4);
  // Without a coverage nothing is scored.
  auto none = scoring::evaluate_llm_grid(rows, hw);
  EXPECT_EQ(none.time_covered, 0);
  EXPECT_DOUBLE_EQ(none.coverage, 0.0);
}

TEST(LlmGridEval, NeedsTwoRowsWithTimes) {
  auto hw = io::resolve_hardware("a100-80gb");
  auto rows = synthetic_grid(hw, {}, 0);
  EXPECT_THROW(scoring::evaluate_llm_grid({rows[0]}, hw), InputError);
  rows[1].iteration_time_s.reset();
  EXPECT_THROW(scoring::evaluate_llm_grid(rows, hw), InputError);
}

// Calibrated on k drawn rows: on the model's own grid any 5 rows recover the
// truth, so every other row is predicted; one distorted row raises the error
// of the draws that fit on it, and a grid no larger than k is not scored.
TEST(LlmGridEval, CalibratedOnKDrawnRowsPredictsTheOthers) {
  auto hw = io::resolve_hardware("a100-80gb");
  models::LlmTimeParams truth;
  truth.gemm.peak_fraction = 0.3, truth.link_fraction = 0.4, truth.gemm.memory_fraction = 0.5;
  auto rows = synthetic_grid(hw, truth, 5e6);
  models::LlmTimeParams no_prior;
  no_prior.fraction_prior_log_sd = 0;
  auto s = scoring::score_llm_grid_on_k(rows, hw, {no_prior}, 5, 10);
  EXPECT_EQ(s.k, 5);
  EXPECT_EQ(s.draws, 10);
  EXPECT_EQ(s.predictions, 10 * (int(rows.size()) - 5));
  EXPECT_EQ(s.memory_predictions, s.predictions);
  EXPECT_LT(s.time_mape, 1e-3);
  EXPECT_LT(s.memory_mape, 1e-6);
  *rows[3].iteration_time_s *= 1.5;
  auto distorted = scoring::score_llm_grid_on_k(rows, hw, {models::LlmTimeParams{}}, 5, 10);
  EXPECT_GT(distorted.time_worst, 0.2);
  EXPECT_GE(distorted.time_worst, distorted.time_mape);
  EXPECT_GE(distorted.time_mape, distorted.time_median);
  rows.resize(5);
  EXPECT_EQ(scoring::score_llm_grid_on_k(rows, hw, {models::LlmTimeParams{}}, 5, 10).draws, 0);
}
