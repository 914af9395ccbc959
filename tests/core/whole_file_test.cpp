// write_whole_file: a write that fails at the flush (here a file-size limit,
// as a full disk would) leaves the old file as it was and no temporary file.
#include "core/whole_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <string>

#include "core/error.h"
#include "test_util.h"

using trainplan::write_whole_file;

TEST(WholeFile, WritesAndReplaces) {
  const auto dir = tptest::temp_dir("whole_file");
  const std::string path = (dir / "out.csv").string();
  write_whole_file(path, "first\n");
  write_whole_file(path, "second\n");
  EXPECT_EQ(tptest::read_file(path), "second\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(WholeFile, AFailedWriteLeavesTheOldFile) {
  const auto dir = tptest::temp_dir("whole_file_full");
  const std::string path = (dir / "out.csv").string();
  write_whole_file(path, "kept\n");
  rlimit was{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &was), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead
  rlimit small = was;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    write_whole_file(path, std::string(1 << 20, 'x'));
  } catch (const trainplan::InputError& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("left as it was"), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &was);
  signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(tptest::read_file(path), "kept\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}
