// libFuzzer's entry point for one target (fuzz_target.h), chosen when the
// executable is built (TRAINPLAN_FUZZ_TARGET). Built only with
// -DTRAINPLAN_LIBFUZZER=ON and clang: coverage-guided, for long campaigns
// (docs/DEVELOPING.md). A breach aborts, which libFuzzer reports as a crash
// and saves as crash-<hash>.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "fuzz_target.h"

using namespace trainplan::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Target* target = find_target(TRAINPLAN_FUZZ_TARGET);
  static const std::string scratch = (std::filesystem::temp_directory_path() /
                                      ("trainplan-libfuzz-" + std::to_string(::getpid()))).string();
  if (!target) std::abort();
  std::filesystem::remove_all(scratch);
  std::filesystem::create_directories(scratch);
  try {
    target->run(std::string_view(reinterpret_cast<const char*>(data), size), scratch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainplan fuzz target %s: BREACH: %s\n", target->name.c_str(), e.what());
    std::abort();
  }
  return 0;
}
