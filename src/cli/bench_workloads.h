// What the simulator's comparisons against measured traces share (bench
// simulate-gpu, bench simulate-types): the two trace folders and their GPUs,
// the Pollux workloads' files by number, and the jobs every arm can run.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/job.h"

namespace trainplan::cli {

// The same applications traced on two GPUs, under one data root.
struct TracePair {
  std::string data = "../shared/data";
  std::string from = "pollux-t4", from_gpu = "t4";        // the jobs' learning curves, and from_gpu's steps
  std::string measured = "sia-a100", gpu = "a100-40gb";  // the same applications' steps measured on gpu
  std::string from_dir() const { return (std::filesystem::path(data) / from).string(); }
  std::string measured_dir() const { return (std::filesystem::path(data) / measured).string(); }
  // Throws InputError naming --from or --measured for a folder that is not there.
  void check() const;
};

// --data, --from, --from-gpu, --measured and --gpu, with their defaults.
void add_trace_pair_options(CLI::App* cmd, TracePair& t);

// data_root/workloads/pollux-1.0/workload-N.csv.
std::filesystem::path pollux_workload_file(const std::filesystem::path& data_root, const std::string& number);

// The numbers of `list` (--workloads: comma-separated, distinct), each
// checked to name a file before any work. Throws InputError naming --workloads.
std::vector<std::string> pollux_workload_numbers(const std::filesystem::path& data_root, const std::string& list);

// Reduces each arm's jobs of one workload to those every arm runs, matched by
// name, each arm keeping its order; returns how many that is. Throws
// InputError naming `file` when an arm holds two jobs of one name.
size_t keep_jobs_every_arm_runs(const std::vector<std::vector<sim::JobSpec>*>& arms, const std::string& file);

}  // namespace trainplan::cli
