#include "models/optimus_speed.h"
#include "scoring/speed_eval.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::models;
using trainplan::scoring::speed_cv_mre;
using trainplan::scoring::speed_mre;

namespace {

std::vector<SpeedPoint> synthetic(SpeedMode mode, const Eigen::VectorXd& theta) {
  OptimusSpeedModel truth({mode});
  std::vector<SpeedPoint> pts;
  for (int p = 1; p <= 6; ++p)
    for (int w = 1; w <= 8; ++w) {
      double M = 32.0 * (1 + (p + w) % 3);  // vary M so that t0 (sync) is identifiable
      double inv = truth.features(p, w, M).dot(theta);
      pts.push_back({p, w, M, mode == SpeedMode::kSync ? 1 / inv : w / inv});
    }
  return pts;
}

}  // namespace

TEST(OptimusSpeed, RecoversSyncTheta) {
  Eigen::VectorXd theta(5);
  theta << 0.004, 0.4, 0.42, 0.007, 0.02;
  auto pts = synthetic(SpeedMode::kSync, theta);
  OptimusSpeedModel m({SpeedMode::kSync});
  m.fit(pts);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(m.theta()(j), theta(j), 1e-8) << j;
  EXPECT_LT(speed_mre(m, pts), 1e-9);
  EXPECT_LT(speed_cv_mre(pts, {SpeedMode::kSync}, 5, 1), 1e-8);
}

TEST(OptimusSpeed, RecoversAsyncThetaAndKeepsItNonNegative) {
  Eigen::VectorXd theta(4);
  theta << 0.3, 0.2, 0.0, 0.05;  // one true zero: NNLS must not go negative
  auto pts = synthetic(SpeedMode::kAsync, theta);
  OptimusSpeedModel m({SpeedMode::kAsync});
  m.fit(pts);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(m.theta()(j), theta(j), 1e-8) << j;
  EXPECT_GE(m.theta().minCoeff(), 0);
  EXPECT_NEAR(m.predict(2, 4, 32), 4 / (0.3 + 0.2 * 2 + 0.05 * 2), 1e-9);
}

TEST(OptimusSpeed, RejectsTooFewOrBadPoints) {
  OptimusSpeedModel m;
  EXPECT_THROW(m.fit({{1, 1, 32, 1.0}}), InputError);
  std::vector<SpeedPoint> bad(6, SpeedPoint{1, 1, 32, 1.0});
  bad[3].speed = 0;
  EXPECT_THROW(m.fit(bad), InputError);
  EXPECT_THROW(parse_speed_mode("semi"), InputError);
}

// Folds that leave a training set smaller than the model's parameters are
// refused naming --cv and the fold count that works, not met as a fit error.
TEST(OptimusSpeed, FoldsTooSmallToTrainOnNameTheCountThatWorks) {
  Eigen::VectorXd theta(5);
  theta << 0.004, 0.4, 0.42, 0.007, 0.02;
  auto pts = synthetic(SpeedMode::kSync, theta);
  pts.resize(6);
  try {
    speed_cv_mre(pts, {SpeedMode::kSync}, 5, 1);
    ADD_FAILURE() << "5 folds of 6 points trained on 4";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--cv");
    EXPECT_NE(std::string(e.what()).find("give --cv 6 or more"), std::string::npos) << e.what();
  }
  EXPECT_LT(speed_cv_mre(pts, {SpeedMode::kSync}, 6, 1), 1e-6);
}

// A speed many decades off the rest leaves no coefficient: said, not an
// infinite speed predicted everywhere.
TEST(OptimusSpeed, ASpeedDecadesOffIsNamed) {
  Eigen::VectorXd theta(5);
  theta << 0.004, 0.4, 0.42, 0.007, 0.02;
  auto pts = synthetic(SpeedMode::kSync, theta);
  pts[3].speed = 1e20;
  OptimusSpeedModel m({SpeedMode::kSync});
  try {
    m.fit(pts);
    for (const auto& q : pts) EXPECT_TRUE(std::isfinite(m.predict(q.ps, q.workers, q.global_batch)));
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no fit predicts a finite speed"), std::string::npos) << e.what();
  }
}

TEST(OptimusSpeed, CliFitsAFixtureAndReportsErrors) {
  auto dir = tptest::temp_dir("speed");
  std::string text;
  Eigen::VectorXd theta(5);
  theta << 0.004, 0.4, 0.42, 0.007, 0.02;
  OptimusSpeedModel truth;
  truth.fit(synthetic(SpeedMode::kSync, theta));  // any fitted sync model, used to write exact speeds
  for (int p = 1; p <= 3; ++p)
    for (int w = 1; w <= 4; ++w) {
      double f = truth.predict(p, w, 32);  // steps/s; each of w workers reports f as steps/s
      text += "('toy', 'dist_sync', 32, " + std::to_string(p) + ", " + std::to_string(w) + ", [";
      for (int i = 0; i < w; ++i) text += (i ? ", " : "") + std::to_string(f);
      text += "], [";  // one load a parameter server
      for (int i = 0; i < p; ++i) text += i ? ", 1.0" : "1.0";
      text += "], [";  // and one a worker
      for (int i = 0; i < w; ++i) text += i ? ", 0.5" : "0.5";
      text += "])\n";
    }
  auto path = tptest::write_file(dir / "speed.txt", text);
  auto r = tptest::run_cli("speed --data " + path + " --unit steps --cv 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["model"], "toy");
  EXPECT_EQ(j[0]["points"], 12);
  EXPECT_LT(j[0]["in_sample_mre"].get<double>(), 1e-4);
  auto bad = tptest::run_cli("speed --data " + path + " --model nosuch");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(bad.err, path, 0, "model", {"'nosuch'", "toy"}));  // and the models there are
  auto none = tptest::run_cli("speed --data " + path + " --mode async");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(none.err, path, 0, "mode", {"async", "'toy'"}));
  // A worker_cpu list that is not one a worker, and speeds that add up past a double, name their line.
  auto short_cpu = tptest::write_file(dir / "cpu.txt", "('toy', 'dist_sync', 32, 1, 2, [1.0, 1.0], [1.0], [0.5])\n");
  auto cpu = tptest::run_cli("speed --data " + short_cpu);
  EXPECT_EQ(cpu.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(cpu.err, short_cpu, 1, "worker_cpu")) << cpu.err;
  auto huge = tptest::write_file(dir / "huge.txt", "('toy', 'dist_sync', 32, 1, 2, [1e308, 1e308], [1.0], [0.5, 0.5])\n");
  auto bom = tptest::write_file(dir / "bom.txt", "\xEF\xBB\xBF" + text);  // saved with a byte-order mark
  EXPECT_EQ(tptest::run_cli("speed --data " + bom + " --unit steps --cv 3").exit_code, 0);
  // More folds than any model has rows: refused with several models as with one.
  std::string other = text;
  for (size_t at = 0; (at = other.find("'toy'", at)) != std::string::npos;) other.replace(at, 5, "'toy2'"), at += 6;
  auto both = tptest::write_file(dir / "two.txt", text + other);
  EXPECT_EQ(tptest::run_cli("speed --data " + both + " --unit steps --cv 3").exit_code, 0);
  for (const std::string model : {"", " --model toy"}) {
    auto folds = tptest::run_cli("speed --data " + both + " --unit steps --cv 100" + model);
    EXPECT_EQ(folds.exit_code, 2) << model;
    EXPECT_TRUE(tptest::names_input_error(folds.err, "", 0, "--cv", {"give at most 12"})) << folds.err;
    EXPECT_EQ(folds.out, "") << model;  // no answer printed above the refusal
  }
  auto overflow = tptest::run_cli("speed --data " + huge);
  EXPECT_EQ(overflow.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(overflow.err, huge, 1, "worker_speed")) << overflow.err;
}

TEST(OptimusSpeed, FitsTheSharedDl2Table) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto r = tptest::run_cli("speed --data " + tptest::shared_data_dir() + "/dl2/config_speed.txt --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  for (const auto& m : j) {
    EXPECT_GT(m["points"].get<int>(), 150);
    EXPECT_LT(m["cv_mre"].get<double>(), 0.15) << m.dump();
  }
}
