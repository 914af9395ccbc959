#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"
#include "io/gnuplot.h"
#include "plan/planner.h"
#include "test_util.h"

using namespace trainplan;

namespace {

// A small sample file: epoch time 5000/(b r) * (0.01 + 0.0004 b) + r, metric
// 0.9 - 0.5 exp(-e / 3) (max), batches 16..64, workers 1..4, epochs 1..20.
// `wobble` > 0 multiplies each metric by 1 + wobble * sin(12.9898 k), k the
// row: deterministic noise, so that conformal intervals have width.
// `time_scale` multiplies every epoch time.
std::string samples_file(bool with_metric = true, double wobble = 0, double time_scale = 1) {
  std::ostringstream s;
  s << "# trainplan: metric=max\nbatch,workers,epochs,epoch_time_s,metric,nodes\n";
  int k = 0;
  for (int b : {16, 32, 64})
    for (int r : {1, 2, 4})
      for (int e : {1, 3, 6, 10, 20}) {
        double t = time_scale * (5000.0 / (b * r) * (0.01 + 0.0004 * b) + r);
        double m = (0.9 - 0.5 * std::exp(-e / 3.0)) * (1 + wobble * std::sin(12.9898 * ++k));
        s << b << ',' << r << ',' << e << ',' << t << ',';
        if (with_metric) s << m;
        s << ",1\n";
      }
  auto d = tptest::temp_dir("plan_cli");
  return tptest::write_file(d / (with_metric ? "s.csv" : "t.csv"), s.str());
}

}  // namespace

// An epoch of milliseconds reads as such in the text (four digits), not as
// 0.00 s: the text's figures are the JSON's.
TEST(PlanCli, TheTextGivesAnEpochOfMillisecondsItsDigits) {
  const std::string args = "plan --samples " + samples_file(true, 0, 1e-4) +
                           " --target 0.8 --deadline 1000 --max-workers 4 --model isotonic-mi";
  auto text = tptest::run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto r = tptest::run_cli(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double epoch = nlohmann::json::parse(r.out)["choice"]["epoch_time_s"].get<double>();
  ASSERT_LT(epoch, 0.01);
  const std::string key = "predicted epoch time  ";
  const auto at = text.out.find(key);
  ASSERT_NE(at, std::string::npos) << text.out;
  const double printed = std::stod(text.out.substr(at + key.size()));
  EXPECT_NEAR(printed, epoch, 1e-3 * epoch) << text.out;
}

TEST(PlanCli, PlansAndPrintsTheChoiceModelAndAlternatives) {
  const std::string args = "plan --samples " + samples_file() +
                           " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi --search exhaustive";
  auto text = tptest::run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_FALSE(text.out.empty());
  auto r = tptest::run_cli(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // The choice: a configuration in the space that meets both constraints, and its cost.
  const auto& c = j["choice"];
  EXPECT_GE(c["metric"].get<double>(), 0.8);
  EXPECT_LE(c["total_time_s"].get<double>(), 100000);
  EXPECT_LE(c["workers"].get<int>(), 4);
  EXPECT_NEAR(c["total_time_s"].get<double>(), c["epochs"].get<int>() * c["epoch_time_s"].get<double>(), 1e-9);
  EXPECT_NEAR(c["cost_worker_s"].get<double>(), c["workers"].get<int>() * c["total_time_s"].get<double>(), 1e-9);
  EXPECT_NEAR(c["cost_worker_h"].get<double>(), c["cost_worker_s"].get<double>() / 3600, 1e-12);
  // The model it planned on.
  EXPECT_EQ(j["model"]["time"], "isotonic-mi");
  EXPECT_EQ(j["model"]["metric"], "isotonic-mi");
  EXPECT_EQ(j["method"], "coconfig-exhaustive");
  // The alternatives: other feasible configurations, none cheaper than the choice.
  ASSERT_FALSE(j["alternatives"].empty());
  for (const auto& a : j["alternatives"]) {
    EXPECT_GE(a["cost_worker_s"].get<double>(), c["cost_worker_s"].get<double>()) << a;
    EXPECT_GE(a["metric"].get<double>(), 0.8) << a;
    EXPECT_FALSE(a["batch"] == c["batch"] && a["workers"] == c["workers"]) << a;
  }
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
}

// A configuration whose training diverged in profiling (the CSV's diverged=)
// is never planned, and the plan says so on stderr and in its JSON.
TEST(PlanCli, DivergedConfigurationsAreLeftOut) {
  const std::string args = " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi --json";
  auto plain = tptest::run_cli("plan --samples " + samples_file() + args);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto chosen = nlohmann::json::parse(plain.out)["choice"];
  const int b = chosen["batch"].get<int>(), r = chosen["workers"].get<int>();
  std::string text = tptest::read_file(samples_file());
  text.replace(0, text.find('\n'), fmt::format("# trainplan: metric=max diverged={}x{}", b, r));
  const auto d = tptest::temp_dir("plan_cli_diverged");
  const auto file = tptest::write_file(d / "diverged.csv", text);
  auto left = tptest::run_cli("plan --samples " + file + args);
  ASSERT_EQ(left.exit_code, 0) << left.err;
  const auto j = nlohmann::json::parse(left.out);
  EXPECT_FALSE(j["choice"]["batch"].get<int>() == b && j["choice"]["workers"].get<int>() == r) << j["choice"];
  EXPECT_EQ(j["space"]["diverged"], nlohmann::json::parse(fmt::format(R"([{{"batch":{},"workers":{}}}])", b, r)));
  EXPECT_NE(left.err.find(fmt::format("left out of the plan: batch {} on {} worker(s)", b, r)), std::string::npos) << left.err;
}

// The samples run at most 20 epochs; optimus-curve keeps rising past them, so
// a high target is planned past the longest trial, on extrapolation alone.
TEST(PlanCli, SaysWhenTheChoiceRunsPastTheLongestTrial) {
  const std::string base = "plan --samples " + samples_file() +
                           " --deadline 100000 --time-model isotonic-mi --metric-model optimus-curve ";
  auto r = tptest::run_cli(base + "--target 0.93 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["longest_trial_epochs"].get<double>(), 20.0);
  EXPECT_GT(j["choice"]["epochs"].get<int>(), 20);
  EXPECT_TRUE(j["past_longest_trial"].get<bool>());
  r = tptest::run_cli(base + "--target 0.8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["longest_trial_epochs"].get<double>(), 20.0);
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
  // Fastest first, each point slower and strictly cheaper than the one before,
  // each meeting the target.
  for (size_t i = 0; i < j["frontier"].size(); ++i) {
    const auto& c = j["frontier"][i];
    EXPECT_GE(c["metric"].get<double>(), 0.8) << c;
    if (i == 0) continue;
    EXPECT_GT(c["total_time_s"].get<double>(), j["frontier"][i - 1]["total_time_s"].get<double>()) << c;
    EXPECT_LT(c["cost_worker_s"].get<double>(), j["frontier"][i - 1]["cost_worker_s"].get<double>()) << c;
  }
  // Without --frontier, no frontier (the text table is plan::frontier_table, tested in plan_frontier_test).
  auto plain = tptest::run_cli(base + " --deadline 100000 --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("frontier"));
  EXPECT_EQ(tptest::run_cli(base + " --deadline 100000 --frontier").exit_code, 0);
  // Too short a deadline: exit 3, and the error lists what longer ones would cost.
  const double fastest = j["frontier"][0]["total_time_s"].get<double>();
  auto tight = tptest::run_cli(base + " --frontier --deadline " + std::to_string(fastest / 2));
  EXPECT_EQ(tight.exit_code, 3) << tight.err;
  EXPECT_NE(tight.err.find("the cheapest run for each longer deadline"), std::string::npos) << tight.err;
  // Fixed epochs only.
  auto es = tptest::run_cli(base + " --deadline 100000 --frontier --early-stop");
  EXPECT_EQ(es.exit_code, 2) << es.err;
  EXPECT_TRUE(tptest::names_input_error(es.err, "", 0, "--frontier", {"--early-stop"}));
}

TEST(PlanCli, InfeasibleTargetExitsThreeWithDiagnostics) {
  auto r = tptest::run_cli("plan --samples " + samples_file() +
                           " --target 0.99 --deadline 100000 --max-workers 4 --model isotonic-mi");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // The report (plan/diagnose.h): the method, then a line naming the failing
  // constraint first, and the model planned on.
  auto l = tptest::lines(r.err);
  ASSERT_GE(l.size(), 2u) << r.err;
  EXPECT_EQ(l[0].rfind("infeasible: coconfig-exhaustive: ", 0), 0u) << r.err;
  EXPECT_EQ(l[1].rfind("target: >= 0.99 ", 0), 0u) << r.err;
  EXPECT_NE(std::find_if(l.begin(), l.end(), [](const std::string& x) { return x.rfind("  model: isotonic-mi", 0) == 0; }),
            l.end())
      << r.err;
}

// Early stopping with the target's budget is equation 11 again (docs/PLANNING.md): its expected
// run is held to the measured trials as the plan without it is. Here a trial of 64 x 1 at 3
// epochs missed the loss target: the point model alone expects 3 epochs there, and chose it.
TEST(PlanCli, EarlyStoppingsExpectedRunIsHeldToTheTrials) {
  const auto d = tptest::temp_dir("plan-es-held");
  const auto csv = tptest::write_file(d / "loss.csv",
                                      "# trainplan: metric=min dataset_size=10000\n"
                                      "batch,workers,epochs,epoch_time_s,metric\n"
                                      "32,1,1,7,0.9\n32,1,3,7,0.4\n32,1,6,7,0.2\n"
                                      "64,1,1,6,1.2\n64,1,3,6,0.6\n64,1,6,6,0.3\n"
                                      "32,2,1,5.5,0.9\n32,2,3,5.5,0.45\n32,2,6,5.5,0.22\n"
                                      "64,2,1,3.4,1.3\n64,2,3,3.4,0.7\n64,2,6,3.4,0.33\n"
                                      "32,4,2,3,0.6\n64,4,2,2,0.95\n");
  const std::string ask = "plan --samples " + csv + " --target 0.55 --deadline 1000 --json";
  auto plain = tptest::run_cli(ask);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto es = tptest::run_cli(ask + " --early-stop --early-stop-budget target");
  ASSERT_EQ(es.exit_code, 0) << es.err;
  const auto p = nlohmann::json::parse(plain.out), e = nlohmann::json::parse(es.out);
  EXPECT_EQ(e["choice"]["batch"], p["choice"]["batch"]) << es.out;
  EXPECT_EQ(e["choice"]["workers"], p["choice"]["workers"]) << es.out;
}

// A run shorter than every trial rests on the model's extrapolation back in epochs: said, as a run
// past the longest trial is.
TEST(PlanCli, ARunShorterThanEveryTrialIsSaid) {
  const auto d = tptest::temp_dir("plan-short");
  std::string csv = "# trainplan: metric=max dataset_size=10000\nbatch,workers,epochs,epoch_time_s,metric\n";
  for (int b : {32, 64, 128})
    for (int r : {1, 2})
      for (int e : {10, 20})
        csv += fmt::format("{},{},{},{},{:.4f}\n", b, r, e, 640.0 / (b * r) + 1, 0.95 - 0.5 * std::exp(-e / (5.0 * b / 32)));
  const auto file = tptest::write_file(d / "late.csv", csv);
  auto r = tptest::run_cli("plan --samples " + file + " --target 0.5 --deadline 1h --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["shortest_trial_epochs"], 10.0) << r.out;
  ASSERT_LT(j["choice"]["epochs"].get<int>(), 10) << r.out;
  EXPECT_EQ(j["before_shortest_trial"], true) << r.out;
  auto text = tptest::run_cli("plan --samples " + file + " --target 0.5 --deadline 1h");
  EXPECT_NE(text.out.find("fewer than any trial or learning-curve point measured (10)"), std::string::npos) << text.out;
  auto late = tptest::run_cli("plan --samples " + file + " --target 0.9 --deadline 1h --json");
  ASSERT_EQ(late.exit_code, 0) << late.err;
  EXPECT_EQ(nlohmann::json::parse(late.out)["before_shortest_trial"], false) << late.out;
}

TEST(PlanCli, WithJsonAFailureIsAJsonObjectOnStdout) {
  // Infeasible: exit 3, stderr as without --json, and stdout a document a script can parse.
  auto r = tptest::run_cli("plan --samples " + samples_file() +
                           " --target 0.99 --deadline 100000 --max-workers 4 --model isotonic-mi --json");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.rfind("infeasible: ", 0), 0u) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("infeasible").get<bool>());
  EXPECT_EQ(j.at("exit_code").get<int>(), 3);
  EXPECT_NE(j.at("error").get<std::string>().find("target: >= 0.99"), std::string::npos) << j;
  // The same in figures: the target, the best metric predicted within the epoch limit, and where.
  EXPECT_EQ(j.at("failing"), "target") << j;
  EXPECT_EQ(j.at("shortfall").at("limit").get<double>(), 0.99) << j;
  EXPECT_EQ(j.at("shortfall").at("unit"), "metric") << j;
  const double best = j.at("shortfall").at("closest").get<double>();
  EXPECT_LT(best, 0.99) << j;
  EXPECT_NEAR(j.at("shortfall").at("short_by").get<double>(), 0.99 - best, 1e-12) << j;
  EXPECT_EQ(j.at("closest").at("metric").get<double>(), best) << j;
  EXPECT_TRUE(j.at("closest").at("workers").is_number_integer()) << j;
  EXPECT_LE(j.at("closest").at("workers").get<int>(), 4) << j;
  EXPECT_NE(j.at("error").get<std::string>().find(fmt::format("{:.6g}", best)), std::string::npos) << j;
  // Bad input: exit 2, and the JSON names the file, line and column the message names.
  auto dir = tptest::temp_dir("planjsonerr");
  auto bad = tptest::write_file(dir / "bad.csv", "batch,workers,epochs,epoch_time_s,metric\n16,1,1,-3,0.5\n");
  auto b = tptest::run_cli("plan --samples " + bad + " --target 0.9 --deadline 100 --json");
  EXPECT_EQ(b.exit_code, 2) << b.err;
  const auto e = nlohmann::json::parse(b.out);
  EXPECT_EQ(e.at("file").get<std::string>(), bad);
  EXPECT_EQ(e.at("line").get<int>(), 2);
  EXPECT_EQ(e.at("field").get<std::string>(), "epoch_time_s");
  EXPECT_FALSE(e.contains("infeasible"));
}

// A declared metric range the samples or the target contradict is a mistake
// in the range: exit 2 naming it, not a plan whose metric passes it.
TEST(PlanCli, AMetricRangeTheDataOrTheTargetContradictExitsTwo) {
  const std::string base = "plan --samples " + samples_file() + " --deadline 100000 --max-workers 4 --model isotonic-mi ";
  auto passed = tptest::run_cli(base + "--target 0.5 --metric-range 0:0.1");
  EXPECT_EQ(passed.exit_code, 2) << passed.out << passed.err;
  EXPECT_NE(passed.err.find("--metric-range"), std::string::npos) << passed.err;
  EXPECT_NE(passed.err.find("is outside the range"), std::string::npos) << passed.err;
  auto beyond = tptest::run_cli(base + "--target 1.5 --metric-range 0:1");
  EXPECT_EQ(beyond.exit_code, 2) << beyond.out << beyond.err;
  EXPECT_NE(beyond.err.find("--target"), std::string::npos) << beyond.err;
}

// The same check where a file declares its own range: every verb that reads
// the samples refuses it, naming the file, the line and the metric.
TEST(PlanCli, AFileWhoseSamplesPassItsOwnRangeIsRefusedByEveryVerb) {
  std::string text = tptest::read_file(samples_file());
  text.replace(0, text.find('\n'), "# trainplan: metric=max metric_range=0.8:1");  // metrics from 0.54
  const auto f = tptest::write_file(tptest::temp_dir("plan_range") / "ranged.csv", text);
  for (const std::string verb : {"fit --samples " + f, "evaluate --samples " + f + " --models isotonic-mi",
                                 "predict --samples " + f + " --batch 32 --workers 2 --model isotonic-mi",
                                 "plan --samples " + f + " --target 0.85 --deadline 1000 --model isotonic-mi"}) {
    auto r = tptest::run_cli(verb);
    EXPECT_EQ(r.exit_code, 2) << verb << ": " << r.err;
    const auto at = r.err.find(f + ":");
    ASSERT_NE(at, std::string::npos) << verb << ": " << r.err;
    EXPECT_GT(std::atol(r.err.c_str() + at + f.size() + 1), 1) << verb << ": " << r.err;  // a data line
    EXPECT_NE(r.err.find("column 'metric'"), std::string::npos) << verb << ": " << r.err;
    EXPECT_NE(r.err.find("is outside the range 0.8:1"), std::string::npos) << verb << ": " << r.err;
  }
}

TEST(PlanCli, ShortDeadlineExitsThreeNamingTheDeadline) {
  auto r = tptest::run_cli("plan --samples " + samples_file() + " --target 0.8 --deadline 5 --max-workers 4 --model isotonic-mi");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto l = tptest::lines(r.err);
  ASSERT_GE(l.size(), 2u) << r.err;
  EXPECT_EQ(l[1].rfind("deadline: ", 0), 0u) << r.err;
}

TEST(PlanCli, BadInputExitsTwo) {
  auto missing = tptest::run_cli("plan --samples /nonexistent.csv --target 0.8 --deadline 10 --max-workers 4");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(missing.err, "/nonexistent.csv", 0, ""));
  const std::string time_only_file = samples_file(false);
  auto time_only = tptest::run_cli("plan --samples " + time_only_file +
                                   " --target 0.8 --deadline 100 --max-workers 4 --model isotonic-mi");
  EXPECT_EQ(time_only.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(time_only.err, time_only_file, 0, "metric"));
  auto method = tptest::run_cli("plan --samples " + samples_file() + " --target 0.8 --deadline 100 --max-workers 4 --method sgd");
  EXPECT_EQ(method.exit_code, 2);
  auto model = tptest::run_cli("plan --samples " + samples_file() +
                               " --target 0.8 --deadline 100 --max-workers 4 --model no-such-model");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(model.err, "", 0, "", {"'no-such-model'"}));
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
  EXPECT_EQ(a["confidence"].get<double>(), 0.9);
  EXPECT_EQ(a, b);  // --conformal adds nothing once --confidence is given
  // And planned on the intervals' pessimistic side: the plan differs from the point plan.
  auto point = tptest::run_cli("plan --samples " + samples_file() +
                               " --target 0.7 --deadline 100000 --max-workers 4 --model isotonic-mi --json");
  ASSERT_EQ(point.exit_code, 0) << point.err;
  auto p = nlohmann::json::parse(point.out);
  EXPECT_FALSE(p.contains("confidence"));
  EXPECT_NE(a["alternatives"], p["alternatives"]);
}

// Nine configurations give nine held-out epoch-time residuals: enough for
// 90% ((9+1) x 0.9 = 9), too few for 95%, which the plan then says of its
// choice (an unmeasured batch, so the held-out residuals are what apply);
// at a measured configuration it says the time rests on the measurement.
TEST(PlanCli, AConfidenceTheResidualsCannotCarryIsSaid) {
  const std::string base = "plan --samples " + samples_file(true, 0.02) +
                           " --target 0.7 --deadline 100000 --max-workers 4 --model isotonic-mi --json --confidence ";
  auto ok = tptest::run_cli(base + "0.9 --batches 48");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_FALSE(nlohmann::json::parse(ok.out).contains("confidence_caveat")) << ok.out;
  auto short_of = tptest::run_cli(base + "0.95 --batches 48");
  ASSERT_EQ(short_of.exit_code, 0) << short_of.err;
  const std::string caveat = nlohmann::json::parse(short_of.out).value("confidence_caveat", "");
  EXPECT_NE(caveat.find("the epoch time's 9 held-out residuals are too few for 95%"), std::string::npos) << caveat;
  auto measured = tptest::run_cli(base + "0.9");
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  const auto m = nlohmann::json::parse(measured.out);
  ASSERT_EQ(m["choice"]["batch"].get<int>() % 16, 0);  // a profiled batch
  EXPECT_NE(m.value("confidence_caveat", "").find("rests on its measurement"), std::string::npos) << measured.out;
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
  EXPECT_EQ(j["confidence"].get<double>(), 0.9);
  EXPECT_EQ(tptest::run_cli(base + " --confidence 0.9").exit_code, 0);
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
  EXPECT_NE(r.out.find("srun --cpus-per-task \"$SLURM_CPUS_ON_NODE\" torchrun"), std::string::npos) << r.out;
  // The script launches the plan's choice (plan --json gives it).
  auto j = nlohmann::json::parse(tptest::run_cli("plan --samples " + samples_file() +
                                                 " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi --json")
                                     .out);
  EXPECT_NE(r.out.find("train.py --batch " + std::to_string(j["choice"]["batch"].get<int>()) + " --epochs " +
                       std::to_string(j["choice"]["epochs"].get<int>())),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(r.err.empty());  // the summary moves to stderr
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
  EXPECT_FALSE(a.contains("confidence"));
  EXPECT_EQ(b["confidence"].get<double>(), 0.9);
  EXPECT_GE(b["choice"]["cost_worker_s"].get<double>(), a["choice"]["cost_worker_s"].get<double>());
}

// At a configuration never sampled (3 workers) the planned metric is the
// metric's one-sided bound with --bounds one-sided and the interval's lower end
// by default, as `predict` reports them.
TEST(PlanCli, BoundsOptionChoosesOneSidedOrTwoSidedAndRejectsOthers) {
  const std::string samples = samples_file(true, 0.03);  // noisy: the bounds differ
  std::string base = "plan --samples " + samples +
                     " --target 0.7 --deadline 100000 --max-workers 4 --model isotonic-mi --json --conformal --confidence 0.9"
                     " --alternatives 60";
  auto planned_at_three_workers = [&](const std::string& extra) {
    auto r = tptest::run_cli(base + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    for (const auto& a : j["alternatives"])
      if (a["workers"] == 3) return a;
    ADD_FAILURE() << "no alternative at 3 workers: " << j.dump(2);
    return nlohmann::json::object();
  };
  auto one = planned_at_three_workers(" --bounds one-sided");
  auto two = planned_at_three_workers("");
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(two.empty());
  auto predicted = [&](const nlohmann::json& a) {
    auto r = tptest::run_cli("predict --samples " + samples + " --model isotonic-mi --confidence 0.9 --json --batch " +
                             std::to_string(a["batch"].get<int>()) + " --workers 3 --epochs " +
                             std::to_string(a["epochs"].get<int>()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["metric"];
  };
  EXPECT_DOUBLE_EQ(one["metric"].get<double>(), predicted(one)["one_sided_bound"]["value"].get<double>()) << one;
  EXPECT_DOUBLE_EQ(two["metric"].get<double>(), predicted(two)["interval"]["lo"].get<double>()) << two;
  EXPECT_NE(one["metric"], two["metric"]);
  auto bad = tptest::run_cli(base + " --bounds sideways");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.err.rfind("error: --bounds: sideways", 0), 0u) << bad.err;  // a usage error naming the option and the value
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
  EXPECT_EQ(nlohmann::json::parse(hours.out)["deadline_s"].get<double>(), 3600.0);
  auto bad = tptest::run_cli(base + " --deadline 4x");
  EXPECT_EQ(bad.exit_code, 2);
  // A usage error from the option parser: "--deadline: '4x' is not a duration ...".
  EXPECT_EQ(bad.err.rfind("error: --deadline: '4x'", 0), 0u) << bad.err;
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
  EXPECT_TRUE(tptest::names_input_error(negative.err, "", 0, "", {"--max-workers"}));
  for (const char* option : {"--tabu-tenure -1", "--tabu-iterations 0", "--max-epochs 0", "--alternatives -2",
                             "--manual-tries 0"}) {
    auto r = tptest::run_cli(base + " " + option);
    EXPECT_EQ(r.exit_code, 2) << option;
    EXPECT_NE(r.err.find(std::string(option).substr(0, std::string(option).find(' '))), std::string::npos) << r.err;
  }
}

// An empty value ('--max-workers ""', '--seed=') is no value: exit 2 naming the option, before any
// work, rather than the default a script whose variable came out empty never chose.
TEST(PlanCli, AnEmptyValueIsRefusedNamingItsOption) {
  const std::string base = "plan --samples " + samples_file() + " --target 0.8 --deadline 100000 --model isotonic-mi";
  for (const std::string& option : {std::string("--max-workers ''"), std::string("--seed=")}) {
    auto r = tptest::run_cli(base + " " + option + " --json");
    EXPECT_EQ(r.exit_code, 2) << option;
    const std::string name = option.substr(0, option.find_first_of(" ="));
    EXPECT_NE(r.err.find(name + ": an empty value"), std::string::npos) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["exit_code"], 2) << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)["field"], name) << r.out;
  }
  // A value that itself ends in '=' is a value.
  auto ends_in_equals = tptest::run_cli("profile --cmd='true --extra=' --help");
  EXPECT_EQ(ends_in_equals.exit_code, 0) << ends_in_equals.err;
  auto evaluate = tptest::run_cli("evaluate --transfer --from a --from-gpu t4 --to b --to-gpu v100 --target-trials ''");
  EXPECT_EQ(evaluate.exit_code, 2);
  EXPECT_NE(evaluate.err.find("--target-trials: an empty value"), std::string::npos) << evaluate.err;
}

// The JSON says how many workers the samples ran at most and whether the
// plan runs more, so that a plan resting on the time model's extrapolation
// in workers is known as one: samples on 1 and 2 workers, whose epoch time
// halves with the workers, and a deadline only more workers meet.
TEST(PlanCli, APlanPastTheSampledWorkersSaysSo) {
  auto d = tptest::temp_dir("plan_past_workers");
  std::string csv = "batch,workers,epochs,epoch_time_s,metric\n";
  for (int b : {32, 64, 128})
    for (int r : {1, 2})
      for (int e : {1, 2})
        csv += fmt::format("{},{},{},{:.3f},{:.4f}\n", b, r, e, (2 + 98.0 * 32 / b) / r, 0.80 + 0.05 * e - 0.001 * b * r / 64);
  const auto samples = tptest::write_file(d / "samples.csv", csv);
  for (const auto& [deadline, past] : {std::pair{"10m", false}, std::pair{"5s", true}}) {
    auto r = tptest::run_cli("plan --samples " + samples + " --target 0.80 --deadline " + deadline +
                             " --max-workers 16 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["most_workers_sampled"], 2);
    EXPECT_EQ(j["past_most_workers"].get<bool>(), past) << deadline << ": " << j["choice"].dump();
    EXPECT_EQ(j["choice"]["workers"].get<int>() > 2, past) << deadline;
  }
  auto text = tptest::run_cli("plan --samples " + samples + " --target 0.80 --deadline 5s --max-workers 16");
  EXPECT_NE(text.out.find("past the most any sample ran (2)"), std::string::npos) << text.out;
}

// Samples from one node of at most 2 workers: the plan packs 2 a node, as
// predict does, and says that it assumed it; a given node size is not.
TEST(PlanCli, APlanPastTheWorkersOfOneNodeSaysHowItPackedThem) {
  auto d = tptest::temp_dir("plan_nodes_assumed");
  std::string csv = "batch,workers,nodes,epochs,epoch_time_s,metric\n";
  for (int b : {32, 64, 128})
    for (int r : {1, 2})
      for (int e : {1, 2})
        csv += fmt::format("{},{},1,{},{:.3f},{:.4f}\n", b, r, e, (2 + 98.0 * 32 / b) / r, 0.80 + 0.05 * e - 0.001 * b * r / 64);
  const auto samples = tptest::write_file(d / "samples.csv", csv);
  const std::string plan = "plan --samples " + samples + " --target 0.80 --deadline 10m --max-workers 4";
  auto r = tptest::run_cli(plan + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["space"]["gpus_per_node"], 2);
  EXPECT_TRUE(j["space"]["nodes_assumed"].get<bool>());
  auto predicted = tptest::run_cli("predict --samples " + samples + " --batch 32 --workers 4 --json");
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  EXPECT_EQ(nlohmann::json::parse(predicted.out)["config"]["nodes"], 2);  // the same packing
  // Said in the text where the choice spans nodes (a short deadline needs more
  // workers than a node of 2), not where it runs on one.
  EXPECT_EQ(tptest::run_cli(plan).out.find("nodes: assumed"), std::string::npos);
  auto text = tptest::run_cli("plan --samples " + samples + " --target 0.80 --deadline 10s --max-workers 4");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("nodes: assumed"), std::string::npos) << text.out;
  r = tptest::run_cli(plan + " --gpus-per-node 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["space"]["nodes_assumed"].get<bool>());
}

// A global batch past the data set an epoch passes over is a run no trial
// measured (one short step an epoch): the plan says so; within it, not.
TEST(PlanCli, ABatchPastTheDataSetIsSaid) {
  const std::string samples = tptest::source_dir() + "/examples/lenet-mnist-samples.csv";
  for (const auto& [batches, past] : {std::pair{"16,32", false}, std::pair{"100000", true}}) {
    auto r = tptest::run_cli("plan --samples " + samples + " --target 0.2 --deadline 10m --batches " + batches + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j["dataset_size"].is_number()) << r.out;
    EXPECT_EQ(j["batch_past_dataset"].get<bool>(), past) << batches;
    const double global = j["choice"]["batch"].get<double>() * j["choice"]["workers"].get<double>();
    EXPECT_EQ(global > j["dataset_size"].get<double>(), past) << batches;
  }
  auto text = tptest::run_cli("plan --samples " + samples + " --target 0.2 --deadline 10m --batches 100000");
  EXPECT_NE(text.out.find("more than the 12000 examples an epoch passes over"), std::string::npos) << text.out;
}

// A value the option parser cannot read is an input error like any other:
// "error: " on stderr, exit 2, and with --json the option as the field.
TEST(PlanCli, AnUnreadableOptionValueIsAnErrorNamingTheOption) {
  auto r = tptest::run_cli("llm plan --model llama2-7b --gpu h100 --tokens 1e9 --global-batch 1e3 --json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["field"], "--global-batch") << r.out;
  EXPECT_EQ(j["exit_code"], 2);
}

// What if we had other GPUs: samples measured on the H200 planned there as
// they are and on every other GPU of --gpu moved first (as transfer
// --samples moves them); each GPU's plan is what plan --samples gives on the
// moved file, prices name the cheapest, and bad combinations exit 2.
// Trained in another precision than profiled: the measured GPU is moved too,
// to itself, so that every GPU is planned in the precision asked; in the
// precision the samples ran in, it stays measured.
TEST(PlanCli, ATargetPrecisionMovesTheMeasuredGpuToo) {
  const std::string samples = tptest::source_dir() + "/examples/h200/lenet-mnist-samples.csv";
  const auto dir = tptest::temp_dir("plan-gpus-precision");
  const std::string ask = " --from-gpu h200 --gpu h200,l4 --target 0.97 --deadline 10m --precision fp32";
  auto same = tptest::run_cli("plan --samples " + samples + ask + " --target-precision fp32 --json");
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_TRUE(nlohmann::json::parse(same.out)["gpus"][0]["measured"].get<bool>());
  auto moved = tptest::run_cli("plan --samples " + samples + ask + " --target-precision mixed --json");
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  const auto h200 = nlohmann::json::parse(moved.out)["gpus"][0];
  EXPECT_FALSE(h200["measured"].get<bool>());
  EXPECT_NE(h200["notes"].dump().find("measured here in fp32, moved to mixed on the same GPU"), std::string::npos)
      << h200.dump();
  // Its plan is plan's on the samples transfer moves to the H200 itself.
  const std::string itself = (dir / "h200-mixed.csv").string();
  ASSERT_EQ(tptest::run_cli("transfer --samples " + samples +
                            " --from-gpu h200 --to-gpu h200 --precision fp32 --target-precision mixed -o " + itself)
                .exit_code,
            0);
  auto there = tptest::run_cli("plan --samples " + itself + " --hardware h200 --target 0.97 --deadline 10m --json");
  ASSERT_EQ(there.exit_code, 0) << there.err;
  const auto want = nlohmann::json::parse(there.out)["choice"];
  EXPECT_EQ(h200["plan"]["choice"]["batch"], want["batch"]);
  EXPECT_EQ(h200["plan"]["choice"]["workers"], want["workers"]);
  EXPECT_NEAR(h200["plan"]["choice"]["total_time_s"].get<double>(), want["total_time_s"].get<double>(), 1e-3);
}

TEST(PlanCli, PlansOnSeveralGpusFromSamplesMeasuredOnOne) {
  const std::string samples = tptest::source_dir() + "/examples/h200/lenet-mnist-samples.csv";
  const auto dir = tptest::temp_dir("plan-gpus");
  const std::string ask = " --target 0.97 --deadline 10m --confidence 0.9";
  auto r = tptest::run_cli("plan --samples " + samples + " --from-gpu h200 --gpu h200,l4 --price h200=3.5,l4=0.8" +
                           ask + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["from_gpu"], "h200");
  const auto& h200 = j["gpus"][0];
  const auto& l4 = j["gpus"][1];
  EXPECT_TRUE(h200["measured"].get<bool>());
  EXPECT_FALSE(h200.contains("times_predicted_log_sd"));
  EXPECT_FALSE(l4["measured"].get<bool>());
  EXPECT_GT(l4["times_predicted_log_sd"].get<double>(), 0);
  // On the H200 the plan is plan's on the samples themselves.
  auto alone = tptest::run_cli("plan --samples " + samples + " --hardware h200" + ask + " --json");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(h200["plan"]["choice"], nlohmann::json::parse(alone.out)["choice"]);
  // On the L4, plan's on the samples transfer moved there.
  const std::string moved = (dir / "l4.csv").string();
  ASSERT_EQ(tptest::run_cli("transfer --samples " + samples + " --from-gpu h200 --to-gpu l4 -o " + moved).exit_code, 0);
  // Moved samples are no trials on the GPU they were moved to, and moved again they are said to be predicted.
  auto self = tptest::run_cli("transfer --samples " + samples + " --from-gpu h200 --to-gpu l4 --trials " + moved);
  EXPECT_EQ(self.exit_code, 2) << self.err;
  EXPECT_TRUE(tptest::names_input_error(self.err, moved, 0, "times_predicted_from", {"predicted from h200", "not measured"}))
      << self.err;
  auto again = tptest::run_cli("transfer --samples " + moved + " --from-gpu l4 --to-gpu h100");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("predicted from h200 (not measured) for l4"), std::string::npos) << again.out;
  auto there = tptest::run_cli("plan --samples " + moved + " --hardware l4" + ask + " --json");
  ASSERT_EQ(there.exit_code, 0) << there.err;
  EXPECT_EQ(l4["plan"]["choice"]["batch"], nlohmann::json::parse(there.out)["choice"]["batch"]);
  EXPECT_EQ(l4["plan"]["choice"]["workers"], nlohmann::json::parse(there.out)["choice"]["workers"]);
  EXPECT_EQ(l4["plan"]["choice"]["epochs"], nlohmann::json::parse(there.out)["choice"]["epochs"]);
  EXPECT_NEAR(l4["plan"]["choice"]["total_time_s"].get<double>(),
              nlohmann::json::parse(there.out)["choice"]["total_time_s"].get<double>(), 1e-3);
  // Costs: GPU-hours times the price, the cheapest named.
  for (const auto& g : j["gpus"])
    EXPECT_NEAR(g["cost"].get<double>(), g["gpu_hours"].get<double>() * g["price_per_gpu_hour"].get<double>(), 1e-12);
  const bool l4_cheaper = l4["cost"].get<double>() < h200["cost"].get<double>();
  EXPECT_EQ(j["cheapest"], l4_cheaper ? "l4" : "h200");
  // What the move says reaches the user (the H200's steps are host time).
  EXPECT_NE(l4["notes"].dump().find("every source step is host time"), std::string::npos) << l4.dump();
  // The text names the cheapest too.
  auto text = tptest::run_cli("plan --samples " + samples + " --from-gpu h200 --gpu h200,l4 --price h200=3.5,l4=0.8" + ask);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(std::string("cheapest: ") + (l4_cheaper ? "l4" : "h200")), std::string::npos) << text.out;
  EXPECT_NE(text.err.find("note (l4): every source step is host time"), std::string::npos) << text.err;
  // No GPU reaches a metric no trial came near: exit 3, each GPU's reason listed.
  auto none = tptest::run_cli("plan --samples " + samples + " --from-gpu h200 --gpu h200,l4 --target 0.9999 --deadline 10m");
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_NE(none.out.find("l4 "), std::string::npos);
  EXPECT_NE(none.out.find("no plan"), std::string::npos) << none.out;

  // Configurations timed on the L4 correct its move: its plan is plan's on the samples moved with them.
  const auto timed = tptest::write_file(dir / "l4-timed.csv",
                                        "# trainplan: metric=max dataset_size=60000\nbatch,workers,epochs,epoch_time_s,metric\n"
                                        "64,1,1,2.6,\n1024,1,1,0.16,\n");
  auto corrected = tptest::run_cli("plan --samples " + samples + " --from-gpu h200 --gpu h200,l4 --trials l4=" + timed + ask +
                                   " --json");
  ASSERT_EQ(corrected.exit_code, 0) << corrected.err;
  const auto cj = nlohmann::json::parse(corrected.out);
  EXPECT_EQ(cj["gpus"][1]["trials"], 2);
  ASSERT_EQ(tptest::run_cli("transfer --samples " + samples + " --from-gpu h200 --to-gpu l4 --trials " + timed + " -o " +
                            moved).exit_code, 0);
  auto there_timed = tptest::run_cli("plan --samples " + moved + " --hardware l4" + ask + " --json");
  ASSERT_EQ(there_timed.exit_code, 0) << there_timed.err;
  EXPECT_NEAR(cj["gpus"][1]["plan"]["choice"]["total_time_s"].get<double>(),
              nlohmann::json::parse(there_timed.out)["choice"]["total_time_s"].get<double>(), 1e-3);
  // Two timed configurations narrow the move's error.
  EXPECT_LT(cj["gpus"][1]["times_predicted_log_sd"].get<double>(), l4["times_predicted_log_sd"].get<double>());

  for (const std::string bad : std::vector<std::string>{" --gpu h200,l4",         // whence the samples
                                " --from-gpu h200 --gpu h200,l4 --trials t4=" + timed,    // not a GPU planned on
                                " --from-gpu h200 --gpu h200,l4 --trials h200=" + timed,  // the measured one
                                " --from-gpu h200 --gpu h200,l4 --trials l4",              // not GPU=FILE
                                " --trials l4=" + timed,                                   // without --gpu
                                " --from-gpu h200 --gpu h200,h200",                // the same GPU twice
                                " --from-gpu h200 --gpu h200,nosuchgpu",           // not in the catalog
                                " --from-gpu h200 --gpu h200,l4 --price l4=1",     // a GPU without a price
                                " --from-gpu h200 --gpu l4 --hardware l4",         // one GPU's node, or each's
                                " --from-gpu h200 --gpu h200,l4 --early-stop",     // one GPU's budgets
                                " --price 2", " --from-gpu h200"}) {               // without --gpu
    auto b = tptest::run_cli("plan --samples " + samples + ask + bad);
    EXPECT_EQ(b.exit_code, 2) << bad << ": " << b.err;
  }
}

// --gpu --frontier: each GPU's frontier is plan --frontier's on that GPU's
// (moved) samples, kept also where the deadline has no plan; with prices the
// merged frontier is, at every deadline, the cheapest of the GPUs' in-effect
// points, fastest first and each strictly cheaper than the one before.
TEST(PlanCli, EachGpusFrontierAndTheCheapestGpuForEveryDeadline) {
  const std::string samples = tptest::source_dir() + "/examples/lenet-mnist-samples.csv";
  const auto dir = tptest::temp_dir("plan-gpus-frontier");
  const std::string gpus = " --from-gpu t4 --gpu t4,a100-40gb,l4 --price t4=0.5,a100-40gb=3,l4=0.8";
  const std::string ask = " --target 0.95 --deadline 10m --frontier";
  auto r = tptest::run_cli("plan --samples " + samples + gpus + ask + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["gpus"].size(), 3u);
  // On the A100, plan --frontier's on the moved samples.
  const std::string moved = (dir / "a100.csv").string();
  ASSERT_EQ(tptest::run_cli("transfer --samples " + samples + " --from-gpu t4 --to-gpu a100-40gb -o " + moved).exit_code, 0);
  auto there = tptest::run_cli("plan --samples " + moved + " --hardware a100-40gb" + ask + " --json");
  ASSERT_EQ(there.exit_code, 0) << there.err;
  const auto want = nlohmann::json::parse(there.out)["frontier"];
  const auto& got = j["gpus"][1]["frontier"];
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i]["batch"], want[i]["batch"]) << i;
    EXPECT_EQ(got[i]["workers"], want[i]["workers"]) << i;
    EXPECT_NEAR(got[i]["total_time_s"].get<double>(), want[i]["total_time_s"].get<double>(), 1e-6) << i;
    EXPECT_NEAR(got[i]["cost"].get<double>(), got[i]["gpu_hours"].get<double>() * 3, 1e-12) << i;
  }
  // The merged frontier is the lower envelope of the GPUs' steps.
  const auto& front = j["frontier"];
  ASSERT_GE(front.size(), 2u);
  std::set<std::string> gpus_on_it;
  for (size_t i = 0; i < front.size(); ++i) {
    gpus_on_it.insert(front[i]["gpu"].get<std::string>());
    if (i > 0) {
      EXPECT_GE(front[i]["total_time_s"].get<double>(), front[i - 1]["total_time_s"].get<double>());
      EXPECT_LT(front[i]["cost"].get<double>(), front[i - 1]["cost"].get<double>());
    }
    const double d = front[i]["total_time_s"].get<double>();
    double cheapest = INFINITY;
    for (const auto& g : j["gpus"]) {
      double in_effect = INFINITY;
      for (const auto& p : g["frontier"])
        if (p["total_time_s"].get<double>() <= d) in_effect = p["cost"].get<double>();
      cheapest = std::min(cheapest, in_effect);
    }
    EXPECT_NEAR(front[i]["cost"].get<double>(), cheapest, 1e-12) << i;
  }
  EXPECT_GE(gpus_on_it.size(), 2u) << front.dump();
  // A deadline no GPU meets: exit 3, and each GPU's frontier says what a longer one costs.
  auto tight = tptest::run_cli("plan --samples " + samples + gpus + " --target 0.95 --deadline 0.01 --frontier --json");
  EXPECT_EQ(tight.exit_code, 3) << tight.err;
  const auto tj = nlohmann::json::parse(tight.out);
  // The failure's fields every verb's --json failure has, beside the whole answer.
  EXPECT_EQ(tj["exit_code"], 3) << tight.out;
  EXPECT_EQ(tj["infeasible"], true) << tight.out;
  EXPECT_NE(tj["error"].get<std::string>().find("no GPU in --gpu"), std::string::npos) << tight.out;
  EXPECT_NE(tight.err.find("(each GPU's reason is in the JSON answer)"), std::string::npos) << tight.err;
  for (const auto& g : tj["gpus"]) {
    EXPECT_TRUE(g.contains("infeasible")) << g.dump();
    EXPECT_EQ(g["failing"], "deadline") << g.dump();
    EXPECT_EQ(g["shortfall"]["limit"], 0.01) << g.dump();
    EXPECT_GT(g["shortfall"]["closest"].get<double>(), 0.01) << g.dump();
    EXPECT_FALSE(g["frontier"].empty()) << g.dump();
  }
  EXPECT_EQ(tj["frontier"], j["frontier"]);
  // Text: the merged table with prices, each GPU's own without.
  auto text = tptest::run_cli("plan --samples " + samples + gpus + ask);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cost against deadline, every GPU"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("<- deadline"), std::string::npos) << text.out;
  auto unpriced = tptest::run_cli("plan --samples " + samples + " --from-gpu t4 --gpu t4,a100-40gb" + ask);
  ASSERT_EQ(unpriced.exit_code, 0) << unpriced.err;
  EXPECT_NE(unpriced.out.find("cost against deadline on each GPU"), std::string::npos) << unpriced.out;
  EXPECT_NE(unpriced.out.find("a100-40gb:"), std::string::npos) << unpriced.out;
  // The picture.
  if (trainplan::io::gnuplot_available()) {
    const auto png = dir / "gpus.png";
    auto drawn = tptest::run_cli("plan --samples " + samples + gpus + ask + " --plot " + png.string());
    ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
    EXPECT_GT(std::filesystem::file_size(png), 1000u);
    // --plot alone draws the frontiers too (they are the picture).
    const auto alone = dir / "gpus-alone.png";
    auto drawn_alone = tptest::run_cli("plan --samples " + samples + gpus + " --target 0.95 --deadline 10m --plot " + alone.string());
    ASSERT_EQ(drawn_alone.exit_code, 0) << drawn_alone.err;
    EXPECT_GT(std::filesystem::file_size(alone), 1000u);
  }
}

// Samples that do not say their dataset size cannot be moved to another GPU:
// plan --gpu exits 2 naming the field and the option; --dataset-size gives
// it, and the plans equal those on the file that says it.
TEST(PlanCli, ADatasetSizeOnTheCommandLineLetsSamplesMove) {
  const std::string with = tptest::source_dir() + "/examples/lenet-mnist-samples.csv";
  const auto dir = tptest::temp_dir("plan-dataset-size");
  std::string text = tptest::read_file(with);
  ASSERT_EQ(text.rfind("# trainplan: metric=max dataset_size=12000\n", 0), 0u) << text.substr(0, 80);
  const std::string without = tptest::write_file(dir / "no-size.csv", text.substr(text.find('\n') + 1));
  const std::string ask = " --from-gpu t4 --gpu t4,l4 --target 0.95 --deadline 10m --json";
  auto refused = tptest::run_cli("plan --samples " + without + ask);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("dataset_size"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--dataset-size"), std::string::npos) << refused.err;
  auto given = tptest::run_cli("plan --samples " + without + ask + " --dataset-size 12000");
  auto said = tptest::run_cli("plan --samples " + with + ask);
  ASSERT_EQ(given.exit_code, 0) << given.err;
  ASSERT_EQ(said.exit_code, 0) << said.err;
  const auto g = nlohmann::json::parse(given.out), w = nlohmann::json::parse(said.out);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(g["gpus"][i]["plan"]["choice"], w["gpus"][i]["plan"]["choice"]) << i;
  auto replaced = tptest::run_cli("plan --samples " + with + ask + " --dataset-size 6000");
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_NE(replaced.err.find("--dataset-size 6000 replaces the samples' own dataset_size=12000"), std::string::npos)
      << replaced.err;
  EXPECT_EQ(tptest::run_cli("plan --samples " + with + ask + " --dataset-size 0").exit_code, 2);
}

// An option the plan asked for does not read is refused, naming it: a bound
// without --confidence, an early stop's budget without it, a baseline's or a
// search's own option without them, a launch's parts without --emit.
TEST(PlanCli, OptionsThePlanDoesNotReadAreRefused) {
  const std::string base = "plan --samples " + samples_file() + " --target 0.8 --deadline 100000";
  tptest::expect_each_exits_two_naming(base + " ", {{"--bounds one-sided", "--bounds"},
                                                     {"--early-stop-budget target", "--early-stop-budget"},
                                                     {"--manual-tries 3", "--manual-tries"},
                                                     {"--search exhaustive --tabu-iterations 3", "--tabu-iterations"},
                                                     {"--method lb-bsp --tabu-tenure 3", "--tabu-tenure"},
                                                     {"--early-stop --search tabu", "--search"},
                                                     {"--method cynthia --search tabu", "--search"},
                                                     {"--search exhaustive --seed 3", "--seed"},
                                                     {"--conformal", "--conformal"},
                                                     {"--alternatives 1001", "--alternatives"},
                                                     {"--job-name q", "--job-name"},
                                                     {"--train-cmd 'x {batch}'", "--train-cmd"},
                                                     {"--image i", "--image"},
                                                     {"--no-gpus", "--no-gpus"},
                                                     // Options of another kind of launch than the one asked for.
                                                     {"--emit slurm --image i", "--image"},
                                                     {"--emit torchrun --job-name q", "--job-name"}});
  EXPECT_EQ(tptest::run_cli(base + " --confidence 0.8 --bounds one-sided").exit_code, 0);
  EXPECT_EQ(tptest::run_cli(base + " --method manual --manual-tries 3").exit_code, 0);
  // --seed deals --confidence's conformal folds as predict's --seed does: read there.
  EXPECT_EQ(tptest::run_cli(base + " --search exhaustive --confidence 0.8 --seed 3").exit_code, 0);
}
