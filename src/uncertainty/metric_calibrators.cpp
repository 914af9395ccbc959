#include "uncertainty/metric_calibrators.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/cancel.h"
#include "core/median.h"

namespace trainplan::uncertainty {

double metric_bin_key(const models::MetricModel& m, double y, double batch, int workers, double epochs,
                      ConformalParams::Taxonomy taxonomy) {
  if (taxonomy == ConformalParams::Taxonomy::kPredicted) return y;
  return std::abs(m.predict(batch, workers, epochs * kSlopeStep) - m.predict(batch, workers, epochs / kSlopeStep)) /
         std::max(std::abs(y), 1e-12);
}

// ---- configuration rule ----

void ConfigurationRule::fit(const MetricFactory& make, const SampleSet& with, const ConformalParams& p,
                            std::vector<std::string>& notes) {
  p_ = p;
  auto fold = config_folds(with, p.folds, p.seed);
  int k = fold.empty() ? 0 : *std::max_element(fold.begin(), fold.end()) + 1;
  std::vector<double> r;
  std::vector<std::pair<double, double>> pr;  // (bin key, residual)
  for (int f = 0; f < k && k >= 2; ++f) {
    check_cancelled();
    auto m = make();
    try {
      m->fit(fold_part(with, fold, f, false));
    } catch (const std::exception& e) {
      notes.push_back(fmt::format("fold {} could not be fitted ({}); its residuals are missing", f + 1, e.what()));
      continue;
    }
    for (const auto& s : fold_part(with, fold, f, true).samples) {
      check_cancelled();
      double pred = m->predict(s.batch, s.workers, s.epochs);
      r.push_back(signed_residual(*s.metric, pred));
      const double key = metric_bin_key(*m, pred, s.batch, s.workers, s.epochs, p.taxonomy);
      pr.push_back({std::isfinite(key) ? key : std::numeric_limits<double>::infinity(), r.back()});
    }
  }
  if (k < 2) notes.push_back("fewer than 2 configurations: no interval");
  pooled_.set(std::move(r));
  bins_.fit(std::move(pr), p.metric_bins, p.min_per_bin);
}

std::string ConfigurationRule::describe() const {
  const auto& bins = bins_.bins();
  if (bins.size() < 2) return "; one bin (too few residuals for Mondrian bins)";
  const bool slope = p_.taxonomy == ConformalParams::Taxonomy::kSlope;
  std::string s = fmt::format("; used: {} Mondrian bins by {}", bins.size(),
                              slope ? fmt::format("the model's slope in epochs, |m({0}e) - m(e/{0})| / |m(e)|", kSlopeStep)
                                    : std::string("predicted metric"));
  for (size_t b = 0; b < bins.size(); ++b)
    s += fmt::format("\n    {} {}: {}", slope ? "slope" : "predicted", bins_.range(b), bins[b].describe());
  return s;
}

// ---- measured runs and within-run residuals ----

const std::vector<double>* MeasuredRuns::measured(double batch, int workers) const {
  auto it = epochs_.find({batch, workers});
  return it == epochs_.end() || it->second.size() < 2 ? nullptr : &it->second;
}

double MeasuredRuns::nearest_gap(const std::vector<double>& sampled, double epochs) {
  double gap = std::numeric_limits<double>::infinity();
  for (double e : sampled) gap = std::min(gap, std::abs(std::log(epochs / e)));
  return gap;
}

std::vector<WithinRunResidual> within_run_residuals(const MetricFactory& make, const SampleSet& with,
                                                    const ConformalParams& p, MeasuredRuns& measured,
                                                    std::vector<std::string>& notes) {
  measured.clear();
  std::vector<WithinRunResidual> out;
  if (p.run_folds < 2) return out;
  std::map<std::pair<double, int>, std::vector<size_t>> runs;
  for (size_t i = 0; i < with.size(); ++i) runs[{with.samples[i].batch, with.samples[i].workers}].push_back(i);
  std::vector<int> fold(with.size(), -1);
  std::mt19937_64 rng(p.seed);
  for (auto& [key, idx] : runs) {
    auto& ep = measured.of(key.first, key.second);
    for (size_t i : idx) ep.push_back(with.samples[i].epochs);
    std::sort(ep.begin(), ep.end());
    if (idx.size() < 2) continue;
    // From the run's epochs in order, so that the folds do not depend on the
    // order the rows came in.
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return with.samples[a].epochs < with.samples[b].epochs; });
    std::shuffle(idx.begin(), idx.end(), rng);
    for (size_t j = 0; j < idx.size(); ++j) fold[idx[j]] = static_cast<int>(j % p.run_folds);
  }
  for (int f = 0; f < p.run_folds; ++f) {
    check_cancelled();
    std::vector<size_t> test;
    for (size_t i = 0; i < with.size(); ++i)
      if (fold[i] == f) test.push_back(i);
    if (test.empty()) continue;
    auto m = make();
    try {
      m->fit(fold_part(with, fold, f, false));
    } catch (const std::exception& e) {
      notes.push_back(fmt::format("within-run fold {} could not be fitted ({}); its residuals are missing", f + 1,
                                  e.what()));
      continue;
    }
    for (size_t i : test) {
      check_cancelled();
      const auto& s = with.samples[i];
      WithinRunResidual w;
      w.gap = std::numeric_limits<double>::infinity();
      bool kept_below = false, kept_above = false;
      for (size_t j : runs[{s.batch, s.workers}])
        if (fold[j] != f) {
          w.gap = std::min(w.gap, std::abs(std::log(s.epochs / with.samples[j].epochs)));
          kept_below = kept_below || with.samples[j].epochs < s.epochs;
          kept_above = kept_above || with.samples[j].epochs > s.epochs;
        }
      const double pred = m->predict(s.batch, s.workers, s.epochs);
      w.residual = signed_residual(*s.metric, pred);
      if (kept_below && kept_above) {
        const double slope = metric_bin_key(*m, pred, s.batch, s.workers, s.epochs, p.taxonomy);
        if (std::isfinite(slope)) w.slope = slope;
      }
      out.push_back(w);
    }
  }
  return out;
}

// ---- run-gap rule ----

void RunGapRule::fit(const std::vector<WithinRunResidual>& r, const ConformalParams& p, size_t runs,
                     std::vector<std::string>& notes) {
  p_ = p;
  runs_ = runs;
  bins_.clear();
  if (p.run_folds < 2) return;
  if (static_cast<int>(r.size()) < p.min_per_bin) {
    notes.push_back(fmt::format("{} within-run residuals (fewer than {}): measured runs use the configuration rule",
                                r.size(), p.min_per_bin));
    return;
  }
  std::vector<std::pair<double, double>> gr;
  for (const auto& w : r) gr.push_back({w.gap, w.residual});
  bins_.fit(std::move(gr), p.metric_bins, p.min_per_bin);
}

const ConformalResiduals* RunGapRule::at(const MeasuredRuns& runs, double batch, int workers, double epochs) const {
  if (bins_.empty()) return nullptr;
  const auto* run = runs.measured(batch, workers);
  if (!run) return nullptr;
  return &bins_.at(MeasuredRuns::nearest_gap(*run, epochs));
}

std::string RunGapRule::describe() const {
  if (bins_.empty()) return "";
  std::string s = fmt::format(
      "\n  at the {} measured runs (batch, workers): the wider of the above and {}-fold within-run conformal "
      "(each run's epochs held out in turn), {} bin(s) by the gap |ln(e / nearest sampled e)|",
      runs_, p_.run_folds, bins_.bins().size());
  for (size_t b = 0; b < bins_.bins().size(); ++b)
    s += fmt::format("\n    gap {}: {}", bins_.range(b), bins_.bins()[b].describe("within-run"));
  return s;
}

// ---- between rule ----

void BetweenSamplesRule::fit(const std::vector<WithinRunResidual>& r, const ConformalParams& p,
                             std::vector<std::string>& notes) {
  p_ = p;
  scaled_.set({});
  slope_floor_ = 0;
  if (p.run_folds < 2 || !p.between_rule) return;
  std::vector<const WithinRunResidual*> between;  // interpolations
  for (const auto& w : r)
    if (w.slope) between.push_back(&w);
  std::vector<double> slopes;
  for (const auto* b : between) slopes.push_back(*b->slope);
  slope_floor_ = slopes.empty() ? 0 : median(slopes);
  if (static_cast<int>(between.size()) < p.min_per_bin) {
    notes.push_back(fmt::format("{} within-run residuals between samples (fewer than {}): no between rule",
                                between.size(), p.min_per_bin));
  } else if (!(slope_floor_ > 1e-12)) {
    // A model flat in epochs where it interpolates: no slope to scale by.
    notes.push_back("the model is flat in epochs between samples (median slope 0): no between rule");
  } else {
    std::vector<double> scaled;
    for (const auto* b : between)
      scaled.push_back(b->residual / ((b->gap + p.between_gap_floor) * (*b->slope + slope_floor_)));
    scaled_.set(std::move(scaled));
  }
}

std::optional<double> BetweenSamplesRule::scale(const MeasuredRuns& runs, const models::MetricModel& m, double y,
                                                double batch, int workers, double epochs) const {
  if (scaled_.size() == 0) return std::nullopt;
  const auto* run = runs.measured(batch, workers);
  if (!run || !(run->front() < epochs && epochs < run->back())) return std::nullopt;
  const double gap = MeasuredRuns::nearest_gap(*run, epochs);
  const double slope = metric_bin_key(m, y, batch, workers, epochs, p_.taxonomy);
  if (!std::isfinite(slope)) return std::nullopt;
  return (gap + p_.between_gap_floor) * (slope + slope_floor_);
}

std::string BetweenSamplesRule::describe() const {
  if (scaled_.size() == 0) return "";
  const double q90 = scaled_.quantile(0.9).value_or(0);
  return fmt::format(
      "\n  between two sampled epochs of a measured run, instead: {} within-run residuals of samples with kept "
      "samples of their run on both sides, each divided by (gap + {:g}) * (slope + {:.3g}); at 90% the half-width "
      "is {:.3g} times a query's own (gap + {:g}) * (slope + {:.3g}), e.g. {:.2f}% at a sampled epoch where the "
      "slope is {:.3g}",
      scaled_.size(), p_.between_gap_floor, slope_floor_, q90, p_.between_gap_floor, slope_floor_,
      100 * q90 * p_.between_gap_floor * 2 * slope_floor_, slope_floor_);
}

// ---- beyond rule ----

void BeyondRule::fit(const MetricFactory& make, const SampleSet& with, const ConformalParams& p,
                     std::vector<std::string>& notes) {
  p_ = p;
  scaled_.set({});
  check_.reset();
  last_sampled_epoch_ = with.last_metric_epoch().value_or(0);
  if (with.size() == 0) return;
  std::vector<double> epochs;
  for (const auto& s : with.samples) epochs.push_back(s.epochs);
  std::sort(epochs.begin(), epochs.end());
  // The cut: the largest epoch count with at least 1 - beyond_holdout of the
  // samples at or below it. It is a sampled epoch, so it is also the last
  // epoch the forward fold's model is fitted on.
  const size_t keep = static_cast<size_t>(std::ceil((1 - p.beyond_holdout) * double(epochs.size())));
  const double cut = epochs[std::clamp<size_t>(keep, 1, epochs.size()) - 1];
  std::vector<int> fold(with.size());
  int held = 0;
  for (size_t i = 0; i < with.size(); ++i) held += fold[i] = with.samples[i].epochs > cut ? 1 : 0;
  const bool rule = p.beyond_rule && held >= p.min_per_bin;
  if (p.beyond_rule && !rule)
    notes.push_back(fmt::format("{} samples past {:g} epochs (fewer than {}): no beyond rule, so past the last "
                                "sampled epoch the interval uses the rules above",
                                held, cut, p.min_per_bin));
  if (held == 0) return;
  auto m = make();
  try {
    m->fit(fold_part(with, fold, 1, false));
  } catch (const std::exception& e) {
    notes.push_back(fmt::format("the forward fold could not be fitted ({}): no beyond rule", e.what()));
    return;
  }
  std::vector<double> scaled, abs_res;
  for (const auto& s : fold_part(with, fold, 1, true).samples) {
    check_cancelled();
    const double r = signed_residual(*s.metric, m->predict(s.batch, s.workers, s.epochs));
    scaled.push_back(r / (std::log(s.epochs / cut) + p.beyond_gap_floor));
    if (std::isfinite(r)) abs_res.push_back(std::abs(r));
  }
  if (!abs_res.empty()) {
    std::sort(abs_res.begin(), abs_res.end());
    check_ = ForwardCheck{cut, last_sampled_epoch_, int(abs_res.size()), abs_res.back(), median(abs_res)};
  }
  if (rule) scaled_.set(std::move(scaled));
}

double BeyondRule::trusted_through() const {
  if (!check_ || !(check_->cut > 0)) return last_sampled_epoch_;
  return last_sampled_epoch_ * (check_->last / check_->cut);
}

std::optional<double> BeyondRule::rank(double epochs, const ResidualRank& rank) const {
  if (scaled_.size() == 0 || !(epochs > last_sampled_epoch_)) return std::nullopt;
  auto q = rank(scaled_);
  if (!q) return std::nullopt;
  return *q * (std::log(epochs / last_sampled_epoch_) + p_.beyond_gap_floor);
}

std::string BeyondRule::describe() const {
  if (scaled_.size() == 0) return "";
  const double q90 = scaled_.quantile(0.9).value_or(0);
  return fmt::format(
      "\n  past the last sampled epoch of every run ({:g}), the half-width is at least: {} forward residuals "
      "(fitted on the earlier epochs, scored on the latest {:.0f}% of the samples), each divided by ln(e / last "
      "fitted epoch) + {:g}; at 90% the half-width is {:.3g} times ln(e / {:g}) + {:g}, e.g. {:.2f}% at twice the "
      "last sampled epoch",
      last_sampled_epoch_, scaled_.size(), 100 * p_.beyond_holdout, p_.beyond_gap_floor, q90, last_sampled_epoch_,
      p_.beyond_gap_floor, 100 * q90 * (std::log(2.0) + p_.beyond_gap_floor));
}

}  // namespace trainplan::uncertainty
