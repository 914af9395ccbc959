// The live log of a profiling run: what the trial now running prints, line by
// line, as it prints it, so that `trainplan watch --store` can forecast the
// trial before it ends (the store only receives a trial once it has ended).
//
// The file is `<store>.live` (live_log_path). It is truncated when a run
// starts and holds, in order, for each trial:
//   {"event":"trial_start","batch":B,"workers":R,"epochs":E}
//   rank 0's stdout lines that hold a '{' (the trial protocol's JSON lines,
//   prefixes removed; at most 16 MiB of them a trial)
//   {"event":"trial_end","status":"ok"|"failed"|"timeout"|"bad-output"|"cancelled"|"not-stored"}
// (written once the store holds the trial; "not-stored": the store could not
// take it, and the run ends)
// and at the end of the run {"event":"profile_done","interrupted":false|true}. Each line is written
// as it comes; a line that cannot be (a full disk) is lost, said once on
// stderr, and the run goes on; the part of it written, if any, is ended by a
// newline before the next line, so that it reads as one garbled line and the
// next line whole. Not thread-safe: one profiling run writes it.
#pragma once
#include <string>

#include "profile/trial.h"

namespace trainplan::profile {

// `<store_path>.live`.
std::string live_log_path(const std::string& store_path);

class LiveLog {
 public:
  // Opens (truncates) `path`; throws InputError naming it when it cannot, or
  // when what is there is not a live log (a folder, a file that does not
  // start with a JSON line: another store, a user's file).
  explicit LiveLog(const std::string& path);
  ~LiveLog();
  LiveLog(const LiveLog&) = delete;
  LiveLog& operator=(const LiveLog&) = delete;

  const std::string& path() const { return path_; }

  void trial_start(const TrialKey& key);
  // A piece of rank 0's stdout (split anywhere). `labelled`: lines carry a
  // launcher's "K: " rank label (srun --label); only rank 0's are kept.
  void output(const char* data, size_t n, bool labelled);
  // `status`: the record's status, or "cancelled".
  void trial_end(const std::string& status);
  void profile_done(bool interrupted);

 private:
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
  bool line_cut_ = false;  // the file ends inside a line a failed write cut short
  std::string partial_;  // the current line's text so far
  bool labelled_ = false;
  static constexpr size_t kMostTrialBytes = size_t(16) << 20;
  size_t trial_bytes_ = 0;  // the trial's lines written so far
  bool write_failed_ = false;  // a line was lost (said once)
};

}  // namespace trainplan::profile
