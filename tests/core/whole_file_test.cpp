// write_whole_file: a write that fails at the flush (here a file-size limit,
// as a full disk would) leaves the old file as it was and no temporary file.
#include "core/whole_file.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/signals_held.h"
#include "test_util.h"

using trainplan::write_whole_file;

namespace {
// The one file in `dir` ("" when there are none or several).
std::string only_file(const std::filesystem::path& dir) {
  std::string name;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) name = e.path().filename().string(), ++n;
  return n == 1 ? name : "";
}
}  // namespace

TEST(WholeFile, WritesAndReplaces) {
  const auto dir = tptest::temp_dir("whole_file");
  const std::string path = (dir / "out.csv").string();
  write_whole_file(path, "first\n");
  write_whole_file(path, "second\n");
  EXPECT_EQ(tptest::read_file(path), "second\n");
  EXPECT_EQ(only_file(dir), "out.csv");  // no temporary file left
}

// A file of the user's named PATH.tmp is not a scratch file to write over; a
// link is written through to the file it names, which keeps its mode.
TEST(WholeFile, LeavesOtherFilesAndWritesThroughALink) {
  const auto dir = tptest::temp_dir("whole_file_link");
  const std::string real = (dir / "real.csv").string(), link = (dir / "link.csv").string();
  tptest::write_file(dir / "link.csv.tmp", "keep\n");
  write_whole_file(real, "old\n");
  std::filesystem::permissions(real, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                         std::filesystem::perms::group_read);
  std::filesystem::create_symlink(real, link);
  write_whole_file(link, "new\n");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(tptest::read_file(real), "new\n");
  EXPECT_EQ(tptest::read_file(dir / "link.csv.tmp"), "keep\n");
  EXPECT_EQ(std::filesystem::status(real).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read);
  // A link to a file not written yet (in a folder that exists) is written through too.
  std::filesystem::create_directory(dir / "sub");
  std::filesystem::create_symlink("sub/later.csv", dir / "ahead.csv");
  write_whole_file((dir / "ahead.csv").string(), "made\n");
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "ahead.csv"));
  EXPECT_EQ(tptest::read_file(dir / "sub" / "later.csv"), "made\n");
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
  } catch (const trainplan::ExternalError& e) {  // the machine's failure (exit 1), not bad input
    threw = true;
    EXPECT_NE(std::string(e.what()).find("left as it was"), std::string::npos) << e.what();
  } catch (...) {
  }
  setrlimit(RLIMIT_FSIZE, &was);
  signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(tptest::read_file(path), "kept\n");
  EXPECT_EQ(only_file(dir), "out.csv");  // no temporary file left
}

// A FIFO (as a device such as /dev/null) cannot be replaced: it is written
// into, and stays a FIFO, its reader getting every byte; a folder is refused.
TEST(WholeFile, AFifoIsWrittenIntoNotReplaced) {
  const auto dir = tptest::temp_dir("whole_file_fifo");
  const std::string fifo = (dir / "pipe").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    got.assign(std::istreambuf_iterator<char>(in), {});
  });
  try {
    write_whole_file(fifo, std::string(100000, 'x') + "end\n");
  } catch (...) {
    std::ofstream(fifo) << "";  // the reader's open returns, so that it can be joined
    reader.join();
    throw;
  }
  reader.join();
  EXPECT_EQ(got.size(), 100004u);
  EXPECT_EQ(got.substr(got.size() - 4), "end\n");
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_EQ(only_file(dir), "pipe");  // no temporary file beside it
  EXPECT_THROW(write_whole_file(dir.string(), "x"), trainplan::InputError);
}

// /dev/fd/N names this process's open descriptor N: written through it (a
// redirected stdout keeps what was printed before, and its offset), never
// opened afresh nor renamed over.
TEST(WholeFile, AnOpenDescriptorIsWrittenThrough) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  write_whole_file("/dev/fd/" + std::to_string(fds[1]), "through the pipe\n");
  ::close(fds[1]);
  char buf[64] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? size_t(n) : 0), "through the pipe\n");
}

namespace {
volatile sig_atomic_t g_seen = 0;
void note_signal(int) { g_seen = 1; }
}  // namespace

// A termination signal that arrives while it is held is delivered when the
// holder goes, not before: what runs under the holder finishes first.
TEST(TerminationSignalsHeld, ASignalWaitsForTheStepToEnd) {
  struct sigaction sa {}, old {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGHUP, &sa, &old), 0);
  g_seen = 0;
  {
    const trainplan::TerminationSignalsHeld held;
    ASSERT_EQ(pthread_kill(pthread_self(), SIGHUP), 0);
    EXPECT_EQ(g_seen, 0);
    {
      const trainplan::TerminationSignalsHeld nested;
    }
    EXPECT_EQ(g_seen, 0);  // an inner holder gone does not let it through
  }
  EXPECT_EQ(g_seen, 1);
  sigaction(SIGHUP, &old, nullptr);
}
