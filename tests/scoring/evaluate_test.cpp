#include "scoring/evaluate.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/cancel.h"
#include "core/error.h"
#include "scoring/mre.h"
#include "scoring/splits.h"
#include "models/registry.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::scoring;

namespace {

Sample make(double b, int r, int nodes, double e, double t, std::optional<double> m = std::nullopt) {
  Sample s;
  s.batch = b;
  s.workers = r;
  s.nodes = nodes;
  s.epochs = e;
  s.epoch_time_s = t;
  s.metric = m;
  return s;
}

// Workers 1..16 (4 a node), batches 16..128, time 1000/(b r) + 1.
SampleSet grid(bool with_metric) {
  SampleSet s;
  for (int r = 1; r <= 16; ++r)
    for (double b : {16, 32, 64, 128})
      s.samples.push_back(make(b, r, (r + 3) / 4, 5, 1000 / (b * r) + 1,
                               with_metric ? std::optional<double>(0.9 - 0.0005 * b) : std::nullopt));
  return s;
}

std::string write_grid_csv(const std::string& tag, bool with_metric) {
  auto d = tptest::temp_dir(tag);
  std::string text = "batch,workers,epochs,epoch_time_s,metric,nodes\n";
  for (const auto& x : grid(with_metric).samples)
    text += std::to_string(x.batch) + "," + std::to_string(x.workers) + ",5," + std::to_string(x.epoch_time_s) + "," +
            (x.metric ? std::to_string(*x.metric) : "") + "," + std::to_string(x.nodes) + "\n";
  return tptest::write_file(d / (tag + ".csv"), text);
}

}  // namespace

TEST(Evaluate, MreIsARatioOfSums) {
  EXPECT_DOUBLE_EQ(mre({1, 3}, {2, 2}), 0.5);
  EXPECT_DOUBLE_EQ(mre({110, 1}, {100, 2}), 11.0 / 102);  // not the mean of ratios (0.3)
  EXPECT_THROW(mre({1}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(mre({1}, {0}), std::invalid_argument);
  EXPECT_THROW(mre({NAN}, {1}), std::invalid_argument);
}

TEST(Evaluate, KfoldCoversEveryIndexOnceAndIsSeeded) {
  auto folds = kfold(23, 5, 9);
  std::multiset<size_t> seen;
  for (const auto& f : folds) {
    EXPECT_GE(f.size(), 4u);
    EXPECT_LE(f.size(), 5u);
    seen.insert(f.begin(), f.end());
  }
  EXPECT_EQ(seen.size(), 23u);
  for (size_t i = 0; i < 23; ++i) EXPECT_EQ(seen.count(i), 1u);
  EXPECT_EQ(kfold(23, 5, 9), folds);
  EXPECT_NE(kfold(23, 5, 10), folds);
  EXPECT_THROW(kfold(3, 5, 1), std::invalid_argument);
}

TEST(Evaluate, WorkersSplitOnePerNodeTakesTheFewestWorkersAtEachEndNodeCount) {
  auto s = grid(false);  // multi-node: 2 nodes (r 5..8), 3 (9..12), 4 (13..16)
  WorkersSplitRule rule;
  rule.trial_shape = TrialShape::kOnePerNode;
  auto train = workers_train(s, rule);
  std::set<std::pair<int, int>> multi;  // (nodes, workers)
  for (size_t i : train)
    if (s.samples[i].nodes > 1) multi.insert({s.samples[i].nodes, s.samples[i].workers});
    else EXPECT_LE(s.samples[i].workers, 4);
  EXPECT_EQ(multi, (std::set<std::pair<int, int>>{{2, 5}, {4, 13}}));
  EXPECT_EQ(train.size(), 4u * 4 + 2);
}

TEST(Evaluate, WorkersSplitTakesMultiNodeSamplesAtTheSmallestAndLargestNodeCount) {
  auto s = grid(false);  // multi-node: 2 nodes (r 5..8), 3 (9..12), 4 (13..16)
  auto sp = workers_split(s);
  std::set<std::pair<int, int>> multi;  // (nodes, workers)
  for (size_t i : sp.train) {
    const auto& x = s.samples[i];
    if (x.nodes > 1) {
      multi.insert({x.nodes, x.workers});
      // The quartiles of the training batches 16, 32, 64, 128: 32 for the first trial, 64 for the second.
      EXPECT_EQ(x.batch, x.nodes == 2 ? 32 : 64);
    } else {
      EXPECT_LE(x.workers, 4);
    }
  }
  EXPECT_EQ(multi, (std::set<std::pair<int, int>>{{2, 8}, {4, 16}}));  // full nodes by default
  EXPECT_EQ(sp.train.size(), 4u * 4 + 2);
  EXPECT_EQ(sp.test.size(), 9u * 4 - 2);  // workers 8..16 less the two training samples
  for (size_t i : sp.test) EXPECT_GE(s.samples[i].workers, 8);
}

TEST(Evaluate, WorkersSplitPrefersTheTrialShapeThenTheMedianBatch) {
  SampleSet s;
  for (double b : {16, 32, 64}) s.samples.push_back(make(b, 2, 1, 1, 10));
  s.samples.push_back(make(64, 2, 2, 1, 10));  // "11"
  s.samples.push_back(make(16, 2, 2, 1, 10));  // "11", nearer the median 32
  s.samples.push_back(make(32, 4, 2, 1, 10));  // "22": more workers
  s.samples.push_back(make(32, 3, 3, 1, 10));  // 3 nodes: neither smallest nor largest
  s.samples.push_back(make(64, 4, 4, 1, 10));  // "1111": the only 4-node sample
  EXPECT_EQ(workers_train(s), (std::vector<size_t>{0, 1, 2, 5, 7}));  // full nodes: "22"
  WorkersSplitRule one_per_node;
  one_per_node.trial_shape = TrialShape::kOnePerNode;
  EXPECT_EQ(workers_train(s, one_per_node), (std::vector<size_t>{0, 1, 2, 4, 7}));  // "11" at b = 16
  WorkersSplitRule one;
  one.multi_node_train = 1;
  one.trial_shape = TrialShape::kOnePerNode;
  EXPECT_EQ(workers_train(s, one), (std::vector<size_t>{0, 1, 2, 4}));
  EXPECT_EQ(median_batch(s, {0, 1, 2}), 32);
}

TEST(Evaluate, BatchSplitTrainsOnTheSmallerHalf) {
  auto s = grid(false);
  auto sp = batch_split(s);
  for (size_t i : sp.train) EXPECT_LE(s.samples[i].batch, 32);
  for (size_t i : sp.test) EXPECT_GE(s.samples[i].batch, 64);
  EXPECT_EQ(sp.train.size() + sp.test.size(), s.size());
}

TEST(Evaluate, ScoresEveryNumberAndNotesMissingMetric) {
  const auto& entry = models::ModelRegistry::instance().get("isotonic-mi");
  EvalData d{"grid", grid(false), std::nullopt};
  auto r = evaluate_model(entry, d, {});
  ASSERT_TRUE(r.time.in_sample_mre && r.time.cv_mre && r.time.workers_mre && r.time.batch_mre && r.time.fit_ms);
  EXPECT_GT(*r.time.in_sample_mre, 0);  // an additive model cannot fit 1000/(b r) exactly
  EXPECT_LT(*r.time.in_sample_mre, *r.time.workers_mre);  // extrapolation is harder
  EXPECT_EQ(r.time.n_samples, 64u);
  // The model has a metric part but the data nothing to score it on: every
  // metric number is missing, and one note (the reason) says so.
  EXPECT_TRUE(r.metric.has_part);
  EXPECT_FALSE(r.metric.has_data);
  EXPECT_FALSE(r.metric.in_sample_mre || r.metric.cv_mre || r.metric.workers_mre || r.metric.workers_1pn_mre ||
               r.metric.batch_mre || r.metric.fit_ms);
  EXPECT_EQ(r.metric.n_samples, 0u);
  EXPECT_TRUE(r.metric.cv_points.empty());
  EXPECT_EQ(r.metric.notes.size(), 1u);
  EXPECT_TRUE(r.time.notes.empty());  // the time part scored everything
}

// The multi-node trials the workers split fits on are configurations of the
// same pool it tests on: a trial's configuration is not scored as held out.
TEST(Evaluate, TheWorkersSplitDoesNotScoreTheTrialsItFittedOn) {
  const auto& entry = models::ModelRegistry::instance().get("isotonic-mi");
  SampleSet single;
  for (const auto& x : grid(false).samples)
    if (x.nodes == 1) single.samples.push_back(x);
  SampleSet trials, pool;
  trials.samples = {make(32, 8, 2, 5, 1000.0 / 256 + 1), make(64, 16, 4, 5, 1000.0 / 1024 + 1)};
  pool.samples = trials.samples;  // the pool holds only the trials' configurations
  EvalData d{"grid", single, pool};
  d.multi_node_trials = trials;
  auto only_trials = evaluate_model(entry, d, {});
  EXPECT_FALSE(only_trials.time.workers_mre);
  EXPECT_EQ(only_trials.time.not_applicable.count("x-workers"), 1u);
  // One configuration more in the pool, not a trial: scored, alone.
  d.workers_pool->samples.push_back(make(16, 12, 3, 5, 1000.0 / 192 + 1));
  auto one_more = evaluate_model(entry, d, {});
  EXPECT_TRUE(one_more.time.workers_mre);
}

TEST(Evaluate, KeepsEveryOutOfFoldPredictionWhoseMreIsTheCvMre) {
  const auto& entry = models::ModelRegistry::instance().get("isotonic-mi");
  EvalData d{"grid", grid(true), std::nullopt};
  auto r = evaluate_model(entry, d, {});
  for (const PartScore* p : {&r.time, &r.metric}) {
    ASSERT_TRUE(p->cv_mre);
    ASSERT_EQ(p->cv_points.size(), 64u);  // every sample scored once
    std::vector<double> measured, predicted;
    std::multiset<double> truths;
    for (const auto& [m, pr] : p->cv_points) measured.push_back(m), predicted.push_back(pr), truths.insert(m);
    EXPECT_NEAR(mre(predicted, measured), *p->cv_mre, 1e-12);
    std::multiset<double> expected;  // the measurements themselves, in some order
    for (const auto& x : d.samples.samples) expected.insert(p == &r.time ? x.epoch_time_s : *x.metric);
    EXPECT_EQ(truths, expected);
  }
  EvalData few{"few", subset(grid(false), {0, 1, 2}), std::nullopt};
  auto none = evaluate_model(entry, few, {});
  EXPECT_FALSE(none.time.cv_mre);  // 3 samples, 5 folds: no CV, so no points
  EXPECT_TRUE(none.time.cv_points.empty());
}

TEST(Evaluate, CvOnlyGivesTheSameCvScoreAndNothingElse) {
  const auto& entry = models::ModelRegistry::instance().get("isotonic-mi");
  EvalData d{"grid", grid(true), std::nullopt};
  auto full = evaluate_model(entry, d, {});
  EvalOptions o;
  o.cv_only = true;
  auto cv = evaluate_model(entry, d, o);
  for (auto [f, c] : {std::pair{&full.time, &cv.time}, std::pair{&full.metric, &cv.metric}}) {
    ASSERT_TRUE(f->cv_mre && c->cv_mre);
    EXPECT_EQ(*c->cv_mre, *f->cv_mre);  // same folds, same fits
    EXPECT_TRUE(f->in_sample_mre && f->workers_mre && f->batch_mre);
    EXPECT_FALSE(c->in_sample_mre || c->workers_mre || c->workers_1pn_mre || c->batch_mre || c->fit_ms);
  }
  // One part by name: the same number.
  EXPECT_EQ(part_cv_mre("isotonic-mi", ModelPart::kTime, d.samples), *full.time.cv_mre);
  EXPECT_EQ(part_cv_mre("isotonic-mi", ModelPart::kMetric, d.samples), *full.metric.cv_mre);
  EXPECT_THROW(part_cv_mre("no-such-model", ModelPart::kTime, d.samples), InputError);
}

TEST(Evaluate, TimeIsScoredOnDistinctConfigurations) {
  auto s = grid(true);
  auto twice = s;
  for (auto x : s.samples) {
    x.epochs = 9;  // same configuration, another epoch count
    twice.samples.push_back(x);
  }
  EXPECT_EQ(distinct_time_configs(twice).size(), s.size());
  // Measured twice with different times: the epochs-weighted mean.
  SampleSet noisy;
  noisy.samples = {make(32, 2, 1, 1, 1.0), make(64, 2, 1, 2, 5.0), make(32, 2, 1, 3, 2.0)};
  auto d = distinct_time_configs(noisy);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_DOUBLE_EQ(d.samples[0].epoch_time_s, (1 * 1.0 + 3 * 2.0) / 4);
  EXPECT_EQ(d.samples[0].epochs, 1);  // the first sample's other fields
  EXPECT_DOUBLE_EQ(d.samples[1].epoch_time_s, 5.0);
}

TEST(EvaluateCli, BadSamplesPathIsExit2NamingTheFile) {
  auto r = tptest::run_cli("evaluate --samples /nonexistent/x.csv --model isotonic-mi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, "/nonexistent/x.csv", 0, ""));
}

TEST(EvaluateCli, UnknownModelIsExit2) {
  auto path = write_grid_csv("evalunk", false);
  auto r = tptest::run_cli("evaluate --samples " + path + " --model no-such-model");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "", {"'no-such-model'", "isotonic-mi"}));  // and the known ones
}

TEST(EvaluateCli, TimeOnlyFileShowsTimeMreAndMetricNoData) {
  auto path = write_grid_csv("evaltime", false);
  auto r = tptest::run_cli("evaluate --samples " + path + " --model isotonic-mi --cv 4 --seed 7 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // The options as given, and the data set named after the file's stem.
  EXPECT_EQ(j["cv"], 4);
  EXPECT_EQ(j["seed"], 7);
  ASSERT_EQ(j["datasets"].size(), 1u) << j.dump(2);
  ASSERT_TRUE(j["datasets"].contains("evaltime")) << j.dump(2);
  ASSERT_EQ(j["datasets"]["evaltime"].size(), 1u);
  const auto& m = j["datasets"]["evaltime"]["isotonic-mi"];
  // Every time score is a number, and the same number the library gives with
  // 4 folds dealt by seed 7 (so the options reached the scoring).
  const auto& t = m["time"];
  EXPECT_EQ(t["samples"], 64);
  for (const auto* v : {&t["in_sample_mre"], &t["cv_mre"], &t["extrapolation_mre"]["workers"],
                        &t["extrapolation_mre"]["workers_one_per_node"], &t["extrapolation_mre"]["batch"]}) {
    ASSERT_TRUE(v->is_number()) << t.dump(2);
    EXPECT_GT(v->get<double>(), 0) << t.dump(2);  // an additive model cannot fit 1000/(b r) exactly
  }
  EvalOptions o;
  o.cv_folds = 4;
  o.seed = 7;
  EvalData d{"evaltime", grid(false), std::nullopt};
  auto lib = evaluate_model(models::ModelRegistry::instance().get("isotonic-mi"), d, o);
  ASSERT_TRUE(lib.time.cv_mre && lib.time.in_sample_mre);
  EXPECT_NEAR(t["cv_mre"].get<double>(), *lib.time.cv_mre, 1e-6);  // the CSV rounds the times to 6 decimals
  EXPECT_NEAR(t["in_sample_mre"].get<double>(), *lib.time.in_sample_mre, 1e-6);
  // The metric part has no data: no sample scored, every number null, and a note.
  const auto& mm = m["metric"];
  EXPECT_EQ(mm["samples"], 0);
  for (const auto* v : {&mm["in_sample_mre"], &mm["cv_mre"], &mm["extrapolation_mre"]["workers"],
                        &mm["extrapolation_mre"]["workers_one_per_node"], &mm["extrapolation_mre"]["batch"],
                        &mm["fit_ms"]})
    EXPECT_TRUE(v->is_null()) << mm.dump(2);
  EXPECT_TRUE(mm["note"].is_string()) << mm.dump(2);
  EXPECT_FALSE(t.contains("note")) << t.dump(2);
}

TEST(EvaluateCli, JsonHasTheDocumentedKeys) {
  auto path = write_grid_csv("evaljson", true);
  auto tonly = write_grid_csv("evaljsontime", false);
  auto r = tptest::run_cli("evaluate --samples " + path + " --samples " + tonly + " --models isotonic-mi --json --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["seed"], 3);
  EXPECT_EQ(j["cv"], 5);
  const auto& m = j["datasets"]["evaljson"]["isotonic-mi"];
  for (const char* part : {"time", "metric"}) {
    const auto& p = m[part];
    ASSERT_TRUE(p.is_object()) << part;
    EXPECT_TRUE(p["in_sample_mre"].is_number()) << part;
    EXPECT_TRUE(p["cv_mre"].is_number()) << part;
    EXPECT_TRUE(p["extrapolation_mre"]["workers"].is_number()) << part;
    EXPECT_TRUE(p["extrapolation_mre"]["workers_one_per_node"].is_number()) << part;
    EXPECT_TRUE(p["extrapolation_mre"]["batch"].is_number()) << part;
    EXPECT_TRUE(p["fit_ms"].is_number()) << part;
    EXPECT_LT(p["in_sample_mre"].get<double>(), 1.0);  // a fraction, not a percentage
  }
  const auto& t = j["datasets"]["evaljsontime"]["isotonic-mi"]["metric"];
  EXPECT_TRUE(t["in_sample_mre"].is_null());
  EXPECT_TRUE(t["note"].is_string());
}

TEST(EvaluateCli, DataDirGivesOneTablePerWorkloadWithProgress) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto r = tptest::run_cli("evaluate --data " + tptest::shared_data_dir() + "/pollux-t4 --models isotonic-mi --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* w : {"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}) {
    ASSERT_TRUE(j["datasets"].contains(w)) << w;
    EXPECT_TRUE(j["datasets"][w]["isotonic-mi"]["time"]["cv_mre"].is_number()) << w;
    EXPECT_NE(r.err.find(w), std::string::npos) << "progress line for " << w;
  }
}

TEST(Evaluate, WorkersSplitTrialsSitAtTheLowerAndUpperQuartileBatch) {
  SampleSet s;
  for (double b : {8, 16, 32, 64, 128}) s.samples.push_back(make(b, 1, 1, 1, 10));  // quartiles: 16 and 64
  for (double b : {8, 16, 32, 64, 128}) {
    s.samples.push_back(make(b, 8, 2, 1, 10));
    s.samples.push_back(make(b, 16, 4, 1, 10));
  }
  EXPECT_EQ(quantile_batch(s, {0, 1, 2, 3, 4}, 0.25), 16);
  EXPECT_EQ(quantile_batch(s, {0, 1, 2, 3, 4}, 0.75), 64);
  EXPECT_EQ(quantile_batch(s, {}, 0.5), 0);
  std::set<std::tuple<int, int, double>> multi;  // (nodes, workers, batch)
  for (size_t i : workers_train(s))
    if (s.samples[i].nodes > 1) multi.insert({s.samples[i].nodes, s.samples[i].workers, s.samples[i].batch});
  EXPECT_EQ(multi, (std::set<std::tuple<int, int, double>>{{2, 8, 16.0}, {4, 16, 64.0}}));
}

// The cross-validation folds run on worker threads; a caller's cancellation
// (the server's request deadline) must reach them and come back as Cancelled,
// not as a note that the model failed.
TEST(Evaluate, CancellationReachesTheCrossValidationThreads) {
  const SampleSet s = grid(false);
  const std::atomic<bool> stop{true};
  CancelScope scope(CancelScope::Clock::now() + std::chrono::hours(1), &stop);
  EXPECT_THROW(part_cv_mre("allreduce-physical", ModelPart::kTime, s), Cancelled);
}

// kFoldsAuto: a set of fewer than 10 configurations leaves each out alone,
// so its score does not depend on which configurations a fold pairs. Neither
// score depends on the order the samples come in: folds are dealt from the
// configurations in key order.
TEST(Evaluate, AutoFoldsLeaveOneConfigurationOutOfASmallSet) {
  EXPECT_EQ(cv_folds_for(6, kFoldsAuto), 6);
  EXPECT_EQ(cv_folds_for(9, kFoldsAuto), 9);
  EXPECT_EQ(cv_folds_for(10, kFoldsAuto), 5);
  EXPECT_EQ(cv_folds_for(6, 3), 3);
  EXPECT_EQ(cv_name(6, kFoldsAuto), "leave-one-out over 6 configurations");
  EXPECT_EQ(cv_name(5, 5), "5-fold");
  EXPECT_EQ(cv_name(1, kFoldsAuto), "none: 1 configuration");
  // Six noisy configurations, each with three epoch counts (the demo's shape).
  SampleSet s;
  const double noise[6] = {1.00, 1.07, 0.95, 1.12, 0.97, 1.04};
  int i = 0;
  for (int r : {1, 2})
    for (double b : {32, 64, 128}) {
      for (double e : {1, 2, 3}) s.samples.push_back(make(b, r, 1, e, (600 / (b * r) * 0.02 + 0.05 * (r - 1)) * noise[i]));
      ++i;
    }
  EXPECT_EQ(part_configs(ModelPart::kTime, s), 6u);
  SampleSet reversed = s;
  std::reverse(reversed.samples.begin(), reversed.samples.end());
  EvalOptions automatic;
  automatic.cv_folds = kFoldsAuto;
  for (const char* name : {"allreduce-physical", "per-batch-extrapolation"}) {
    const auto a = part_cv_mre(name, ModelPart::kTime, s, automatic);
    const auto b = part_cv_mre(name, ModelPart::kTime, reversed, automatic);
    ASSERT_TRUE(a && b) << name;
    EXPECT_NEAR(*a, *b, 1e-9 * *a) << name;  // the fits see the samples in another order
    EvalOptions six;
    six.cv_folds = 6;
    EXPECT_EQ(*a, *part_cv_mre(name, ModelPart::kTime, s, six)) << name;  // what `evaluate --cv 6` prints
  }
  const double five = *part_cv_mre("per-batch-extrapolation", ModelPart::kTime, s);
  EXPECT_NEAR(five, *part_cv_mre("per-batch-extrapolation", ModelPart::kTime, reversed), 1e-9 * five);
  // A single configuration cannot be cross-validated.
  SampleSet one;
  one.samples.push_back(make(32, 1, 1, 1, 1.0));
  EXPECT_FALSE(part_cv_mre("allreduce-physical", ModelPart::kTime, one, automatic));
}

TEST(Evaluate, CrossValidationWithoutACancelScopeRuns) {
  EXPECT_TRUE(part_cv_mre("allreduce-physical", ModelPart::kTime, grid(false)).has_value());
}
