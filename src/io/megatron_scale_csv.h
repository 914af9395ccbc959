// Reader for the published Megatron-LM runs at scale collected in
// ../shared/data/llm/published_megatron_scale_results.csv (its README, section
// 3): the runs whose tensor and pipeline split, GPU count and batch are given,
// with their seconds per iteration, measured or derived from the published
// throughput. Columns are taken by header name.
//
// A row is kept when it names tp, pp, num_gpus and global_batch, runs on A100s,
// and gives iteration_time_s as a number or achieved_tflops_per_gpu. Left out,
// counted by reason: rows without the split (README tables that give only
// tp·pp), Narayanan et al.'s ZeRO-3 baselines (tp = pp = 1, not a Megatron
// layout), other GPUs, rows with no time.
//
// Filled in where the table is silent, and said so in `assumed`:
//   micro_batch 1; vocab 51,200; recompute "full" (the 2021 runs checkpoint
//   every layer); no sequence parallelism, no interleaving, fp16.
// Derived seconds: Narayanan et al. 2021's model FLOPs per iteration with full
// recomputation, 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) (their equation 3),
// divided by achieved_tflops_per_gpu × num_gpus: the equation the published
// throughput was computed with.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "io/korthikanti_csv.h"

namespace trainplan::io {

struct PublishedScaleRun {
  PublishedIteration iteration;  // run.model: "<model> (<table_id>)"
  std::string table;             // table_id
  std::string gpu;               // the catalog name: a100-40gb or a100-80gb
  bool seconds_derived = false;  // from achieved_tflops_per_gpu, not a published time
  std::vector<std::string> assumed;  // the fields filled in (see above)
};

struct PublishedScaleRuns {
  std::vector<PublishedScaleRun> runs;
  std::map<std::string, int> left_out;  // reason -> rows
};

// Throws InputError naming the file, line and column for a missing column or
// a kept row with a bad value.
PublishedScaleRuns read_published_scale_runs(const std::string& path);

}  // namespace trainplan::io
