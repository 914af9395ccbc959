// `trainplan bench coconfig --confidence P`: the option's validation, and the
// planning model it builds (app::fit_planning_model), which must be
// provably more conservative than the point model.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "uncertainty/conformal.h"
#include "uncertainty/pessimistic_model.h"
#include "plan/exhaustive.h"
#include "experiments/scenario.h"
#include "test_util.h"
#include "app/planning_model.h"

using namespace trainplan;
using namespace trainplan::app;
using namespace trainplan::experiments;
using namespace trainplan::uncertainty;

namespace {

// Epoch time 5000/(b r) (0.01 + 0.0004 b) + r with +-3% noise, metric
// 0.9 - 0.5 exp(-e / 3) with +-1% noise (max): noise so that the conformal
// residuals, and so the intervals, are not zero.
SampleSet synthetic_samples() {
  SampleSet s;
  s.direction = MetricDirection::kMax;
  int i = 0;
  for (int b : {16, 32, 64, 128})
    for (int r : {1, 2, 4, 8})
      for (int e : {1, 3, 6, 10, 20}) {
        double noise = ((i++ * 7919) % 13 - 6) / 6.0;  // deterministic, in [-1, 1]
        Sample x;
        x.batch = b;
        x.workers = r;
        x.nodes = (r + 3) / 4;
        x.epochs = e;
        x.epoch_time_s = (5000.0 / (b * r) * (0.01 + 0.0004 * b) + r) * (1 + 0.03 * noise);
        x.metric = (0.9 - 0.5 * std::exp(-e / 3.0)) * (1 - 0.01 * noise);
        s.samples.push_back(x);
      }
  return s;
}

plan::PlanProblem problem() {
  plan::PlanProblem p;
  p.space.batches = {16, 32, 64, 128};
  p.space.max_workers = 8;
  p.space.max_epochs = 100;
  p.space.workers_per_node = 4;
  p.target = 0.85;
  p.deadline_s = 1e9;
  return p;
}

// `bench coconfig` on the ncf trace alone (2 scenarios), once with `extra_a`
// options and once with `extra_b`; both JSON outputs. Needs ../shared/data.
std::pair<nlohmann::json, nlohmann::json> bench_ncf_pair(const std::string& tag, const std::string& models,
                                                         const std::string& extra_a, const std::string& extra_b) {
  namespace fs = std::filesystem;
  auto d = tptest::temp_dir(tag);
  fs::create_directory_symlink(fs::path(tptest::shared_data_dir()) / "pollux-t4" / "ncf", d / "ncf");
  std::string base = "bench coconfig --data " + d.string() + " --models " + models + " --scenarios 2 --tabu-seeds 1 --json";
  auto a = tptest::run_cli(base + extra_a);
  auto b = tptest::run_cli(base + extra_b);
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(b.exit_code, 0) << b.err;
  if (a.exit_code != 0 || b.exit_code != 0) return {nlohmann::json::object(), nlohmann::json::object()};
  return {nlohmann::json::parse(a.out), nlohmann::json::parse(b.out)};
}

// The same, once as is and once with `extra` options.
std::pair<nlohmann::json, nlohmann::json> bench_ncf_twice(const std::string& tag, const std::string& models,
                                                          const std::string& extra) {
  return bench_ncf_pair(tag, models, "", extra);
}

}  // namespace

TEST(BenchConfidence, RejectsConfidenceOutsideTheOpenUnitIntervalWithExitTwo) {
  // Checked before the data is read, so the message names --confidence.
  for (std::string c : {"0", "1", "1.5", "-0.2"}) {
    auto r = tptest::run_cli("bench coconfig --data /nonexistent --models auto --confidence " + c);
    EXPECT_EQ(r.exit_code, 2) << c << ": " << r.err;
    EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "", {"--confidence"})) << c;
  }
  // A valid value gets past that check, and fails on the missing data instead.
  auto ok = tptest::run_cli("bench coconfig --data /nonexistent --models auto --confidence 0.9");
  EXPECT_EQ(ok.exit_code, 2) << ok.err;
  EXPECT_TRUE(tptest::names_input_error(ok.err, "/nonexistent", 0, ""));
}

// --confidence implies --conformal: with a confidence alone the benchmark
// wraps the models in conformal intervals and runs exactly as with both
// options; without it, nothing is wrapped.
TEST(BenchConfidence, ConfidenceImpliesConformal) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto [implied, asked] = bench_ncf_pair("bench_implied", "isotonic-mi", " --confidence 0.9", " --confidence 0.9 --conformal");
  ASSERT_TRUE(implied.contains("conformal")) << implied.dump();
  EXPECT_TRUE(implied["conformal"].get<bool>());
  EXPECT_EQ(implied["confidence"].get<double>(), 0.9);
  EXPECT_EQ(implied, asked);  // every scenario, plan and judgement alike
  auto [plain, wrapped] = bench_ncf_twice("bench_wrapped", "isotonic-mi", " --conformal");
  ASSERT_TRUE(plain.contains("conformal")) << plain.dump();
  EXPECT_FALSE(plain["conformal"].get<bool>());
  EXPECT_TRUE(wrapped["conformal"].get<bool>());
  EXPECT_TRUE(wrapped["confidence"].is_null());  // --conformal alone plans on the point predictions
  EXPECT_NE(implied["traces"], wrapped["traces"]);  // which the confidence does not
}

TEST(BenchConfidence, PointModelWithoutIntervalsIsAnInputError) {
  // isotonic-mi gives no intervals of its own: --confidence needs --conformal.
  EXPECT_THROW(app::fit_planning_model("isotonic-mi", "isotonic-mi", synthetic_samples(),
                                        {.confidence = 0.9, .probe_batch = 16}),
               InputError);
  EXPECT_NO_THROW(app::fit_planning_model("isotonic-mi", "isotonic-mi", synthetic_samples(),
                                           {.conformal = true, .confidence = 0.9, .probe_batch = 16}));
}

TEST(BenchConfidence, PessimisticPlanIsMoreConservativeThanThePointPlan) {
  SampleSet s = synthetic_samples();
  // The intervals' pessimistic side alone (not held to the trials, which can
  // lift it above a point prediction: MeasuredBounds below).
  auto point = app::fit_planning_model("isotonic-mi", "isotonic-mi", s,
                                       {.conformal = true, .probe_batch = 16, .measured_bounds = false});
  auto safe = app::fit_planning_model(
      "isotonic-mi", "isotonic-mi", s,
      {.conformal = true, .confidence = 0.9, .probe_batch = 16, .measured_bounds = false});
  EXPECT_EQ(point.planned, point.fitted);  // no confidence: plan on the point predictions
  EXPECT_NE(safe.planned, safe.fitted);
  // Same point predictions (conformal wraps the same fit), pessimistic planned side everywhere.
  bool some_wider = false;
  for (int b : {16, 32, 64, 128})
    for (int r = 1; r <= 8; ++r) {
      int n = (r + 3) / 4;
      auto tp = point.planned->epoch_time(b, r, n), ts = safe.planned->epoch_time(b, r, n);
      ASSERT_TRUE(tp && ts);
      EXPECT_GE(*ts, *tp) << b << "," << r;
      for (double e : {1.0, 5.0, 50.0}) {
        auto mp = point.planned->metric(b, r, e), ms = safe.planned->metric(b, r, e);
        ASSERT_TRUE(mp && ms);
        EXPECT_LE(*ms, *mp) << b << "," << r << "," << e;
        some_wider |= *ms < *mp;
      }
      some_wider |= *ts > *tp;
    }
  EXPECT_TRUE(some_wider) << "the noisy samples should give non-zero intervals";

  plan::PlanProblem p = problem();
  plan::ExhaustiveParams ep;
  ep.alternatives = 0;
  auto a = plan::exhaustive_search(*point.planned, p, ep).best;
  auto b = plan::exhaustive_search(*safe.planned, p, ep).best;
  // The pessimistic feasible set lies inside the point one and every cell costs
  // at least as much, so its optimum costs at least as much ...
  EXPECT_GE(b.cost, a.cost);
  // ... and its choice meets the target under the point model too, with at
  // least as many epochs as the point model needs in that cell.
  auto m = point.planned->metric(b.config.batch, b.config.workers, b.config.epochs);
  ASSERT_TRUE(m);
  EXPECT_GE(*m, p.target);
  EXPECT_GT(b.config.epochs, 0);
}

TEST(BenchConfidence, CurvesAreRecordedByDefaultAndChangeNoPointPlan) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto [jc, jn] = bench_ncf_twice("bench_curves", "auto", " --no-curves");
  EXPECT_TRUE(jc["curves"].get<bool>());
  EXPECT_FALSE(jn["curves"].get<bool>());
  EXPECT_GT(jc["traces"]["ncf"]["curve_points"].get<int>(), 0);
  EXPECT_EQ(jn["traces"]["ncf"]["curve_points"].get<int>(), 0);
  // The same trials either way, and without a confidence the same plans: the
  // models are fitted on the trials alone, and only the planned side at a
  // confidence is held to the curve points.
  EXPECT_EQ(jc["traces"]["ncf"]["samples"], jn["traces"]["ncf"]["samples"]);
  EXPECT_EQ(jc["traces"]["ncf"]["scenarios"], jn["traces"]["ncf"]["scenarios"]);
}

TEST(BenchConfidence, BenchOnOneTraceReportsConfidenceAndPlansMoreConservatively) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto [jp, js] = bench_ncf_twice("bench_conf", "isotonic-mi", " --confidence 0.9");
  EXPECT_TRUE(jp["confidence"].is_null());
  EXPECT_EQ(js["confidence"].get<double>(), 0.9);
  EXPECT_TRUE(js["conformal"].get<bool>());
  // Same scenarios (the judge is unchanged) ...
  const auto& sp = jp["traces"]["ncf"]["scenarios"];
  const auto& ss = js["traces"]["ncf"]["scenarios"];
  ASSERT_EQ(sp.size(), ss.size());
  for (size_t i = 0; i < sp.size(); ++i) {
    EXPECT_EQ(sp[i]["target"], ss[i]["target"]);
    EXPECT_EQ(sp[i]["deadline_s"], ss[i]["deadline_s"]);
    // ... and exhaustive coconfig on the pessimistic model predicts at least the
    // point plan's cost, or finds nothing feasible where the point plan did.
    const auto& rp = sp[i]["results"]["isotonic-mi"]["coconfig-exhaustive"];
    const auto& rs = ss[i]["results"]["isotonic-mi"]["coconfig-exhaustive"];
    // (The pessimistic feasible set lies inside the point one.)
    if (rs["planned"].get<bool>()) {
      ASSERT_TRUE(rp["planned"].get<bool>()) << i;
      EXPECT_GE(rs["predicted_cost"].get<double>(), rp["predicted_cost"].get<double>()) << i;
    }
    if (!rp["planned"].get<bool>()) EXPECT_FALSE(rs["planned"].get<bool>()) << i;
  }
  // The summary counts every run of every scenario.
  const auto& sum = js["summary"]["isotonic-mi"]["coconfig-exhaustive"];
  EXPECT_EQ(sum["runs"].get<int>(), 2);
  ASSERT_EQ(sum["by_scenario"].size(), 2u);
  EXPECT_EQ(sum["by_scenario"][0]["runs"].get<int>(), 1);
}

TEST(BenchConfidence, TimeIntervalAtAMeasuredConfigurationUsesInSampleResiduals) {
  SampleSet s = synthetic_samples();
  auto m = uncertainty::conformal_time_model("isotonic-mi");
  m->fit(s);
  auto* c = dynamic_cast<const uncertainty::ConformalTimeModel*>(m.get());
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->measured(32, 4, 1));
  EXPECT_FALSE(c->measured(48, 3, 1));  // batch 48 was never measured
  EXPECT_EQ(c->in_sample_residuals().size(), s.size());
  auto half = [&](double b, int r, int n) {
    auto iv = m->predict_interval(b, r, n, 0.9);
    EXPECT_TRUE(iv.has_value());
    return (iv->hi - iv->lo) / 2 / m->predict(b, r, n);
  };
  EXPECT_NEAR(half(32, 4, 1), *c->in_sample_residuals().quantile(0.9), 1e-9);
  EXPECT_NEAR(half(48, 3, 1), *c->residuals().quantile(0.9), 1e-9);
}

TEST(BenchConfidence, MetricIntervalUsesTheMondrianBinOfItsPrediction) {
  SampleSet s = synthetic_samples();  // 80 samples: 3 bins of >= 20 residuals
  for (auto taxonomy : {uncertainty::ConformalParams::Taxonomy::kPredicted, uncertainty::ConformalParams::Taxonomy::kSlope}) {
    uncertainty::ConformalParams p;
    p.taxonomy = taxonomy;
    p.run_folds = 0;  // the configuration rule alone (the query is a measured run)
    auto m = uncertainty::conformal_metric_model("isotonic-mi", p);
    m->fit(s);
    auto* c = dynamic_cast<const uncertainty::ConformalMetricModel*>(m.get());
    ASSERT_NE(c, nullptr);
    const auto& edges = c->bin_edges();
    if (taxonomy == uncertainty::ConformalParams::Taxonomy::kPredicted) {
      // 3 equal-count bins, less any boundary between tied predictions (measured: 2).
      ASSERT_GE(c->bin_residuals().size(), 2u);
    } else {
      // Ties in the slope (isotonic-mi is flat in places) may merge bins.
      ASSERT_GE(c->bin_residuals().size(), 1u);
    }
    ASSERT_EQ(edges.size() + 1, c->bin_residuals().size());
    for (size_t i = 1; i < edges.size(); ++i) EXPECT_LT(edges[i - 1], edges[i]);
    size_t total = 0;
    for (const auto& b : c->bin_residuals()) total += b.size();
    EXPECT_EQ(total, c->residuals().size());
    for (double e : {1.0, 3.0, 20.0}) {
      double y = m->predict(32, 2, e);
      double key = c->bin_key(32, 2, e);
      // The bins split on the taxonomy's key: the prediction itself, or the
      // relative change of the prediction over epochs x and / kSlopeStep.
      if (taxonomy == uncertainty::ConformalParams::Taxonomy::kPredicted) {
        EXPECT_EQ(key, y);
      } else {
        const double step = uncertainty::ConformalMetricModel::kSlopeStep;
        EXPECT_DOUBLE_EQ(key, std::abs(m->predict(32, 2, e * step) - m->predict(32, 2, e / step)) /
                                  std::max(std::abs(y), 1e-12))
            << e;
      }
      size_t bin = std::upper_bound(edges.begin(), edges.end(), key) - edges.begin();
      auto iv = m->predict_interval(32, 2, e, 0.9);
      ASSERT_TRUE(iv.has_value());
      EXPECT_NEAR((iv->hi - iv->lo) / 2 / std::abs(y), *c->bin_residuals()[bin].quantile(0.9), 1e-9) << e;
    }
  }
  // Too few residuals for bins: one bin, the pooled quantile.
  uncertainty::ConformalParams p;
  p.min_per_bin = 1000;
  auto one = uncertainty::conformal_metric_model("isotonic-mi", p);
  one->fit(s);
  auto* c1 = dynamic_cast<const uncertainty::ConformalMetricModel*>(one.get());
  ASSERT_EQ(c1->bin_residuals().size(), 1u);
  auto iv = one->predict_interval(32, 2, 3.0, 0.9);
  EXPECT_NEAR((iv->hi - iv->lo) / 2 / std::abs(one->predict(32, 2, 3.0)), *c1->residuals().quantile(0.9), 1e-9);
}

TEST(BenchConfidence, OneSidedBoundsPlanOnTheSignedBounds) {
  SampleSet s = synthetic_samples();
  auto two = app::fit_planning_model(
      "isotonic-mi", "isotonic-mi", s,
      {.conformal = true, .confidence = 0.9, .probe_batch = 16, .measured_bounds = false});
  auto one = app::fit_planning_model("isotonic-mi", "isotonic-mi", s,
                                      {.conformal = true,
                                       .confidence = 0.9,
                                       .probe_batch = 16,
                                       .bounds = uncertainty::ConfidenceBounds::kOneSided,
                                       .measured_bounds = false});
  // Both plan on the pessimistic side alone (no trials held), each on its own bounds.
  EXPECT_NE(dynamic_cast<const uncertainty::PessimisticModel*>(one.planned.get()), nullptr);
  EXPECT_NE(dynamic_cast<const uncertainty::PessimisticModel*>(two.planned.get()), nullptr);
  auto fp = std::dynamic_pointer_cast<const models::FittedPerformanceModel>(one.fitted);
  auto fp2 = std::dynamic_pointer_cast<const models::FittedPerformanceModel>(two.fitted);
  ASSERT_NE(fp, nullptr);
  ASSERT_NE(fp2, nullptr);
  bool differ = false;
  for (int b : {16, 64})
    for (int r : {1, 8})
      for (double e : {1.0, 6.0}) {
        int n = (r + 3) / 4;
        auto t = one.planned->epoch_time(b, r, n);
        auto m = one.planned->metric(b, r, e);
        ASSERT_TRUE(t && m);
        // One-sided: the signed bounds, upper epoch time and lower metric (a metric to maximise).
        EXPECT_DOUBLE_EQ(*t, *fp->time_model()->predict_bound(b, r, n, 0.9, models::BoundSide::kUpper));
        EXPECT_DOUBLE_EQ(*m, *fp->metric_model()->predict_bound(b, r, e, 0.9, models::BoundSide::kLower));
        // Two-sided: the ends of the intervals.
        auto t2 = two.planned->epoch_time(b, r, n);
        auto m2 = two.planned->metric(b, r, e);
        ASSERT_TRUE(t2 && m2);
        EXPECT_DOUBLE_EQ(*t2, fp2->time_model()->predict_interval(b, r, n, 0.9)->hi);
        EXPECT_DOUBLE_EQ(*m2, fp2->metric_model()->predict_interval(b, r, e, 0.9)->lo);
        differ |= *m != *m2 || *t != *t2;
      }
  EXPECT_TRUE(differ) << "one-sided and two-sided bounds should differ somewhere on noisy samples";
  EXPECT_EQ(uncertainty::parse_confidence_bounds("one-sided"), uncertainty::ConfidenceBounds::kOneSided);
  EXPECT_THROW(uncertainty::parse_confidence_bounds("both"), InputError);
}

TEST(BenchConfidence, EarlyStopJudgesTheSamePlansNoDearerAndAddsTheEarlyStopMethod) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto [jf, js] = bench_ncf_twice("bench_es", "per-batch-extrapolation+global-batch", " --early-stop");
  EXPECT_TRUE(js["early_stop"].get<bool>());
  EXPECT_EQ(js["methods"].back(), "coconfig-early-stop");
  const auto& sf = jf["traces"]["ncf"]["scenarios"];
  const auto& ss = js["traces"]["ncf"]["scenarios"];
  ASSERT_EQ(sf.size(), ss.size());
  int compared = 0;
  for (size_t i = 0; i < sf.size(); ++i)
    for (std::string m : {"coconfig-exhaustive", "lb-bsp", "cynthia"}) {
      const auto& a = sf[i]["results"]["per-batch-extrapolation+global-batch"][m];
      const auto& b = ss[i]["results"]["per-batch-extrapolation+global-batch"][m];
      ASSERT_EQ(a["planned"], b["planned"]) << i << " " << m;
      if (!a["planned"].get<bool>() || !a["runnable"].get<bool>()) continue;
      // Same plan; stopping at the target never runs longer than the budget.
      EXPECT_EQ(a["epochs"], b["epochs"]);
      EXPECT_LE(b["true_epochs"].get<int>(), a["true_epochs"].get<int>());
      EXPECT_LE(b["regret"].get<double>(), a["regret"].get<double>() + 1e-12);
      // A plan that met the target when run to its end meets it when stopped there.
      if (a["target_ok"].get<bool>()) EXPECT_TRUE(b["target_ok"].get<bool>());
      ++compared;
    }
  EXPECT_GT(compared, 0);
  EXPECT_TRUE(ss[0]["results"]["per-batch-extrapolation+global-batch"].contains("coconfig-early-stop"));
}

TEST(BenchConfidence, PinRunsPinsThePointAtASampledEpochOnlyWhenAsked) {
  // fit_planning_model with pin_runs: the point prediction at a run's first
  // sampled epoch is that sample (uncertainty/metric_run_pinned.h); without it, the
  // fitted curve's own value, which the noise keeps off the sample.
  SampleSet s = synthetic_samples();
  auto plain = app::fit_planning_model("allreduce-local", "optimus-curve", s,
                                        {.conformal = true, .confidence = 0.9, .probe_batch = 16});
  auto pinned = app::fit_planning_model("allreduce-local", "optimus-curve", s,
                                         {.conformal = true, .confidence = 0.9, .probe_batch = 16, .pin_runs = true});
  int off = 0;
  for (const auto& x : s.samples) {
    if (x.epochs != 1) continue;
    auto p = pinned.fitted->metric(static_cast<int>(x.batch), x.workers, 1);
    auto q = plain.fitted->metric(static_cast<int>(x.batch), x.workers, 1);
    ASSERT_TRUE(p && q);
    EXPECT_NEAR(*p, *x.metric, 1e-9) << x.batch << " x " << x.workers;
    off += std::abs(*q - *x.metric) > 1e-6;
  }
  EXPECT_GT(off, 0);
  // Both still plan at the confidence: a pessimistic side below the point.
  auto lo = pinned.planned->metric(32, 2, 4);
  auto mid = pinned.fitted->metric(32, 2, 4);
  ASSERT_TRUE(lo && mid);
  EXPECT_LT(*lo, *mid);
}

TEST(BenchConfidence, BenchRecordsPinRuns) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto [jp, js] = bench_ncf_twice("bench_pin", "isotonic-mi", " --confidence 0.9 --pin-runs");
  EXPECT_FALSE(jp["pin_runs"].get<bool>());
  EXPECT_TRUE(js["pin_runs"].get<bool>());
  EXPECT_EQ(js["summary"]["isotonic-mi"]["coconfig-exhaustive"]["runs"].get<int>(), 2);
}
