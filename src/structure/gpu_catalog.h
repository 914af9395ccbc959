// Hardware as data: what a GPU can do (peak dense throughput by precision,
// memory and its bandwidth) and the node it usually sits in (GPUs per node,
// the link between them, the network between nodes). One catalog serves every
// model that reasons about hardware: the data-parallel transfer model
// (models/transfer_split.h) and transformer-layout models, which need the same
// peaks, memory and links.
//
// The built-in entries are a curated table; each value names its source, and
// docs/HARDWARE.md says which figure was chosen where public sources disagree.
// A user's own GPU is a hardware file (io/hardware_file.h, docs/HARDWARE.md).
//
// Units: TFLOP/s (dense, no structured sparsity), GB (1e9 bytes), GB/s in
// one direction.
#pragma once
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "structure/hardware.h"
#include "structure/parallel_layout.h"

namespace trainplan::structure {

struct GpuSpec {
  // Peak dense throughput, TFLOP/s. 0: the GPU has no such unit.
  double fp16_tensor_tflops = 0;  // fp16 inputs, fp32 accumulate (what mixed precision uses)
  double bf16_tensor_tflops = 0;
  double tf32_tensor_tflops = 0;  // fp32 matrix work on tensor cores (Ampere and later)
  double fp8_tensor_tflops = 0;   // FP8 (E4M3/E5M2) inputs (Hopper, Ada and later)
  double fp32_tflops = 0;         // fp32 on the CUDA cores (non-tensor)
  double memory_gb = 0;
  // What the driver reports the card holds (nvidia-smi's memory.total), GiB;
  // 0 where unmeasured. The datasheet's "80 GB" of an HBM card is 80 GiB of
  // stacks, of which the driver shows all but about half a per cent, so
  // 80e9 bytes understate it by 7%.
  double memory_reported_gib = 0;
  double memory_bandwidth_gbps = 0;
  // The fraction of the datasheet peaks the GPU sustains under a long
  // training load, relative to the A100 (1.0): power-capped cards (70 W T4,
  // 72 W L4) run well below their boost clock. fp32_sustained applies to the
  // fp32 peak, tensor_sustained to the tensor-core peaks; 1 when unmeasured.
  // Measured from NeuSight's single-GPU runs (docs/HARDWARE.md).
  double fp32_sustained = 1;
  double tensor_sustained = 1;
  // The share of its FP8 peak that a large FP8 product reaches, relative to
  // the share a 16-bit product reaches of the 16-bit peak on the same GPU:
  // FP8 products double the peak but not what feeds it, so they sit further
  // below it. 1 when unmeasured. From the same benchmark's best bf16 and FP8
  // matrix products on each GPU (docs/HARDWARE.md).
  double fp8_matmul_share = 1;
  // The share of its TF32 peak that fp32 training's convolutions and dense
  // layers reach on TF32 tensor cores, relative to the share their fp32
  // kernels reach of the CUDA cores' peak. TF32 operands are four bytes, as
  // fp32's, so network-sized kernels are fed by the same memory traffic and
  // fall further short of the tensor peak than of the fp32 one. Measured on
  // an H200 over the six reference networks' kernels: 0.37-0.44, median
  // 0.416 (examples/h200-tf32); every GPU with TF32 units takes it unless
  // its hardware file says otherwise. No effect without TF32 units.
  double tf32_kernel_share = 0.42;

  // The peak that fp32 (non-mixed-precision) framework code reaches on
  // matrix work: convolutions use TF32 tensor cores where the GPU has them
  // (cuDNN's default in PyTorch), at tf32_kernel_share of their peak; dense
  // layers stay on the CUDA cores (PyTorch's default for matmul since 1.12).
  // TFLOP/s, sustained.
  double fp32_conv_tflops() const;
  // Where TF32 units may be used, the faster of them and the CUDA cores:
  // they never slow matrix work down (an A6000's CUDA cores outrun its
  // share of the TF32 peak).
  double fp32_matmul_tflops() const {
    const double cuda_cores = fp32_tflops * fp32_sustained;
    return fp32_matmul_tf32 && tf32_tensor_tflops > 0
               ? std::max(cuda_cores, tf32_tensor_tflops * tensor_sustained * tf32_kernel_share)
               : cuda_cores;
  }
  // The framework runs fp32 dense layers on TF32 tensor cores too (PyTorch
  // 1.7 to 1.11 by default; later `torch.backends.cuda.matmul.allow_tf32`
  // or `set_float32_matmul_precision("high")`). A software setting, not the
  // GPU's: off in the catalog, set by `--tf32`. No effect without TF32 units.
  bool fp32_matmul_tf32 = false;
  // The peak of mixed-precision (fp16) matrix work, sustained; the fp32 peak
  // for a GPU without tensor cores.
  double amp_matrix_tflops() const;
  // The datasheet's dense peak that a transformer trained at `p` runs its
  // matrix products on: the FP8 unit for fp8, the tensor cores for fp16 and
  // bf16 (and amp-fp32-master), the CUDA cores for fp32 or where the unit is
  // missing. TFLOP/s, not derated: the denominator of model FLOP utilisation
  // as it is usually quoted.
  double dense_peak_tflops(Precision p) const;
  // The bytes a training run may plan on (before any reserve): the reported
  // capacity where measured, else memory_gb · 1e9, which is at or under
  // what every catalog card reports (ECC takes a GDDR card's share; an
  // HBM card reports its binary stacks).
  double capacity_bytes() const {
    return memory_reported_gib > 0 ? memory_reported_gib * 1024 * 1024 * 1024 : memory_gb * 1e9;
  }
  // "80 GB (79.65 GiB reported)", or "40 GB" where unmeasured: the memory as
  // capacity_bytes() reads it, for messages.
  std::string memory_text() const;
};

struct NodeSpec {
  int gpus_per_node = 1;
  double intra_node_gbps = 0;  // per GPU, one direction: NVLink/NVSwitch, or the PCIe slot
  double inter_node_gbps = 0;  // per node, one direction: the network (all its NICs)
  std::string intra_link;      // e.g. "NVLink 3 / NVSwitch", "PCIe 3.0 x16"
  std::string inter_link;      // e.g. "8 x 200 Gb/s InfiniBand HDR"
  // The network is a common configuration the catalog assumes for this GPU,
  // not a fact of a known cluster: a model that carries a measured cluster's
  // communication to this one keeps the measured network instead.
  bool inter_node_assumed = false;
  // How a collective's per-step latency grows with the bytes the step moves:
  // latency · (bytes / 64 KiB)^exponent, in [0, 1). 0 (every catalog GPU):
  // a fixed latency per step, as NCCL's rings behave. A CPU whose Gloo
  // collectives wait on helper-thread hand-offs, more of them the larger
  // the message, measures more (examples/cpu-gpt: 0.40).
  double collective_latency_exponent = 0;
  // GPUs under one operating system (what a launcher calls a node: Slurm's
  // nodes, torchrun's --nproc-per-node), where it is fewer than gpus_per_node:
  // a GB200 NVL72's NVLink domain of 72 GPUs spans 18 compute trays of 4.
  // 0: the same as gpus_per_node.
  int gpus_per_host = 0;
  // The GPUs a launch starts on one host: gpus_per_host, at most a node's.
  int launch_gpus_per_host() const {
    return gpus_per_host > 0 && gpus_per_host < gpus_per_node ? gpus_per_host : gpus_per_node;
  }
};

struct HardwareProfile {
  std::string name;       // catalog key, lowercase: "a100-40gb"
  std::string full_name;  // "NVIDIA A100-SXM4-40GB"
  GpuSpec gpu;
  NodeSpec node;
  std::string sources;  // where the figures come from (free text)
  std::string origin;   // "built-in", or the hardware file it was read from
};

// The built-in catalog, in a fixed order.
const std::vector<HardwareProfile>& builtin_hardware();
// The built-in entry called `name` (also the aliases, such as "tesla-t4" or
// "a100"), or nullopt. Case, spaces, hyphens and underscores do not matter:
// "A100 40GB" and "a100_40gb" are a100-40gb.
std::optional<HardwareProfile> find_builtin_hardware(const std::string& name);
// The catalog key `name` stands for where it is one of an entry's aliases, not
// the key itself in any spelling ("a100" gives "a100-40gb"); nullopt for a key,
// an unknown name or a path.
std::optional<std::string> builtin_alias_target(const std::string& name);
// The built-in entry a free-text label names ("NVIDIA H200 141GB (libtorch
// 2.11)" is h200, "Tesla A100 80GB" a100-80gb): the label as a name, else
// the one entry named by two neighbouring words of it, else by one word
// (words of letters and digits both; a bare "16" or "cuda" names nothing).
// nullopt when none, or several different entries, match.
std::optional<HardwareProfile> find_builtin_hardware_in(const std::string& label);
// Catalog keys, in catalog order.
std::vector<std::string> builtin_hardware_names();

// Why `hw` cannot train in precision `p`, or nullopt: FP8 needs FP8 tensor
// cores; bf16 (and amp-fp32-master's bf16 autocast) is refused on a device
// without bf16 units: whose tensor cores take fp16 only (Volta, Turing), or
// that has none (Pascal, a CPU), where bf16 products fall back to emulation,
// several times slower than fp16 (PyTorch's is_bf16_supported() is false there).
std::optional<std::string> missing_precision_unit(const HardwareProfile& hw, Precision p);

// Why `hw` has no fused attention kernel for Megatron-Core to run, or
// nullopt: Transformer Engine's flash and fused (cuDNN) attention need
// Ampere (sm80) or later, which bf16 tensor cores mark in this catalog
// (Volta and Turing have fp16 tensor cores only). Context parallelism runs
// only on those kernels.
std::optional<std::string> missing_fused_attention(const HardwareProfile& hw);
// Why fused attention cannot run in precision `p`, or nullopt: Transformer
// Engine's flash and fused (cuDNN) kernels take fp16 and bf16 tensors only
// (fp8 and AMP run attention in bf16), so an fp32 run has the unfused kernel
// alone, and no context parallelism.
std::optional<std::string> fused_attention_precision_problem(Precision p);

// What `layout` asks of `hw` that it has no unit for, or nullopt: its
// precision (field "precision"; missing_precision_unit), or fused attention,
// asked for ("flash_attention") or run by context parallelism ("cp"; the
// kernels missing_fused_attention names). The field is the configuration
// column, as check_layout's.
std::optional<LayoutProblem> missing_unit(const HardwareProfile& hw, const ParallelLayout& layout);

// The precision of a plan that names none: bf16; fp16 where the tensor cores
// take fp16 only; fp32 on a device with no tensor cores (Pascal, a CPU).
Precision default_training_precision(const HardwareProfile& hw);

// The interconnect prior of the all-reduce step-time models (hardware.h)
// for this hardware: its links' nominal bandwidths and HardwareSpec's
// default latencies.
HardwareSpec interconnect_spec(const HardwareProfile& h);

// One timing of one workload on one device, for measuring how much of its
// datasheet peak a device sustains (NeuSight's single-GPU table).
struct DeviceTiming {
  std::string workload;  // the same workload (model, batch, mode, ...) on every device
  std::string device;    // a catalog name or alias
  double seconds = 0;
};

// Per device, the fraction of its fp32 peak it sustains relative to
// `reference` (1.0): the least-squares fit of
//   log t(w, d) = log W_w - log(fp32_peak_d) - log f_d
// over every workload timed on two or more devices. Devices must be in the
// catalog (an unknown one throws InputError naming it). Sorted by name.
struct SustainedFraction {
  std::string device;
  double fraction = 1;
  int timings = 0;
  double rms_log_residual = 0;
};
std::vector<SustainedFraction> fit_sustained_fractions(const std::vector<DeviceTiming>& timings,
                                                       const std::string& reference = "a100-pcie-40gb");

}  // namespace trainplan::structure
