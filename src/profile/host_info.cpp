#include "profile/host_info.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

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
  std::replace(model.begin(), model.end(), ',', ' ');
  return fmt::format("{} x{} cores", model, sysconf(_SC_NPROCESSORS_ONLN));
}

}  // namespace trainplan::profile
