// Progress lines are for the reader, not the run: a stream that cannot take
// them (a full disk) loses them, and nothing is thrown into the profile.
#include "profile/progress.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace trainplan::profile;

TEST(Progress, AStreamThatCannotBeWrittenLosesTheLinesAndNothingElse) {
  std::FILE* full = std::fopen("/dev/full", "w");
  if (!full) GTEST_SKIP() << "no /dev/full here";
  // Unbuffered, as stderr is: each write fails where it is made.
  std::setvbuf(full, nullptr, _IONBF, 0);
  for (const bool tty : {false, true}) {
    Progress p(full, tty);
    TrialRecord r;
    r.key = {16, 1, 1};
    r.status = TrialStatus::kOk;
    r.epoch_time_s = 1.5;
    EXPECT_NO_THROW({
      p.start(1, 2, r.key, 0, 10.0);
      p.tick(0.5, 0.5);
      p.finish(r, 1.0, 5.0);
      p.note("a note");
      p.done();
    });
  }
  std::fclose(full);
}

// Several ranks' stderr interleave: the line that says why is the last that reads as an error,
// not a peer's ordinary log line after it.
TEST(Progress, TheStderrLineShownIsTheErrorNotAPeersLastLog) {
  using trainplan::profile::stderr_last_line;
  EXPECT_EQ(stderr_last_line("rank 1/2 b=64 starting\nRuntimeError: CUDA out of memory\nrank 0/2 b=64 e=1 port=1\n\n"),
            "RuntimeError: CUDA out of memory");
  EXPECT_EQ(stderr_last_line("loading data\n  step 3 of 10  \n"), "step 3 of 10");  // no error: the last line
  EXPECT_EQ(stderr_last_line(" \n\n"), "");
  // A metric named like an error, or a count of failures, is a log line; the last line says why.
  EXPECT_EQ(stderr_last_line("INFO epoch 1 val_error=0.12 (0 failed)\nconfig check: batch 8 is larger than the data\n"),
            "config check: batch 8 is larger than the data");
  EXPECT_EQ(stderr_last_line(std::string(300, 'x') + " error\n").size(), 203u);  // cut at 200, with "..."
}
