// A parser under fuzzing, and the contract every parser keeps: on any bytes
// it returns a value or throws trainplan::InputError naming the input (its
// file, and the line and field when known). It never crashes, hangs, reads
// out of bounds (AddressSanitizer builds catch that), or throws anything else.
//
// A target's `run` feeds one input to the parser and returns when the
// contract held; on a breach it throws ContractBreach, which the drivers
// (driver_main.cpp: seeded mutation; libfuzzer_main.cpp: libFuzzer) report
// with the input. Anything else escaping `run` is a breach too.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace trainplan::fuzz {

struct ContractBreach : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Target {
  std::string name;     // the command-line name, e.g. "sample_csv"
  std::string summary;  // what it feeds, for --list
  // Seed files and folders, relative to the source tree (fuzz/corpus/<name> and any others).
  std::vector<std::string> seed_dirs;
  // Tokens the mutator splices in besides the shared ones (column names, JSON keys).
  std::vector<std::string> dictionary;
  // Feeds one input; `scratch` is an empty-on-entry folder the target may write files into.
  // Returns true when the parser returned a value, false when it rejected the input.
  std::function<bool(std::string_view input, const std::string& scratch)> run;
};

std::vector<const Target*>& targets();
const Target* find_target(const std::string& name);

struct TargetRegistrar {
  explicit TargetRegistrar(Target t);
};

// Runs `parse` and holds it to the contract: an InputError must name `file`
// (its file() equals it, or, for a parser given a folder, starts with it) and
// say what is wrong. Other exceptions propagate, and the driver reports them.
// Returns true when `parse` returned, false when it threw InputError.
bool expect_value_or_input_error(const std::string& file, const std::function<void()>& parse);

// Writes `text` to `path`, replacing it; throws std::runtime_error on failure.
void write_file(const std::string& path, std::string_view text);

}  // namespace trainplan::fuzz
