#include "profile/live_log.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "profile/launcher.h"

namespace trainplan::profile {

std::string live_log_path(const std::string& store_path) { return store_path + ".live"; }

LiveLog::LiveLog(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "we");  // close-on-exec: no trial inherits it
  if (!f_) throw InputError(path, 0, "", std::string("cannot write the live log: ") + std::strerror(errno));
}

LiveLog::~LiveLog() {
  if (f_) std::fclose(f_);
}

void LiveLog::write_line(const std::string& line) {
  std::fputs(line.c_str(), f_);
  std::fputc('\n', f_);
  std::fflush(f_);
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
