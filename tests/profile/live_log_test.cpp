// The live log: lines split across reads are joined, a launcher's rank labels
// keep rank 0's lines only, and a last line without its newline is kept.
#include "profile/live_log.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "file_size_limit.h"
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
    const std::string rest = "och\",\"epoch\":1}\n1: {\"rank\":1}\n  0: {\"tail\":1}";
    log.output(rest.data(), rest.size(), true);
    log.trial_end("ok");
    log.trial_start({64, 1, 0});
    const std::string plain = "plain chatter\n{\"plain\":1}\n";
    log.output(plain.data(), plain.size(), false);
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
  EXPECT_EQ(ls[2], "{\"tail\":1}");  // rank 0's last line, without its newline
  EXPECT_EQ(nlohmann::json::parse(ls[3])["status"], "ok");
  EXPECT_EQ(ls[5], "{\"plain\":1}");  // a line with no '{' is no protocol line, and is not copied
  EXPECT_EQ(nlohmann::json::parse(ls[6])["status"], "cancelled");
  EXPECT_EQ(nlohmann::json::parse(ls[7])["interrupted"], true);
}

// A trainer that prints without end: the log keeps at most 16 MiB of a
// trial's lines, and the next trial starts afresh.
TEST(LiveLog, KeepsAtMostSixteenMebibytesOfATrial) {
  auto dir = tptest::temp_dir("livelog_cap");
  const auto path = live_log_path((dir / "s.db").string());
  const std::string line = "{\"pad\":\"" + std::string(1000, 'x') + "\"}\n";
  {
    LiveLog log(path);
    log.trial_start({32, 1, 1});
    for (int i = 0; i < 20000; ++i) log.output(line.data(), line.size(), false);  // 20 MB
    log.trial_end("ok");
    log.trial_start({64, 1, 1});
    log.output(line.data(), line.size(), false);
    log.trial_end("ok");
  }
  const auto size = std::filesystem::file_size(path);
  EXPECT_LE(size, (size_t(16) << 20) + 4 * line.size());
  EXPECT_GE(size, (size_t(16) << 20) - 2 * line.size());
  const auto ls = tptest::lines(tptest::read_file(path));
  EXPECT_EQ(ls[ls.size() - 2], line.substr(0, line.size() - 1));  // the second trial's line is there
}

TEST(LiveLog, AnUnwritablePathIsAnInputError) {
  EXPECT_THROW(LiveLog("/nonexistent-dir/s.db.live"), trainplan::InputError);
}

// A line that does not fit (a full disk, here a file-size limit) is lost:
// the part written stands alone, ended before the next line, which is read
// whole rather than joined to it.
TEST(LiveLog, ALineThatDoesNotFitLeavesNoPartBehind) {
  const auto dir = tptest::temp_dir("live_log_full");
  const std::string path = (dir / "s.db.live").string();
  const std::string big = "{\"x\":\"" + std::string(6000, 'y') + "\"}";
  {
    LiveLog log(path);
    {
      const tptest::FileSizeLimit small(4096);
      log.trial_start({16, 1, 1});
      const std::string big_line = big + "\n";
      log.output(big_line.data(), big_line.size(), false);
    }  // room again
    log.trial_end("ok");
  }
  const auto ls = tptest::lines(tptest::read_file(path));
  ASSERT_EQ(ls.size(), 3u) << tptest::read_file(path).substr(0, 200);
  EXPECT_EQ(nlohmann::json::parse(ls[0]).value("event", ""), "trial_start");
  EXPECT_EQ(ls[1], big.substr(0, ls[1].size()));  // the part that fitted
  EXPECT_LT(ls[1].size(), big.size());
  EXPECT_EQ(nlohmann::json::parse(ls[2]).value("event", ""), "trial_end");
}
