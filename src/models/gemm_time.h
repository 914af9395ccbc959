// Time of one matrix product (m × k) · (k × n) on a GPU, as a roofline with a
// launch cost:
//   t = batch · max(2mkn / (peak · peak_fraction),
//                   bytes · (mk + kn + mn) / (bandwidth · memory_fraction)) + launch_s
// so a product's efficiency is a smooth function of its three dimensions:
// it reaches peak_fraction when all are large, and falls where the
// arithmetic intensity mkn / (mk + kn + mn) is below the GPU's ridge point.
// The fractions are global, per GPU generation; the defaults are the
// FLOP-weighted fit to bf16 products measured on an H100
// (examples/h100/gemm-sweep.csv; fit_gemm_efficiency, docs/LLM.md).
#pragma once
#include <vector>

namespace trainplan::models {

struct GemmEfficiency {
  // The share of the dense tensor peak that large products sustain.
  // Default: 0.74 (the H100 fit).
  double peak_fraction = 0.74;
  // The share of the memory bandwidth that small (memory-bound) products
  // and element-wise kernels reach. Default: 0.70 (the H100 fit).
  double memory_fraction = 0.70;
  // Seconds per kernel launch. Default: 5e-6 (the H100 fit).
  double launch_s = 5e-6;
};

// Seconds for `batch` products of (m × k)·(k × n) with `element_bytes`-byte
// operands on a GPU of `peak_flops` (FLOP/s) and `bandwidth` (bytes/s).
double gemm_seconds(double m, double k, double n, double batch, double element_bytes, double peak_flops,
                    double bandwidth, const GemmEfficiency& e);

// One timed product.
struct GemmTiming {
  double m = 0, k = 0, n = 0;
  double seconds = 0;
};

// The efficiency that fits `timings` best: bounded Levenberg-Marquardt on
// relative errors, each weighted by the square root of its FLOPs so the
// large products that dominate a training step count most. Throws
// InputError on fewer than three timings.
GemmEfficiency fit_gemm_efficiency(const std::vector<GemmTiming>& timings, double element_bytes, double peak_flops,
                                   double bandwidth);

}  // namespace trainplan::models
