#include "cli/bench_workloads.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"

namespace trainplan::cli {

void TracePair::check() const {
  for (const auto& [dir, option] : {std::pair{from_dir(), "--from"}, std::pair{measured_dir(), "--measured"}})
    if (!std::filesystem::is_directory(dir))
      throw InputError("", 0, option, fmt::format("no such folder: '{}' (give --data, the shared data's root)", dir));
}

void add_trace_pair_options(CLI::App* cmd, TracePair& t) {
  cmd->add_option("--data", t.data, "Root of the shared data (the two trace folders, workloads/)")->capture_default_str();
  cmd->add_option("--from", t.from, "Traces the jobs' learning curves and --from-gpu's steps come from, under --data")
      ->capture_default_str();
  cmd->add_option("--from-gpu", t.from_gpu, "The GPU --from was measured on")->capture_default_str();
  cmd->add_option("--measured", t.measured, "The same applications' traces measured on --gpu, under --data")
      ->capture_default_str();
  cmd->add_option("--gpu", t.gpu, "The GPU --measured was measured on (a catalog name or a hardware file)")
      ->capture_default_str();
}

std::filesystem::path pollux_workload_file(const std::filesystem::path& data_root, const std::string& number) {
  return data_root / "workloads" / "pollux-1.0" / ("workload-" + number + ".csv");
}

std::vector<std::string> pollux_workload_numbers(const std::filesystem::path& data_root, const std::string& list) {
  const auto numbers = distinct_comma_list(list, "--workloads");
  for (const auto& w : numbers)
    if (w.find_first_not_of("0123456789") != std::string::npos ||
        !std::filesystem::is_regular_file(pollux_workload_file(data_root, w)))
      throw InputError("", 0, "--workloads",
                       fmt::format("no workload '{}': {} is not a file", w, pollux_workload_file(data_root, w).string()));
  return numbers;
}

size_t keep_jobs_every_arm_runs(const std::vector<std::vector<sim::JobSpec>*>& arms, const std::string& file) {
  std::map<std::string, size_t> runnable;
  for (const auto* jobs : arms) {
    std::set<std::string> seen;
    for (const auto& j : *jobs) {
      if (!seen.insert(j.name).second) throw InputError(file, 0, "name", fmt::format("two jobs are named '{}'", j.name));
      ++runnable[j.name];
    }
  }
  size_t common = 0;
  for (const auto& [name, n] : runnable) common += n == arms.size();
  for (auto* jobs : arms)
    std::erase_if(*jobs, [&](const sim::JobSpec& j) { return runnable.at(j.name) != arms.size(); });
  return common;
}

}  // namespace trainplan::cli
