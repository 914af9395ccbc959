#include "profile/host_info.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace trainplan::profile {

std::string host_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      if (c != std::string::npos) model = line.substr(c + 2);
      break;
    }
  }
  std::string text = fmt::format("{} x{} cores", model, sysconf(_SC_NPROCESSORS_ONLN));
  // GPUs as the NVIDIA driver lists them (no process to start, nothing to link).
  std::map<std::string, int> gpus;
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    std::ifstream info(dir.path() / "information");
    while (std::getline(info, line))
      if (line.rfind("Model:", 0) == 0) {
        auto v = line.substr(6);
        v.erase(0, v.find_first_not_of(" \t"));
        ++gpus[v];
        break;
      }
  }
  for (const auto& [name, count] : gpus) text += fmt::format(" + {}x {}", count, name);
  std::replace(text.begin(), text.end(), ',', ' ');
  return text;
}

}  // namespace trainplan::profile
