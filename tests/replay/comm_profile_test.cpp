#include "structure/comm_profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/pollux_trace.h"
#include "models/step_time_corrected.h"
#include "models/registry.h"
#include "models/step_time_physical.h"
#include "replay/comm_calibration.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::models;
using namespace trainplan::structure;

namespace {

CommProfile small_profile() {
  CommProfile p;
  p.set(2, 1, 1.0);
  p.set(2, 2, 2.0);
  p.set(2, 4, 3.0);
  p.set(4, 1, 1.2);
  p.set(4, 4, 2.0);
  return p;
}

}  // namespace

TEST(CommProfile, InterpolatesInGpusPerNodeAndNodesAndHoldsOutside) {
  auto p = small_profile();
  EXPECT_DOUBLE_EQ(p.at(2, 2), 1.0);    // 2 x 1
  EXPECT_DOUBLE_EQ(p.at(6, 2), 2.5);    // k = 3, between 2.0 and 3.0
  EXPECT_DOUBLE_EQ(p.at(16, 2), 3.0);   // k = 8: held at k = 4
  EXPECT_DOUBLE_EQ(p.at(16, 4), 2.0);
  EXPECT_DOUBLE_EQ(p.at(12, 3), 0.5 * 3.0 + 0.5 * 2.0);  // n = 3 between n = 2 and 4, k = 4
  EXPECT_DOUBLE_EQ(p.at(32, 8), 2.0);   // n = 8: held at n = 4
  EXPECT_DOUBLE_EQ(p.at(4, 1), 1.0);    // one node: no inter-node cost shape
  EXPECT_DOUBLE_EQ(CommProfile{}.at(8, 2), 1.0);
}

TEST(CommProfile, JsonRoundTripAndBadInputNamesTheFile) {
  auto p = small_profile();
  p.source = "test";
  auto d = tptest::temp_dir("commprofile");
  std::string path = (d / "p.json").string();
  p.save(path);
  auto q = CommProfile::load(path);
  EXPECT_EQ(q.table(), p.table());
  EXPECT_EQ(q.source, "test");

  auto bad = tptest::write_file(d / "bad.json", R"({"rho": [{"nodes": 1, "gpus_per_node": 1, "rho": 1}]})");
  try {
    CommProfile::load(bad);
    FAIL() << "nodes = 1 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), bad);
    EXPECT_NE(std::string(e.what()).find("entry 1"), std::string::npos) << e.what();
  }
  auto missing = tptest::write_file(d / "missing.json", R"({"rho": [{"nodes": 2, "rho": 1}]})");
  EXPECT_THROW(CommProfile::load(missing), InputError);
  auto notjson = tptest::write_file(d / "notjson.json", "{rho: ");
  EXPECT_THROW(CommProfile::load(notjson), InputError);
  EXPECT_THROW(CommProfile::load((d / "absent.json").string()), InputError);
  EXPECT_THROW(CommProfile::load(d.string()), InputError);  // a folder
  auto other = tptest::write_file(d / "other.json",
                                  R"({"format": "other", "rho": [{"nodes": 2, "gpus_per_node": 1, "rho": 1}]})");
  EXPECT_THROW(CommProfile::load(other), InputError);
  EXPECT_THROW(p.set(2, 1, std::nan("")), InputError);
  EXPECT_THROW(p.set(2, 1, 1e300), InputError);  // a unit slip: drove predictions to 0 s
  auto twice = tptest::write_file(
      d / "twice.json",
      R"({"rho": [{"nodes": 2, "gpus_per_node": 1, "rho": 1}, {"nodes": 2, "gpus_per_node": 1, "rho": 3}]})");
  try {
    CommProfile::load(twice);
    FAIL() << "an entry given twice accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("entry 2 gives (2 nodes, 1 GPUs a node) again"), std::string::npos) << e.what();
  }
}

TEST(CommCalibration, RatioOfExcessOverOneGpuAtTheSmallestBatches) {
  auto d = tptest::temp_dir("commcal");
  // One GPU 0.10 s at every batch; "11" adds 0.10, "22" 0.20, "44" 0.25 (b 16,
  // 32) and 0.40 at b = 64 (outside the two smallest batches used).
  tptest::write_file(d / "placements.csv",
                     "placement,local_bsz,step_time,sync_time\n"
                     "1,16,0.10,0\n1,32,0.10,0\n1,64,0.10,0\n"
                     "11,16,0.20,0.1\n11,32,0.20,0.1\n11,64,0.20,0.1\n"
                     "22,16,0.30,0.2\n22,32,0.30,0.2\n22,64,0.30,0.2\n"
                     "44,16,0.35,0.25\n44,32,0.35,0.25\n44,64,0.50,0.4\n");
  // 12 GPUs on 6 nodes: two a node. Not 3 a node on 4 nodes, nor 6 on 2,
  // which the trace never ran and the oracle's step_time would answer from it.
  tptest::write_file(d / "scalability.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
                                            "6,12,16,0.40,0.3\n6,12,32,0.40,0.3\n");
  tptest::write_file(d / "validation-32.csv", "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,2\n");
  auto o = replay::ReplayOracle::from_dir(d.string());
  replay::CommCalibrationOptions opts;
  opts.batches = 2;
  auto p = replay::comm_profile_of(o, opts);
  EXPECT_NEAR(p.at(2, 2), 1.0, 1e-9);
  EXPECT_NEAR(p.at(4, 2), 2.0, 1e-9);
  EXPECT_NEAR(p.at(8, 2), 2.5, 1e-9);
  EXPECT_EQ(p.table().count({3, 1}), 0u);  // "111" is not measured
  opts.max_nodes = 8;
  opts.max_gpus_per_node = 8;
  p = replay::comm_profile_of(o, opts);
  EXPECT_NEAR(p.table().at({6, 2}), 3.0, 1e-9);
  EXPECT_EQ(p.table().count({4, 3}), 0u);
  EXPECT_EQ(p.table().count({2, 6}), 0u);
  EXPECT_EQ(p.table().count({3, 4}), 0u);
  opts.max_nodes = 4;
  opts.max_gpus_per_node = 4;
  p = replay::comm_profile_of(o, opts);

  // The median over traces; a trace without "11" cannot calibrate.
  auto q = replay::comm_profile_from({&o, &o, &o}, opts);
  EXPECT_EQ(q.table(), p.table());
  EXPECT_THROW(replay::comm_profile_from({}, opts), InputError);

  // A trace whose "11" is no slower than "1" is left out, and said to be.
  auto flat_dir = tptest::temp_dir("commcal-flat") / "flat";
  std::filesystem::create_directories(flat_dir);
  tptest::write_file(flat_dir / "placements.csv",
                     "placement,local_bsz,step_time,sync_time\n1,16,0.10,0\n11,16,0.09,0\n22,16,0.2,0.1\n");
  auto flat = replay::ReplayOracle(io::read_pollux_trace(flat_dir.string(), {.curves = false}), {.dataset_size = 1});
  auto r = replay::comm_profile_from({&o, &flat}, opts);
  EXPECT_EQ(r.table(), p.table());
  EXPECT_NE(r.source.find("left out"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("flat"), std::string::npos) << r.source;
}

// With the true shape as a profile, the physical model recovers multi-node
// times that the ring factor cannot express, from two multi-node samples.
TEST(CommProfile, PhysicalModelWithTheTrueShapeExtrapolatesAcrossGpusPerNode) {
  auto shape = std::make_shared<CommProfile>();
  shape->set(2, 1, 1.0);
  shape->set(2, 4, 2.6);
  shape->set(4, 1, 1.1);
  shape->set(4, 4, 2.0);
  StepTimeTerms truth{0.05, 0.002, 0.002, 0.01, 0.0, 0.08, 3.0};
  auto make = [&](double b, int r, int n) {
    Sample x;
    x.batch = b;
    x.workers = r;
    x.nodes = n;
    x.epoch_time_s = 1000.0 / (b * r) * step_time_of(truth, b, r, n, shape.get());
    return x;
  };
  SampleSet train, test;
  train.dataset_size = test.dataset_size = 1000;
  for (int r = 1; r <= 4; ++r)
    for (double b : {8.0, 16.0, 32.0, 64.0, 128.0}) train.samples.push_back(make(b, r, 1));
  train.samples.push_back(make(32, 8, 2));
  train.samples.push_back(make(32, 16, 4));
  for (int r : {8, 12, 16})
    for (double b : {8.0, 16.0, 128.0}) test.samples.push_back(make(b, r, (r + 3) / 4));

  AllreducePhysicalParams with_profile;
  with_profile.comm_profile = shape;
  AllreducePhysicalModel with(with_profile), without;
  with.fit(train);
  without.fit(train);
  double err_with = 0, err_without = 0;
  for (const auto& x : test.samples) {
    err_with = std::max(err_with, std::abs(with.predict(x.batch, x.workers, x.nodes) / x.epoch_time_s - 1));
    err_without = std::max(err_without, std::abs(without.predict(x.batch, x.workers, x.nodes) / x.epoch_time_s - 1));
  }
  EXPECT_LT(err_with, 0.02);
  EXPECT_GT(err_without, 0.05);  // the ring factor misses the shape
  // The registry hands the profile to the model through ModelParams.
  auto made = ModelRegistry::instance().make_time("allreduce-physical", ModelParams{shape});
  made->fit(train);
  for (const auto& x : test.samples)
    EXPECT_NEAR(made->predict(x.batch, x.workers, x.nodes), with.predict(x.batch, x.workers, x.nodes),
                1e-12 * with.predict(x.batch, x.workers, x.nodes));  // the registry's fits the pooled rows, in key order

  AllreduceLocalParams local_profile;
  local_profile.physical.comm_profile = shape;
  AllreduceLocalModel local(local_profile);
  local.fit(train);
  EXPECT_NEAR(local.predict(16, 12, 3) / test.samples[4].epoch_time_s, 1, 0.05);
}

TEST(CommProfileCli, FitUsesTheProfileFileAndRejectsABadOne) {
  auto d = tptest::temp_dir("commprofilecli");
  std::string csv = "batch,workers,epochs,epoch_time_s,metric,nodes\n";
  for (int r : {1, 2, 4})
    for (int b : {16, 32, 64})
      csv += fmt::format("{},{},1,{},,1\n", b, r, 1000.0 / (b * r) * (0.01 + 0.001 * b + 0.01 * (r > 1)));
  csv += "32,8,1,10.0,,2\n32,16,1,6.0,,4\n";
  auto samples = tptest::write_file(d / "s.csv", csv);
  small_profile().save((d / "p.json").string());
  auto r = tptest::run_cli("fit --samples " + samples + " --time-model allreduce-physical --json --comm-profile " +
                           (d / "p.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto plain = tptest::run_cli("fit --samples " + samples + " --time-model allreduce-physical --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // The profile reaches the model: the multi-node samples are fitted differently.
  const double with = nlohmann::json::parse(r.out)["time"]["in_sample_mre"].get<double>();
  const double without = nlohmann::json::parse(plain.out)["time"]["in_sample_mre"].get<double>();
  EXPECT_NE(with, without);

  auto bad = tptest::write_file(d / "bad.json", "[1, 2]");
  auto e = tptest::run_cli("fit --samples " + samples + " --time-model allreduce-physical --comm-profile " + bad);
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.err.find("bad.json"), std::string::npos) << e.err;
}

TEST(CommProfileCli, VerbPrintsTheTableAndWritesJson) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto d = tptest::temp_dir("commprofileverb");
  std::string out = (d / "t4.json").string();
  auto r = tptest::run_cli("comm-profile --data " + tptest::shared_data_dir() + "/pollux-t4 --exclude imagenet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto p = CommProfile::load(out);
  EXPECT_EQ(p.source, "median of traces: bert, cifar10, deepspeech2, ncf, yolov3");  // imagenet excluded
  EXPECT_DOUBLE_EQ(p.at(2, 2), 1.0);  // normalised to 2 nodes x 1 GPU
  EXPECT_GT(p.at(8, 2), 1.5);         // "44" costs more than "11" on this cluster
  auto bad = tptest::run_cli("comm-profile --data " + tptest::shared_data_dir() + "/pollux-t4 --exclude nosuch");
  EXPECT_EQ(bad.exit_code, 2);
  // The A100 traces run 8 GPUs a node: read past the default 4 when asked.
  const std::string wide = (d / "a100.json").string();
  auto a100 = tptest::run_cli("comm-profile --data " + tptest::shared_data_dir() + "/sia-a100 --max-gpus-per-node 8 --out " +
                              wide);
  ASSERT_EQ(a100.exit_code, 0) << a100.err;
  EXPECT_TRUE(CommProfile::load(wide).table().count({2, 8}));
  EXPECT_EQ(tptest::run_cli("comm-profile --data " + tptest::shared_data_dir() + "/sia-a100 --max-nodes 1").exit_code, 2);
}

// comm-profile reads step times only: a trace whose dataset size nothing
// gives (no curves) is measured all the same, and an excluded trace is never
// read.
TEST(CommProfileCli, StepTimesAloneAreEnoughAndAnExcludedTraceIsNotRead) {
  auto d = tptest::temp_dir("commprofile_steps");
  auto write_trace = [&](const std::string& name, const std::string& rows) {
    std::filesystem::create_directories(d / name);
    tptest::write_file(d / name / "placements.csv", "placement,local_bsz,step_time,sync_time\n" + rows);
  };
  write_trace("net", "1,32,0.10,0\n11,32,0.20,0.1\n2,32,0.15,0.05\n22,32,0.40,0.3\n");
  write_trace("broken", "1,32,not-a-number,0\n");
  auto excluded = tptest::run_cli("comm-profile --data " + d.string() + " --exclude broken --json");
  ASSERT_EQ(excluded.exit_code, 0) << excluded.err;
  EXPECT_NE(excluded.out.find("net"), std::string::npos) << excluded.out;
  auto read = tptest::run_cli("comm-profile --data " + d.string());
  EXPECT_EQ(read.exit_code, 2) << read.err;
  EXPECT_NE(read.err.find("broken"), std::string::npos) << read.err;
  // Neither the syncs nor the curves are needed; a folder's trailing slash
  // still names the trace it excludes.
  std::filesystem::remove_all(d / "broken");
  tptest::write_file(d / "net" / "placements.csv",
                     "placement,local_bsz,step_time\n1,32,0.10\n11,32,0.20\n2,32,0.15\n22,32,0.40\n");
  tptest::write_file(d / "net" / "validation-32.csv", "");
  auto steps = tptest::run_cli("comm-profile --data " + d.string() + " --json");
  ASSERT_EQ(steps.exit_code, 0) << steps.err;
  EXPECT_NE(steps.out.find("net"), std::string::npos) << steps.out;
  auto slash = tptest::run_cli("comm-profile --data " + (d / "net").string() + "/ --exclude net");
  EXPECT_EQ(slash.exit_code, 2);
  EXPECT_NE(slash.err.find("leaves out every trace"), std::string::npos) << slash.err;
}
