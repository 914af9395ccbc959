#include "profile/samples_file.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/sample_csv.h"
#include "io/sqlite_file.h"
#include "profile/launcher.h"
#include "profile/sample_store.h"

namespace trainplan::profile {

bool is_profile_store(const std::string& path) { return io::is_sqlite_database(path); }

SampleSet read_samples(const std::string& path) { return read_samples_and_trials(path).samples; }

SamplesAndTrials read_samples_and_trials(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, 0, "", "is a directory; pass a sample CSV or a profile store (.db)");
  if (!std::filesystem::exists(path, ec)) throw InputError(path, 0, "", "no such file");
  if (!is_profile_store(path)) return {io::read_samples_csv(path), {}};
  SampleStore store(path, SampleStore::Open::kExisting);
  SamplesAndTrials out;
  out.trials = store.trials();
  out.samples = store.samples(out.trials);
  if (out.samples.empty())
    throw InputError(path, 0, "", "the profile store holds no ok trials yet (trainplan samples list --store " +
                                      shell_word(path) + " shows them)");
  return out;
}

}  // namespace trainplan::profile
