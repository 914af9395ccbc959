// trainplan hardware: the hardware catalog (structure/gpu_catalog.h), one
// entry or a hardware file in full, and the measurement of the fraction of
// their peaks GPUs sustain from timings of the same workloads on several
// GPUs (docs/HARDWARE.md).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "io/device_timing_csv.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "structure/gpu_catalog.h"

namespace trainplan::cli {
namespace {

struct HardwareArgs {
  std::string name;
  std::string calibrate;
  std::string reference = "a100-pcie-40gb";
  bool json = false;
};

nlohmann::json profile_json(const structure::HardwareProfile& h) {
  const auto& g = h.gpu;
  const auto& n = h.node;
  nlohmann::json j = {{"name", h.name},
                      {"full_name", h.full_name},
                      {"fp16_tensor_dense_tflops", g.fp16_tensor_tflops},
                      {"bf16_tensor_dense_tflops", g.bf16_tensor_tflops},
                      {"tf32_tensor_tflops", g.tf32_tensor_tflops},
                      {"fp8_tflops", g.fp8_tensor_tflops},
                      {"fp8_matmul_share", g.fp8_matmul_share},
                      {"tf32_kernel_share", g.tf32_kernel_share},
                      {"fp32_tflops", g.fp32_tflops},
                      {"mem_GB", g.memory_gb},
                      {"mem_bw_GBps", g.memory_bandwidth_gbps},
                      {"fp32_sustained", g.fp32_sustained},
                      {"tensor_sustained", g.tensor_sustained},
                      {"gpus_per_node", n.gpus_per_node},
                      {"gpus_per_host", n.launch_gpus_per_host()},
                      {"intra_node_bw_GBps", n.intra_node_gbps},
                      {"inter_node_bw_GBps", n.inter_node_gbps},
                      {"intra_link", n.intra_link},
                      {"inter_link", n.inter_link},
                      {"inter_node_assumed", n.inter_node_assumed},
                      {"collective_latency_exponent", n.collective_latency_exponent},
                      {"sources", h.sources},
                      {"origin", h.origin}};
  // Only where stated (docs/FORMATS.md: a key that does not apply is left out).
  if (g.memory_reported_gib > 0) j["mem_reported_GiB"] = g.memory_reported_gib;
  return j;
}

void run_calibrate(const HardwareArgs& a) {
  if (!structure::find_builtin_hardware(a.reference))
    throw InputError("", 0, "--reference", fmt::format("'{}' is not in the hardware catalog (trainplan hardware lists it)",
                                                       a.reference));
  auto dt = io::read_device_timings(a.calibrate);
  if (dt.timings.empty())
    throw InputError(a.calibrate, 0, "",
                     fmt::format("no timing of a catalog GPU in it{}", dt.skipped_devices.empty()
                                                                        ? ""
                                                                        : fmt::format(" ({} device(s) not in the catalog "
                                                                                      "skipped)",
                                                                                      dt.skipped_devices.size())));
  std::vector<structure::SustainedFraction> fit;
  try {
    fit = structure::fit_sustained_fractions(dt.timings, a.reference);
  } catch (const InputError& e) {
    throw InputError(a.calibrate, 0, e.field(), e.message());
  }
  nlohmann::json j = nlohmann::json::array();
  std::string text = fmt::format("fraction of the fp32 peak sustained, relative to {} (docs/HARDWARE.md)\n", a.reference);
  text += fmt::format("{:<16} {:>9} {:>8} {:>9} {:>14}\n", "gpu", "fraction", "timings", "rms log", "catalog fp32");
  for (const auto& f : fit) {
    auto h = structure::find_builtin_hardware(f.device);
    j.push_back({{"gpu", f.device}, {"fraction", f.fraction}, {"timings", f.timings},
                 {"rms_log_residual", f.rms_log_residual}, {"catalog_fp32_sustained", h->gpu.fp32_sustained}});
    text += fmt::format("{:<16} {:>9.3f} {:>8} {:>9.3f} {:>14.2f}\n", f.device, f.fraction, f.timings,
                        f.rms_log_residual, h->gpu.fp32_sustained);
  }
  for (const auto& s : dt.skipped_devices) text += "skipped (not in the catalog): " + s + "\n";
  std::cout << (a.json ? io::json_text(nlohmann::json{{"reference", a.reference}, {"fractions", j}, {"skipped", dt.skipped_devices}}) + "\n"
                       : text);
}

void run_hardware(const HardwareArgs& a) {
  if (!a.calibrate.empty()) return run_calibrate(a);
  if (!a.name.empty()) {
    auto h = io::resolve_hardware(a.name);
    if (a.json) {
      std::cout << io::json_text(profile_json(h)) << "\n";
      return;
    }
    const auto& g = h.gpu;
    std::cout << fmt::format(
        "{} ({}; {})\n  fp16 tensor {:.6g} TFLOP/s, bf16 {:.6g}, tf32 {:.6g}, fp8 {:.6g}, fp32 {:.6g}; sustained fp32 {:.2f}, tensor {:.2f}{}\n"
        "  memory {} at {} GB/s\n  node: {} GPUs{}, {} ({} GB/s per GPU), {} ({} GB/s per node){}\n  sources: {}\n",
        h.name, h.full_name, h.origin, g.fp16_tensor_tflops, g.bf16_tensor_tflops, g.tf32_tensor_tflops,
        g.fp8_tensor_tflops, g.fp32_tflops,
        g.fp32_sustained, g.tensor_sustained,
        fmt::format("{}{}",
                    g.tf32_tensor_tflops > 0 ? fmt::format(", tf32 kernels {:.2f} of the fp32 share", g.tf32_kernel_share)
                                             : "",
                    g.fp8_tensor_tflops > 0 ? fmt::format(", fp8 products {:.2f} of the 16-bit share", g.fp8_matmul_share)
                                            : ""),
        g.memory_text(), g.memory_bandwidth_gbps, h.node.gpus_per_node,
        h.node.launch_gpus_per_host() < h.node.gpus_per_node
            ? fmt::format(" ({} a host, as launches lay ranks out)", h.node.launch_gpus_per_host())
            : "",
        h.node.intra_link.empty() ? "within a node" : h.node.intra_link, h.node.intra_node_gbps,
        h.node.inter_link.empty() ? "between nodes" : h.node.inter_link, h.node.inter_node_gbps,
        h.node.collective_latency_exponent > 0
            ? fmt::format("; collective latency grows as (bytes / 64 KiB)^{}", h.node.collective_latency_exponent)
            : "",
        h.sources);
    return;
  }
  nlohmann::json j = nlohmann::json::array();
  // Per node: its GPUs, the bandwidth between them (NVLink or PCIe) and out of the node.
  std::string text = fmt::format("{:<16} {:>8} {:>8} {:>8} {:>7} {:>7} {:>5} {:>10} {:>10}  {}\n", "name", "fp16 TF",
                                 "tf32 TF", "fp32 TF", "mem GB", "GB/s", "GPUs", "intra GB/s", "inter GB/s", "GPU");
  for (const auto& h : structure::builtin_hardware()) {
    j.push_back(profile_json(h));
    text += fmt::format("{:<16} {:>8} {:>8} {:>8} {:>7} {:>7} {:>5} {:>10} {:>10}  {}\n", h.name, h.gpu.fp16_tensor_tflops,
                        h.gpu.tf32_tensor_tflops, h.gpu.fp32_tflops, h.gpu.memory_gb, h.gpu.memory_bandwidth_gbps,
                        h.node.gpus_per_node, h.node.intra_node_gbps, h.node.inter_node_gbps, h.full_name);
  }
  std::cout << (a.json ? io::json_text(j) + "\n" : text + "Details and sources: trainplan hardware NAME; your own GPU: a hardware file (docs/HARDWARE.md)\n");
}

void setup(CLI::App& root) {
  auto a = std::make_shared<HardwareArgs>();
  auto* cmd = root.add_subcommand("hardware", "The hardware catalog: GPUs' peaks, memory and links, with sources");
  cmd->footer(
      "Examples:\n"
      "  trainplan hardware                 # the built-in catalog\n"
      "  trainplan hardware a100-40gb       # one entry and its sources (or a hardware file's path)\n"
      "  trainplan hardware --calibrate ../shared/data/llm/neusight_single_gpu_measured.csv\n"
      "                                     # the sustained fractions, measured");
  cmd->add_option("name", a->name, "A catalog name or a hardware file (docs/HARDWARE.md)");
  auto* calibrate = cmd->add_option("--calibrate", a->calibrate,
                  "Timings of the same workloads on several GPUs (columns device, e2e_ms; workload from model, mode, "
                  "seq_len, batch, torch_compile_fusion): fit the fraction of its fp32 peak each GPU sustains");
  cmd->add_option("--reference", a->reference, "With --calibrate: the GPU whose fraction is 1")
      ->capture_default_str()
      ->needs(calibrate);
  calibrate->excludes("name");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run_hardware(*a); });
}

CommandRegistrar reg(44, setup);

}  // namespace
}  // namespace trainplan::cli
