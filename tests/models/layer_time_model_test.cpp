// Justus et al.'s per-layer model: the layer-timing reader, the MLP, and the
// sum over a network's layers.
#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fstream>
#include <random>

#include "core/error.h"
#include "scoring/layer_time_eval.h"
#include "io/gnuplot.h"
#include "io/layer_timing_csv.h"
#include "models/layer_time_model.h"
#include "structure/network_zoo.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::scoring;
using namespace trainplan::structure;

namespace {

const char* kHeader = "kind,batch,in_channels,out_channels,kernel,stride,padding,height,width,in_features,out_features,time_s\n";

// Timings that follow a known law: 20 us per call plus 1 ns per flop and 0.1 ns per byte.
std::vector<io::LayerTiming> lawful_timings(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::vector<int> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  std::vector<io::LayerTiming> out;
  for (int i = 0; i < n; ++i) {
    io::LayerTiming t;
    t.kind = i % 3 == 0 ? "linear" : "conv";
    t.batch = pick({4, 8, 16, 32, 64, 128});
    if (t.kind == "linear") {
      t.in_features = pick({32, 64, 128, 256, 512}), t.out_features = pick({10, 32, 64, 128, 256});
    } else {
      t.in_channels = pick({1, 3, 8, 16, 32}), t.out_channels = pick({8, 16, 32, 64});
      t.kernel = pick({1, 3, 5}), t.stride = 1, t.padding = t.kernel / 2, t.height = t.width = pick({8, 16, 28});
    }
    const auto l = models::layer_of(t);
    t.time_s = 20e-6 + 3 * t.batch * (1e-9 * l.flops + 1e-10 * l.bytes);
    out.push_back(t);
  }
  return out;
}

}  // namespace

TEST(LayerTimings, ReadsTheBenchFormatAndRejectsBadRows) {
  auto dir = tptest::temp_dir("layer_timings");
  auto good = dir / "good.csv";
  std::ofstream(good) << "# trainplan-layer-bench: threads=1\n" << kHeader
                      << "conv,8,3,16,3,1,1,32,32,0,0,0.002\nlinear,64,0,0,0,1,0,0,0,400,120,0.0001\n";
  auto t = io::read_layer_timings(good.string());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].kind, "conv");
  EXPECT_EQ(t[1].in_features, 400);
  // The costs of a timed layer come from the graph's rules.
  EXPECT_EQ(models::layer_of(t[1]).params, 400 * 120 + 120);
  EXPECT_EQ(models::layer_of(t[0]).flops, 2.0 * 3 * 3 * 3 * 16 * 32 * 32);

  // Each error names the file, the row's line and the column to fix.
  auto expect_error = [&](const std::string& row, const std::string& field) {
    auto bad = dir / "bad.csv";
    std::ofstream(bad) << kHeader << row;
    try {
      io::read_layer_timings(bad.string());
      FAIL() << "expected InputError for " << row;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), bad.string()) << e.what();
      EXPECT_EQ(e.line(), 2) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  expect_error("conv,8,3,16,3,1,1,32,32,0,0,-1\n", "time_s");
  expect_error("conv,8,3,16,3,1,1,32,32,0,0,nan\n", "time_s");
  expect_error("lstm,8,3,16,3,1,1,32,32,0,0,0.1\n", "kind");  // an unknown layer kind
  expect_error("linear,8,0,0,0,1,0,0,0,0,10,0.1\n", "in_features");
  expect_error("conv,8,3,16,9,1,0,4,4,0,0,0.1\n", "kernel");  // larger than the padded input
}

TEST(LayerTimeModel, MlpLearnsALawfulTimingSurface) {
  auto train = lawful_timings(300, 1), test = lawful_timings(100, 2);
  models::LayerTimeModel mlp(models::LayerLearner::kMlp), trees(models::LayerLearner::kBoostedTrees);
  mlp.fit(train);
  trees.fit(train);
  double ape_mlp = 0, ape_mean = 0, mean = 0;
  for (const auto& t : train) mean += t.time_s / train.size();
  for (const auto& t : test) {
    ape_mlp += std::abs(mlp.predict(models::layer_of(t), t.batch) / t.time_s - 1) / test.size();
    ape_mean += std::abs(mean / t.time_s - 1) / test.size();
  }
  EXPECT_LT(ape_mlp, 0.10);         // held-out layers within 10% on average
  EXPECT_GT(ape_mean, 1.0);         // where a constant is off by more than 100%
  // A network's step is the sum of its layers.
  const auto g = structure::lenet5();
  double sum = 0;
  for (const auto& l : g.layers) sum += mlp.predict(l, 32);
  EXPECT_DOUBLE_EQ(mlp.step_time(g, 32), sum);
  EXPECT_GT(trees.step_time(g, 32), 0);
  EXPECT_THROW(models::LayerTimeModel().fit({}), InputError);
}

TEST(LayerTimeModel, MlpIsDeterministicForASeed) {
  auto train = lawful_timings(60, 3);
  models::LayerTimeModel a(models::LayerLearner::kMlp, 7), b(models::LayerLearner::kMlp, 7);
  a.fit(train);
  b.fit(train);
  const auto l = models::layer_of(train[0]);
  EXPECT_EQ(a.predict(l, 16), b.predict(l, 16));
}

TEST(LayerTimeEval, ScoresLayersAndANetworkAgainstItsSamples) {
  auto dir = tptest::temp_dir("layer_eval");
  auto samples = dir / "lenet.csv";
  std::ofstream(samples) << "# trainplan: metric=max dataset_size=1000\n"
                         << "batch,workers,epochs,epoch_time_s,metric,nodes,model\n"
                         << "32,1,1,2.0,0.9,1,lenet-mnist\n32,1,2,2.2,0.95,1,lenet-mnist\n64,1,1,1.5,0.9,1,lenet-mnist\n"
                         << "64,2,1,1.0,0.9,1,lenet-mnist\n";
  auto rep = scoring::evaluate_layer_times(lawful_timings(100, 4), {samples.string()}, 5, 1);
  ASSERT_EQ(rep.cv.size(), 2u);
  for (const auto& c : rep.cv) EXPECT_TRUE(std::isfinite(c.mape)) << c.learner;
  ASSERT_EQ(rep.networks.size(), 1u);
  const auto& n = rep.networks[0];
  EXPECT_EQ(n.network, "lenet5");
  ASSERT_EQ(n.rows.size(), 2u);  // batches 32 and 64, single-worker samples only
  EXPECT_EQ(n.rows[0].samples, 2);
  EXPECT_NEAR(n.rows[0].measured_s, 2.2 * 32 / 1000, 1e-12);  // the median of two is the upper one here
  // The JSON that `evaluate --layer-timings --json` prints carries the network and its rows.
  const auto j = nlohmann::json::parse(scoring::layer_times_json(rep));
  ASSERT_EQ(j["networks"].size(), 1u);
  EXPECT_EQ(j["networks"][0]["network"], "lenet5");
  ASSERT_EQ(j["networks"][0]["rows"].size(), 2u);
  EXPECT_EQ(j["networks"][0]["rows"][0]["samples"], 2);
  EXPECT_EQ(j["networks"][0]["rows"][0]["measured_s"].get<double>(), n.rows[0].measured_s);
  EXPECT_EQ(j["cv"].size(), 2u);
  EXPECT_FALSE(scoring::format_layer_times(rep).empty());
  EXPECT_THROW(scoring::evaluate_layer_times(lawful_timings(6, 5), {}, 5, 1), InputError);  // too few layers
}

// The shipped measurements (examples/README.md): layers timed on the
// development machine, and each network's step as the sum of its layers
// against its own measured single-worker steps.
TEST(LayerTimeEval, PredictsTheReferenceNetworksFromMeasuredLayerTimes) {
  const std::string ex = tptest::source_dir() + "/examples/";
  auto rep = scoring::evaluate_layer_times(io::read_layer_timings(ex + "layer-timings-cpu.csv"),
                                        {ex + "lenet-mnist-1worker.csv", ex + "mlp-fashion-1worker.csv"}, 5, 1);
  EXPECT_EQ(rep.layers, 400);
  ASSERT_EQ(rep.networks.size(), 2u);
  for (const auto& n : rep.networks) {
    EXPECT_EQ(n.rows.size(), 5u) << n.network;
    EXPECT_LT(n.mlp_mre, 0.25) << n.network;  // measured 12.1% (lenet5) and 7.6% (MLP)
  }
  for (const auto& c : rep.cv) EXPECT_LT(c.mape, 0.6) << c.learner;  // measured 33%
}

TEST(LayerTimeCli, EvaluatesPrintsJsonAndDrawsTheChart) {
  auto dir = tptest::temp_dir("layer_cli");
  std::string csv = kHeader;
  for (const auto& t : lawful_timings(40, 6))
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", t.kind, t.batch, t.in_channels, t.out_channels,
                       t.kernel, t.stride, t.padding, t.height, t.width, t.in_features, t.out_features, t.time_s);
  const auto file = tptest::write_file(dir / "layers.csv", csv);
  auto j = tptest::run_cli("evaluate --layer-timings " + file + " --cv 2 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto parsed = nlohmann::json::parse(j.out);
  EXPECT_EQ(parsed["layers"], 40);
  EXPECT_TRUE(parsed["cv"].contains("mlp"));
  EXPECT_EQ(tptest::run_cli("evaluate --layer-timings " + file + " --plot chart.txt").exit_code, 2);
  EXPECT_EQ(tptest::run_cli("evaluate --layer-timings " + file + " --data ../shared/data").exit_code, 2);
  if (!io::gnuplot_available()) GTEST_SKIP() << "gnuplot not installed";
  const auto png = (dir / "layers.png").string();
  auto r = tptest::run_cli("evaluate --layer-timings " + file + " --cv 2 --plot " + png);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(std::filesystem::file_size(png), 1000u);
}
