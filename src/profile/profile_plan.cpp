#include "profile/profile_plan.h"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include "core/error.h"
#include "io/csv.h"

namespace trainplan::profile {

GridSpec paper_grid() {
  GridSpec g;
  for (int r = 1; r <= 8; ++r) g.workers.push_back(r);
  for (int i = 0; i < 10; ++i) g.batches.push_back(int(std::lround(16 + i * 240.0 / 9)));
  g.epochs = {1, 20, 40};
  return g;
}

GridSpec local_grid() { return {{16, 32, 64, 128}, {1, 2}, {1, 2}}; }

namespace {

void normalise_list(std::vector<int>& v, const char* option) {
  if (v.empty()) throw InputError("", 0, option, "the list is empty");
  for (int x : v)
    if (x < 1) throw InputError("", 0, option, fmt::format("{} is not a positive integer", x));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

GridSpec normalise(GridSpec g) {
  normalise_list(g.batches, "--batches");
  normalise_list(g.workers, "--workers");
  normalise_list(g.epochs, "--epochs");
  return g;
}

std::vector<TrialKey> grid_trials(const GridSpec& g) {
  std::vector<TrialKey> out;
  for (int e : g.epochs)
    for (int r : g.workers)
      for (int b : g.batches) out.push_back({b, r, e});
  return out;
}

std::vector<TrialKey> budget_order(const GridSpec& g) {
  std::vector<TrialKey> all = grid_trials(g);
  int b0 = g.batches.front(), b1 = g.batches.back(), bm = g.batches[g.batches.size() / 2];
  int r0 = g.workers.front(), r1 = g.workers.back();
  int e0 = g.epochs.front(), e1 = g.epochs.back(), em = g.epochs[g.epochs.size() / 2];
  std::vector<TrialKey> seeds = {{b1, r0, e0}, {b0, r0, e0}, {b1, r1, e0}, {b0, r1, e0},
                                 {b0, r0, e1}, {b1, r0, e1}, {bm, r0, em}};
  std::vector<TrialKey> order;
  std::set<TrialKey> chosen;
  for (const auto& k : seeds)
    if (chosen.insert(k).second) order.push_back(k);

  // Normalised coordinates: log2 batch, workers, epochs, each scaled to [0, 1].
  auto scale = [](double v, double lo, double hi) { return hi > lo ? (v - lo) / (hi - lo) : 0.0; };
  auto coords = [&](const TrialKey& k) {
    return std::array<double, 3>{scale(std::log2(k.batch), std::log2(b0), std::log2(b1)), scale(k.workers, r0, r1),
                                 scale(k.epochs, e0, e1)};
  };
  std::vector<double> nearest(all.size(), std::numeric_limits<double>::infinity());
  auto update = [&](const TrialKey& c) {
    auto p = coords(c);
    for (size_t i = 0; i < all.size(); ++i) {
      auto q = coords(all[i]);
      double d = 0;
      for (int j = 0; j < 3; ++j) d += (p[j] - q[j]) * (p[j] - q[j]);
      nearest[i] = std::min(nearest[i], d);
    }
  };
  for (const auto& k : order) update(k);
  while (order.size() < all.size()) {
    size_t best = all.size();
    for (size_t i = 0; i < all.size(); ++i) {
      if (chosen.count(all[i])) continue;
      if (best == all.size() || nearest[i] > nearest[best]) best = i;
    }
    chosen.insert(all[best]);
    order.push_back(all[best]);
    update(all[best]);
  }
  return order;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<int> out;
  for (const auto& f : io::split_csv_line(text)) {
    auto v = io::parse_finite(f);
    if (!v || *v != std::floor(*v) || *v < 1 || *v > 1e9)
      throw InputError("", 0, option, fmt::format("'{}' is not a positive integer (expected a list like 1,2,4)", f));
    out.push_back(int(*v));
  }
  if (out.empty()) throw InputError("", 0, option, "the list is empty");
  return out;
}

double parse_duration(const std::string& text, const std::string& option) {
  auto fail = [&](const std::string& why) {
    throw InputError("", 0, option,
                     fmt::format("'{}' is not a duration{} (examples: 180s, 3m, 1h30m, 60d, 2w, 90)", text, why));
  };
  double total = 0;
  size_t i = 0;
  int last_unit = 6;  // the rank of the previous unit: w 5, d 4, h 3, m 2, s 1
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
    if (j == i) fail("");
    char* end = nullptr;
    const std::string number = text.substr(i, j - i);
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size()) fail("");  // "." or "1.2.3"
    if (j == text.size()) {
      // A bare number is seconds only on its own: "2h30" could mean minutes.
      if (i > 0) fail(fmt::format(": give {}'s unit", number));
      total = v;
      i = j;
      break;
    }
    const char u = text[j++];
    const int rank = u == 'w' ? 5 : u == 'd' ? 4 : u == 'h' ? 3 : u == 'm' ? 2 : u == 's' ? 1 : 0;
    if (rank == 0)
      fail(u == 'e' || u == 'E' ? std::string(": exponents are not read (1e3 is 1000 or 16m40s)")
                                : fmt::format(": '{}' is not a unit (w, d, h, m, s)", u));
    if (rank >= last_unit) fail(": each unit once, largest first");
    last_unit = rank;
    total += v * (rank == 5 ? 7 * 86400 : rank == 4 ? 86400 : rank == 3 ? 3600 : rank == 2 ? 60 : 1);
    i = j;
  }
  if (text.empty()) fail("");
  if (!(total > 0)) fail(": it must be longer than 0");
  return total;
}

std::vector<TrialKey> with_time_trials(const std::vector<TrialKey>& order) {
  std::vector<TrialKey> out;
  std::set<std::pair<int, int>> seen;
  for (const auto& k : order)
    if (k.epochs > 0 && seen.insert({k.batch, k.workers}).second) out.push_back({k.batch, k.workers, 0});
  for (const auto& k : order)
    if (k.epochs > 0) out.push_back(k);
  return out;
}

std::vector<TrialKey> time_and_global_batch_plan(const GridSpec& g, bool longest_only) {
  std::vector<TrialKey> out;
  std::map<long, std::pair<int, int>> by_global;  // global batch -> the (b, r) that trains it
  for (int r : g.workers)
    for (int b : g.batches) {
      out.push_back({b, r, 0});
      auto [it, fresh] = by_global.try_emplace(long(b) * r, std::pair(b, r));
      if (!fresh && r > it->second.second) it->second = {b, r};
    }
  for (int e : g.epochs) {
    if (longest_only && e != g.epochs.back()) continue;
    for (const auto& [global, br] : by_global) out.push_back({br.first, br.second, e});
  }
  return out;
}

void CostEstimator::add(const TrialRecord& r) {
  records_.push_back(r);
  refit();
}

void CostEstimator::add_all(const std::vector<TrialRecord>& records) {
  records_.insert(records_.end(), records.begin(), records.end());
  refit();
}

void CostEstimator::refit() {
  double wall_sum = 0;
  for (const auto& r : records_) wall_sum += r.wall_s;
  mean_wall_ = records_.empty() ? 0 : wall_sum / double(records_.size());
  // Ridge least squares on the ok trials, towards the prior (0, -0.5) for (c1, c2).
  const double prior[3] = {0, 0, -0.5};
  const double lambda = 0.3;
  Eigen::Matrix3d A = Eigen::Matrix3d::Zero();
  Eigen::Vector3d y = Eigen::Vector3d::Zero();
  n_ok_ = 0;
  for (const auto& r : records_) {
    if (r.status != TrialStatus::kOk || !r.epoch_time_s || *r.epoch_time_s <= 0) continue;
    Eigen::Vector3d x(1, std::log(r.key.batch), std::log(r.key.workers));
    A += x * x.transpose();
    y += x * std::log(*r.epoch_time_s);
    ++n_ok_;
  }
  if (n_ok_ == 0) return;
  for (int j = 1; j < 3; ++j) {
    A(j, j) += lambda;
    y(j) += lambda * prior[j];
  }
  A(0, 0) += 1e-9;
  Eigen::Vector3d c = A.ldlt().solve(y);
  for (int j = 0; j < 3; ++j) c_[j] = c(j);
  // wall ≈ overhead + scale · e · t_epoch(b, r), least squares with overhead
  // >= 0 and scale > 0. The scale absorbs what epoch_time_s leaves out
  // (evaluation, or a program that times only part of its epoch).
  std::vector<std::pair<double, double>> pts;  // (e · t_hat, wall)
  double time_wall = 0;
  int time_trials = 0;
  for (const auto& r : records_) {
    if (r.status != TrialStatus::kOk || !r.epoch_time_s) continue;
    if (r.key.epochs == 0) {  // a time trial's wall does not grow with epochs: priced apart
      time_wall += r.wall_s;
      ++time_trials;
      continue;
    }
    double t = std::exp(c_[0] + c_[1] * std::log(r.key.batch) + c_[2] * std::log(r.key.workers));
    pts.push_back({r.key.epochs * t, r.wall_s});
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0, n = double(pts.size());
  for (auto [x, y] : pts) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  mean_time_trial_wall_ = time_trials ? std::optional<double>(time_wall / time_trials) : std::nullopt;
  if (pts.empty()) return;
  double var = sxx - sx * sx / n;
  scale_ = 1;
  overhead_ = std::max(0.0, (sy - sx) / n);
  if (pts.size() >= 2 && var > 1e-12 * sxx) {
    scale_ = (sxy - sx * sy / n) / var;
    overhead_ = (sy - scale_ * sx) / n;
    if (overhead_ < 0) {  // through the origin instead
      overhead_ = 0;
      scale_ = sxy / sxx;
    }
    if (scale_ <= 0) {  // wall time does not grow with the work: a constant
      scale_ = 0;
      overhead_ = sy / n;
    }
  }
}

std::optional<double> CostEstimator::estimate(const TrialKey& k) const {
  if (records_.empty()) return std::nullopt;
  if (n_ok_ == 0) return mean_wall_;  // only failures so far: they cost about this much
  if (k.epochs == 0) return mean_time_trial_wall_.value_or(overhead_);
  double t = std::exp(c_[0] + c_[1] * std::log(k.batch) + c_[2] * std::log(k.workers));
  return overhead_ + scale_ * k.epochs * t;
}

}  // namespace trainplan::profile
