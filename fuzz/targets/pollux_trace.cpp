// Target for a Pollux trace directory (io/pollux_trace.h). One input holds
// the directory's files, each after a line "=== FILE NAME", so that the
// mutator also reaches the file names (validation-<global batch>.csv); text
// before the first such line is placements.csv.
#include <algorithm>
#include <filesystem>

#include "../fuzz_target.h"
#include "io/pollux_trace.h"

namespace trainplan::fuzz {
namespace {

// A file name made safe to create: only [A-Za-z0-9._-], not "." or "..".
std::string safe_name(std::string_view raw) {
  std::string s;
  for (char c : raw)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') s.push_back(c);
  if (s.size() > 100) s.resize(100);
  return s.empty() || s == "." || s == ".." ? "" : s;
}

bool run_trace(std::string_view input, const std::string& scratch) {
  const std::string dir = scratch + "/trace";
  std::filesystem::create_directory(dir);
  std::string name = "placements.csv", text;
  int files = 0;
  auto flush = [&] {
    if (!name.empty() && files < 8) write_file(dir + "/" + name, text), ++files;
    text.clear();
  };
  size_t a = 0;
  while (a <= input.size()) {
    size_t b = input.find('\n', a);
    if (b == std::string_view::npos) b = input.size();
    const std::string_view line = input.substr(a, b - a);
    if (line.rfind("=== ", 0) == 0) {
      flush();
      name = safe_name(line.substr(4));
    } else {
      text.append(line);
      if (b < input.size()) text.push_back('\n');
    }
    a = b + 1;
  }
  flush();
  return expect_value_or_input_error(dir, [&] { io::read_pollux_trace(dir); });
}

TargetRegistrar reg({"pollux_trace",
                     "io::read_pollux_trace on a directory of placements, scalability and validation files",
                     {"fuzz/corpus/pollux_trace"},
                     {"=== placements.csv\n", "=== scalability.csv\n", "=== validation-", ".csv\n", "placement",
                      "local_bsz", "step_time", "sync_time", "num_nodes", "num_replicas", "progress", "iteration",
                      "metric", "grad_sqr", "grad_var"},
                     run_trace});

}  // namespace
}  // namespace trainplan::fuzz
