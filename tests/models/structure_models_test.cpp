// Layer graphs, PALEO's step-time models, the boosted-trees wrapper and the
// leave-one-network-out evaluation.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "scoring/cross_model.h"
#include "io/layer_graph_json.h"
#include "numerics/boosted_trees.h"
#include "structure/network_zoo.h"
#include "models/registry.h"
#include "models/step_time_paleo.h"
#include "structure/gpu_catalog.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::models;
using namespace trainplan::numerics;
using namespace trainplan::scoring;
using namespace trainplan::structure;

namespace {

double matmul_macs(const LayerGraph& g) {
  double m = 0;
  for (const auto& l : g.layers)
    if (l.kind == LayerKind::kConv || l.kind == LayerKind::kLinear) m += l.flops / 2;
  return m;
}

}  // namespace

// Parameter counts that the reference implementations print.
TEST(LayerGraph, ParameterCountsMatchTheReferenceImplementations) {
  EXPECT_EQ(lenet5().params(), 61706);          // trainplan-train's LeNet-5 (src/train/workloads.cpp)
  EXPECT_EQ(mlp_fashion().params(), 235146);    // trainplan-train's MLP
  EXPECT_EQ(resnet18_cifar().params(), 11173962);  // CIFAR ResNet-18 (3x3 stem)
  EXPECT_EQ(resnet50().params(), 25557032);     // torchvision resnet50
  EXPECT_EQ(bert_base().params(), 108893186);   // BERT-base with the SQuAD span head
  EXPECT_EQ(yolov3(80).params(), 61949149);     // darknet yolov3.cfg (COCO, 80 classes)
}

TEST(LayerGraph, FlopsMatchPublishedCounts) {
  EXPECT_NEAR(matmul_macs(resnet50()) / 1e9, 4.09, 0.03);       // ~4.1 GMAC at 224x224
  EXPECT_NEAR(matmul_macs(resnet18_cifar()) / 1e9, 0.556, 0.005);  // ~0.56 GMAC at 32x32
  double conv = 0;
  for (const auto& l : yolov3(80).layers)
    if (l.kind == LayerKind::kConv) conv += l.flops;
  EXPECT_NEAR(conv / 1e9, 65.88, 0.33);  // darknet prints 65.879 BFLOPs at 416x416
  // LeNet-5: conv1 6x28x28x25, conv2 16x10x10x150, fc 400x120 + 120x84 + 84x10 multiply-adds.
  EXPECT_DOUBLE_EQ(matmul_macs(lenet5()), 6 * 28 * 28 * 25 + 16 * 10 * 10 * 150 + 400 * 120 + 120 * 84 + 84 * 10);
}

TEST(LayerGraph, CountsLayerKindsAndTracksShapes) {
  auto g = resnet50();
  EXPECT_EQ(g.count(LayerKind::kConv), 53);
  EXPECT_EQ(g.count(LayerKind::kLinear), 1);
  EXPECT_EQ(bert_base().count(LayerKind::kAttention), 12);
  EXPECT_EQ(deepspeech2().count(LayerKind::kRecurrent), 5);
  GraphBuilder b("tiny", "");
  b.image(3, 8, 8).conv(4, 3, 2, 1);
  EXPECT_EQ(b.channels(), 4);
  EXPECT_EQ(b.height(), 4);
  EXPECT_EQ(b.width(), 4);
  EXPECT_THROW(GraphBuilder("bad", "").image(1, 2, 2).conv(1, 5, 1, 0), InputError);
  EXPECT_THROW(GraphBuilder("bad", "").image(1, 4, 4).recurrent(8, 4, false), InputError);
  // A window past its padded input leaves nothing, however large its stride (integer division
  // alone would round the negative extent up to one position).
  EXPECT_THROW(GraphBuilder("bad", "").image(1, 32, 32).conv(1, 100, 100, 0), InputError);
  EXPECT_THROW(GraphBuilder("bad", "").image(1, 32, 32).pool(1000, 1000, 0), InputError);
  GraphBuilder whole("whole", "");
  whole.image(2, 32, 32).pool(32, 32, 0);
  EXPECT_EQ(whole.height(), 1);
  EXPECT_EQ(whole.width(), 1);
}

TEST(NetworkZoo, FindsArchitecturesAndWorkloads) {
  ASSERT_NE(find_network("cifar10"), nullptr);
  EXPECT_EQ(find_network("cifar10")->name, "resnet18-cifar");
  EXPECT_EQ(find_network("lenet-mnist")->name, "lenet5");
  EXPECT_EQ(find_network("resnet50"), find_network("imagenet"));
  EXPECT_EQ(find_network("no-such-net"), nullptr);
  for (const auto& n : network_names()) EXPECT_NE(find_network(n), nullptr) << n;
}

TEST(Paleo, TermsFollowTheFormula) {
  GraphBuilder b("fc", "");
  b.sequence(1, 100).linear(10);  // 1010 params, 2000 flops per example
  const auto g = b.build();
  PaleoHardware hw;
  const auto t1 = paleo_step_terms(g, 32, 1, 1, hw);
  EXPECT_DOUBLE_EQ(t1.compute, 3 * 32 * 2000 / (hw.peak_flops * hw.efficiency));
  EXPECT_DOUBLE_EQ(t1.memory, (3 * 32 * g.bytes() + 3 * 1010 * 4) / hw.memory_bytes_per_s);
  EXPECT_EQ(t1.sync_intra, 0);
  EXPECT_EQ(t1.sync_inter, 0);
  const auto t4 = paleo_step_terms(g, 32, 4, 1, hw);
  EXPECT_DOUBLE_EQ(t4.sync_intra, 2.0 * 3 / 4 * 1010 * 4 / hw.links.intra_node_bytes_per_s +
                                      2.0 * 3 * hw.links.intra_node_latency_s);
  const auto t8 = paleo_step_terms(g, 32, 8, 2, hw);
  EXPECT_EQ(t8.sync_intra, 0);
  EXPECT_GT(t8.sync_inter, t4.sync_intra);  // the network is slower than PCIe
}

// Across two networks every factor is identified: NNLS recovers them.
TEST(Paleo, CalibrationRecoversKnownFactors) {
  PaleoHardware hw;
  PaleoFactors truth;
  const double f[5] = {0.7, 1.3, 2.0, 0.5, 0.01};
  std::copy(f, f + 5, truth.f);
  const auto r18 = resnet18_cifar(), bert = bert_base();
  std::vector<PaleoObservation> obs;
  for (const LayerGraph* g : {&r18, &bert})
    for (double b : {4, 16, 64, 256})
      for (auto [r, n] : {std::pair{1, 1}, {2, 1}, {4, 1}, {4, 2}, {8, 2}, {16, 4}})
        obs.push_back({g, b, r, n, truth.step(*g, b, r, n, hw)});
  const auto fit = fit_paleo_factors(obs, hw);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(fit.f[j], f[j], 1e-6 * std::max(1.0, f[j])) << j;
  EXPECT_TRUE(fit.notes.empty());
}

TEST(Paleo, UnexercisedSyncTermsKeepTheirDatasheetValue) {
  PaleoHardware hw;
  const auto g = resnet18_cifar();
  std::vector<PaleoObservation> obs;
  for (double b : {8, 32, 128}) obs.push_back({&g, b, 1, 1, PaleoFactors{}.step(g, b, 1, 1, hw) * 1.5});
  const auto fit = fit_paleo_factors(obs, hw);
  EXPECT_EQ(fit.f[2], 1);
  EXPECT_EQ(fit.f[3], 1);
  EXPECT_EQ(fit.notes.size(), 2u);
  // Within one network compute and memory are both linear in the batch: only
  // their sum is identified, but predictions at new batches are exact.
  EXPECT_NEAR(fit.step(g, 64, 1, 1, hw), 1.5 * PaleoFactors{}.step(g, 64, 1, 1, hw), 1e-9);
}

TEST(Paleo, ModelsFindTheNetworkFromTheSamples) {
  SampleSet s;
  s.dataset_size = 50000;
  s.source = "fixture.csv";
  for (double b : {32, 64, 128})
    for (int r : {1, 2, 4}) {
      Sample x;
      x.batch = b, x.workers = r, x.nodes = 1, x.model = "cifar10";
      x.epoch_time_s = 50000 / (b * r) * (0.02 + 0.0004 * b + (r > 1 ? 0.01 : 0));
      s.samples.push_back(x);
    }
  PaleoModel analytic;
  analytic.fit(s);
  EXPECT_EQ(analytic.network().name, "resnet18-cifar");
  EXPECT_GT(analytic.predict(64, 2, 1), 0);
  EXPECT_FALSE(analytic.hardware_matches_datasheet());  // the samples do not say where they ran
  auto on_t4 = s;
  for (auto& x : on_t4.samples) x.hardware = "Tesla T4";
  PaleoModel t4;
  t4.fit(on_t4);
  EXPECT_TRUE(t4.hardware_matches_datasheet());
  EXPECT_EQ(t4.predict(64, 2, 1), analytic.predict(64, 2, 1));  // the datasheet either way
  PaleoParams p;
  p.calibrate = true;
  PaleoModel fitted(p);
  fitted.fit(s);
  double err = 0;
  for (const auto& x : s.samples) err += std::abs(fitted.predict(x.batch, x.workers, x.nodes) / x.epoch_time_s - 1);
  EXPECT_LT(err / s.size(), 0.1);
  // No multi-node sample: that sync term keeps its datasheet value (factor 1), a prior.
  EXPECT_EQ(fitted.factors().f[3], 1.0);
  EXPECT_EQ(fitted.factors().notes.size(), 1u);

  auto unknown = s;
  for (auto& x : unknown.samples) x.model = "my-net";
  try {
    analytic.fit(unknown);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    // Names the samples' file and column, the unknown network and the known ones.
    EXPECT_EQ(e.file(), "fixture.csv") << e.what();
    EXPECT_EQ(e.field(), "model") << e.what();
    EXPECT_NE(e.message().find("'my-net'"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("resnet50"), std::string::npos) << e.what();
  }
  auto no_size = s;
  no_size.dataset_size.reset();
  EXPECT_THROW(analytic.fit(no_size), InputError);
}

// --hardware gives PALEO that GPU's datasheet and links (a T4 node's without it), and the note on
// samples measured elsewhere names the GPU the figures are of.
TEST(Paleo, TheHardwareNamedIsTheDatasheet) {
  SampleSet s;
  s.dataset_size = 50000;
  for (double b : {32, 64})
    for (int r : {1, 2}) {
      Sample x;
      x.batch = b, x.workers = r, x.nodes = 1, x.model = "cifar10", x.hardware = "T4";
      x.epoch_time_s = 50000 / (b * r) * (0.02 + 0.0004 * b);
      s.samples.push_back(x);
    }
  ModelParams on_h100;
  on_h100.hardware = std::make_shared<HardwareSpec>(interconnect_spec(*find_builtin_hardware("h100")));
  auto t4 = ModelRegistry::instance().make_time("paleo", {});
  auto h100 = ModelRegistry::instance().make_time("paleo", on_h100);
  t4->fit(s);
  h100->fit(s);
  EXPECT_LT(h100->predict(64, 2, 1), t4->predict(64, 2, 1) / 2);  // 67 against 8.1 TFLOP/s fp32
  EXPECT_EQ(t4->describe().find("note:"), std::string::npos) << t4->describe();  // "T4" is the catalog's t4
  EXPECT_NE(h100->describe().find("the datasheet figures are h100's"), std::string::npos) << h100->describe();
}

TEST(BoostedTrees, LearnsASmoothFunctionDeterministically) {
  Eigen::MatrixXd X(200, 2);
  Eigen::VectorXd y(200);
  for (int i = 0; i < 200; ++i) {
    X(i, 0) = (i % 20) / 10.0, X(i, 1) = (i / 20) / 5.0;
    y(i) = X(i, 0) * X(i, 0) + 2 * X(i, 1);
  }
  BoostedTrees a, b;
  a.fit(X, y);
  b.fit(X, y);
  const auto pa = a.predict(X), pb = b.predict(X);
  EXPECT_EQ(pa, pb);
  EXPECT_LT((pa - y).cwiseAbs().mean(), 0.02);
  EXPECT_GT((Eigen::VectorXd::Constant(200, y.mean()) - y).cwiseAbs().mean(), 0.5);  // the bar it beats
  EXPECT_THROW(a.predict(Eigen::MatrixXd::Zero(3, 5)), std::invalid_argument);
  Eigen::MatrixXd bad = X;
  bad(0, 0) = std::nan("");
  EXPECT_THROW(a.fit(bad, y), std::invalid_argument);
}

TEST(CrossModel, LeaveOneNetworkOutOnThePolluxTraces) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const auto rep = scoring::evaluate_cross_model(tptest::shared_data_dir());
  ASSERT_EQ(rep.traces.size(), 6u);
  for (const auto& t : rep.traces) {
    for (const auto& m : rep.methods) EXPECT_TRUE(std::isfinite(t.mre.at(m))) << t.trace << " " << m;
    // Profiling the network itself beats the zero-shot formula, and trees
    // that correct PALEO beat trees that replace it on an unseen network.
    EXPECT_LT(t.mre.at("paleo-fit (own rows, cv)"), t.mre.at("paleo")) << t.trace;
    EXPECT_LT(t.mre.at("horus-xgb-residual"), t.mre.at("horus-xgb")) << t.trace;
  }
  // The JSON that `evaluate --cross-model --json` prints carries every trace's network and scores.
  const auto j = nlohmann::json::parse(scoring::cross_model_json(rep));
  EXPECT_EQ(j["traces"]["imagenet"]["network"], "resnet50");
  for (const auto& t : rep.traces)
    for (const auto& m : rep.methods) EXPECT_EQ(j["traces"][t.trace]["mre"][m].get<double>(), t.mre.at(m)) << t.trace;
  EXPECT_FALSE(scoring::format_cross_model(rep).empty());
}

TEST(NetworkCli, ListsNetworksAndBreaksAStepDownByLayerKind) {
  ASSERT_EQ(tptest::run_cli("network").exit_code, 0);
  auto list = tptest::run_cli("network --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& n : nlohmann::json::parse(list.out)) by_name[n["network"].get<std::string>()] = n;
  ASSERT_TRUE(by_name.count("resnet50")) << list.out;
  EXPECT_EQ(by_name["resnet50"]["params"].get<double>(), resnet50().params());
  ASSERT_TRUE(by_name.count("resnet18-cifar")) << list.out;
  EXPECT_EQ(by_name["resnet18-cifar"]["workloads"], nlohmann::json::array({"cifar10"}));  // the workload that maps to it

  auto r = tptest::run_cli("network imagenet --batch 64 --workers 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["network"], "resnet50");
  EXPECT_EQ(j["nodes"], 2);  // packed, 4 GPUs per node
  double sum = 0, conv = j["by_kind"]["conv"]["seconds"];
  for (auto& [k, v] : j["by_kind"].items()) {
    sum += v["seconds"].get<double>();
    if (k != "conv") EXPECT_LT(v["seconds"].get<double>(), conv) << k;  // convolutions dominate ResNet-50
  }
  EXPECT_NEAR(sum, j["step_s"].get<double>(), 1e-9 * sum);  // the kinds add up to PALEO's step
  EXPECT_GT(j["terms"]["sync_inter"].get<double>(), 0);

  // Another accelerator by its datasheet: twice the peak halves the compute term.
  auto fast = tptest::run_cli("network imagenet --batch 64 --workers 8 --json --peak-tflops 16.2");
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  auto jf = nlohmann::json::parse(fast.out);
  EXPECT_NEAR(jf["terms"]["compute"].get<double>(), j["terms"]["compute"].get<double>() / 2, 1e-12);
  EXPECT_EQ(jf["terms"]["memory"], j["terms"]["memory"]);
  // compute = 3 b F / (peak * efficiency): the peak asked for.
  EXPECT_NEAR(3 * jf["batch"].get<double>() * jf["flops_per_example"].get<double>() /
                  (jf["terms"]["compute"].get<double>() * jf["efficiency"].get<double>()),
              16.2e12, 1e3);
  EXPECT_EQ(tptest::run_cli("network imagenet --peak-tflops -1").exit_code, 2);
  EXPECT_EQ(tptest::run_cli("network imagenet --efficiency 1.5").exit_code, 2);
  // Past any device (a step of 0 s, inf examples/s) or any cluster (an overflowing node count).
  for (const char* extreme : {"--peak-tflops 1e300", "--memory-gbps 1e300", "--intra-gbps 1e300", "--inter-gbits 1e300",
                              "--workers 2147483647"}) {
    auto r = tptest::run_cli(std::string("network resnet50 ") + extreme);
    EXPECT_EQ(r.exit_code, 2) << extreme << ": " << r.out;
  }

  auto bad = tptest::run_cli("network no-such-net");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(bad.err, "", 0, "", {"'no-such-net'", "resnet50"}));
}

// A user's own network as JSON gives the same costs as the built-in graph.
TEST(LayerGraphJson, ReadsAUsersNetworkAndNamesBadFields) {
  auto dir = tptest::temp_dir("graph_json");
  const auto lenet = tptest::write_file(dir / "lenet.json", R"({"name": "my-lenet", "input": {"image": [1, 28, 28]},
    "layers": [{"type": "conv", "out": 6, "kernel": 5, "padding": 2, "bias": true}, {"type": "relu"},
               {"type": "pool", "kernel": 2}, {"type": "conv", "out": 16, "kernel": 5, "bias": true},
               {"type": "relu"}, {"type": "pool", "kernel": 2}, {"type": "flatten"}, {"type": "linear", "out": 120},
               {"type": "relu"}, {"type": "linear", "out": 84}, {"type": "relu"}, {"type": "linear", "out": 10}]})");
  const auto g = io::read_layer_graph_json(lenet);
  const auto ref = lenet5();
  EXPECT_EQ(g.name, "my-lenet");
  EXPECT_EQ(g.params(), ref.params());
  EXPECT_EQ(g.flops(), ref.flops());
  EXPECT_EQ(g.bytes(), ref.bytes());
  const auto seq = io::read_layer_graph_json(tptest::write_file(dir / "enc.json", R"({"input": {"sequence": [128, 256]},
    "layers": [{"type": "linear", "out": 768}, {"type": "set_channels", "channels": 256}, {"type": "attention", "heads": 4},
               {"type": "linear", "out": 256}, {"type": "lstm", "hidden": 64, "bidirectional": true}]})"));
  EXPECT_EQ(seq.count(LayerKind::kAttention), 1);
  EXPECT_EQ(seq.count(LayerKind::kRecurrent), 1);

  auto expect_error = [&](const std::string& text, const std::string& field) {
    const auto f = tptest::write_file(dir / "bad.json", text);
    try {
      io::read_layer_graph_json(f);
      FAIL() << "expected InputError for " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), f);
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  expect_error("{not json", "");
  expect_error(R"({"layers": [{"type": "relu"}]})", "input");
  expect_error(R"({"input": {"image": [1, 8]}, "layers": [{"type": "relu"}]})", "input.image");
  expect_error(R"({"input": {"image": [1, 8, 8]}, "layers": [{"type": "relu"}, {"type": "convv"}]})", "layers[1].type");
  expect_error(R"({"input": {"image": [1, 8, 8]}, "layers": [{"type": "conv", "kernel": 3}]})", "layers[0].out");
  expect_error(R"({"input": {"image": [1, 8, 8]}, "layers": [{"type": "conv", "out": -2, "kernel": 3}]})", "layers[0].out");
  expect_error(R"({"input": {"image": [1, 4, 4]}, "layers": [{"type": "conv", "out": 2, "kernel": 9}]})", "layers[0]");
  expect_error(R"({"input": {"image": [1, 8, 8]}, "layers": [{"type": "conv", "out": 2, "out": 4, "kernel": 3}]})", "layers[0].out");
  // Nothing that computes: a step of 0 s, refused.
  expect_error(R"({"input": {"image": [3, 32, 32]}, "layers": [{"type": "set_channels", "channels": 5}]})", "layers");
  // An embedding's output is what follows it reads, whatever the input was; flatten makes a sequence one token.
  const auto embedded = io::read_layer_graph_json(tptest::write_file(dir / "emb.json", R"({"input": {"sequence": [128, 1]},
    "layers": [{"type": "embedding", "rows": 30000, "dim": 512, "per_example": 128}, {"type": "linear", "out": 512}]})"));
  EXPECT_EQ(embedded.layers.back().params, 512.0 * 512 + 512);
  EXPECT_EQ(embedded.layers.back().flops, 2.0 * 128 * 512 * 512);
  const auto flat = io::read_layer_graph_json(tptest::write_file(dir / "flat.json", R"({"input": {"sequence": [100, 64]},
    "layers": [{"type": "flatten"}, {"type": "linear", "out": 10}]})"));
  EXPECT_EQ(flat.params(), 6400.0 * 10 + 10);

  auto cli = tptest::run_cli("network --graph " + lenet + " --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(nlohmann::json::parse(cli.out)["params"], 61706);
  EXPECT_EQ(tptest::run_cli("network lenet5 --graph " + lenet).exit_code, 2);
}
