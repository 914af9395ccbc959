// Measured iterations synthesised from the transformer models with chosen
// factors, for the tests of calibrated planning (app, CLI, server): the
// measured truth is known, so a calibration must recover it.
#pragma once
#include <fmt/format.h>

#include <sstream>
#include <string>

#include "io/llm_config_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "structure/gpu_catalog.h"

namespace tptest {

// Shapes and layouts unlike the planned models on purpose: calibration rows
// may be any transformer, the factors belong to the GPU and the software.
inline const char* kLlmMeasuredConfigs =
    "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,recompute,sequence_parallel\n"
    "8,32,2,2048,16,24,2048,2,4,1,none,false\n"
    "16,64,1,4096,32,32,2048,4,2,2,selective,true\n"
    "8,64,1,2048,16,24,2048,8,1,1,full,true\n"
    "4,16,4,2048,16,24,2048,1,4,1,none,false\n"
    "16,64,2,4096,32,32,2048,2,2,4,selective,false\n"
    "32,128,1,4096,32,32,2048,8,2,2,none,true\n"
    "8,32,1,2048,16,24,2048,4,1,2,full,false\n";

// kLlmMeasuredConfigs with iteration_time_s predicted on `hw` by the time
// model with peak_fraction scaled by `peak_scale`, and memory_gib the memory
// model's plus `overhead_gib`.
inline std::string llm_measured_csv(const trainplan::structure::HardwareProfile& hw, double peak_scale,
                                    double overhead_gib) {
  using namespace trainplan;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  auto configs = io::parse_llm_configs(kLlmMeasuredConfigs, "configs");
  models::LlmTimeParams p;
  p.gemm.peak_fraction *= peak_scale;
  models::LlmTimeModel slow(hw, p);
  models::LlmMemoryModel memory;
  std::istringstream in(kLlmMeasuredConfigs);
  std::string line, out;
  std::getline(in, line);
  out = line + ",iteration_time_s,memory_gib\n";
  for (const auto& r : configs.rows) {
    std::getline(in, line);
    out += fmt::format("{},{:.10g},{:.10g}\n", line, slow.predict(r.spec, r.layout).iteration,
                       memory.predict(r.spec, r.layout).total() / kGiB + overhead_gib);
  }
  return out;
}

}  // namespace tptest
