#include "train/affinity.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trainplan::train {

namespace {

// A CPU number of at most six digits below CPU_SETSIZE.
std::optional<int> cpu_number(const std::string& s) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int v = std::stoi(s);
  return v < CPU_SETSIZE ? std::optional<int>(v) : std::nullopt;
}

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

std::optional<std::vector<int>> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto dash = item.find('-');
    const auto lo = cpu_number(item.substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : cpu_number(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    for (int c = *lo; c <= *hi; ++c) cpus.push_back(c);
  }
  if (cpus.empty()) return std::nullopt;
  return cpus;
}

HelpersOnSharedCpus::HelpersOnSharedCpus() {
  if (const char* mode = std::getenv(kHelperPlacementVariable); mode && std::string(mode) == "pinned") return;
  const char* shared = std::getenv(kHelperCpusVariable);
  if (!shared) return;
  const auto cpus = parse_cpu_list(shared);
  if (!cpus || sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
  cpu_set_t wider = saved_;
  for (int c : *cpus) CPU_SET(c, &wider);
  if (CPU_EQUAL(&wider, &saved_)) return;
  widened_ = sched_setaffinity(0, sizeof wider, &wider) == 0;
}

HelpersOnSharedCpus::~HelpersOnSharedCpus() {
  if (widened_) sched_setaffinity(0, sizeof saved_, &saved_);
}

nlohmann::json thread_cpu_fields() {
  namespace fs = std::filesystem;
  std::string mine;
  std::vector<std::string> others;
  const std::string self = std::to_string(long(syscall(SYS_gettid)));
  std::error_code ec;
  // Diagnostic only: a /proc that cannot be read gives empty lists, never an exception.
  for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
    std::string cpus = cpus_allowed_list(it->path() / "status");
    if (cpus.empty()) continue;
    if (it->path().filename() == self) {
      mine = cpus;
    } else if (std::find(others.begin(), others.end(), cpus) == others.end()) {
      others.push_back(cpus);
    }
  }
  std::sort(others.begin(), others.end());
  return {{"compute_thread_cpus", mine}, {"helper_thread_cpus", others}};
}

}  // namespace trainplan::train
