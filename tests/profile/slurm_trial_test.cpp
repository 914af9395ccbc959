// One real trial through Slurm (`--launcher slurm`: srun, ranks from
// $SLURM_PROCID). Runs only when TRAINPLAN_SLURM_TEST=1, which CI sets after
// scripts/slurm-up.sh has started a single-node Slurm; skips otherwise.
#include <gtest/gtest.h>

#include <cstdlib>

#include "profile/sample_store.h"
#include "test_util.h"

using namespace trainplan::profile;

namespace {

// Each rank writes a marker file; rank 0 also prints one epoch line.
const char* kRankTrainer = R"sh(
b=$1; r=$2; k=$3; dir=$4
touch "$dir/rank$k"
[ "$k" = 0 ] || exit 0
echo "{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":0.5,\"metric\":0.25,\"metric_name\":\"accuracy\"}"
echo '{"event":"done"}'
)sh";

bool slurm_enabled() {
  const char* v = std::getenv("TRAINPLAN_SLURM_TEST");
  return v && std::string(v) == "1";
}

}  // namespace

TEST(SlurmTrial, ThreeRanksThroughSrun) {
  if (!slurm_enabled())
    GTEST_SKIP() << "set TRAINPLAN_SLURM_TEST=1 after scripts/slurm-up.sh to run a trial through a real Slurm";
  auto dir = tptest::temp_dir("slurm");
  std::string fake = tptest::write_file(dir / "fake.sh", kRankTrainer);
  std::string store = (dir / "s.db").string();
  auto r = tptest::run_cli("profile --launcher slurm --cmd 'sh " + fake + " {batch} {workers} {rank} " + dir.string() +
                           "' --store " + store + " --batches 16 --workers 3 --epochs 1 --trial-timeout 60");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "rank0"));
  EXPECT_TRUE(std::filesystem::exists(dir / "rank1"));  // $SLURM_PROCID reached every task
  EXPECT_TRUE(std::filesystem::exists(dir / "rank2"));  // more ranks than a 2-core node has cores
  auto rec = SampleStore(store).find({16, 3, 1});
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->status, TrialStatus::kOk) << rec->reason << "\n" << rec->stderr_tail;
  EXPECT_DOUBLE_EQ(rec->epoch_time_s.value_or(0), 0.5);
  EXPECT_NE(rec->command.find("srun --ntasks=3"), std::string::npos) << rec->command;
}

TEST(SlurmTrial, AFailingTaskIsRecorded) {
  if (!slurm_enabled())
    GTEST_SKIP() << "set TRAINPLAN_SLURM_TEST=1 after scripts/slurm-up.sh to run a trial through a real Slurm";
  auto dir = tptest::temp_dir("slurm");
  std::string store = (dir / "s.db").string();
  auto r = tptest::run_cli("profile --launcher slurm --cmd 'sh -c \"exit {rank}\"' --store " + store +
                           " --batches 16 --workers 2 --epochs 1 --trial-timeout 60");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto rec = SampleStore(store).find({16, 2, 1});
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->status, TrialStatus::kFailed) << rec->reason;
  // srun's messages name the task that failed, not srun's own exit.
  EXPECT_NE(rec->reason.find("rank 1 exited with status 1"), std::string::npos) << rec->reason;
}

// Another rank's output counts against no cap of rank 0's, and a {rank} in
// quotes is the rank, as with the local launcher.
TEST(SlurmTrial, OtherRanksOutputAndQuotedRanks) {
  if (!slurm_enabled())
    GTEST_SKIP() << "set TRAINPLAN_SLURM_TEST=1 after scripts/slurm-up.sh to run a trial through a real Slurm";
  auto dir = tptest::temp_dir("slurm");
  const std::string noisy = tptest::write_file(dir / "noisy.sh", R"sh(
if [ "$1" = 0 ]; then
  echo '{"event":"epoch","epoch":1,"epoch_time_s":0.5}'
else
  head -c 20000000 /dev/zero | tr '\0' '{' | fold -w 1000
fi
)sh");
  std::string store = (dir / "s.db").string();
  auto r = tptest::run_cli("profile --launcher slurm --cmd 'bash " + noisy + " \"{rank}\" {batch} {workers}' --store " +
                           store + " --batches 16 --workers 2 --epochs 1 --trial-timeout 120");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = SampleStore(store).find({16, 2, 1});
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->status, TrialStatus::kOk) << rec->reason;
}
