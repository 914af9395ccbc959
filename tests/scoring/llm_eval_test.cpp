// Leave-one-model-out scoring of published transformer runs: a model is its
// architecture, whatever names a table gives it.
#include <gtest/gtest.h>

#include <cmath>

#include "io/hardware_file.h"
#include "scoring/llm_eval.h"

using namespace trainplan;

namespace {

io::PublishedIteration run(const std::string& name, int layers, int hidden, double scale,
                           const models::LlmTimeModel& truth) {
  io::PublishedIteration r;
  r.run.model = name;
  r.run.spec.layers = layers, r.run.spec.hidden = hidden, r.run.spec.heads = 8;
  r.run.spec.seq = 256, r.run.spec.vocab = 1024;
  auto& l = r.run.layout;
  l.tp = 2, l.pp = 1, l.dp = 4, l.micro_batch = 2, l.global_batch = 64;
  r.seconds = scale * truth.predict(r.run.spec, r.run.layout).iteration;
  return r;
}

}  // namespace

TEST(LlmLeaveModelOut, OneArchitectureUnderTwoNamesIsLeftOutWhole) {
  const auto hw = io::resolve_hardware("h100");
  models::LlmTimeModel datasheet(hw);
  // "llama-a" and "LLAMA_A" are one architecture, measured 1.5x slower than the
  // datasheet; two other architectures as the datasheet says.
  std::vector<io::PublishedIteration> runs = {run("llama-a", 8, 1024, 1.5, datasheet),
                                              run("LLAMA_A", 8, 1024, 1.5, datasheet),
                                              run("other-b", 12, 2048, 1.0, datasheet),
                                              run("other-c", 16, 1536, 1.0, datasheet)};
  auto s = scoring::score_iterations_leave_model_out(runs, datasheet);
  ASSERT_EQ(s.rows.size(), 4u);
  // Left out, the slow architecture is predicted from the others alone (at the
  // datasheet's pace, a third fast), not from its twin under the other name.
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(s.rows[i].relative_error(), 1 / 1.5 - 1, 0.02) << s.rows[i].model;
}
