// A store that cannot be written mid-run (here a file-size limit, as a full
// disk would): the profile stops at that trial with the store's name and the
// likely cause, and the trials stored before it stay readable.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "profile/profiler.h"
#include "profile/progress.h"
#include "profile/sample_store.h"
#include "file_size_limit.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::profile;

TEST(StoreUnwritable, TheRunStopsAtTheTrialItCannotStore) {
  const auto dir = tptest::temp_dir("store_unwritable");
  tptest::write_file(dir / "train.sh", "echo '{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1,\"metric\":0.5}'");
  const std::string path = (dir / "s.db").string();
  const CommandTemplate tmpl("bash " + (dir / "train.sh").string() + " {batch}");
  ProfileOptions o;
  o.pin = false;
  Progress quiet(stderr, false, true);
  {
    SampleStore store(path);
    EXPECT_EQ(run_profile(tmpl, {{16, 1, 1}}, store, o, quiet).ok, 1);
  }
  SampleStore store(path);
  ProfileSummary sum;
  bool meta_refused = false;
  {
    const tptest::FileSizeLimit none(1);
    sum = run_profile(tmpl, {{32, 1, 1}, {64, 1, 1}}, store, o, quiet);
    try {
      store.set_meta("k", std::string(10000, 'v'));
    } catch (const ExternalError& e) {
      meta_refused = std::string(e.what()).find(path + ": cannot be written") != std::string::npos;
    }
  }
  EXPECT_NE(sum.store_error.find("the trial b=32 r=1 e=1 ran but was not stored"), std::string::npos) << sum.store_error;
  EXPECT_NE(sum.store_error.find(path + ": cannot be written"), std::string::npos) << sum.store_error;
  EXPECT_EQ(sum.ran, 0);  // stopped there: b=64 never ran
  EXPECT_TRUE(meta_refused);
  const auto trials = SampleStore(path).trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].key.batch, 16);
}
