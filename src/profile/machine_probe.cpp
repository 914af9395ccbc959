#include "profile/machine_probe.h"

#include <time.h>

#include <algorithm>
#include <vector>

#include "core/median.h"

namespace trainplan::profile {
namespace {

// This thread's CPU time: other threads of the process (a server's requests,
// a progress ticker) must not count towards the probe.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace

double machine_probe_s() {
  constexpr int kN = 64, kProducts = 160, kRuns = 5;
  std::vector<float> a(kN * kN), b(kN * kN), c(kN * kN);
  for (int i = 0; i < kN * kN; ++i) a[i] = float(i % 7) * 0.1f, b[i] = float(i % 5) * 0.2f;
  std::vector<double> runs(kRuns);
  volatile float sink = 0;  // keeps the products from being optimised away
  for (double& run : runs) {
    const double t0 = thread_cpu_s();
    for (int r = 0; r < kProducts; ++r) {
      std::fill(c.begin(), c.end(), 0.0f);
      for (int i = 0; i < kN; ++i)
        for (int p = 0; p < kN; ++p) {
          const float x = a[i * kN + p];
          for (int j = 0; j < kN; ++j) c[i * kN + j] += x * b[p * kN + j];
        }
      sink = sink + c[(r * 37) % (kN * kN)];
    }
    run = std::max(thread_cpu_s() - t0, 1e-9);
  }
  return median(runs);
}

bool probes_differ(double a_s, double b_s) {
  constexpr double kSpeedChange = 1.10;
  return std::max(a_s, b_s) > kSpeedChange * std::min(a_s, b_s);
}

}  // namespace trainplan::profile
