// Reader for per-device timings of the same workloads on several GPUs, such
// as NeuSight's single-GPU table (../shared/data/llm/neusight_single_gpu_measured.csv):
// columns taken by header name,
//   device, e2e_ms        required: the GPU and the measured milliseconds
//   model, mode, seq_len, batch, torch_compile_fusion   optional: together
//                         they name the workload (the same on every device)
// for measuring the fraction of its peak each GPU sustains
// (structure::fit_sustained_fractions).
#pragma once
#include <string>
#include <vector>

#include "structure/gpu_catalog.h"

namespace trainplan::io {

struct DeviceTimings {
  std::vector<structure::DeviceTiming> timings;  // devices in the hardware catalog
  std::vector<std::string> skipped_devices;      // devices not in the catalog, sorted
};

// Throws InputError (file, line, column) on a missing column or a time that
// is not a number > 0.
DeviceTimings read_device_timings(const std::string& path);

}  // namespace trainplan::io
