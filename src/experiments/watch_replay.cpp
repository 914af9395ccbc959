#include "experiments/watch_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/cancel.h"
#include "core/error.h"
#include "core/median.h"
#include "replay/replay_oracle.h"

namespace trainplan::experiments {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Run {
  std::string network;
  MetricDirection direction = MetricDirection::kMax;
  std::vector<double> metric;  // one per row
};

// One forecast judged: its relative error and its interval (own calibration).
struct Judged {
  double error = kInf;
  bool covered = false, has_interval = false;
  double width = 0;
};

Judged judge(const models::EpochForecast& f, double truth) {
  Judged j;
  if (f.epoch) j.error = std::abs(*f.epoch - truth) / truth;
  if (f.epoch_lo && f.epoch_hi) {
    j.has_interval = true;
    j.covered = *f.epoch_lo <= truth && truth <= *f.epoch_hi;
    j.width = (*f.epoch_hi - *f.epoch_lo) / truth;
  }
  return j;
}

// The nearest-rank quantile of sorted values (infinities included).
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return NAN;
  const size_t r = static_cast<size_t>(std::ceil(q * double(sorted.size())));
  return sorted[std::clamp<size_t>(r, 1, sorted.size()) - 1];
}

// Replays one run with one forecaster; calls out(checkpoint index, forecast, true epoch) for each forecast.
template <class Out>
void replay_run(const Run& run, const WatchReplayParams& p, models::EpochForecaster& fc, Out out) {
  const size_t n = run.metric.size();
  const bool max = run.direction == MetricDirection::kMax;
  const double first = run.metric.front();
  const double best = max ? *std::max_element(run.metric.begin(), run.metric.end())
                          : *std::min_element(run.metric.begin(), run.metric.end());
  std::vector<double> targets, truth;
  for (double s : p.target_shares) {
    const double t = first + s * (best - first);
    for (size_t i = 0; i < n; ++i)
      if (max ? run.metric[i] >= t : run.metric[i] <= t) {
        targets.push_back(t), truth.push_back(double(i + 1));
        break;
      }
  }
  std::vector<size_t> seen_at;
  for (double c : p.checkpoints) seen_at.push_back(static_cast<size_t>(std::ceil(c * double(n) - 1e-9)));
  for (size_t i = 0; i < n; ++i) {
    check_cancelled();
    fc.add(double(i + 1), run.metric[i]);
    for (size_t c = 0; c < seen_at.size(); ++c) {
      if (seen_at[c] != i + 1 || i + 1 < p.min_rows_seen) continue;
      for (size_t t = 0; t < targets.size(); ++t)
        if (truth[t] > double(i + 1)) out(c, fc.forecast(targets[t]), truth[t]);
    }
  }
}

// The runs of the traces in `dirs` with at least `min_rows` rows; the others named in `skipped`.
std::vector<Run> read_runs(const std::vector<std::string>& dirs, size_t min_rows, std::vector<std::string>& skipped,
                           std::vector<std::string>& networks) {
  std::vector<Run> runs;
  for (const auto& dir : dirs) {
    auto oracle = replay::ReplayOracle::from_dir(dir);
    bool used = false;
    for (const auto& c : oracle.trace().curves) {
      if (c.rows.size() < min_rows) {
        skipped.push_back(fmt::format("{} B={}: {} rows", oracle.name(), c.global_batch, c.rows.size()));
        continue;
      }
      Run r{oracle.name(), oracle.direction(), {}};
      for (const auto& row : c.rows) r.metric.push_back(row.metric);
      runs.push_back(std::move(r));
      used = true;
    }
    if (used) networks.push_back(oracle.name());
  }
  return runs;
}

}  // namespace

std::vector<models::ForecastError> replay_calibration_errors(const std::vector<std::string>& dirs,
                                                             const models::EpochForecasterParams& fp0,
                                                             size_t min_rows, const std::string& exclude) {
  std::vector<std::string> skipped, networks;
  std::vector<models::ForecastError> out;
  for (const Run& run : read_runs(dirs, min_rows, skipped, networks)) {
    if (run.network == exclude) continue;
    models::EpochForecasterParams fp = fp0;
    fp.direction = run.direction;
    models::EpochForecaster fc(fp);
    for (size_t i = 0; i < run.metric.size(); ++i) {
      check_cancelled();
      fc.add(double(i + 1), run.metric[i]);
    }
    out.insert(out.end(), fc.own_errors().begin(), fc.own_errors().end());
  }
  return out;
}

WatchReplayReport run_watch_replay(const std::vector<std::string>& dirs, const WatchReplayParams& p) {
  WatchReplayReport rep;
  // One row per epoch of progress; a run must outlast the first checkpoint's minimum to be forecast at all.
  std::vector<Run> runs = read_runs(dirs, 2 * p.min_rows_seen, rep.skipped, rep.networks);
  if (runs.empty()) throw InputError("", 0, "--replay", "no validation curve to replay in the trace directories");
  rep.curves = runs.size();

  for (auto method : p.methods) {
    models::EpochForecasterParams fp = p.forecaster;
    fp.method = method;
    const size_t nc = p.checkpoints.size();
    std::vector<std::vector<Judged>> own(nc), lono(nc);
    // Pass 1: each run calibrated on its own past; its errors over the whole run become the others' prior.
    std::map<std::string, std::vector<models::ForecastError>> pool;
    for (const Run& run : runs) {
      fp.direction = run.direction;
      models::EpochForecaster fc(fp);
      replay_run(run, p, fc, [&](size_t c, const models::EpochForecast& f, double truth) {
        own[c].push_back(judge(f, truth));
      });
      auto& v = pool[run.network];
      v.insert(v.end(), fc.own_errors().begin(), fc.own_errors().end());
    }
    // Pass 2: the same runs with the other networks' errors as prior.
    for (const Run& run : runs) {
      fp.direction = run.direction;
      std::vector<models::ForecastError> prior;
      for (const auto& [net, v] : pool)
        if (net != run.network) prior.insert(prior.end(), v.begin(), v.end());
      models::EpochForecaster fc(fp, std::move(prior));
      replay_run(run, p, fc, [&](size_t c, const models::EpochForecast& f, double truth) {
        lono[c].push_back(judge(f, truth));
      });
    }
    for (size_t c = 0; c < nc; ++c) {
      WatchReplayCell cell;
      cell.method = method;
      cell.checkpoint = p.checkpoints[c];
      cell.forecasts = own[c].size();
      std::vector<double> err, w_own, w_lono;
      size_t cov_own = 0, cov_lono = 0;
      for (const Judged& j : own[c]) {
        err.push_back(j.error);
        cell.never += !std::isfinite(j.error);
        cov_own += j.covered;
        if (j.has_interval) w_own.push_back(j.width);
      }
      for (const Judged& j : lono[c]) {
        cov_lono += j.covered;
        if (j.has_interval) w_lono.push_back(j.width);
      }
      std::sort(err.begin(), err.end());
      cell.median_error = quantile(err, 0.5);
      cell.p90_error = quantile(err, 0.9);
      cell.coverage_own = own[c].empty() ? NAN : double(cov_own) / double(own[c].size());
      cell.coverage_lono = lono[c].empty() ? NAN : double(cov_lono) / double(lono[c].size());
      cell.median_width_own = median(w_own);
      cell.median_width_lono = median(w_lono);
      rep.cells.push_back(cell);
    }
  }
  return rep;
}

}  // namespace trainplan::experiments
