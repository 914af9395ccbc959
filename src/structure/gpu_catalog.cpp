#include "structure/gpu_catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "core/name_key.h"

namespace trainplan::structure {

double GpuSpec::fp32_conv_tflops() const {
  // cuDNN takes the faster kernel: TF32 units never slow a convolution down
  // (an A6000's CUDA cores, 38.7 TFLOP/s, outrun 0.42 of its TF32 peak).
  const double cuda_cores = fp32_tflops * fp32_sustained;
  if (tf32_tensor_tflops > 0) return std::max(cuda_cores, tf32_tensor_tflops * tensor_sustained * tf32_kernel_share);
  return cuda_cores;
}

namespace {
bool fp16_tensor_cores_only(const HardwareProfile& hw) {
  return hw.gpu.bf16_tensor_tflops <= 0 && hw.gpu.fp16_tensor_tflops > 0;
}
}  // namespace

Precision default_training_precision(const HardwareProfile& hw) {
  if (hw.gpu.bf16_tensor_tflops > 0) return Precision::kBf16;
  return fp16_tensor_cores_only(hw) ? Precision::kFp16 : Precision::kFp32;
}

std::string GpuSpec::memory_text() const {
  return memory_reported_gib > 0 ? fmt::format("{:g} GB ({:.2f} GiB reported)", memory_gb, memory_reported_gib)
                                 : fmt::format("{:g} GB", memory_gb);
}

std::optional<std::string> missing_fused_attention(const HardwareProfile& hw) {
  if (hw.gpu.bf16_tensor_tflops > 0) return std::nullopt;
  return fmt::format("{} has no fused attention kernel: Transformer Engine's flash and fused attention need an Ampere "
                     "(sm80) or later GPU, which bf16 tensor cores mark (bf16_tensor_dense_tflops 0 here); give a "
                     "hardware file's bf16_tensor_dense_tflops if it has them",
                     hw.name);
}

std::optional<std::string> missing_precision_unit(const HardwareProfile& hw, Precision p) {
  if ((p == Precision::kBf16 || p == Precision::kAmpFp32Master) && fp16_tensor_cores_only(hw))
    return fmt::format("{} has no bf16 tensor cores (bf16_tensor_dense_tflops 0, where its fp16 tensor cores have {:g} "
                       "TFLOP/s): train it in fp16, or give a hardware file's bf16_tensor_dense_tflops if it has them",
                       hw.name, hw.gpu.fp16_tensor_tflops);
  if ((p == Precision::kBf16 || p == Precision::kAmpFp32Master) && hw.gpu.bf16_tensor_tflops <= 0)
    return fmt::format("{} has no bf16 units (no tensor cores: bf16_tensor_dense_tflops and fp16_tensor_dense_tflops "
                       "0): train it in fp32 or fp16, or give a hardware file's bf16_tensor_dense_tflops if it has them",
                       hw.name);
  if (p != Precision::kFp8 || hw.gpu.fp8_tensor_tflops > 0) return std::nullopt;
  std::vector<std::string> with_fp8;
  for (const auto& h : builtin_hardware())
    if (h.gpu.fp8_tensor_tflops > 0) with_fp8.push_back(h.name);
  return fmt::format("{} has no FP8 tensor cores (fp8_tflops 0): train it in {}, or name a GPU that has them ({})",
                     hw.name,
                     hw.gpu.bf16_tensor_tflops > 0 ? "bf16 or fp16" : fp16_tensor_cores_only(hw) ? "fp16" : "fp32 or fp16",
                     fmt::join(with_fp8, ", "));
}

std::optional<std::string> fused_attention_precision_problem(Precision p) {
  if (p != Precision::kFp32) return std::nullopt;
  return std::string(
      "Transformer Engine's flash and fused attention take fp16 or bf16 tensors only, so an fp32 run has the unfused "
      "kernel alone: train in bf16 or fp16 (or amp-fp32-master, whose attention runs in bf16)");
}

std::optional<LayoutProblem> missing_unit(const HardwareProfile& hw, const ParallelLayout& l) {
  if (auto why = missing_precision_unit(hw, l.precision)) return LayoutProblem{"precision", *why};
  if (!l.fused_attention()) return std::nullopt;
  auto why = missing_fused_attention(hw);
  if (!why) why = fused_attention_precision_problem(l.precision);
  if (!why) return std::nullopt;
  if (l.cp > 1) return LayoutProblem{"cp", "context parallelism runs on fused attention kernels only: " + *why};
  return LayoutProblem{"flash_attention", "flash attention: " + *why};
}

double GpuSpec::dense_peak_tflops(Precision p) const {
  double unit = 0;
  switch (p) {
    case Precision::kFp8: unit = fp8_tensor_tflops > 0 ? fp8_tensor_tflops : bf16_tensor_tflops; break;
    case Precision::kFp16: unit = fp16_tensor_tflops; break;
    case Precision::kBf16:
    case Precision::kAmpFp32Master: unit = bf16_tensor_tflops; break;
    case Precision::kFp32: break;
  }
  return unit > 0 ? unit : fp32_tflops;
}

double GpuSpec::amp_matrix_tflops() const {
  if (fp16_tensor_tflops > 0) return fp16_tensor_tflops * tensor_sustained;
  return fp32_tflops * fp32_sustained;
}

namespace {

// Sources cited below (docs/HARDWARE.md has the table and the choices):
//   [L]  PyTorch Lightning _CUDA_FLOPS (throughput.py), datasheet peaks
//   [A]  llm-analysis gpu_configs/*.json
//   [N]  NeuSight device_configs/*.json
//   [NS] NeuSight's measured single-GPU runs, fitted by fit_sustained_fractions
//   [D]  the vendor's datasheet or architecture whitepaper, as named
//   [M]  stas00/ml-engineering@b9e2972, compute/accelerator/README.md,
//        "Maximum Achievable Matmul FLOPS comparison table" (the current,
//        second table of that file; docs/LLM.md quotes the first one once,
//        as such): the best bf16 and FP8 (e4m3) torch.matmul found by a
//        shape search, as a share of the dense peak
//   [T]  this project's own runs on the GPU: nvidia-smi's memory.total,
//        recorded with the measurements under examples/
// (all but [D] and [T] as collected in ../shared/data/llm/gpu_specs_catalog.csv).
struct Entry {
  HardwareProfile h;
  std::vector<std::string> aliases;
};

Entry entry(std::string name, std::string full, GpuSpec g, NodeSpec n, std::string sources,
            std::vector<std::string> aliases, int gpus_per_host = 0) {
  n.gpus_per_host = gpus_per_host;
  HardwareProfile h{std::move(name), std::move(full), g, std::move(n), std::move(sources), "built-in"};
  return {std::move(h), std::move(aliases)};
}

GpuSpec gpu(double fp16, double bf16, double tf32, double fp32, double mem_gb, double bw, double fp32_sus,
            double tensor_sus) {
  GpuSpec g;
  g.fp16_tensor_tflops = fp16, g.bf16_tensor_tflops = bf16, g.tf32_tensor_tflops = tf32, g.fp32_tflops = fp32;
  g.memory_gb = mem_gb, g.memory_bandwidth_gbps = bw;
  g.fp32_sustained = fp32_sus, g.tensor_sustained = tensor_sus;
  return g;
}

// The memory the driver reports, MiB, where measured ([T]).
GpuSpec reported(GpuSpec g, double mib) {
  g.memory_reported_gib = mib / 1024;
  return g;
}

// The FP8 tensor-core peak, dense: [L]'s int8 figure for h100 sxm and l4,
// which Hopper and Ada run at the FP8 rate (the datasheets' FP8 3,958 and
// 485 TFLOP/s are with structured sparsity, twice the dense rate).
GpuSpec fp8(GpuSpec g, double tflops, double matmul_share = 1) {
  g.fp8_tensor_tflops = tflops;
  g.fp8_matmul_share = matmul_share;
  return g;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = {
      entry("t4", "NVIDIA Tesla T4 (70 W)", gpu(65, 0, 0, 8.1, 16, 320, 0.61, 0.61),
            {4, 16, 6.25, "PCIe 3.0 x16", "50 Gb/s Ethernet (AWS g4dn.12xlarge, the Pollux cluster)"},
            "peaks [L] (fp32 8.1 against [N] 8.141), bandwidth [N], memory [D] T4 datasheet; sustained [NS]; "
            "node: AWS g4dn.12xlarge (4 x T4, 50 Gb/s)",
            {"tesla-t4", "tesla t4"}),
      entry("p4", "NVIDIA Tesla P4 (75 W)", gpu(0, 0, 0, 5.5, 8, 192, 0.52, 0.52),
            {4, 16, 3.125, "PCIe 3.0 x16", "25 Gb/s Ethernet (assumed)", true},
            "fp32 [D] P4 datasheet (5.5; [N] 5.699), bandwidth and memory [N]; sustained [NS]; no tensor cores",
            {"tesla-p4", "tesla p4"}),
      entry("p100", "NVIDIA Tesla P100 PCIe 16 GB", gpu(0, 0, 0, 9.3, 16, 732, 0.92, 0.92),
            {4, 16, 3.125, "PCIe 3.0 x16", "25 Gb/s Ethernet (assumed)", true},
            "fp32 [D] P100 PCIe datasheet (9.3; [N] 9.519), bandwidth and memory [N]; sustained [NS]; no tensor cores",
            {"tesla-p100", "tesla p100-pcie-16gb", "p100-pcie"}),
      entry("v100", "NVIDIA Tesla V100 SXM2 32 GB", gpu(125, 0, 0, 15.7, 32, 900, 1.07, 1.07),
            {8, 150, 12.5, "NVLink 2 (6 x 25 GB/s)", "100 Gb/s (AWS p3dn.24xlarge, Azure NDv2)"},
            "peaks [L] v100 sxm, memory and bandwidth [A] v100-sxm-32gb; sustained [NS] of the V100 PCIe (the same "
            "chip); node: 8 x V100 with NVLink 2 as in DGX-1, p3dn.24xlarge and NDv2",
            {"v100-sxm2", "v100-sxm2-32gb", "v100-32gb", "tesla-v100"}),
      entry("v100-pcie", "NVIDIA Tesla V100 PCIe 32 GB", gpu(112, 0, 0, 14.0, 32, 900, 1.07, 1.07),
            {4, 16, 3.125, "PCIe 3.0 x16", "25 Gb/s Ethernet (assumed)", true},
            "peaks [L] v100 pcie ([N] 14.029), memory and bandwidth [A] v100-pcie-32gb and [N]; sustained [NS]",
            {"tesla v100-pcie-32gb", "v100-pcie-32gb"}),
      entry("a100-40gb", "NVIDIA A100-SXM4-40GB", gpu(312, 312, 156, 19.5, 40, 1555, 1.0, 1.0),
            {8, 300, 200, "NVLink 3 / NVSwitch (12 x 25 GB/s)", "8 x 200 Gb/s InfiniBand HDR (DGX A100)"},
            "peaks [L] a100, memory and bandwidth [A] a100-sxm-40gb and [N]; sustained: the reference (1.0) of [NS] "
            "is the A100-PCIe-40GB, the same chip; node: DGX A100",
            {"a100", "a100-sxm4-40gb", "nvidia a100-sxm4-40gb"}),
      entry("a100-80gb", "NVIDIA A100-SXM4-80GB", gpu(312, 312, 156, 19.5, 80, 2039, 1.0, 1.0),
            {8, 300, 200, "NVLink 3 / NVSwitch (12 x 25 GB/s)", "8 x 200 Gb/s InfiniBand HDR (DGX A100)"},
            "peaks [L] a100, memory and bandwidth [A] a100-sxm-80gb; sustained as a100-40gb; node: DGX A100",
            {"a100-sxm4-80gb"}),
      entry("a100-pcie-40gb", "NVIDIA A100-PCIE-40GB", gpu(312, 312, 156, 19.5, 40, 1555, 1.0, 1.0),
            {8, 32, 12.5, "PCIe 4.0 x16", "100 Gb/s (assumed)", true},
            "peaks [L] a100 (the PCIe card has the same peaks), memory and bandwidth [A] a100-pcie-40gb and [N]; "
            "sustained: the reference of [NS]",
            {"nvidia a100-pcie-40gb"}),
      entry("a100-pcie-80gb", "NVIDIA A100 80GB PCIe", gpu(312, 312, 156, 19.5, 80, 1935, 0.94, 0.94),
            {8, 32, 12.5, "PCIe 4.0 x16", "100 Gb/s (assumed)", true},
            "peaks [L] a100, memory and bandwidth [A] a100-pcie-80gb and [N]; sustained [NS]",
            {"nvidia a100 80gb pcie"}),
      entry("h100", "NVIDIA H100 SXM5 80 GB",
            reported(fp8(gpu(989.4, 989.4, 494.7, 66.9, 80, 3350, 0.78, 0.78), 1978.9, 0.709 / 0.803), 81559),
            {8, 450, 400, "NVLink 4 / NVSwitch (18 x 25 GB/s)", "8 x 400 Gb/s InfiniBand NDR (DGX H100)"},
            "peaks [L] h100 sxm, memory and bandwidth [A] h100-sxm-80gb (3350 GB/s, the datasheet's 3.35 TB/s; [N] "
            "lists 3430); sustained [NS] (H100 80GB HBM3); FP8 share [M] (FP8 70.9% of its peak, bf16 80.3%); "
            "reported memory 81,559 MiB [T] (examples/h100/raw/env.txt); node: DGX H100",
            {"h100-sxm", "h100-sxm5", "h100-80gb", "h100-sxm5-80gb", "h100-sxm-80gb", "nvidia h100 80gb hbm3"}),
      entry("h100-pcie", "NVIDIA H100 PCIe 80 GB",
            fp8(gpu(756, 756, 378, 51.2, 80, 2000, 0.78, 0.78), 1513, 0.709 / 0.803),
            {8, 64, 25, "PCIe 5.0 x16", "200 Gb/s (assumed)", true},
            "peaks [L] h100 pcie (FP8 at its int8 rate, dense, as h100), memory and bandwidth [A] h100-pcie-80gb; "
            "sustained and FP8 share as h100 (the same GH100 chip, unmeasured as a PCIe card); node: 8 cards on "
            "PCIe 5.0 ([A]'s 300 GB/s intra-node and 400 GB/s network are a bridged, DGX-like build)",
            {"h100-pcie-80gb", "nvidia h100 pcie"}),
      entry("h200", "NVIDIA H200 SXM 141 GB",
            reported(fp8(gpu(989.4, 989.4, 494.7, 66.9, 141, 4800, 0.78, 0.78), 1978.9, 0.734 / 0.803), 143771),
            {8, 450, 400, "NVLink 4 / NVSwitch (18 x 25 GB/s)", "8 x 400 Gb/s InfiniBand NDR (HGX H200)"},
            "[D] NVIDIA H200 datasheet: the H100 SXM's compute (same GH100 chip and clocks) with 141 GB of HBM3e at "
            "4.8 TB/s (not in gpu_specs_catalog.csv); sustained as h100; FP8 share [M] (FP8 73.4%, bf16 as the "
            "H100's 80.3%); reported memory 143,771 MiB [T] (examples/h200-gpt/raw/env.txt)",
            {"h200-sxm", "h200-141gb", "h200-sxm-141gb"}),
      // Blackwell: NVIDIA's GB200 NVL72 and HGX B200 specification table
      // gives sparse tensor figures; the dense ones are half. One B200 at
      // 1,000 W (HGX) and one at 1,200 W (GB200, whose NVLink domain is the
      // rack of 72).
      entry("b200", "NVIDIA B200 (HGX, 1,000 W)",
            fp8(gpu(2250, 2250, 1100, 75, 180, 7700, 1.0, 1.0), 4500, 0.763 / 0.776),
            {8, 900, 400, "NVLink 5 / NVSwitch (1.8 TB/s both ways)", "8 x 400 Gb/s InfiniBand NDR (DGX B200)"},
            "[D] NVIDIA GB200 NVL72 / HGX B200 specifications, per GPU: FP16/BF16 4.5 PFLOP/s, TF32 2.2, FP8 9 (with "
            "sparsity; dense half), FP32 75 TFLOP/s, 180 GB HBM3e at 7.7 TB/s, NVLink 1.8 TB/s (not in "
            "gpu_specs_catalog.csv); node: DGX B200 (8 x 400 Gb/s); sustained unmeasured (1); FP8 share [M] (FP8 "
            "76.3%, bf16 77.6%)",
            {"b200-sxm", "hgx-b200", "dgx-b200"}),
      entry("gb200", "NVIDIA GB200 NVL72 (B200 at 1,200 W)",
            fp8(gpu(2500, 2500, 1250, 80, 186, 8000, 1.0, 1.0), 5000, 0.723 / 0.729),
            {72, 900, 3600, "NVLink 5 / NVLink Switch, 72 GPUs (1.8 TB/s both ways)",
             "72 x 400 Gb/s InfiniBand NDR (one ConnectX-7 a GPU)"},
            "[D] NVIDIA GB200 NVL72 specifications, per GPU: FP16/BF16 5 PFLOP/s, TF32 2.5, FP8 10 (with sparsity; "
            "dense half), FP32 80 TFLOP/s, 186 GB HBM3e at 8 TB/s, NVLink 1.8 TB/s; the node is the NVLink domain "
            "of 72 GPUs, each with a 400 Gb/s NIC; a compute tray (one host) holds 4 (not in gpu_specs_catalog.csv); sustained unmeasured (1); FP8 share "
            "[M] (FP8 72.3%, bf16 72.9%)",
            {"gb200-nvl72", "dgx-gb200"}, /*gpus_per_host=*/4),
      entry("l4", "NVIDIA L4 (72 W)", fp8(gpu(121, 121, 60, 30.3, 24, 300, 0.32, 0.64), 242),
            {8, 32, 12.5, "PCIe 4.0 x16", "100 Gb/s (AWS g6.48xlarge)"},
            "peaks [L] l4, memory and bandwidth [N]; fp32 sustained [NS]; its fp32 peak counts Ada's second FP32 "
            "pipe, which matrix work does not use, so the tensor paths take twice that (0.64, near the T4's power-capped "
            "fraction); node: AWS g6.48xlarge (8 x L4, 100 Gb/s)",
            {"nvidia l4"}),
      entry("a6000", "NVIDIA RTX A6000", gpu(154.8, 154.8, 77.4, 38.7, 48, 768, 1.0, 1.0),
            {8, 32, 12.5, "PCIe 4.0 x16", "100 Gb/s (assumed)", true},
            "fp16/bf16 tensor [A] a6000-48gb (154.8, the datasheet's dense rate, full rate with fp32 accumulate on "
            "this professional card; [L]'s 38.7 is flagged as not the tensor peak); tf32 and fp32 [L] a6000; memory "
            "and bandwidth [A]; sustained unmeasured (1)",
            {"rtx-a6000", "a6000-48gb", "nvidia rtx a6000"}),
      entry("a40", "NVIDIA A40", gpu(149.7, 149.7, 74.8, 37.4, 48, 696, 1.0, 1.0),
            {8, 32, 12.5, "PCIe 4.0 x16", "100 Gb/s (assumed)", true},
            "tf32 and fp32 [L] a40; fp16/bf16 tensor, memory and bandwidth [D] NVIDIA A40 datasheet (149.7 dense, 48 "
            "GB at 696 GB/s; [L]'s 37.4 is flagged as not the tensor peak); sustained unmeasured (1)",
            {"nvidia a40"}),
      entry("rtx-2080ti", "NVIDIA GeForce RTX 2080 Ti", gpu(56.9, 0, 0, 14.2, 11, 616, 1.0, 1.0),
            {8, 16, 3.125, "PCIe 3.0 x16", "25 Gb/s Ethernet (assumed)", true},
            "fp32 [L] rtx 2080 ti (Founders Edition boost clock); fp16 tensor [D] NVIDIA Turing whitepaper, RTX 2080 Ti "
            "FE with fp32 accumulate (56.9; [L]'s 28.5 is the non-tensor fp16 rate); memory and bandwidth [D] "
            "(11 GB, 616 GB/s; Habitat's 524 is its own figure); sustained unmeasured (1)",
            {"2080ti", "rtx2080ti", "geforce-rtx-2080-ti"}),
      entry("quadro-rtx-6000", "NVIDIA Quadro RTX 6000", gpu(130.5, 0, 0, 16.3, 24, 672, 1.0, 1.0),
            {4, 16, 3.125, "PCIe 3.0 x16", "25 Gb/s Ethernet (assumed)", true},
            "[D] NVIDIA Quadro RTX 6000 datasheet (16.3 TFLOP/s fp32, 130.5 tensor, 24 GB at 672 GB/s; no citable "
            "project in gpu_specs_catalog.csv lists it); sustained unmeasured (1)",
            {"quadro-rtx6000", "rtx-6000", "quadro"}),
  };
  return all;
}

}  // namespace

const std::vector<HardwareProfile>& builtin_hardware() {
  static const std::vector<HardwareProfile> all = [] {
    std::vector<HardwareProfile> v;
    for (const auto& e : entries()) v.push_back(e.h);
    return v;
  }();
  return all;
}

// Names are compared by name_key: "A100 40GB", "a100_40gb" and "A100-40GB"
// all find a100-40gb, and "RTX 2080 Ti" finds rtx-2080ti (test
// GpuCatalog.NamesMatchWhateverTheSeparators checks that no two entries'
// names then collide).
// The vendor and brand words a driver puts before a model ("NVIDIA Tesla T4", "NVIDIA GeForce RTX
// 2080 Ti", nvidia-smi's names) are dropped from the front of both sides, so that each spelling
// need not be an alias.
static constexpr const char* kBrandWords[] = {"nvidia", "tesla", "geforce"};

static std::string model_key(const std::string& name) {
  std::string key = name_key(name);
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (const std::string b : kBrandWords)
      if (key.size() > b.size() && key.compare(0, b.size(), b) == 0) key.erase(0, b.size()), dropped = true;
  }
  return key;
}

std::optional<HardwareProfile> find_builtin_hardware(const std::string& name) {
  const std::string key = model_key(name);
  if (key.empty()) return std::nullopt;
  for (const auto& e : entries()) {
    if (model_key(e.h.name) == key) return e.h;
    for (const auto& a : e.aliases)
      if (model_key(a) == key) return e.h;
  }
  return std::nullopt;
}

std::optional<std::string> builtin_alias_target(const std::string& name) {
  if (name.find('/') != std::string::npos) return std::nullopt;
  auto h = find_builtin_hardware(name);
  if (!h || model_key(h->name) == model_key(name)) return std::nullopt;
  return h->name;
}

std::optional<HardwareProfile> find_builtin_hardware_in(const std::string& label) {
  if (auto hw = find_builtin_hardware(label)) return hw;
  std::vector<std::string> words;
  std::string w;
  for (char ch : label + " ") {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      w += ch;
    } else if (!w.empty()) {
      words.push_back(w), w.clear();
    }
  }
  auto letters_and_digits = [](const std::string& c) {
    bool alpha = false, digit = false;
    for (unsigned char ch : c) alpha |= std::isalpha(ch) != 0, digit |= std::isdigit(ch) != 0;
    return alpha && digit;
  };
  // The entries the candidates name, by name.
  auto named = [&](const std::vector<std::string>& candidates) {
    std::map<std::string, HardwareProfile> found;
    for (const auto& c : candidates)
      if (letters_and_digits(c))
        if (auto hw = find_builtin_hardware(c)) found.emplace(hw->name, *hw);
    return found;
  };
  std::vector<std::string> pairs;
  // A pair led by a brand word is its second word alone, which the single words try after the
  // pairs: taken as a pair it would stand beside a more specific one ("Tesla A100" beside "A100 80GB").
  auto brand = [](const std::string& word) {
    const std::string k = name_key(word);
    return std::find(std::begin(kBrandWords), std::end(kBrandWords), k) != std::end(kBrandWords);
  };
  for (size_t i = 0; i + 1 < words.size(); ++i)
    if (!brand(words[i])) pairs.push_back(words[i] + " " + words[i + 1]);
  auto found = named(pairs);
  if (found.empty()) found = named(words);
  if (found.size() == 1) return found.begin()->second;
  return std::nullopt;
}

std::vector<std::string> builtin_hardware_names() {
  std::vector<std::string> out;
  for (const auto& e : entries()) out.push_back(e.h.name);
  return out;
}

HardwareSpec interconnect_spec(const HardwareProfile& h) {
  HardwareSpec s;
  s.name = h.full_name + " / " + h.node.intra_link + " / " + h.node.inter_link;
  s.gpus_per_node = h.node.gpus_per_node;
  s.gpus_per_host = h.node.launch_gpus_per_host();
  s.gpu = h.name;
  if (h.gpu.fp32_tflops > 0) s.fp32_flops = h.gpu.fp32_tflops * 1e12;
  if (h.gpu.memory_bandwidth_gbps > 0) s.memory_bytes_per_s = h.gpu.memory_bandwidth_gbps * 1e9;
  s.source = h.origin == "built-in" ? "the catalog's " + h.name : h.origin;
  if (h.node.intra_node_gbps > 0) s.intra_node_bytes_per_s = h.node.intra_node_gbps * 1e9;
  if (h.node.inter_node_gbps > 0) s.inter_node_bytes_per_s = h.node.inter_node_gbps * 1e9;
  return s;
}

std::vector<SustainedFraction> fit_sustained_fractions(const std::vector<DeviceTiming>& timings,
                                                       const std::string& reference) {
  // Devices by catalog key, and the workloads timed on at least two of them.
  std::map<std::string, double> peak;
  std::map<std::string, std::set<std::string>> devices_of;
  struct Obs {
    std::string w, d;
    double log_t;
  };
  std::vector<Obs> obs;
  for (const auto& t : timings) {
    auto h = find_builtin_hardware(t.device);
    if (!h) throw InputError("", 0, "", "device '" + t.device + "' is not in the hardware catalog");
    if (!(t.seconds > 0)) throw InputError("", 0, "", "timing of '" + t.workload + "' on " + t.device + " is not > 0");
    peak[h->name] = h->gpu.fp32_tflops;
    devices_of[t.workload].insert(h->name);
    obs.push_back({t.workload, h->name, std::log(t.seconds)});
  }
  std::erase_if(obs, [&](const Obs& o) { return devices_of[o.w].size() < 2; });
  std::string ref = find_builtin_hardware(reference) ? find_builtin_hardware(reference)->name : reference;
  if (!std::any_of(obs.begin(), obs.end(), [&](const Obs& o) { return o.d == ref; }))
    throw InputError("", 0, "", "no workload timed on the reference device '" + reference + "' and another one");

  // Alternating least squares on log t = w - log peak_d - l_d, l_ref = 0.
  std::map<std::string, double> w, l;
  for (const auto& o : obs) w[o.w] = 0, l[o.d] = 0;
  for (int it = 0; it < 500; ++it) {
    std::map<std::string, std::pair<double, int>> sw, sl;
    for (const auto& o : obs) {
      auto& a = sw[o.w];
      a.first += o.log_t + std::log(peak[o.d]) + l[o.d], a.second++;
    }
    for (auto& [k, v] : w) v = sw[k].first / sw[k].second;
    for (const auto& o : obs) {
      auto& a = sl[o.d];
      a.first += w[o.w] - o.log_t - std::log(peak[o.d]), a.second++;
    }
    double shift = sl[ref].first / sl[ref].second;
    double change = 0;
    for (auto& [k, v] : l) {
      double nv = sl[k].first / sl[k].second - shift;
      change = std::max(change, std::abs(nv - v));
      v = nv;
    }
    if (change < 1e-12) break;
  }
  std::vector<SustainedFraction> out;
  for (const auto& [d, ld] : l) {
    SustainedFraction f{d, std::exp(ld), 0, 0};
    double ss = 0;
    for (const auto& o : obs)
      if (o.d == d) {
        double r = o.log_t - (w[o.w] - std::log(peak[d]) - ld);
        ss += r * r, f.timings++;
      }
    f.rms_log_residual = std::sqrt(ss / f.timings);
    out.push_back(f);
  }
  return out;
}

}  // namespace trainplan::structure
