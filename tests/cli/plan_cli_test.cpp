#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "plan/planner.h"
#include "test_util.h"

using namespace trainplan;

namespace {

// A small sample file: epoch time 5000/(b r) * (0.01 + 0.0004 b) + r, metric
// 0.9 - 0.5 exp(-e / 3) (max), batches 16..64, workers 1..4, epochs 1..20.
// `wobble` > 0 multiplies each metric by 1 + wobble * sin(12.9898 k), k the
// row: deterministic noise, so that conformal intervals have width.
std::string samples_file(bool with_metric = true, double wobble = 0) {
  std::ostringstream s;
  s << "# trainplan: metric=max\nbatch,workers,epochs,epoch_time_s,metric,nodes\n";
  int k = 0;
  for (int b : {16, 32, 64})
    for (int r : {1, 2, 4})
      for (int e : {1, 3, 6, 10, 20}) {
        double t = 5000.0 / (b * r) * (0.01 + 0.0004 * b) + r;
        double m = (0.9 - 0.5 * std::exp(-e / 3.0)) * (1 + wobble * std::sin(12.9898 * ++k));
        s << b << ',' << r << ',' << e << ',' << t << ',';
        if (with_metric) s << m;
        s << ",1\n";
      }
  auto d = tptest::temp_dir("plan_cli");
  return tptest::write_file(d / (with_metric ? "s.csv" : "t.csv"), s.str());
}

}  // namespace

TEST(PlanCli, PlansAndPrintsTheChoiceModelAndAlternatives) {
  auto r = tptest::run_cli("plan --samples " + samples_file() +
                           " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi --search exhaustive");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("choice: batch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model: isotonic-mi"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worker-hours"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alternatives:"), std::string::npos) << r.out;
}

TEST(PlanCli, JsonHasChoiceAndAlternatives) {
  auto r = tptest::run_cli("plan --samples " + samples_file() +
                           " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi --json --alternatives 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "coconfig-exhaustive");  // --search auto: the space is small enough to be exact
  EXPECT_GE(j["choice"]["metric"].get<double>(), 0.8);
  EXPECT_LE(j["choice"]["total_time_s"].get<double>(), 100000);
  EXPECT_EQ(j["alternatives"].size(), 2u);
  EXPECT_EQ(j["model"]["time"], "isotonic-mi");
  // The trials nearest the choice, nearest first, each judged against the target.
  ASSERT_EQ(j["nearest_trials"].size(), 3u);
  const double gb = j["choice"]["batch"].get<double>() * j["choice"]["workers"].get<double>();
  const auto& t0 = j["nearest_trials"][0];
  EXPECT_NEAR(t0["batch_octaves"].get<double>(),
              std::log2(t0["batch"].get<double>() * t0["workers"].get<double>() / gb), 1e-9);
  EXPECT_EQ(t0["meets_target"].get<bool>(), t0["metric"].get<double>() >= 0.8);
  // What the point model says at each trial, beside what the trial measured.
  for (const auto& t : j["nearest_trials"]) {
    ASSERT_TRUE(t["model_metric"].is_number()) << t;
    EXPECT_GT(t["model_metric"].get<double>(), 0.3);
    EXPECT_LT(t["model_metric"].get<double>(), 1.0);
  }
  auto text = tptest::run_cli("plan --samples " + samples_file() +
                              " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi");
  EXPECT_NE(text.out.find("model: the point model's metric at the trial"), std::string::npos) << text.out;
}

// The samples run at most 20 epochs; optimus-curve keeps rising past them, so
// a high target is planned past the longest trial, on extrapolation alone.
TEST(PlanCli, SaysWhenTheChoiceRunsPastTheLongestTrial) {
  const std::string base = "plan --samples " + samples_file() +
                           " --deadline 100000 --time-model isotonic-mi --metric-model optimus-curve ";
  auto r = tptest::run_cli(base + "--target 0.93");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("epochs, past the longest trial (20): its metric is the model's extrapolation"),
            std::string::npos)
      << r.out;
  auto j = nlohmann::json::parse(tptest::run_cli(base + "--target 0.93 --json").out);
  EXPECT_EQ(j["longest_trial_epochs"].get<double>(), 20.0);
  EXPECT_GT(j["choice"]["epochs"].get<int>(), 20);
  EXPECT_TRUE(j["past_longest_trial"].get<bool>());
  r = tptest::run_cli(base + "--target 0.8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("past the longest trial"), std::string::npos) << r.out;
  j = nlohmann::json::parse(tptest::run_cli(base + "--target 0.8 --json").out);
  EXPECT_LE(j["choice"]["epochs"].get<int>(), 20);
  EXPECT_FALSE(j["past_longest_trial"].get<bool>());
}

TEST(PlanCli, FrontierListsTheCheapestRunForEachDeadline) {
  const std::string base = "plan --samples " + samples_file() + " --target 0.8 --max-workers 4 --model isotonic-mi";
  auto r = tptest::run_cli(base + " --deadline 100000 --frontier --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["frontier"].empty());
  // At the deadline, the frontier's cheapest run costs what the plan costs.
  const nlohmann::json* at = nullptr;
  for (const auto& c : j["frontier"])
    if (c["total_time_s"].get<double>() <= 100000) at = &c;
  ASSERT_NE(at, nullptr);
  EXPECT_NEAR((*at)["cost_worker_s"].get<double>(), j["choice"]["cost_worker_s"].get<double>(), 1e-6);
  // Text: the table, its row at the deadline marked.
  auto t = tptest::run_cli(base + " --deadline 100000 --frontier");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("cost against deadline"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("<- deadline"), std::string::npos) << t.out;
  // Too short a deadline: exit 3, and the error lists what longer ones would cost.
  const double fastest = j["frontier"][0]["total_time_s"].get<double>();
  auto tight = tptest::run_cli(base + " --frontier --deadline " + std::to_string(fastest / 2));
  EXPECT_EQ(tight.exit_code, 3) << tight.err;
  EXPECT_NE(tight.err.find("the cheapest run for each longer deadline"), std::string::npos) << tight.err;
  // Fixed epochs only.
  auto es = tptest::run_cli(base + " --deadline 100000 --frontier --early-stop");
  EXPECT_EQ(es.exit_code, 2) << es.err;
  EXPECT_NE(es.err.find("--frontier"), std::string::npos) << es.err;
}

TEST(PlanCli, InfeasibleTargetExitsThreeWithDiagnostics) {
  auto r = tptest::run_cli("plan --samples " + samples_file() +
                           " --target 0.99 --deadline 100000 --max-workers 4 --model isotonic-mi");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("target: >= 0.99 is not reachable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("model: isotonic-mi"), std::string::npos) << r.err;
}

TEST(PlanCli, ShortDeadlineExitsThreeNamingTheDeadline) {
  auto r = tptest::run_cli("plan --samples " + samples_file() + " --target 0.8 --deadline 5 --max-workers 4 --model isotonic-mi");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("deadline"), std::string::npos) << r.err;
}

TEST(PlanCli, BadInputExitsTwo) {
  auto missing = tptest::run_cli("plan --samples /nonexistent.csv --target 0.8 --deadline 10 --max-workers 4");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent.csv"), std::string::npos) << missing.err;
  auto time_only = tptest::run_cli("plan --samples " + samples_file(false) +
                                   " --target 0.8 --deadline 100 --max-workers 4 --model isotonic-mi");
  EXPECT_EQ(time_only.exit_code, 2);
  EXPECT_NE(time_only.err.find("planning needs a metric"), std::string::npos) << time_only.err;
  auto method = tptest::run_cli("plan --samples " + samples_file() + " --target 0.8 --deadline 100 --max-workers 4 --method sgd");
  EXPECT_EQ(method.exit_code, 2);
  auto model = tptest::run_cli("plan --samples " + samples_file() +
                               " --target 0.8 --deadline 100 --max-workers 4 --model no-such-model");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("unknown model 'no-such-model'"), std::string::npos) << model.err;
  auto deadline = tptest::run_cli("plan --samples " + samples_file() + " --target 0.8 --deadline -1 --max-workers 4");
  EXPECT_EQ(deadline.exit_code, 2);
}

TEST(PlanCli, ConfidenceImpliesConformalIntervals) {
  std::string base = "plan --samples " + samples_file() +
                     " --target 0.7 --deadline 100000 --max-workers 4 --model isotonic-mi --json --confidence 0.9";
  auto implied = tptest::run_cli(base);
  auto asked = tptest::run_cli(base + " --conformal");
  ASSERT_EQ(implied.exit_code, 0) << implied.err;
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  auto a = nlohmann::json::parse(implied.out), b = nlohmann::json::parse(asked.out);
  EXPECT_NE(a["model"]["name"].get<std::string>().find("pessimistic at 0.9"), std::string::npos);
  EXPECT_EQ(a["choice"], b["choice"]);
}

// With a confidence and fixed epochs, `plan` says how many of the chosen
// epochs are margin: the point prediction meets the target sooner.
TEST(PlanCli, ConfidenceMarginNamesTheEpochsThePointPredictionDoesNotNeed) {
  const std::string samples = samples_file(true, 0.03);
  std::string base = "plan --samples " + samples + " --target 0.8 --deadline 100000 --max-workers 4";
  auto safe = tptest::run_cli(base + " --json --confidence 0.9");
  ASSERT_EQ(safe.exit_code, 0) << safe.err;
  auto j = nlohmann::json::parse(safe.out);
  ASSERT_TRUE(j.contains("confidence_margin")) << j.dump(2);
  const auto& m = j["confidence_margin"];
  const int epochs = j["choice"]["epochs"].get<int>(), point = m["point_epochs_to_target"].get<int>();
  EXPECT_LT(point, epochs);
  EXPECT_EQ(m["margin_epochs"].get<int>(), epochs - point);
  EXPECT_NEAR(m["margin_cost_worker_s"].get<double>(),
              j["choice"]["cost_worker_s"].get<double>() * (epochs - point) / epochs, 1e-6);
  // The point prediction at the chosen batch and workers meets the target
  // after `point` epochs and not one epoch earlier.
  auto predict = [&](int e) {
    auto r = tptest::run_cli("predict --samples " + samples + " --json --batch " +
                             std::to_string(j["choice"]["batch"].get<int>()) + " --workers " +
                             std::to_string(j["choice"]["workers"].get<int>()) + " --epochs " + std::to_string(e) +
                             " --time-model " + j["model"]["time"].get<std::string>() + " --metric-model " +
                             j["model"]["metric"].get<std::string>());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["metric"]["value"].get<double>();
  };
  EXPECT_GE(predict(point), 0.8);
  if (point > 1) EXPECT_LT(predict(point - 1), 0.8);
  auto text = tptest::run_cli(base + " --confidence 0.9");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("margin for 90% confidence: the point prediction meets the target after " +
                          std::to_string(point) + " epoch"),
            std::string::npos)
      << text.out;
  // On point predictions there is no margin to report.
  auto plain = tptest::run_cli(base + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("confidence_margin"));
}

TEST(PlanCli, EmitsSlurmScriptOnStdout) {
  auto r = tptest::run_cli("plan --samples " + samples_file() +
                           " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi --emit slurm --job-name t1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("#!/bin/bash\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("#SBATCH --job-name=t1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("srun torchrun"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("choice: batch"), std::string::npos) << r.err;  // the summary moves to stderr
}

TEST(PlanCli, EveryBaselineRuns) {
  for (std::string m : {"lb-bsp", "cynthia", "bo", "manual"}) {
    auto r = tptest::run_cli("plan --samples " + samples_file() + " --target 0.7 --deadline 100000 --max-workers 4 --model isotonic-mi --json --method " + m);
    EXPECT_EQ(r.exit_code, 0) << m << ": " << r.err;
    if (r.exit_code == 0) EXPECT_EQ(nlohmann::json::parse(r.out)["method"], m);
  }
}

TEST(PlanCli, ConformalIntervalsMakeThePlanPessimistic) {
  std::string s = samples_file();
  auto plain = tptest::run_cli("plan --samples " + s + " --target 0.7 --deadline 100000 --max-workers 4 --model isotonic-mi --json");
  auto safe = tptest::run_cli("plan --samples " + s +
                              " --target 0.7 --deadline 100000 --max-workers 4 --model isotonic-mi --json --conformal --confidence 0.9");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(safe.exit_code, 0) << safe.err;
  auto a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(safe.out);
  EXPECT_NE(b["model"]["name"].get<std::string>().find("pessimistic at 0.9"), std::string::npos);
  EXPECT_GE(b["choice"]["cost_worker_s"].get<double>(), a["choice"]["cost_worker_s"].get<double>());
}

TEST(PlanCli, BoundsOptionChoosesOneSidedOrTwoSidedAndRejectsOthers) {
  std::string base = "plan --samples " + samples_file() +
                     " --target 0.7 --deadline 100000 --max-workers 4 --model isotonic-mi --json --conformal --confidence 0.9";
  auto one = tptest::run_cli(base + " --bounds one-sided");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(nlohmann::json::parse(one.out)["model"]["name"].get<std::string>().find("one-sided"), std::string::npos);
  auto two = tptest::run_cli(base);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(nlohmann::json::parse(two.out)["model"]["name"].get<std::string>().find("two-sided"), std::string::npos);
  auto bad = tptest::run_cli(base + " --bounds sideways");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--bounds"), std::string::npos) << bad.err;
}

TEST(PlanCli, SearchAutoIsExactOnSmallSpacesAndTabuCanBeAskedFor) {
  std::string base = "plan --samples " + samples_file() + " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi --json";
  auto tabu = tptest::run_cli(base + " --search tabu");
  ASSERT_EQ(tabu.exit_code, 0) << tabu.err;
  EXPECT_EQ(nlohmann::json::parse(tabu.out)["method"], "coconfig-tabu");
  auto bad = tptest::run_cli(base + " --search greedy");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  plan::PlanProblem p;
  p.space.batches = {16, 32, 64, 128};
  p.space.max_workers = 8;
  EXPECT_EQ(plan::resolve_search("auto", p), "exhaustive");
  EXPECT_EQ(plan::resolve_search("tabu", p), "tabu");
  p.space.max_workers = static_cast<int>(plan::kExhaustiveCellLimit / 4) + 1;  // one cell over the limit
  EXPECT_EQ(plan::resolve_search("auto", p), "tabu");
  EXPECT_THROW(plan::make_planner("coconfig", plan::PlannerOptions{.search = "greedy"}), InputError);
}

// --deadline reads durations with units: 1h equals 3600 seconds; a malformed
// one exits 2 naming the option and the value.
TEST(PlanCli, DeadlineTakesUnits) {
  const std::string base = "plan --samples " + samples_file() + " --target 0.8 --max-workers 4 --model isotonic-mi --json";
  auto hours = tptest::run_cli(base + " --deadline 1h");
  auto seconds = tptest::run_cli(base + " --deadline 3600");
  auto mixed = tptest::run_cli(base + " --deadline 59m60s");
  ASSERT_EQ(hours.exit_code, 0) << hours.err;
  ASSERT_EQ(seconds.exit_code, 0) << seconds.err;
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_EQ(hours.out, seconds.out);
  EXPECT_EQ(mixed.out, seconds.out);
  EXPECT_NE(hours.out.find("3600"), std::string::npos) << hours.out;
  auto bad = tptest::run_cli(base + " --deadline 4x");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--deadline"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("'4x' is not a duration"), std::string::npos) << bad.err;
}

// Without --max-workers the space reaches the largest worker count in the
// samples (4 here), the same plan as --max-workers 4.
TEST(PlanCli, MaxWorkersDefaultsToTheLargestProfiled) {
  const std::string base = "plan --samples " + samples_file() + " --target 0.8 --deadline 100000 --model isotonic-mi --json";
  auto dflt = tptest::run_cli(base);
  auto four = tptest::run_cli(base + " --max-workers 4");
  ASSERT_EQ(dflt.exit_code, 0) << dflt.err;
  ASSERT_EQ(four.exit_code, 0) << four.err;
  EXPECT_EQ(nlohmann::json::parse(dflt.out)["space"]["max_workers"], 4);
  EXPECT_EQ(dflt.out, four.out);
  auto negative = tptest::run_cli(base + " --max-workers -1");
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("--max-workers"), std::string::npos) << negative.err;
}
