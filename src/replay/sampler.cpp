#include "replay/sampler.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "core/error.h"

namespace trainplan::replay {

SamplingPlan named_plan(const std::string& name, uint64_t seed) {
  SamplingPlan p;
  p.seed = seed;
  if (name == "paper") {
    for (int r = 1; r <= 8; ++r) p.workers.push_back(r);
  } else if (name == "small") {
    p.workers = {1, 2, 4, 8};
    p.n_batches = 5;
    p.n_epochs = 2;
  } else if (name == "wide") {
    for (int r = 1; r <= 16; ++r) p.workers.push_back(r);
    p.n_batches = 12;
  } else {
    throw InputError("unknown sampling plan '" + name + "' (known: paper, small, wide)");
  }
  return p;
}

std::vector<std::string> plan_names() { return {"paper", "small", "wide"}; }

// Draws `n` distinct integers from [lo, hi], one per equal stratum where possible.
static std::vector<int> stratified_ints(int lo, int hi, int n, std::mt19937_64& rng) {
  std::vector<int> out;
  if (hi < lo) return out;
  int span = hi - lo + 1;
  if (n >= span) {
    for (int v = lo; v <= hi; ++v) out.push_back(v);
    return out;
  }
  std::set<int> chosen;
  double width = double(span) / n;
  for (int i = 0; i < n; ++i) {
    int a = lo + static_cast<int>(std::floor(i * width));
    int b = lo + static_cast<int>(std::floor((i + 1) * width)) - 1;
    b = std::max(a, std::min(b, hi));
    std::uniform_int_distribution<int> d(a, b);
    int v = d(rng);
    for (int tries = 0; chosen.count(v) && tries < 64; ++tries) v = d(rng);
    chosen.insert(v);
  }
  for (int v = lo; static_cast<int>(chosen.size()) < n && v <= hi; ++v) chosen.insert(v);
  return {chosen.begin(), chosen.end()};
}

DrawResult draw_samples(const ReplayOracle& oracle, const SamplingPlan& plan) {
  if (plan.workers.empty() || plan.n_batches < 1 || plan.n_epochs < 1)
    throw InputError("sampling plan is empty: needs workers, batches and epochs");
  std::mt19937_64 rng(plan.seed);
  auto [tlo, thi] = oracle.local_batch_range();
  // Clip to the plan's range where the trace allows it; otherwise use the trace's range.
  double lo = std::max(tlo, plan.batch_lo), hi = std::min(thi, plan.batch_hi);
  if (std::floor(hi) - std::ceil(lo) + 1 < plan.n_batches) lo = tlo, hi = thi;
  std::vector<int> batches = stratified_ints(static_cast<int>(std::ceil(lo)), static_cast<int>(std::floor(hi)),
                                             plan.n_batches, rng);
  int emax = plan.max_epochs;
  if (oracle.epoch_limit() > 0) emax = std::min(emax, oracle.epoch_limit());
  emax = std::max(1, emax);

  DrawResult res;
  res.samples.direction = oracle.direction();
  res.samples.dataset_size = oracle.dataset_size();
  res.samples.source = oracle.trace().dir;
  for (int r : plan.workers) {
    for (int b : batches) {
      int nodes = oracle.default_nodes(r);
      auto t = oracle.epoch_time(b, r, nodes);
      if (!t) {
        ++res.skipped_time;
        continue;
      }
      std::vector<int> lengths = stratified_ints(1, emax, plan.n_epochs, rng);
      for (int e : lengths) {
        Sample s;
        s.batch = b;
        s.workers = r;
        s.nodes = nodes;
        s.epochs = e;
        s.epoch_time_s = *t;
        s.model = oracle.name();
        s.hardware = "T4";  // the Pollux traces'; `trainplan sample --hardware` names another
        s.metric = oracle.metric(double(b) * r, e);
        if (!s.metric && !oracle.time_only()) ++res.metric_missing;
        if (auto g = oracle.gradient_stats(double(b) * r, e)) s.grad_sqr = g->first, s.grad_var = g->second;
        res.samples.samples.push_back(std::move(s));
      }
      if (plan.record_curves && !oracle.time_only()) {
        const Sample& longest = res.samples.samples.back();  // lengths ascend: the last trial drawn
        for (int k = 1; k < lengths.back(); ++k) {
          if (std::binary_search(lengths.begin(), lengths.end(), k)) continue;
          Sample c = longest;
          c.epochs = k;
          c.metric = oracle.metric(double(b) * r, k);
          if (!c.metric) continue;
          c.grad_sqr = c.grad_var = std::nullopt;
          res.samples.curve.push_back(std::move(c));
        }
      }
    }
  }
  if (res.samples.empty())
    throw InputError(oracle.trace().dir, 0, "", "the sampling plan produced no samples inside the measured region");
  return res;
}

}  // namespace trainplan::replay
