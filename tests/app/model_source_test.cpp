// The fits a ModelSource keeps: conformal wrappers by model and parameters,
// at most a few of each part however many seeds the requests name (a server
// keeps one source per id for as long as the id lives), and the same answer
// from a wrapper fitted again after it was let go.
#include "app/model_source.h"

#include <gtest/gtest.h>

#include "replay/synthetic_store.h"

using namespace trainplan;

TEST(ModelSource, ConformalFitsAreBoundedAndRefitTheSame) {
  replay::SyntheticStoreParams p;
  p.rows = 60;
  p.batches = {32, 64, 128};
  p.max_workers = 4;
  p.max_epochs = 6;
  app::ModelSource source(replay::synthetic_store(p));
  uncertainty::ConformalParams cp;
  cp.seed = 1;
  const auto first = source.conformal_time("allreduce-local", cp);
  const double at = first->predict(64, 2, 3);
  for (uint64_t seed = 2; seed <= 30; ++seed) {
    cp.seed = seed;
    source.conformal_time("allreduce-local", cp);
    EXPECT_LE(source.conformal_models_held(), 8u) << "seed " << seed;
  }
  cp.seed = 1;
  const auto again = source.conformal_time("allreduce-local", cp);
  EXPECT_NE(again.get(), first.get());  // let go, fitted again
  EXPECT_DOUBLE_EQ(again->predict(64, 2, 3), at);
  EXPECT_EQ(source.conformal_time("allreduce-local", cp).get(), again.get());  // kept since
}
