#include "models/epoch_forecaster.h"

#include "models/pooled_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/median.h"
#include "models/metric_loss.h"
#include "numerics/golden_section.h"

namespace trainplan::models {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kGrid = 60;  // grid points of a family's rate c (log-spaced)
constexpr int kGoldenIterations = 30;  // refinements of the best grid point's neighbourhood

using Family = EpochForecaster::Family;
using Curve = EpochForecaster::Curve;

// The families fitted by the ensemble with their range of c (log-spaced).
struct FamilySpec {
  Family family;
  double c_lo, c_hi;
};
constexpr FamilySpec kFamilies[] = {
    {Family::kPower, 0.02, 4},
    {Family::kExp, 0.05, 50},
    {Family::kHyperbola, 0.05, 500},
    {Family::kLog, 1, 1},
};

double g_of(Family f, double c, double scale, double k) {
  switch (f) {
    case Family::kPower: return std::pow(std::max(k, 0.5), -c);
    case Family::kExp: return std::exp(-c * k / scale);
    case Family::kHyperbola: return 1 / (1 + c * k / scale);
    case Family::kLog: return -std::log(std::max(k, 0.5));
    default: return 0;
  }
}

// Weighted least squares of y = a + b g with b >= 0 (the curve improves).
struct Lsq {
  double a = 0, b = 0, sse = kInf;
};
Lsq fit_ab(const std::vector<double>& g, const std::vector<double>& y, const std::vector<double>& w, size_t n) {
  double sw = 0, sg = 0, sy = 0;
  for (size_t i = 0; i < n; ++i) sw += w[i], sg += w[i] * g[i], sy += w[i] * y[i];
  const double mg = sg / sw, my = sy / sw;
  double vgg = 0, vgy = 0;
  for (size_t i = 0; i < n; ++i) vgg += w[i] * (g[i] - mg) * (g[i] - mg), vgy += w[i] * (g[i] - mg) * (y[i] - my);
  Lsq r;
  r.b = vgg > 0 ? std::max(0.0, vgy / vgg) : 0;
  r.a = my - r.b * mg;
  r.sse = 0;
  for (size_t i = 0; i < n; ++i) {
    const double e = r.a + r.b * g[i] - y[i];
    r.sse += w[i] * e * e;
  }
  return r;
}

// The best curve of family `s` on the first n points, weights w.
Curve fit_family(const FamilySpec& s, const std::vector<double>& k, const std::vector<double>& y,
                 const std::vector<double>& w, size_t n) {
  const double scale = std::max(k[n - 1], 1e-9);
  Curve best{s.family, 0, 0, 0, scale, 1};
  double best_sse = kInf;
  const int grid = s.c_lo == s.c_hi ? 1 : kGrid;
  std::vector<double> g(n);
  auto at = [&](double c) {
    for (size_t i = 0; i < n; ++i) g[i] = g_of(s.family, c, scale, k[i]);
    const Lsq r = fit_ab(g, y, w, n);
    if (r.sse < best_sse) best_sse = r.sse, best.a = r.a, best.b = r.b, best.c = c;
    return r.sse;
  };
  auto c_of = [&](double j) { return grid == 1 ? s.c_lo : s.c_lo * std::pow(s.c_hi / s.c_lo, j / (grid - 1)); };
  int best_j = 0;
  for (int j = 0; j < grid; ++j)
    if (const double before = best_sse; at(c_of(j)) < before) best_j = j;
  if (grid == 1) return best;
  // Golden section in log c between the best grid point's neighbours (at()
  // keeps the best curve it sees).
  numerics::golden_section_minimize([&](double j) { return at(c_of(j)); }, std::max(0, best_j - 1),
                                    std::min(grid - 1, best_j + 1), kGoldenIterations);
  return best;
}

// Weights halving every `half_life` share of the span up to point n - 1.
std::vector<double> recency_weights(const std::vector<double>& k, size_t n, double half_life) {
  std::vector<double> w(n, 1.0);
  if (half_life <= 0) return w;
  const double last = k[n - 1], span = std::max(half_life * last, 1e-9);
  for (size_t i = 0; i < n; ++i) w[i] = std::exp2(-(last - k[i]) / span);
  return w;
}

}  // namespace

const char* to_string(ForecastMethod m) {
  switch (m) {
    case ForecastMethod::kNaive: return "naive";
    case ForecastMethod::kOptimus: return "optimus";
    case ForecastMethod::kEnsemble: return "ensemble";
  }
  return "?";
}

std::optional<ForecastMethod> parse_forecast_method(const std::string& s) {
  for (auto m : {ForecastMethod::kNaive, ForecastMethod::kOptimus, ForecastMethod::kEnsemble})
    if (s == to_string(m)) return m;
  return std::nullopt;
}

const char* to_string(DeadlineVerdict v) {
  switch (v) {
    case DeadlineVerdict::kMet: return "met";
    case DeadlineVerdict::kMissed: return "missed";
    case DeadlineVerdict::kUncertain: return "uncertain";
    case DeadlineVerdict::kUnknown: return "unknown";
  }
  return "?";
}

DeadlineVerdict deadline_verdict(const EpochForecast& f, double deadline_s) {
  if (f.reached_at) {
    if (!f.finish_s) return DeadlineVerdict::kUnknown;
    return *f.finish_s <= deadline_s ? DeadlineVerdict::kMet : DeadlineVerdict::kMissed;
  }
  if (f.never) return DeadlineVerdict::kMissed;
  if (f.elapsed_s && *f.elapsed_s > deadline_s) return DeadlineVerdict::kMissed;
  if (!f.finish_s) return DeadlineVerdict::kUnknown;
  const double lo = f.finish_lo_s.value_or(*f.finish_s), hi = f.finish_hi_s.value_or(*f.finish_s);
  if (hi <= deadline_s) return DeadlineVerdict::kMet;
  if (lo > deadline_s) return DeadlineVerdict::kMissed;
  return DeadlineVerdict::kUncertain;
}

double Curve::value(double k) const {
  switch (family) {
    case Family::kLine: return a + b * k;
    case Family::kOptimus: {
      const double d = a * k + b;
      return d > 0 ? 1 / d + c : kInf;
    }
    default: return a + b * g_of(family, c, scale, k);
  }
}

std::optional<double> Curve::epoch_at(double level) const {
  // A line that does not improve (the naive forecast of a run getting worse)
  // reaches a level later only where it is already there, flat.
  if (family == Family::kLine && b >= 0) return b == 0 && a <= level ? std::optional<double>(0.0) : std::nullopt;
  if (value(0) <= level) return 0.0;
  double k = kInf;
  switch (family) {
    case Family::kLine:
      if (b < 0) k = (level - a) / b;
      break;
    case Family::kOptimus:
      if (level > c && a > 0) k = (1 / (level - c) - b) / a;
      break;
    case Family::kLog:
      if (b > 0) k = std::exp((a - level) / b);
      break;
    default: {
      if (!(b > 0) || !(level > a)) break;
      const double r = (level - a) / b;  // the g the curve must fall to
      if (family == Family::kPower) k = std::pow(r, -1 / c);
      if (family == Family::kExp) k = r >= 1 ? 0 : -scale / c * std::log(r);
      if (family == Family::kHyperbola) k = scale / c * (1 / r - 1);
    }
  }
  if (!std::isfinite(k)) return std::nullopt;
  return std::max(k, 0.0);
}

EpochForecaster::EpochForecaster(EpochForecasterParams p, std::vector<ForecastError> prior)
    : p_(p), prior_(std::move(prior)) {
  if (!(p_.coverage > 0 && p_.coverage < 1)) throw std::invalid_argument("coverage must lie in (0, 1)");
  if (p_.min_points < 2) p_.min_points = 2;
}

std::vector<Curve> EpochForecaster::fit_ensemble() const {
  // Past kMostFitPoints epochs, the newest half of them whole and the older
  // ones thinned evenly to the other half: each fit then costs a bounded
  // time, and the recent epochs (the recency weights' and the hold-out's)
  // are all there.
  std::vector<double> thinned_k, thinned_y;
  if (epochs_.size() > kMostFitPoints) {
    const size_t recent = kMostFitPoints / 2, older = epochs_.size() - recent;
    for (size_t i : thin_indices(older, kMostFitPoints - recent))
      thinned_k.push_back(epochs_[i]), thinned_y.push_back(y_[i]);
    thinned_k.insert(thinned_k.end(), epochs_.end() - long(recent), epochs_.end());
    thinned_y.insert(thinned_y.end(), y_.end() - long(recent), y_.end());
  }
  const bool thin = !thinned_k.empty();
  const std::vector<double>& ks = thin ? thinned_k : epochs_;
  const std::vector<double>& ys = thin ? thinned_y : y_;
  const size_t n = ks.size();
  std::vector<double> weight(std::size(kFamilies), 1.0);
  const size_t held = static_cast<size_t>(std::ceil(p_.holdout_share * double(n)));
  const size_t m = n - std::min(held, n);
  if (held > 0 && m >= p_.min_points) {
    const auto w = recency_weights(ks, m, p_.recent_half_life);
    double var = 0, mean = 0;
    for (size_t i = 0; i < n; ++i) mean += ys[i] / double(n);
    for (size_t i = 0; i < n; ++i) var += (ys[i] - mean) * (ys[i] - mean) / double(n);
    for (size_t f = 0; f < std::size(kFamilies); ++f) {
      const Curve c = fit_family(kFamilies[f], ks, ys, w, m);
      double mse = 0;
      for (size_t i = m; i < n; ++i) mse += std::pow(c.value(ks[i]) - ys[i], 2) / double(n - m);
      weight[f] = 1 / (mse + 1e-12 * var + 1e-300);
    }
  }
  const auto w = recency_weights(ks, n, p_.recent_half_life);
  std::vector<Curve> out;
  double total = 0;
  for (double x : weight) total += x;
  for (size_t f = 0; f < std::size(kFamilies); ++f) {
    Curve c = fit_family(kFamilies[f], ks, ys, w, n);
    c.weight = weight[f] / total;
    out.push_back(c);
  }
  return out;
}

EpochForecaster::Fit EpochForecaster::fit_now() const {
  const size_t n = epochs_.size();
  Fit f;
  f.epochs_seen = epochs_.back();
  f.step = n >= 2 ? epochs_[n - 1] - epochs_[n - 2] : std::max(epochs_.back(), 1.0);
  f.best_y = *std::min_element(y_.begin(), y_.end());
  switch (p_.method) {
    case ForecastMethod::kNaive:
      if (n >= 2) {
        const double b = (y_[n - 1] - y_[n - 2]) / (epochs_[n - 1] - epochs_[n - 2]);
        f.curves.push_back({Family::kLine, y_[n - 1] - b * epochs_[n - 1], b, 0, 1, 1});
      }
      break;
    case ForecastMethod::kOptimus:
      if (optimus_ok_ && optimus_->fitted()) {
        // loss = offset - metric (max) or metric - offset (min), y = -metric or metric.
        const double shift = p_.direction == MetricDirection::kMax ? -optimus_offset_ : optimus_offset_;
        f.curves.push_back({Family::kOptimus, optimus_->beta0(), optimus_->beta1(), optimus_->beta2() + shift, 1, 1});
      }
      break;
    case ForecastMethod::kEnsemble:
      if (n >= p_.min_points) f.curves = fit_ensemble();
      break;
  }
  return f;
}

std::optional<double> EpochForecaster::predict(const Fit& f, double level) {
  if (f.curves.empty()) return std::nullopt;
  // The median over the families that reach the level: a saturating family
  // that stops short says more about its asymptote than about the run.
  std::vector<double> v, w;
  for (const Curve& c : f.curves) {
    const auto k = c.epoch_at(level);
    if (!(c.weight > 0) || !k) continue;
    v.push_back(*k);
    w.push_back(c.weight);
  }
  if (v.empty()) return std::nullopt;
  const double k = weighted_median(v, w);
  if (!std::isfinite(k)) return std::nullopt;
  // The data have not met the level yet: the earliest it can be is the next epoch.
  return std::max(k, f.epochs_seen + f.step);
}

std::optional<double> EpochForecaster::fitted_metric(double epoch, std::optional<double> reaching) const {
  if (fits_.empty() || epochs_.empty() || fits_.back().epochs_seen != epochs_.back()) return std::nullopt;
  const auto& curves = fits_.back().curves;
  const double level = reaching ? to_y(*reaching) : 0;
  const bool some_reach = reaching && std::any_of(curves.begin(), curves.end(), [&](const Curve& c) {
                            return c.weight > 0 && c.epoch_at(level);
                          });
  std::vector<double> v, w;
  for (const Curve& c : curves) {
    const double y = c.value(epoch);
    if (!(c.weight > 0) || !std::isfinite(y) || (some_reach && !c.epoch_at(level))) continue;
    v.push_back(y);
    w.push_back(c.weight);
  }
  if (v.empty()) return std::nullopt;
  const double y = weighted_median(v, w);
  return p_.direction == MetricDirection::kMax ? -y : y;
}

double EpochForecaster::never_weight(const Fit& f, double level) {
  double never = 0, total = 0;
  for (const Curve& c : f.curves) {
    if (!(c.weight > 0)) continue;
    total += c.weight;
    if (!c.epoch_at(level)) never += c.weight;
  }
  return total > 0 ? never / total : 0;
}

namespace {
// Past `most` items, every other one of the older half dropped: the newest
// half whole, the older ever sparser (each thinning halves them again).
template <class T>
void thin_older_half(std::vector<T>& v, size_t most) {
  if (v.size() <= most) return;
  const size_t older = v.size() / 2;
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i)
    if (i >= older || i % 2 == 0) v[out++] = std::move(v[i]);
  v.resize(out);
}
}  // namespace

void EpochForecaster::record_errors(double epoch, double y) {
  for (const Fit& f : fits_) {
    if (f.best_y <= y) continue;
    const auto pred = predict(f, y);
    if (!pred) continue;
    const double h = *pred / f.epochs_seen;
    own_errors_.push_back({h, std::log(epoch / *pred) / std::log1p(h)});
  }
  thin_older_half(own_errors_, kMostOwnErrors);
}

double EpochForecaster::recent_epoch_time() const {
  return median(std::vector<double>(times_.end() - long(std::min<size_t>(5, times_.size())), times_.end()));
}

void EpochForecaster::add(double epoch, double metric, std::optional<double> epoch_time_s) {
  if (!std::isfinite(epoch) || epoch <= 0) throw std::invalid_argument(fmt::format("epoch {} is not > 0", epoch));
  if (!epochs_.empty() && epoch <= epochs_.back())
    throw std::invalid_argument(fmt::format("epoch {} does not follow epoch {}", epoch, epochs_.back()));
  if (!std::isfinite(metric)) throw std::invalid_argument("metric is not a finite number");
  if (epoch_time_s && !(std::isfinite(*epoch_time_s) && *epoch_time_s > 0))
    throw std::invalid_argument("epoch_time_s must be finite and > 0");
  const double y = to_y(metric);
  if (!y_.empty() && y < *std::min_element(y_.begin(), y_.end())) record_errors(epoch, y);
  const double prev_epoch = epochs_.empty() ? 0 : epochs_.back();
  epochs_.push_back(epoch);
  y_.push_back(y);
  metric_.push_back(metric);
  if (epoch_time_s) {
    times_.push_back(*epoch_time_s / (epoch - prev_epoch));
  } else if (!times_.empty() && times_.size() + 1 == epochs_.size()) {
    // One line without its time in a timed run: the epoch ran at the run's
    // recent rate (the median of its last five), rather than every later
    // finish time being lost.
    times_.push_back(recent_epoch_time());
  } else {
    times_.clear();  // untimed from the start: finish times would be guesses
  }
  if (p_.method == ForecastMethod::kOptimus) {
    const MetricLoss loss = MetricLoss::for_values(p_.direction, metric_);
    try {
      if (!optimus_ || loss.offset != optimus_offset_) {
        // The loss transform moved (a value left its range): refit every point in the new units.
        optimus_ = std::make_unique<OptimusCurve>(p_.optimus);
        optimus_offset_ = loss.offset;
        std::vector<double> l;
        for (double m : metric_) l.push_back(loss.to_loss(m));
        if (epochs_.size() >= std::max<size_t>(p_.optimus.min_points, 2)) optimus_->fit(epochs_, l);
        else for (size_t i = 0; i < l.size(); ++i) optimus_->add_point(epochs_[i], l[i]);
      } else {
        optimus_->add_point(epoch, loss.to_loss(metric));
      }
      optimus_ok_ = true;
    } catch (const std::invalid_argument&) {
      optimus_ok_ = false;  // no finite fit yet: no forecast until one
      optimus_.reset();
    }
  }
  Fit f = fit_now();
  if (!f.curves.empty()) fits_.push_back(std::move(f));
  thin_older_half(fits_, kMostFits);
}

EpochForecast EpochForecaster::forecast(double target) const {
  EpochForecast r;
  r.epochs_seen = epochs_.size();
  if (epochs_.empty()) return r;
  const double level = to_y(target);
  r.last_epoch = epochs_.back();
  r.metric = metric_.back();
  r.best = p_.direction == MetricDirection::kMax ? -*std::min_element(y_.begin(), y_.end())
                                                  : *std::min_element(y_.begin(), y_.end());
  const bool timed = times_.size() == epochs_.size();
  double rate = 0;  // seconds per epoch ahead
  if (timed) {
    double elapsed = 0;
    for (size_t i = 0; i < times_.size(); ++i) elapsed += times_[i] * (epochs_[i] - (i ? epochs_[i - 1] : 0));
    r.elapsed_s = elapsed;
    rate = recent_epoch_time();
  }
  for (size_t i = 0; i < y_.size(); ++i) {
    if (y_[i] > level) continue;
    r.reached_at = epochs_[i];
    r.epoch = r.epoch_lo = r.epoch_hi = epochs_[i];
    if (timed) {
      double t = 0;
      for (size_t j = 0; j <= i; ++j) t += times_[j] * (epochs_[j] - (j ? epochs_[j - 1] : 0));
      r.finish_s = r.finish_lo_s = r.finish_hi_s = t;
    }
    return r;
  }
  if (fits_.empty() || fits_.back().epochs_seen != r.last_epoch) return r;
  const Fit& f = fits_.back();
  r.epoch = predict(f, level);
  r.never = !r.epoch;
  if (!r.epoch) return r;
  const double pred = *r.epoch, H = pred / f.epochs_seen;
  // The calibration errors nearest in horizon.
  std::vector<std::pair<double, double>> near;  // (distance in log h, z)
  for (const auto* pool : {&own_errors_, &prior_})
    for (const ForecastError& e : *pool) near.push_back({std::abs(std::log(e.horizon / H)), e.z});
  if (near.size() >= p_.min_calibration) {
    const size_t k = std::min(near.size(), p_.neighbours);
    std::nth_element(near.begin(), near.begin() + long(k - 1), near.end());
    std::vector<double> z;
    for (size_t i = 0; i < k; ++i) z.push_back(near[i].second);
    std::sort(z.begin(), z.end());
    // Split-conformal ranks: the ceil((k+1) q)-th smallest of k errors, +-infinity beyond them.
    const double alpha = 1 - p_.coverage;
    const long hi_rank = long(std::ceil((double(k) + 1) * (1 - alpha / 2)));
    const long lo_rank = long(std::floor((double(k) + 1) * (alpha / 2)));
    const double zlo = lo_rank >= 1 ? z[size_t(lo_rank - 1)] : -kInf;
    const double zhi = hi_rank <= long(k) ? z[size_t(hi_rank - 1)] : kInf;
    const double span = std::log1p(H);
    // The interval holds the point forecast too: calibration errors that all
    // lie on one side (a method biased early, as a straight line is) would
    // otherwise put the interval wholly beside the point, and the deadline
    // verdict, taken on the interval, would contradict the point.
    r.epoch_lo = std::max(std::min(pred * std::exp(zlo * span), pred), f.epochs_seen + f.step);
    r.epoch_hi = std::max({pred * std::exp(zhi * span), pred, *r.epoch_lo});
    // Most of the weight in families that level off short of the target:
    // the upper end is that the run never gets there.
    if (never_weight(f, level) > 0.5) r.epoch_hi = kInf;
  }
  if (timed) {
    auto at = [&](double e) { return *r.elapsed_s + (e - r.last_epoch) * rate; };
    r.finish_s = at(pred);
    if (r.epoch_lo) r.finish_lo_s = at(*r.epoch_lo), r.finish_hi_s = at(*r.epoch_hi);
  }
  return r;
}

}  // namespace trainplan::models
