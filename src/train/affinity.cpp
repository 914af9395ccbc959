#include "train/affinity.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace trainplan::train {

HelpersOnEveryCpu::HelpersOnEveryCpu() {
  if (const char* mode = std::getenv("TRAINPLAN_GLOO_HELPERS"); mode && std::string(mode) == "pinned") return;
  if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
  cpu_set_t all;
  CPU_ZERO(&all);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < online && c < CPU_SETSIZE; ++c) CPU_SET(int(c), &all);
  if (CPU_EQUAL(&all, &saved_)) return;
  widened_ = sched_setaffinity(0, sizeof all, &all) == 0;  // a cpuset may refuse: best effort
}

HelpersOnEveryCpu::~HelpersOnEveryCpu() {
  if (widened_) sched_setaffinity(0, sizeof saved_, &saved_);
}

namespace {

std::string cpus_allowed_list(const std::filesystem::path& status) {
  std::ifstream in(status);
  const std::string key = "Cpus_allowed_list:";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      std::string v = line.substr(key.size());
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "";
}

}  // namespace

ThreadCpus thread_cpus() {
  namespace fs = std::filesystem;
  ThreadCpus out;
  const std::string self = std::to_string(long(syscall(SYS_gettid)));
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/self/task", ec)) {
    std::string cpus = cpus_allowed_list(task.path() / "status");
    if (cpus.empty()) continue;
    if (task.path().filename() == self) {
      out.this_thread = cpus;
    } else if (std::find(out.other_threads.begin(), out.other_threads.end(), cpus) == out.other_threads.end()) {
      out.other_threads.push_back(cpus);
    }
  }
  std::sort(out.other_threads.begin(), out.other_threads.end());
  return out;
}

}  // namespace trainplan::train
