#include "models/gemm_time.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "numerics/levenberg_marquardt.h"

namespace trainplan::models {

double gemm_seconds(double m, double k, double n, double batch, double element_bytes, double peak_flops,
                    double bandwidth, const GemmEfficiency& e) {
  double compute = 2 * m * k * n / (peak_flops * e.peak_fraction);
  double memory = element_bytes * (m * k + k * n + m * n) / (bandwidth * e.memory_fraction);
  return batch * std::max(compute, memory) + e.launch_s;
}

GemmEfficiency fit_gemm_efficiency(const std::vector<GemmTiming>& timings, double element_bytes, double peak_flops,
                                   double bandwidth) {
  if (timings.size() < 3) throw InputError("", 0, "", "fitting a GEMM efficiency needs at least three timings");
  double total_flops = 0;
  for (const auto& g : timings) total_flops += 2 * g.m * g.k * g.n;
  auto residuals = [&](const Eigen::VectorXd& x) {
    GemmEfficiency e{x(0), x(1), x(2) * 1e-6};
    Eigen::VectorXd r(timings.size());
    for (size_t i = 0; i < timings.size(); ++i) {
      const auto& g = timings[i];
      double w = std::sqrt(2 * g.m * g.k * g.n / total_flops);
      r(i) = w * (gemm_seconds(g.m, g.k, g.n, 1, element_bytes, peak_flops, bandwidth, e) / g.seconds - 1);
    }
    return r;
  };
  Eigen::VectorXd x0(3), lo(3), hi(3);
  x0 << 0.8, 0.8, 5;
  lo << 0.05, 0.05, 0;
  hi << 1, 1, 100;
  Eigen::Array<bool, Eigen::Dynamic, 1> fixed = Eigen::Array<bool, Eigen::Dynamic, 1>::Constant(3, false);
  auto res = numerics::bounded_lm(residuals, x0, lo, hi, fixed);
  return {res.x(0), res.x(1), res.x(2) * 1e-6};
}

}  // namespace trainplan::models
