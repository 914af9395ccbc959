#include "models/step_time_corrected.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/nodes.h"
#include "models/registry.h"

namespace trainplan::models {

int AllreduceLocalModel::nodes_of(int workers, int nodes) const {
  int g = p_.physical.gpus_per_node;
  return nodes > 0 ? nodes : nodes_for(workers, g);
}

void AllreduceLocalModel::fit(const SampleSet& set) {
  physical_.fit(set);
  // One worker has no sync: its measured time is the compute time, so its
  // deviation from alpha + beta b goes inside the physical model (where sync
  // hides part of it for more workers) rather than on the whole step.
  if (p_.compute_correction) {
    std::map<double, std::pair<double, int>> one;
    for (const auto& s : set.samples)
      if (s.workers == 1) {
        double p = physical_.predict(s.batch, 1, 1);
        if (p > 0) one[s.batch].first += std::log(s.epoch_time_s / p), one[s.batch].second += 1;
      }
    std::vector<std::pair<double, double>> f;
    for (const auto& [b, x] : one) f.emplace_back(b, x.first / x.second);
    physical_.set_compute_log_correction(std::move(f));
  }
  // Mean log residual per distinct configuration (repeated trials are one point).
  std::map<std::tuple<int, int, double>, std::pair<double, int>> cells;
  for (const auto& s : set.samples) {
    int n = nodes_of(s.workers, s.nodes);
    double p = physical_.predict(s.batch, s.workers, n);
    if (!(p > 0)) continue;
    auto& c = cells[{n, s.workers, s.batch}];
    c.first += std::log(s.epoch_time_s / p);
    c.second += 1;
  }
  struct Pt {
    Key key;
    double batch, e;
  };
  std::vector<Pt> pts;
  for (const auto& [k, c] : cells) pts.push_back({{std::get<0>(k), std::get<1>(k)}, std::get<2>(k), c.first / c.second});

  // Worker counts seen per node count: with one, a placement level cannot be
  // told apart from the node count's level, so only z(n) is fitted there.
  std::map<int, std::set<int>> counts_at;
  for (const auto& q : pts) counts_at[q.key.first].insert(q.key.second);
  auto has_v = [&](const Key& k) { return k.first <= 1 || counts_at[k.first].size() > 1; };
  std::map<double, double> u;
  std::map<int, double> z;
  std::map<Key, double> v;
  for (const auto& q : pts) {
    u[q.batch] = 0;
    if (q.key.first > 1) z[q.key.first] = 0;
    if (has_v(q.key)) v[q.key] = 0;
  }
  auto z_of = [&](int n) { return n > 1 ? z[n] : 0.0; };
  auto v_of = [&](const Key& k) { return has_v(k) ? v[k] : 0.0; };
  for (int it = 0; it < 20; ++it) {
    std::map<double, std::pair<double, int>> su;
    for (const auto& q : pts) su[q.batch].first += q.e - z_of(q.key.first) - v_of(q.key), su[q.batch].second += 1;
    for (auto& [b, x] : su) u[b] = x.first / (x.second + 1);
    std::map<int, std::pair<double, int>> sz;
    for (const auto& q : pts)
      if (q.key.first > 1) sz[q.key.first].first += q.e - u[q.batch] - v_of(q.key), sz[q.key.first].second += 1;
    for (auto& [n, x] : sz) z[n] = x.first / (x.second + 1);
    std::map<Key, std::pair<double, int>> sv;
    for (const auto& q : pts)
      if (has_v(q.key)) sv[q.key].first += q.e - u[q.batch] - z_of(q.key.first), sv[q.key].second += 1;
    for (auto& [k, x] : sv) v[k] = x.first / (x.second + 1);
  }
  z_.assign(z.begin(), z.end());
  u_.assign(u.begin(), u.end());
  v_ = v;
  w_.clear();
  if (p_.interaction)
    for (const auto& q : pts) w_[q.key].emplace_back(q.batch, q.e - u[q.batch] - z_of(q.key.first) - v_of(q.key));
  for (auto& [k, s] : w_) std::sort(s.begin(), s.end());
}

double AllreduceLocalModel::at(const Series& s, double x) {
  if (s.empty()) return 0;
  if (x <= s.front().first) return s.front().second;
  if (x >= s.back().first) return s.back().second;
  size_t i = std::upper_bound(s.begin(), s.end(), std::make_pair(x, double(INFINITY))) - s.begin();
  const auto& [x0, y0] = s[i - 1];
  const auto& [x1, y1] = s[i];
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

double AllreduceLocalModel::v_at(int nodes, int workers) const {
  auto it = v_.find({nodes, workers});
  if (it != v_.end()) return it->second;
  auto hi = v_.lower_bound({nodes, workers});
  if (hi == v_.end() || hi->first.first != nodes || hi == v_.begin()) return 0;
  auto lo = std::prev(hi);
  if (lo->first.first != nodes) return 0;
  double f = double(workers - lo->first.second) / double(hi->first.second - lo->first.second);
  return (1 - f) * lo->second + f * hi->second;
}

double AllreduceLocalModel::correction(double batch, int workers, int nodes) const {
  nodes = nodes_of(workers, nodes);
  double d = at(u_, batch) + v_at(nodes, workers);
  if (nodes > 1) d += at(z_, nodes);
  auto it = w_.find({nodes, workers});
  if (it != w_.end()) d += at(it->second, batch);
  return d;
}

double AllreduceLocalModel::predict(double batch, int workers, int nodes) const {
  return physical_.predict(batch, workers, nodes) * std::exp(correction(batch, workers, nodes));
}

std::string AllreduceLocalModel::describe() const {
  double umax = 0, vmax = 0, wmax = 0;
  std::string zs;
  for (const auto& [n, x] : z_) zs += fmt::format("{}z({:g}) = {:.3f}", zs.empty() ? "" : ", ", n, x);
  for (const auto& [b, x] : u_) umax = std::max(umax, std::abs(x));
  for (const auto& [k, x] : v_) vmax = std::max(vmax, std::abs(x));
  for (const auto& [k, s] : w_)
    for (const auto& [b, x] : s) wmax = std::max(wmax, std::abs(x));
  return physical_.describe() +
         fmt::format("\n  log correction: {} batch levels (max |u| {:.3f}), {} placement levels (max |v| {:.3f}), "
                     "per-series remainder max |w| {:.3f}; node-count levels: {}",
                     u_.size(), umax, v_.size(), vmax, wmax, zs.empty() ? "none" : zs);
}

static TimeModelRegistrar reg_local(
    "allreduce-local",
    "allreduce-physical times a shrunk log-residual correction by batch and placement (physical shape outside the samples)",
    [](const ModelParams& mp) {
      AllreduceLocalParams p;
      p.physical.comm_profile = mp.comm_profile;
      if (mp.hardware) p.physical.hardware = *mp.hardware;
      return std::make_unique<AllreduceLocalModel>(p);
    });

}  // namespace trainplan::models
