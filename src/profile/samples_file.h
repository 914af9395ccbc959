// Reads samples from whatever a user passes as --samples: a sample CSV
// (docs/FORMATS.md) or a profile store written by `trainplan profile`
// (recognised by its SQLite header, whatever its name).
#pragma once
#include <string>
#include <vector>

#include "core/sample.h"
#include "profile/trial.h"

namespace trainplan::profile {

// Throws InputError naming `path` for a missing file, a directory, an empty
// store, or a malformed CSV (with line and column, as io::read_samples_csv).
SampleSet read_samples(const std::string& path);

// read_samples, and for a profile store also its trial records (empty for a
// CSV), from one opening of the store.
struct SamplesAndTrials {
  SampleSet samples;
  std::vector<TrialRecord> trials;
};
SamplesAndTrials read_samples_and_trials(const std::string& path);

// Whether `path` is a profile store (a file with SQLite's header), which
// read_samples reads as a store rather than as a CSV.
bool is_profile_store(const std::string& path);

}  // namespace trainplan::profile
