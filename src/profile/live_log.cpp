#include "profile/live_log.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/error.h"
#include "profile/launcher.h"

namespace trainplan::profile {

std::string live_log_path(const std::string& store_path) { return store_path + ".live"; }

LiveLog::LiveLog(const std::string& path) : path_(path) {
  // What is there is truncated: only a live log, never another file under its
  // name (a store called X.live, a user's notes), which a live log starts
  // with a JSON line and nothing else does.
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    if (!std::filesystem::is_regular_file(path, ec))
      throw InputError(path, 0, "", "is where this store's live log goes, and is not a file: move it away");
    std::ifstream in(path, std::ios::binary);
    const int first = in.get();
    if (first != std::char_traits<char>::eof() && first != '{')
      throw InputError(path, 0, "",
                       "is where this store's live log goes, and holds something else (it does not start with a "
                       "JSON line), which starting the log would erase: move it away, or give another --store");
  }
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);  // close-on-exec: no trial inherits it
  if (fd_ < 0) throw InputError(path, 0, "", std::string("cannot write the live log: ") + std::strerror(errno));
}

LiveLog::~LiveLog() {
  if (fd_ >= 0) close(fd_);
}

void LiveLog::write_line(const std::string& line) {
  // A line an earlier failure cut short is ended first: a follower reads it
  // as one garbled line (a warning), and this one whole, not joined to it.
  // (Cutting the part away again would shrink the file under a follower that
  // has read it, which it takes for a new run.)
  const std::string text = (line_cut_ ? "\n" : "") + line + '\n';
  size_t done = 0;
  int err = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n > 0) {
      done += size_t(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
  }
  if (done > 0) line_cut_ = text[done - 1] != '\n';
  if (done == text.size()) return;
  // The store is what counts and is not touched by this; a follower of the
  // log misses lines, which is said once, not at every line.
  if (!write_failed_)
    std::fprintf(stderr,
                 "warning: %s: the live log could not be written (%s): trainplan watch --store misses lines from "
                 "here; the store is not affected\n",
                 path_.c_str(), std::strerror(err));
  write_failed_ = true;
}

void LiveLog::trial_start(const TrialKey& key) {
  partial_.clear();
  trial_bytes_ = 0;
  write_line(nlohmann::json{{"event", "trial_start"}, {"batch", key.batch}, {"workers", key.workers},
                            {"epochs", key.epochs}}
                 .dump());
}

void LiveLog::output(const char* data, size_t n, bool labelled) {
  labelled_ = labelled;
  for (size_t i = 0; i < n; ++i) {
    if (data[i] != '\n') {
      // A line past 1 MiB is no protocol line; its head is enough to show it was there.
      if (partial_.size() < (size_t(1) << 20)) partial_.push_back(data[i]);
      continue;
    }
    std::string line;
    line.swap(partial_);
    std::optional<std::string> text = labelled ? rank0_line(line) : std::optional<std::string>(std::move(line));
    // The protocol's lines only (a trainer's chatter would grow the file and,
    // flushed line by line, slow the trainer), and at most kMostTrialBytes a
    // trial, as the store keeps at most as much.
    if (!text || text->find('{') == std::string::npos) continue;
    if (trial_bytes_ + text->size() > kMostTrialBytes) continue;
    trial_bytes_ += text->size() + 1;
    write_line(*text);
  }
}

void LiveLog::trial_end(const std::string& status) {
  if (!partial_.empty()) output("\n", 1, labelled_);  // a last line without its newline
  write_line(nlohmann::json{{"event", "trial_end"}, {"status", status}}.dump());
}

void LiveLog::profile_done(bool interrupted) {
  write_line(nlohmann::json{{"event", "profile_done"}, {"interrupted", interrupted}}.dump());
}

}  // namespace trainplan::profile
