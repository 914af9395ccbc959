// The live log: lines split across reads are joined, a launcher's rank labels
// keep rank 0's lines only, and a last line without its newline is kept.
#include "profile/live_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace trainplan::profile;

TEST(LiveLog, JoinsPiecesKeepsRankZeroAndFramesEachTrial) {
  auto dir = tptest::temp_dir("livelog");
  const auto path = live_log_path((dir / "s.db").string());
  EXPECT_EQ(path, (dir / "s.db.live").string());
  {
    LiveLog log(path);
    log.trial_start({32, 2, 3});
    const std::string out = "0: {\"event\":\"ep";
    log.output(out.data(), out.size(), true);
    const std::string rest = "och\",\"epoch\":1}\n1: rank one\n  0: tail";
    log.output(rest.data(), rest.size(), true);
    log.trial_end("ok");
    log.trial_start({64, 1, 0});
    log.output("plain\n", 6, false);
    log.trial_end("cancelled");
    log.profile_done(true);
  }
  const auto ls = tptest::lines(tptest::read_file(path));
  ASSERT_EQ(ls.size(), 8u) << tptest::read_file(path);
  auto start = nlohmann::json::parse(ls[0]);
  EXPECT_EQ(start["event"], "trial_start");
  EXPECT_EQ(start["batch"], 32);
  EXPECT_EQ(start["workers"], 2);
  EXPECT_EQ(ls[1], "{\"event\":\"epoch\",\"epoch\":1}");
  EXPECT_EQ(ls[2], "tail");
  EXPECT_EQ(nlohmann::json::parse(ls[3])["status"], "ok");
  EXPECT_EQ(ls[5], "plain");
  EXPECT_EQ(nlohmann::json::parse(ls[6])["status"], "cancelled");
  EXPECT_EQ(nlohmann::json::parse(ls[7])["interrupted"], true);
}

TEST(LiveLog, AnUnwritablePathIsAnInputError) {
  EXPECT_THROW(LiveLog("/nonexistent-dir/s.db.live"), trainplan::InputError);
}
