// Inputs the parsers' fuzzing found (fuzz/, docs/lab/FUZZING.md), kept as
// regression tests: each once broke the contract that a reader returns a
// value or throws InputError naming file, line and field. The inputs are cut
// down from what the fuzzer produced to the part that mattered.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "io/dl2_speed.h"
#include "io/layer_graph_json.h"
#include "io/layer_timing_csv.h"
#include "io/llm_config_csv.h"
#include "io/philly.h"
#include "io/pollux_trace.h"
#include "io/sample_csv.h"
#include "io/workload_csv.h"
#include "structure/comm_profile.h"
#include "test_util.h"

using namespace trainplan;

namespace {

// Runs `read` and expects InputError at `file`, `line`, `field` whose message holds `fragment`.
template <class F>
void expect_input_error(F read, const std::string& file, long line, const std::string& field,
                        const std::string& fragment) {
  try {
    read();
    FAIL() << "expected InputError at " << file << ":" << line << " " << field;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), file) << e.what();
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(e.message().find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

// A count past INT_MAX was converted double -> long (undefined past 2^63,
// UBSan's float-cast-overflow) and then long -> int, which wrapped:
// workers=4294967297 was read as 1 worker.
TEST(FuzzRegressions, IntegerColumnsPastIntRangeAreRejected) {
  const std::string head = "batch,workers,epochs,epoch_time_s,metric\n";
  for (const std::string v : {"99999999999999999999", "4294967297", "2147483648"})
    expect_input_error([&] { io::parse_samples_csv(head + "64," + v + ",1,7.25,\n", "s.csv"); }, "s.csv", 2,
                       "workers", "at most 2147483647");
  auto ok = io::parse_samples_csv(head + "64,2147483647,1,7.25,\n", "s.csv");
  EXPECT_EQ(ok.samples.at(0).workers, 2147483647);

  const auto dir = tptest::temp_dir("fuzz_regressions");
  const auto workload = tptest::write_file(dir / "w.csv",
                                           "name,time,application,num_replicas,batch_size\n"
                                           "a,0,cifar10,2,256\n"
                                           "b,10,bert,1,18446744073709551616\n");
  expect_input_error([&] { io::read_workload_csv(workload); }, workload, 3, "batch_size", "at most");

  const auto trace = dir / "trace";
  std::filesystem::create_directories(trace);
  tptest::write_file(trace / "placements.csv", "placement,local_bsz,step_time,sync_time\n1,64,0.12,0\n");
  const auto scal = tptest::write_file(trace / "scalability.csv",
                                       "num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,1e308,64,0.15,0.03\n");
  expect_input_error([&] { io::read_pollux_trace(trace.string()); }, scal, 2, "num_replicas", "at most");
}

// dataset_size=1e19 was converted double -> long, undefined past 2^63; 1.5 was truncated to 1.
TEST(FuzzRegressions, DatasetSizeMustBeAnIntegerInRange) {
  const std::string rows = "batch,workers,epochs,epoch_time_s,metric\n64,2,1,7.25,\n";
  for (const std::string v : {"1e19", "99999999999999999999", "1.5"})
    expect_input_error([&] { io::parse_samples_csv("# trainplan: metric=min dataset_size=" + v + "\n" + rows, "s.csv"); },
                       "s.csv", 1, "dataset_size", "positive integer");
  auto ok = io::parse_samples_csv("# trainplan: metric=min dataset_size=50000\n" + rows, "s.csv");
  EXPECT_EQ(ok.dataset_size.value_or(0), 50000);
}

// A network file with a number past double's range threw nlohmann's
// out_of_range (exit 1, "internal failure"), not InputError.
TEST(FuzzRegressions, LayerGraphNumberPastDoubleRangeIsAnInputError) {
  const auto dir = tptest::temp_dir("fuzz_regressions");
  const auto f = tptest::write_file(dir / "net.json", R"({"input": {"sequence": [128, 1e400]}, "layers": []})");
  expect_input_error([&] { io::read_layer_graph_json(f); }, f, 0, "", "not valid JSON");
}

// Shapes were computed in int: an upsample of a 2^30 image, a flatten of
// 10^9 x 10^9 x 10^9, padding 10^9 on each side overflowed (undefined
// behaviour); a dimension over INT_MAX in "input" was wrapped to a negative.
TEST(FuzzRegressions, LayerGraphShapesPastIntRangeAreInputErrors) {
  const auto dir = tptest::temp_dir("fuzz_regressions");
  auto expect_bad = [&](const std::string& text, const std::string& field, const std::string& fragment) {
    const auto f = tptest::write_file(dir / "net.json", text);
    expect_input_error([&] { io::read_layer_graph_json(f); }, f, 0, field, fragment);
  };
  expect_bad(R"({"input": {"image": [3, 1000000000, 8]}, "layers": [{"type": "upsample", "factor": 3}]})",
             "layers[0]", "upsample makes a dimension of 3000000000");
  expect_bad(R"({"input": {"image": [1000000000, 1000000000, 1000000000]}, "layers": [{"type": "flatten"}]})",
             "layers[0]", "flatten makes a dimension");
  expect_bad(R"({"input": {"image": [3, 1000000000, 8]},
                 "layers": [{"type": "conv", "out": 4, "kernel": 1, "padding": 1000000000}]})",
             "layers[0]", "conv makes a dimension");
  expect_bad(R"({"input": {"image": [3, 3000000000, 8]}, "layers": [{"type": "relu"}]})", "input.image[1]",
             "from 1 to 10^9");
}

// A global batch in a validation file's name ("validation-1e300.csv") was
// converted to long, undefined past 2^63; "validation-1.5.csv" was batch 1.
TEST(FuzzRegressions, PolluxValidationFileNameMustBeAnIntegerBatch) {
  for (const std::string b : {"1e300", "1.5"}) {
    const auto dir = tptest::temp_dir("fuzz_regressions");
    tptest::write_file(dir / "placements.csv", "placement,local_bsz,step_time,sync_time\n1,64,0.12,0\n");
    const auto v = tptest::write_file(dir / ("validation-" + b + ".csv"), "progress,iteration,metric\n0.5,50,0.6\n");
    expect_input_error([&] { io::read_pollux_trace(dir.string()); }, v, 0, "", "validation-<global batch>.csv");
  }
}

// Counts past INT_MAX in the other readers: converted to int or long before
// being compared (undefined behaviour, UBSan's float-cast-overflow).
TEST(FuzzRegressions, OtherReadersRejectCountsPastIntRange) {
  // DL2's num_ps / num_workers / total_batch_size.
  expect_input_error(
      [] { io::parse_dl2_speed("('vgg-16', 'dist_async', 32, 99999999999999999999, 2, [3.1, 3.2], [1.0], [0.5, 0.6])\n", "d.txt"); },
      "d.txt", 1, "num_ps", "from 1 to 2147483647");

  const auto dir = tptest::temp_dir("fuzz_regressions");
  const auto layers = tptest::write_file(
      dir / "layers.csv",
      "kind,batch,in_channels,out_channels,kernel,stride,padding,height,width,in_features,out_features,time_s\n"
      "linear,8,0,0,0,1,0,0,0,120,9223372036854775807,0.00004\n");
  expect_input_error([&] { io::read_layer_timings(layers); }, layers, 2, "out_features", "from 0 to 2147483647");
  // height + 2 padding overflowed int once both were in range.
  const auto padded = tptest::write_file(
      dir / "padded.csv",
      "kind,batch,in_channels,out_channels,kernel,stride,padding,height,width,in_features,out_features,time_s\n"
      "conv,4,16,16,5,1,2000000000,2000000000,5,0,0,0.0002\n");
  EXPECT_EQ(io::read_layer_timings(padded).size(), 1u);

  // The communication profile's nodes and gpus_per_node (get<int>() of 1e20).
  const auto comm = tptest::write_file(dir / "comm.json",
                                       R"({"rho": [{"nodes": 99999999999999999999, "gpus_per_node": 4, "rho": 2.5}]})");
  expect_input_error([&] { structure::CommProfile::load(comm); }, comm, 0, "nodes", "whole number");
}

// A Philly timestamp's year past INT_MAX wrapped in sscanf (undefined) to
// INT_MIN, and `year - 1900` then overflowed.
TEST(FuzzRegressions, PhillyTimestampWithAHugeYearIsAnInputError) {
  const auto dir = tptest::temp_dir("fuzz_regressions");
  const auto f = tptest::write_file(dir / "p.csv",
                                    "timestamp,duration,num_gpus\n"
                                    "2017-10-09 07:01:55,66.0,1\n"
                                    "2147483648-10-09 06:13:03,2951.0,8\n");
  expect_input_error([&] { io::read_philly_csv(f); }, f, 3, "timestamp", "is not 'YYYY-MM-DD HH:MM:SS'");
  const auto ok = tptest::write_file(dir / "ok.csv", "timestamp,duration,num_gpus\n2017-10-09 07:01:55,66.0,1\n");
  EXPECT_EQ(io::read_philly_csv(ok).size(), 1u);
}

// "name" or "description" of another type than string threw nlohmann's
// type_error (exit 1, "internal failure") from json::value().
TEST(FuzzRegressions, LayerGraphNameOfAnotherTypeIsAnInputError) {
  const auto dir = tptest::temp_dir("fuzz_regressions");
  const std::string rest = R"("input": {"image": [3, 8, 8]}, "layers": [{"type": "relu"}]})";
  const auto name = tptest::write_file(dir / "name.json", R"({"name": 5, )" + rest);
  expect_input_error([&] { io::read_layer_graph_json(name); }, name, 0, "name", "must be a string");
  const auto desc = tptest::write_file(dir / "desc.json", R"({"description": [1], )" + rest);
  expect_input_error([&] { io::read_layer_graph_json(desc); }, desc, 0, "description", "must be a string");
  const auto none = tptest::write_file(dir / "none.json", "{" + rest);
  EXPECT_EQ(io::read_layer_graph_json(none).name, "custom");
}

// A transformer configuration's counts were read up to INT_MAX, and their
// products (4 x hidden, tp x pp x dp, micro_batch x dp) overflowed int.
TEST(FuzzRegressions, TransformerCountsPastTheirBoundsAreInputErrors) {
  auto d = tptest::temp_dir("fuzz_llm");
  const std::string head = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp\n";
  const auto wide = tptest::write_file(d / "wide.csv", head + "1,8,1,1000000000,8,4,128,1,1,1\n");
  expect_input_error([&] { io::read_llm_configs(wide); }, wide, 2, "hidden", "at most");
  const auto many = tptest::write_file(d / "many.csv", head + "33554432,8,1,64,8,4,128,1,8192,4096\n");
  expect_input_error([&] { io::read_llm_configs(many); }, many, 2, "dp", "more than");
  const auto product = tptest::write_file(d / "product.csv", head + "1,8,1,64,8,4,128,65536,65536,65536\n");
  expect_input_error([&] { io::read_llm_configs(product); }, product, 2, "gpus", "281474976710656");
  const auto batch = tptest::write_file(d / "batch.csv", head + "16777216,16777216,16777216,64,8,4,128,1,16777216,1\n");
  expect_input_error([&] { io::read_llm_configs(batch); }, batch, 2, "global_batch", "does not divide");
  // memory_gib 1e308 became infinite bytes, and the fitted memory overhead with it.
  const auto huge = tptest::write_file(d / "huge.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,"
                                                       "iteration_time_s,memory_gib\n1,8,1,64,8,4,128,1,1,1,1.5,1e308\n");
  expect_input_error([&] { io::read_llm_configs(huge, true); }, huge, 2, "memory_gib", "more than");
}

namespace {

// A transfer trace's optional sync_time takes the words tools write for a missing value, as llm
// predict's optional columns do; any other word is still refused.
TEST(PolluxTraceSync, AMissingValueWordLeavesTheSyncUnknown) {
  const auto dir = tptest::temp_dir("pollux_sync_words");
  tptest::write_file(dir / "placements.csv",
                     "placement,local_bsz,step_time,sync_time\n1,64,0.12,NA\n2,64,0.2,-\n11,64,0.3,NaN\n1,32,0.1,0.01\n");
  const auto tr = io::read_pollux_trace(dir.string(), {.curves = false, .sync_optional = true});
  ASSERT_EQ(tr.placements.size(), 4u);
  int unknown = 0;
  for (const auto& r : tr.placements) unknown += !r.sync_known;
  EXPECT_EQ(unknown, 3);
  tptest::write_file(dir / "placements.csv", "placement,local_bsz,step_time,sync_time\n1,64,0.12,fast\n");
  EXPECT_THROW(io::read_pollux_trace(dir.string(), {.curves = false, .sync_optional = true}), InputError);
}

}  // namespace
