// A file-size limit for the life of the object, as a full disk would stand:
// writes past `bytes` fail with EFBIG (SIGXFSZ ignored meanwhile) rather than
// kill the test. The limit and the signal's handling before are restored.
#pragma once
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

namespace tptest {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    EXPECT_EQ(getrlimit(RLIMIT_FSIZE, &was_), 0);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limited = was_;
    limited.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &was_);
    signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit was_{};
  sighandler_t old_handler_ = SIG_DFL;
};

}  // namespace tptest
