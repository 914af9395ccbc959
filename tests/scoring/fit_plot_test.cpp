// Pictures of a fit (scoring/fit_plot.h) and the gnuplot driver (io/gnuplot.h).
#include "scoring/fit_plot.h"
#include "scoring/evaluate_plot.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "core/error.h"
#include "io/gnuplot.h"
#include "plan/objective.h"
#include "plan/plan_plot.h"
#include "sim/experiment.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::scoring;

namespace {

// Known curves, so the panels' values can be checked exactly.
class LinearTime : public models::TimeModel {
 public:
  std::string name() const override { return "linear-time"; }
  void fit(const SampleSet&) override {}
  double predict(double b, int r, int nodes) const override { return 1000.0 / (b * r) + 10.0 * nodes; }
};
class RisingMetric : public models::MetricModel {
 public:
  std::string name() const override { return "rising"; }
  void fit(const SampleSet&) override {}
  double predict(double b, int r, double e) const override { return 1.0 - 1.0 / (1.0 + e / (b * r)); }
};

// 5 batches x workers 1..6 (4 per node) x 2 epochs; metric on every sample.
SampleSet samples() {
  SampleSet s;
  for (double b : {8.0, 16.0, 32.0, 64.0, 128.0})
    for (int r = 1; r <= 6; ++r)
      for (double e : {2.0, 10.0}) {
        Sample x;
        x.batch = b, x.workers = r, x.epochs = e, x.nodes = (r + 3) / 4;
        x.epoch_time_s = 1000.0 / (b * r) + 10.0 * x.nodes;
        x.metric = 1.0 - 1.0 / (1.0 + e / (b * r));
        s.samples.push_back(x);
      }
  return s;
}

size_t points_in(const io::PlotPanel& p, const std::string& style_prefix) {
  size_t n = 0;
  for (const auto& s : p.series)
    if (s.style.rfind(style_prefix, 0) == 0) n += s.points.size();
  return n;
}

}  // namespace

TEST(FitPlot, PanelsDrawTheModelOverEverySample) {
  SampleSet s = samples();
  LinearTime t;
  RisingMetric m;
  auto panels = scoring::fit_panels(s, &t, &m, {4, 50});
  ASSERT_EQ(panels.size(), 2u);
  const auto& time = panels[0];
  const auto& metric = panels[1];
  EXPECT_TRUE(time.logy);
  // Every sample is drawn once as a point (grey or in its batch's colour).
  EXPECT_EQ(points_in(time, "points"), s.size());
  EXPECT_EQ(points_in(metric, "points"), s.size());
  // Four time curves over workers 1..6, nodes packed at 4 per node as sampled.
  int curves = 0;
  for (const auto& ser : time.series) {
    if (ser.style.rfind("linespoints", 0) != 0) continue;
    ++curves;
    ASSERT_EQ(ser.points.size(), 6u);
  }
  EXPECT_EQ(curves, 4);
  // The first and the last batch are among the curves; r = 5 is on 2 nodes.
  const auto& first = time.series[1];
  EXPECT_EQ(first.title, "b=8 per worker");
  EXPECT_NEAR(first.points[4].second, 1000.0 / 40 + 20.0, 1e-9);
  EXPECT_NEAR(first.points[0].second, 1000.0 / 8 + 10.0, 1e-9);
  // Metric curves: 4 configurations spread over global batch, 50 points up to 1.1 x 10 epochs.
  curves = 0;
  for (const auto& ser : metric.series) {
    if (ser.style.rfind("lines", 0) != 0) continue;
    ++curves;
    ASSERT_EQ(ser.points.size(), 50u);
    EXPECT_NEAR(ser.points.back().first, 11.0, 1e-9);
  }
  EXPECT_EQ(curves, 4);
  // The first curve is the smallest global batch, B = 8: the model's metric there.
  for (const auto& [e, y] : metric.series[1].points) EXPECT_NEAR(y, 1.0 - 1.0 / (1.0 + e / 8.0), 1e-12) << e;
  // A model that is absent draws no panel; time-only samples draw no metric panel.
  EXPECT_EQ(scoring::fit_panels(s, &t, nullptr).size(), 1u);
  for (auto& x : s.samples) x.metric.reset();
  EXPECT_EQ(scoring::fit_panels(s, &t, &m).size(), 1u);
}

TEST(Gnuplot, RejectsOtherExtensionsAndEmptyCharts) {
  EXPECT_THROW(io::check_plot_path("out.pdf"), InputError);
  EXPECT_NO_THROW(io::check_plot_path("out.svg"));
  io::PlotPanel empty;
  empty.series.push_back({"nothing", {}, "lines", ""});
  EXPECT_THROW(io::render_plot("x.png", {empty}), InputError);
}

TEST(Gnuplot, APathThatCannotBeWrittenFailsBeforeDrawing) {
  auto dir = tptest::temp_dir("plotpath");
  try {
    io::check_plot_path((dir / "no-such-folder" / "x.png").string());
    ADD_FAILURE() << "a missing folder was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--plot");
    EXPECT_NE(e.message().find("no folder"), std::string::npos) << e.what();
  }
  std::filesystem::create_directories(dir / "a.svg");
  EXPECT_THROW(io::check_plot_path((dir / "a.svg").string()), InputError);  // a folder of that name
  EXPECT_NO_THROW(io::check_plot_path((dir / "b.svg").string()));
  EXPECT_NO_THROW(io::check_plot_path("relative.png"));  // the working folder
}

TEST(Gnuplot, WritesAnSvgWithEveryPanel) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox)";
  io::PlotPanel a, b;
  a.title = "left panel's 'quoted' title";
  a.series.push_back({"line", {{1, 1}, {2, 4}, {3, 9}}, "lines", "#1f77b4"});
  b.title = "right panel";
  b.logy = true;
  b.series.push_back({"", {{1, 10}, {2, 100}}, "points", ""});
  auto path = tptest::temp_dir("plot") / "two.svg";
  io::render_plot(path.string(), {a, b});
  std::string svg = tptest::read_file(path);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("right panel"), std::string::npos);
  EXPECT_NE(svg.find("quoted"), std::string::npos);
}

// A TMPDIR that does not exist (one a scheduler set for a job and removed)
// is passed over for /tmp.
TEST(Gnuplot, AMissingTmpdirIsPassedOverForTmp) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox)";
  io::PlotPanel a;
  a.series.push_back({"line", {{1, 1}, {2, 4}}, "lines", ""});
  auto path = tptest::temp_dir("plot-tmpdir") / "one.svg";
  const char* was = std::getenv("TMPDIR");
  const std::string before = was ? was : "";
  setenv("TMPDIR", "/nonexistent-trainplan-tmpdir", 1);
  std::string error;
  try {
    io::render_plot(path.string(), {a});
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (was) setenv("TMPDIR", before.c_str(), 1);
  else unsetenv("TMPDIR");
  EXPECT_EQ(error, "");
  EXPECT_NE(tptest::read_file(path).find("<svg"), std::string::npos);
}

// A chart is renamed over its destination whole; a destination that is a
// symbolic link has the file it points to replaced, the link kept, and
// nothing partial is left beside either.
TEST(Gnuplot, AChartReplacesTheFileALinkPointsTo) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  io::PlotPanel a;
  a.title = "first";
  a.series.push_back({"line", {{1, 1}, {2, 4}}, "lines", ""});
  const auto dir = tptest::temp_dir("plot_link");
  std::filesystem::create_directories(dir / "real");
  const auto real = dir / "real" / "chart.svg", link = dir / "chart.svg";
  tptest::write_file(real, "old");
  std::filesystem::create_symlink(real, link);
  io::render_plot(link.string(), {a});
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_NE(tptest::read_file(real).find("first"), std::string::npos);
  a.title = "second";
  io::render_plot(link.string(), {a});
  EXPECT_NE(tptest::read_file(real).find("second"), std::string::npos);
  for (const auto& folder : {dir, dir / "real"})
    for (const auto& e : std::filesystem::directory_iterator(folder))
      EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << e.path();
}

// A gnuplot that fails is said as what failed (exit 1, "error: gnuplot
// failed ..."), not as an internal error of trainplan's.
TEST(Gnuplot, AFailingGnuplotIsSaidAsSuch) {
  const auto dir = tptest::temp_dir("fake_gnuplot");
  tptest::write_file(dir / "gnuplot", "#!/bin/sh\n[ \"$1\" = --version ] && exit 0\ncat >/dev/null\necho 'cannot open the display' >&2\nexit 1\n");
  std::filesystem::permissions(dir / "gnuplot", std::filesystem::perms::owner_all);
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (dir.string() + ":" + path).c_str(), 1);
  const auto r = tptest::run_cli("fit --samples " + (std::filesystem::path(tptest::source_dir()) / "examples" /
                                                     "lenet-mnist-samples.csv").string() +
                                 " --plot " + (dir / "chart.png").string());
  // With --json the answer, printed before the chart, is the one JSON document on stdout.
  const auto j = tptest::run_cli("fit --samples " + (std::filesystem::path(tptest::source_dir()) / "examples" /
                                                     "lenet-mnist-samples.csv").string() +
                                 " --json --plot " + (dir / "chart.png").string());
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(j.exit_code, 1) << j.err;
  EXPECT_TRUE(nlohmann::json::accept(j.out)) << j.out;
  EXPECT_TRUE(nlohmann::json::parse(j.out).contains("time")) << j.out;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: gnuplot failed while drawing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot open the display"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

namespace {
// 27 samples of a job whose accuracy approaches 0.9 more slowly at larger global batch.
std::string cli_samples(const std::filesystem::path& dir) {
  std::string csv = "# trainplan: metric=max\nbatch,workers,epochs,epoch_time_s,metric\n";
  for (int b : {16, 32, 64})
    for (int r : {1, 2, 4})
      for (int e : {1, 4, 12})
        csv += fmt::format("{},{},{},{},{}\n", b, r, e, 3000.0 / (b * r) * (0.01 + 0.0005 * b),
                           0.9 - 0.5 / (1 + e * 100.0 / (100 + b * r)));
  return tptest::write_file(dir / "s.csv", csv);
}
}  // namespace

TEST(PlanCli, PlotWritesTheChartAndABadNameFailsAtOnce) {
  auto dir = tptest::temp_dir("planplot");
  auto samples = cli_samples(dir);
  const std::string common = "plan --samples " + samples + " --target 0.8 --deadline 600 --max-workers 4 --plot ";
  auto bad = tptest::run_cli(common + (dir / "plan.jpg").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(bad.err, "", 0, "--plot", {"'" + (dir / "plan.jpg").string() + "'"}));
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  auto out = dir / "plan.svg";
  auto ok = tptest::run_cli(common + out.string());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  std::string svg = tptest::read_file(out);
  EXPECT_NE(svg.find("cost of the cheapest feasible epochs"), std::string::npos);
  EXPECT_NE(svg.find("target 0.8"), std::string::npos);
}

TEST(FitCli, PlotWritesTheChartAndABadNameFailsBeforeFitting) {
  auto dir = tptest::temp_dir("fitplot");
  auto samples = cli_samples(dir);
  auto bad = tptest::run_cli("fit --samples " + samples + " --plot " + (dir / "chart.pdf").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(bad.err, "", 0, "--plot", {"'" + (dir / "chart.pdf").string() + "'"}));
  EXPECT_EQ(tptest::lines(bad.err).size(), 1u) << bad.err;  // that line alone: it failed before any fit
  auto nowhere = tptest::run_cli("fit --samples " + samples + " --plot " + (dir / "none" / "chart.png").string());
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(nowhere.err, "", 0, "--plot", {"cannot write"})) << nowhere.err;
  EXPECT_EQ(tptest::lines(nowhere.err).size(), 1u) << nowhere.err;  // no image bytes, no gnuplot log
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  auto out = dir / "chart.svg";
  auto ok = tptest::run_cli("fit --samples " + samples + " --time-model isotonic-mi --metric-model global-batch --plot " +
                            out.string());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  std::string svg = tptest::read_file(out);
  EXPECT_NE(svg.find("global-batch"), std::string::npos);
  EXPECT_NE(svg.find("isotonic-mi"), std::string::npos);
}

TEST(Gnuplot, JctCdfOfSimulatedRuns) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  std::vector<sim::SimResult> runs(2);
  runs[0].policy = "fifo";
  runs[1].policy = "tiresias";
  for (int i = 1; i <= 5; ++i) {
    sim::JobResult j;
    j.jct = 3600.0 * i;
    runs[0].jobs.push_back(j);
    j.jct = 1800.0 * i;
    runs[1].jobs.push_back(j);
  }
  auto path = tptest::temp_dir("cdf") / "cdf.svg";
  sim::plot_jct_cdf(path.string(), runs, "JCT CDF test");
  std::string svg = tptest::read_file(path);
  EXPECT_NE(svg.find("tiresias"), std::string::npos);
  EXPECT_NE(svg.find("JCT CDF test"), std::string::npos);
  EXPECT_THROW(sim::plot_jct_cdf("cdf.txt", runs, "x"), InputError);
}

namespace {
// Epoch time 100/(b r) + 1 per epoch; metric 1 - 1/(1 + e/4) at every (b, r).
class ToyModel : public models::PerformanceModel {
 public:
  std::optional<double> epoch_time(int b, int r, int) const override { return 100.0 / (b * r) + 1.0; }
  std::optional<double> metric(int, int, double e) const override { return 1.0 - 1.0 / (1.0 + e / 4.0); }
  MetricDirection direction() const override { return MetricDirection::kMax; }
  std::string name() const override { return "toy"; }
};
}  // namespace

TEST(PlanPlot, CostPerCellWithGapsAndTheChosenRun) {
  ToyModel m;
  plan::PlanProblem p;
  p.space.batches = {8, 16, 32};
  p.space.max_workers = 3;
  p.space.max_epochs = 100;
  p.target = 0.75;       // e >= 12
  p.deadline_s = 150.0;  // b=8, r=1: 13.5 s per epoch, 11 epochs at most: infeasible
  auto best = plan::evaluate_cell(m, p, 32, 1);
  ASSERT_TRUE(best);
  auto panels = plan::plan_panels(m, m, p, *best);
  ASSERT_EQ(panels.size(), 2u);
  const auto& cost = panels[0];
  ASSERT_EQ(cost.series.size(), 4u);  // three batches and the choice
  EXPECT_EQ(cost.series[0].title, "b=8");
  EXPECT_TRUE(std::isnan(cost.series[0].points[0].second));  // the gap
  // b=16, r=2: 100/32 + 1 = 4.125 s per epoch, 12 epochs, cost 2 x 49.5.
  EXPECT_NEAR(cost.series[1].points[1].second, 2 * 12 * (100.0 / 32 + 1), 1e-9);
  EXPECT_NEAR(cost.series.back().points[0].second, best->cost, 1e-9);
  const auto& metric = panels[1];
  // The same model twice: no separate point-prediction curve.
  for (const auto& s : metric.series) EXPECT_NE(s.title, "point prediction");
  EXPECT_EQ(metric.series.back().points[0].first, 12.0);
  // The deadline's epoch limit at b=32, r=1 (100/32 + 1 s per epoch).
  bool deadline_line = false;
  for (const auto& s : metric.series)
    if (s.title.rfind("deadline: ", 0) == 0) {
      deadline_line = true;
      EXPECT_EQ(s.points[0].first, double(plan::max_epochs_within(p, 100.0 / 32 + 1)));
    }
  EXPECT_TRUE(deadline_line);
}

// A deadline right of the metric chart is named in its title, not listed in
// the key as a line the chart never draws.
TEST(PlanPlot, ADeadlineBeyondTheChartIsNamedInTheTitleNotTheKey) {
  ToyModel m;
  plan::PlanProblem p;
  p.space.batches = {8, 16, 32};
  p.space.max_workers = 3;
  p.space.max_epochs = 100000;
  p.target = 0.75;
  p.deadline_s = 1e6;
  auto best = plan::evaluate_cell(m, p, 32, 1);
  ASSERT_TRUE(best);
  const auto metric = plan::plan_panels(m, m, p, *best)[1];
  for (const auto& s : metric.series) EXPECT_EQ(s.title.find("deadline"), std::string::npos) << s.title;
  EXPECT_NE(metric.title.find("right of the chart"), std::string::npos) << metric.title;
}

// A log axis without a set range spans the data, not whole decades: values
// 1 to 4 get ticks 1 and 2, and no 0.1 or 100.
TEST(Gnuplot, ALogAxisSpansTheDataNotWholeDecades) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox)";
  io::PlotPanel a;
  a.logy = true;
  a.series.push_back({"", {{1, 1}, {2, 2.5}, {3, 4}}, "points", ""});
  auto path = tptest::temp_dir("plot") / "log.svg";
  io::render_plot(path.string(), {a});
  const std::string svg = tptest::read_file(path);
  // A tick label is the whole text of an element (gnuplot pads it with a space).
  auto has_label = [&](const std::string& l) {
    return std::regex_search(svg, std::regex(">\\s*" + std::regex_replace(l, std::regex("\\."), "\\.") + "\\s*</"));
  };
  EXPECT_TRUE(has_label("2"));
  EXPECT_FALSE(has_label("100"));
  EXPECT_FALSE(has_label("0.1"));
}

TEST(Gnuplot, ASeriesWithNothingToDrawKeepsItsLegendAndPrintsNothing) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  io::PlotPanel p;
  p.series.push_back({"drawn", {{1, 1}, {2, NAN}, {3, 3}}, "linespoints", ""});
  p.series.push_back({"b=128: no feasible cell", {{1, NAN}, {2, NAN}}, "linespoints", "#d62728"});
  auto path = tptest::temp_dir("keyentry") / "k.svg";
  testing::internal::CaptureStdout();
  io::render_plot(path.string(), {p});
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");  // gnuplot's messages stay off stdout
  std::string svg = tptest::read_file(path);
  EXPECT_NE(svg.find("no feasible cell"), std::string::npos);
}

namespace {
scoring::ModelScore scored(const std::string& name, std::optional<double> time_cv, std::optional<double> metric_cv) {
  scoring::ModelScore m;
  m.model = name;
  if (time_cv) m.time.cv_mre = time_cv, m.time.cv_points = {{2.0, 2.2}, {8.0, 7.0}, {-1.0, 3.0}};
  if (metric_cv) m.metric.cv_mre = metric_cv, m.metric.cv_points = {{0.5, 0.52}, {0.7, 0.69}};
  return m;
}
}  // namespace

TEST(EvaluatePlot, RanksModelsByCvErrorCapsThemAndDrawsTheDiagonal) {
  scoring::DatasetScores ds{"toy", "", {}};
  ds.models.push_back(scored("c", 0.30, std::nullopt));  // time only
  ds.models.push_back(scored("a", 0.10, 0.02));
  ds.models.push_back(scored("b", 0.20, 0.01));
  ds.models.push_back(scored("d", std::nullopt, std::nullopt));  // nothing scored: not drawn
  scoring::EvaluatePlotOptions o;
  o.max_models = 2;
  auto panels = scoring::evaluate_panels({ds}, o);
  ASSERT_EQ(panels.size(), 2u);  // time, then metric
  const auto& time = panels[0];
  EXPECT_TRUE(time.logx && time.logy);
  EXPECT_EQ(time.title, "toy: epoch time, cross-validated\n(best 2 of 3 models)");
  ASSERT_EQ(time.series.size(), 3u);  // two models, worst drawn first, and y = x
  EXPECT_EQ(time.series[0].title, "b (MRE 20.0%)");
  EXPECT_EQ(time.series[1].title, "a (MRE 10.0%)");
  EXPECT_EQ(time.series[1].points.size(), 2u);  // the negative time has no place on log axes
  ASSERT_TRUE(time.xrange && time.yrange);
  EXPECT_EQ(*time.xrange, *time.yrange);  // one scale on both axes
  EXPECT_LT(time.xrange->first, 2.0);
  EXPECT_GT(time.xrange->first, 1.9);
  EXPECT_GT(time.xrange->second, 8.0);
  EXPECT_LT(time.xrange->second, 8.5);
  EXPECT_EQ(time.series[2].points.front(), std::make_pair(time.xrange->first, time.xrange->first));
  EXPECT_EQ(time.series[2].points.back(), std::make_pair(time.xrange->second, time.xrange->second));
  const auto& metric = panels[1];
  EXPECT_FALSE(metric.logx);
  EXPECT_EQ(metric.title, "toy: metric, cross-validated");  // both metric models fit under the cap, all in frame
  ASSERT_EQ(metric.series.size(), 3u);
  EXPECT_EQ(metric.series[1].title, "b (MRE 1.0%)");  // lower CV MRE drawn last, on top
  EXPECT_EQ(metric.series[1].points, (std::vector<std::pair<double, double>>{{0.5, 0.52}, {0.7, 0.69}}));
  // One wild prediction does not stretch the frame; the title counts it.
  ds.models[1].metric.cv_points.push_back({0.6, 100.0});
  auto wild = scoring::evaluate_panels({ds}, o)[1];
  EXPECT_EQ(wild.title, "toy: metric, cross-validated\n(1 predictions off the frame)");
  EXPECT_LT(wild.yrange->second, 0.7 + 0.5 * 0.2 + 0.01);
  int off = 0;
  for (const auto& ser : wild.series)
    for (const auto& [x, y] : ser.points) off += y < wild.yrange->first || y > wild.yrange->second;
  EXPECT_EQ(off, 1);
  // A data set where nothing was cross-validated gives no panel.
  scoring::DatasetScores empty{"empty", "", {scored("d", std::nullopt, std::nullopt)}};
  EXPECT_TRUE(scoring::evaluate_panels({empty}).empty());
}

TEST(Gnuplot, LaysPanelsOutInRowsOfTheGivenColumns) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  io::PlotPanel p;
  p.series.push_back({"", {{1, 1}, {2, 2}}, "lines", ""});
  auto path = tptest::temp_dir("plotgrid") / "grid.svg";
  io::render_plot(path.string(), {p, p, p}, 300, 200, 2);  // 2 rows of 2 columns
  std::string svg = tptest::read_file(path);
  EXPECT_NE(svg.find("width=\"600\""), std::string::npos);
  EXPECT_NE(svg.find("height=\"400\""), std::string::npos);
}

TEST(EvaluateCli, PlotDrawsEveryModelAndABadNameFailsBeforeScoring) {
  auto dir = tptest::temp_dir("evalplot");
  auto samples = cli_samples(dir);
  const std::string common = "evaluate --samples " + samples + " --models isotonic-mi,global-batch --plot ";
  auto bad = tptest::run_cli(common + (dir / "board.txt").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(bad.err, "", 0, "--plot", {"'" + (dir / "board.txt").string() + "'"}));
  EXPECT_EQ(bad.out, "");  // nothing scored
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  auto out = dir / "board.svg";
  auto ok = tptest::run_cli(common + out.string());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  std::string svg = tptest::read_file(out);
  EXPECT_NE(svg.find("s: epoch time, cross-validated"), std::string::npos);
  EXPECT_NE(svg.find("s: metric, cross-validated"), std::string::npos);
  EXPECT_NE(svg.find("global-batch (MRE"), std::string::npos);
  EXPECT_NE(svg.find("isotonic-mi (MRE"), std::string::npos);
  EXPECT_NE(ok.err.find(out.string()), std::string::npos);
}

TEST(Gnuplot, ANarrowLogAxisGetsOneTwoFiveTicks) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  io::PlotPanel p;
  p.logx = true;
  p.xrange = std::make_pair(30.0, 300.0);  // decade ticks alone would label only 100
  p.series.push_back({"", {{40, 1}, {250, 2}}, "lines", ""});
  auto path = tptest::temp_dir("plotlog") / "log.svg";
  io::render_plot(path.string(), {p});
  std::string svg = tptest::read_file(path);
  for (const char* tick : {">50<", ">100<", ">200<"}) EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_EQ(svg.find(">20<"), std::string::npos);  // outside the range
}

// gnuplot runs a `command` in backquotes inside a double-quoted string, the
// only kind that carries a line break: a title, legend or file name with both
// (a network, GPU or file name read from a user's file) draws the backquotes
// and runs nothing.
TEST(Gnuplot, ABackquoteInALabelRunsNothing) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  const auto dir = tptest::temp_dir("plot_backquote");
  const auto ran_double = dir / "ran-double", ran_single = dir / "ran-single";
  io::PlotPanel p;
  p.title = "two lines\nacc`touch " + ran_double.string() + "`";
  p.xlabel = "one line `touch " + ran_single.string() + "`";
  p.series.push_back({"legend\n`touch " + ran_double.string() + "`", {{1, 1}, {2, 2}}, "lines", ""});
  const auto path = dir / "q.svg";
  io::render_plot(path.string(), {p});
  EXPECT_FALSE(std::filesystem::exists(ran_double));
  EXPECT_FALSE(std::filesystem::exists(ran_single));
  const std::string svg = tptest::read_file(path);
  EXPECT_NE(svg.find("acc`touch"), std::string::npos);  // drawn as written
}

// With no gnuplot on PATH a chart is an error that says so, never a signal
// that kills the process before it prints (the write to a gnuplot that is
// not there used to raise SIGPIPE); a verb asked for a chart refuses before
// its work, printing nothing.
TEST(Gnuplot, NoGnuplotIsAnErrorSaidBeforeTheWork) {
  const auto dir = tptest::temp_dir("plot_no_gnuplot");
  std::filesystem::create_directories(dir / "empty-bin");
  io::PlotPanel p;
  p.series.push_back({"", {{1, 1}, {2, 2}}, "lines", ""});
  {
    tptest::ScopedEnv path("PATH", (dir / "empty-bin").c_str());
    for (int i = 0; i < 5; ++i) EXPECT_THROW(io::render_plot((dir / "a.png").string(), {p}), ExternalError);
  }
  const std::string samples = (std::filesystem::path(tptest::source_dir()) / "examples" / "lenet-mnist-samples.csv").string();
  for (const std::string verb : {"fit --samples " + samples, "plan --samples " + samples + " --target 0.95 --deadline 60"}) {
    tptest::ScopedEnv path("PATH", (dir / "empty-bin").c_str());  // the shell and the CLI are named by full path
    const auto r = tptest::run_cli(verb + " --plot " + (dir / "c.png").string());
    EXPECT_EQ(r.exit_code, 2) << verb << ": " << r.err;
    EXPECT_EQ(r.out, "") << verb;
    EXPECT_NE(r.err.find("gnuplot cannot be started"), std::string::npos) << r.err;
  }
}

// A log axis too narrow for 1-2-5 ticks gets every mantissa, and one too
// narrow for those four ticks spread over it: never a single label or none.
TEST(Gnuplot, ANarrowLogAxisNeverHasFewerThanTwoLabels) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  const auto dir = tptest::temp_dir("plotlog_narrow");
  auto labels = [&](double lo, double hi) {
    io::PlotPanel p;
    p.logx = true;
    p.xrange = std::make_pair(lo, hi);
    p.series.push_back({"", {{lo * 1.01, 1}, {hi / 1.01, 2}}, "lines", ""});
    const auto path = dir / "log.svg";
    io::render_plot(path.string(), {p});
    return tptest::read_file(path);
  };
  const std::string mantissas = labels(30, 45);
  for (const char* tick : {">30<", ">40<"}) EXPECT_NE(mantissas.find(tick), std::string::npos) << tick;
  const std::string spread = labels(1240, 1900);  // no mantissa 1-9 times a power of ten inside
  // Four labels of three digits, 1310 to 1800, where 1-2-5 or 1-9 mantissas give none.
  const std::regex label(">\\s*1[3-8][0-9]0\\s*</");
  const auto found = std::distance(std::sregex_iterator(spread.begin(), spread.end(), label), std::sregex_iterator());
  EXPECT_EQ(found, 4) << spread.substr(0, 4000);
}

// Two columns, one row a data set: a data set without a metric leaves an empty
// place beside its time panel, so the next data set starts its own row.
TEST(EvaluatePlot, ADataSetWithoutAPartKeepsItsRow) {
  scoring::DatasetScores time_only{"time-only", "", {scored("a", 0.1, std::nullopt)}};
  scoring::DatasetScores both{"both", "", {scored("a", 0.1, 0.02)}};
  auto panels = scoring::evaluate_panels({time_only, both});
  ASSERT_EQ(panels.size(), 4u);
  EXPECT_FALSE(panels[0].blank);
  EXPECT_TRUE(panels[1].blank);
  EXPECT_EQ(panels[2].title.rfind("both: epoch time", 0), 0u) << panels[2].title;
  // Last, the empty place would only pad the picture; with no metric anywhere there is none.
  EXPECT_EQ(scoring::evaluate_panels({both, time_only}).size(), 3u);
  EXPECT_EQ(scoring::evaluate_panels({time_only, time_only}).size(), 2u);
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  const auto path = tptest::temp_dir("plot_blank") / "rows.svg";
  io::render_plot(path.string(), panels, 300, 200, 2);
  const std::string svg = tptest::read_file(path);
  EXPECT_NE(svg.find("height=\"400\""), std::string::npos);
  EXPECT_NE(svg.find("both: metric"), std::string::npos);
}

// With nothing that meets the target on any GPU, plan --gpu --plot keeps its
// answer (exit 3, each GPU's reason) and says there is no chart to draw.
TEST(PlanCli, AnInfeasibleComparisonWithPlotKeepsItsAnswer) {
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  const auto dir = tptest::temp_dir("plot_infeasible");
  const std::string samples = (std::filesystem::path(tptest::source_dir()) / "examples" / "lenet-mnist-samples.csv").string();
  const auto chart = dir / "g.png";
  const auto r = tptest::run_cli("plan --samples " + samples +
                                 " --target 0.999 --deadline 60 --from-gpu t4 --gpu t4,a100-40gb --plot " + chart.string());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("no plan"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("no chart"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(chart));
}
