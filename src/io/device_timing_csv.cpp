#include "io/device_timing_csv.h"

#include <set>

#include "io/csv.h"

namespace trainplan::io {

DeviceTimings read_device_timings(const std::string& path) {
  CsvTable t = CsvTable::read(path);
  t.require_columns({"device", "e2e_ms"});
  DeviceTimings out;
  std::set<std::string> skipped;
  for (const auto& row : t.rows()) {
    std::string workload;
    for (const char* c : {"model", "mode", "seq_len", "batch", "torch_compile_fusion"})
      if (t.has_column(c)) workload += t.text(row, c) + "|";
    double ms = t.positive(row, "e2e_ms");
    const std::string& device = t.text(row, "device");
    if (device.empty()) t.fail(row, "device", "value is empty");
    if (!structure::find_builtin_hardware(device)) {
      skipped.insert(device);
      continue;
    }
    out.timings.push_back({workload, device, ms / 1000});
  }
  out.skipped_devices.assign(skipped.begin(), skipped.end());
  return out;
}

}  // namespace trainplan::io
