// The collectives' growth with their size, measured from a grid's
// communication columns: a grid whose ring steps follow a power law gives it
// back; rows that measured nothing, or a single size, give none.
#include <gtest/gtest.h>

#include <cmath>

#include "models/llm_time.h"
#include "scoring/collective_law.h"

using namespace trainplan;

namespace {

io::LlmConfigRow row(int tp, int dp, int micro_batch) {
  io::LlmConfigRow r;
  r.spec.layers = 4, r.spec.hidden = 128, r.spec.heads = 4, r.spec.seq = 64, r.spec.vocab = 256;
  r.layout.tp = tp, r.layout.dp = dp, r.layout.micro_batch = micro_batch, r.layout.global_batch = 16;
  r.layout.precision = structure::Precision::kFp32;
  r.line = 2;
  return r;
}

// 0.7 ms per ring step of 64 KiB, growing as the 0.4th power of its bytes.
double step_seconds(double bytes) { return 7e-4 * std::pow(bytes / 65536, 0.4); }

}  // namespace

TEST(CollectiveLaw, RecoversThePowerLawOfAGridsSteps) {
  std::vector<io::LlmConfigRow> rows;
  for (int mb : {1, 2, 4, 8}) {
    auto r = row(2, 1, mb);
    const auto c = models::llm_collectives(r.spec, r.layout);
    // 4 layers x 4 all-reduces x 16 / mb micro-batches, each 2 steps of half its buffer.
    EXPECT_EQ(c.tp_count, 16.0 * 16 / mb);
    EXPECT_EQ(c.tp_bytes, 64.0 * mb * 128 * 4);
    r.tp_comm_s = c.tp_count * 2 * step_seconds(c.tp_bytes / 2);
    rows.push_back(r);
  }
  auto d = row(1, 2, 4);
  const auto c = models::llm_collectives(d.spec, d.layout);
  EXPECT_GT(c.dp_bytes, 4 * 4 * 12 * 128.0 * 128);  // at least the layers' fp32 gradients
  d.dp_comm_s = 2 * step_seconds(c.dp_bytes / 2);
  rows.push_back(d);
  rows.push_back(row(2, 1, 8));  // no column: nothing measured
  auto one = row(1, 1, 4);       // no group: nothing to measure
  one.tp_comm_s = 0, one.dp_comm_s = 0;
  rows.push_back(one);

  auto law = scoring::measure_collective_law(rows);
  ASSERT_EQ(law.steps.size(), 5u);
  EXPECT_STREQ(law.steps.back().group, "dp");
  ASSERT_TRUE(law.fitted);
  EXPECT_NEAR(law.exponent, 0.4, 1e-9);
  EXPECT_NEAR(law.seconds_at_64kib, 7e-4, 1e-12);

  // One size: no law.
  rows.resize(1);
  law = scoring::measure_collective_law(rows);
  EXPECT_EQ(law.steps.size(), 1u);
  EXPECT_FALSE(law.fitted);
}

// What the model counts: full recomputation redoes the forward's two
// all-reduces; sequence parallelism's collectives and the distributed
// optimizer's reduce-scatter are not all-reduces, so none are counted.
TEST(CollectiveLaw, CountsTheAllReducesTheModelPrices) {
  auto r = row(2, 2, 2);
  auto base = models::llm_collectives(r.spec, r.layout);
  EXPECT_EQ(base.tp_count, 4.0 * 4 * (16 / (2 * 2)));
  EXPECT_GT(base.dp_bytes, 0);
  r.layout.recompute = structure::Recompute::kFull;
  EXPECT_EQ(models::llm_collectives(r.spec, r.layout).tp_count, 1.5 * base.tp_count);
  r.layout.recompute = structure::Recompute::kNone;
  r.layout.sequence_parallel = true;
  EXPECT_EQ(models::llm_collectives(r.spec, r.layout).tp_count, 0);
  r.layout.sequence_parallel = false;
  r.layout.distributed_optimizer = true;
  EXPECT_EQ(models::llm_collectives(r.spec, r.layout).dp_bytes, 0);
  // fp16 gradients are half the bytes of fp32 ones.
  auto h = row(1, 2, 2);
  const double fp32 = models::llm_collectives(h.spec, h.layout).dp_bytes;
  h.layout.precision = structure::Precision::kFp16;
  EXPECT_EQ(models::llm_collectives(h.spec, h.layout).dp_bytes, fp32 / 2);
}
