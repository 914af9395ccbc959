// A number as a person copies it into a command: a whole one written out
// (2469160, 1048576), any other as {:g}.
#pragma once
#include <fmt/format.h>

#include <cmath>
#include <string>

namespace trainplan::cli {

inline std::string number_text(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v);
}

}  // namespace trainplan::cli
