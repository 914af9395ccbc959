// Hardware files: one GPU and its node in a CSV row, columns by name, errors
// naming file, line and column.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/hardware_file.h"
#include "structure/gpu_catalog.h"
#include "test_util.h"

using namespace trainplan;

TEST(HardwareFile, ReadsEveryColumnInAnyOrder) {
  auto d = tptest::temp_dir("hwfile");
  auto path = tptest::write_file(
      d / "my.csv",
      "# my cluster\n"
      "mem_bw_GBps,name,fp32_tflops,fp16_tensor_dense_tflops,gpus_per_node,intra_node_bw_GBps,inter_node_bw_GBps,"
      "mem_GB,fp32_sustained,intra_link,full_name\n"
      "900,my-gpu,15,120,4,50,12.5,32,0.9,NVLink,My GPU\n");
  auto h = io::read_hardware_file(path);
  EXPECT_EQ(h.name, "my-gpu");
  EXPECT_EQ(h.full_name, "My GPU");
  EXPECT_EQ(h.origin, path);
  EXPECT_DOUBLE_EQ(h.gpu.memory_bandwidth_gbps, 900);
  EXPECT_DOUBLE_EQ(h.gpu.fp32_tflops, 15);
  EXPECT_DOUBLE_EQ(h.gpu.fp16_tensor_tflops, 120);
  EXPECT_DOUBLE_EQ(h.gpu.tf32_tensor_tflops, 0);  // left out, no base: none
  EXPECT_DOUBLE_EQ(h.gpu.fp32_sustained, 0.9);
  EXPECT_DOUBLE_EQ(h.gpu.tensor_sustained, 1);
  EXPECT_EQ(h.node.gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(h.node.inter_node_gbps, 12.5);
  EXPECT_EQ(h.node.intra_link, "NVLink");
}

TEST(HardwareFile, BaseFillsWhatTheFileLeavesOut) {
  auto d = tptest::temp_dir("hwfile");
  auto path = tptest::write_file(d / "a100-ethernet.csv", "name,base,inter_node_bw_GBps,fp16_tensor_dense_tflops\n"
                                                          "a100-eth,a100-40gb,3.125,\n");
  auto h = io::read_hardware_file(path);
  auto a100 = *structure::find_builtin_hardware("a100-40gb");
  EXPECT_EQ(h.name, "a100-eth");
  EXPECT_DOUBLE_EQ(h.node.inter_node_gbps, 3.125);
  EXPECT_DOUBLE_EQ(h.gpu.fp16_tensor_tflops, a100.gpu.fp16_tensor_tflops);  // empty cell: the base's
  EXPECT_DOUBLE_EQ(h.gpu.memory_bandwidth_gbps, a100.gpu.memory_bandwidth_gbps);
  EXPECT_EQ(h.node.gpus_per_node, a100.node.gpus_per_node);
}

// The catalog marks the networks it only assumes; a file over such a base
// keeps the mark unless it states the network, which makes it the user's.
TEST(HardwareFile, AStatedNetworkIsNoLongerAssumed) {
  EXPECT_TRUE(structure::find_builtin_hardware("rtx-2080ti")->node.inter_node_assumed);
  EXPECT_FALSE(structure::find_builtin_hardware("a100-40gb")->node.inter_node_assumed);
  EXPECT_FALSE(structure::find_builtin_hardware("t4")->node.inter_node_assumed);
  auto d = tptest::temp_dir("hwfile");
  auto kept = io::read_hardware_file(tptest::write_file(d / "kept.csv", "name,base,mem_GB\nrtx-lab,rtx-2080ti,11\n"));
  EXPECT_TRUE(kept.node.inter_node_assumed);
  auto stated = io::read_hardware_file(
      tptest::write_file(d / "stated.csv", "name,base,inter_node_bw_GBps\nrtx-lab,rtx-2080ti,12.5\n"));
  EXPECT_FALSE(stated.node.inter_node_assumed);
  EXPECT_DOUBLE_EQ(stated.node.inter_node_gbps, 12.5);
  // A file that restates the network as the catalog assumes it (a copy of `hardware NAME --json`) says so.
  const auto p4 = *structure::find_builtin_hardware("p4");
  auto copy = io::read_hardware_file(tptest::write_file(
      d / "p4.csv", fmt::format("name,base,inter_node_bw_GBps,inter_node_assumed\np4,p4,{},true\n",
                                p4.node.inter_node_gbps)));
  EXPECT_EQ(copy.name, "p4");  // the catalog's own figures under its own name
  EXPECT_TRUE(copy.node.inter_node_assumed);
  EXPECT_EQ(tptest::input_error_of([&] {
              io::read_hardware_file(tptest::write_file(d / "bad.csv", "name,base,inter_node_assumed\nx,t4,maybe\n"));
            }).field(),
            "inter_node_assumed");
}

// A measured growth of the collectives' latency with their size: none in
// the catalog, a file's own where it states one, below 1.
TEST(HardwareFile, ACollectiveLatencyExponentIsTheFilesOwn) {
  auto d = tptest::temp_dir("hwfile");
  EXPECT_EQ(structure::find_builtin_hardware("a100-80gb")->node.collective_latency_exponent, 0);
  auto cpu = tptest::write_file(d / "cpu.csv", "name,base,collective_latency_exponent\ncpu,t4,0.4\n");
  EXPECT_DOUBLE_EQ(io::read_hardware_file(cpu).node.collective_latency_exponent, 0.4);
  auto left_empty = tptest::write_file(d / "empty.csv", "name,base,collective_latency_exponent\ncpu,t4,\n");
  EXPECT_EQ(io::read_hardware_file(left_empty).node.collective_latency_exponent, 0);
  for (const char* bad : {"1", "1.5", "-0.1", "steep"}) {
    auto f = tptest::write_file(d / "bad.csv", std::string("name,base,collective_latency_exponent\ncpu,t4,") + bad + "\n");
    auto e = tptest::input_error_of([&] { io::read_hardware_file(f); });
    EXPECT_EQ(e.line(), 2) << bad;
    EXPECT_EQ(e.field(), "collective_latency_exponent") << bad;
  }
}

// The FP8 products' share: the base's where the file is silent, the file's
// own where it states one, and > 0.
TEST(HardwareFile, AnFp8MatmulShareIsTheFilesOwnOrTheBases) {
  auto d = tptest::temp_dir("hwfile");
  auto base = io::read_hardware_file(tptest::write_file(d / "base.csv", "name,base\nmine,h100\n"));
  EXPECT_DOUBLE_EQ(base.gpu.fp8_matmul_share, structure::find_builtin_hardware("h100")->gpu.fp8_matmul_share);
  auto own = tptest::write_file(d / "own.csv", "name,base,fp8_matmul_share\nmine,h100,0.95\n");
  EXPECT_DOUBLE_EQ(io::read_hardware_file(own).gpu.fp8_matmul_share, 0.95);
  for (const char* bad : {"0", "-0.5", "most"}) {
    auto f = tptest::write_file(d / "bad.csv", std::string("name,base,fp8_matmul_share\nmine,h100,") + bad + "\n");
    auto e = tptest::input_error_of([&] { io::read_hardware_file(f); });
    EXPECT_EQ(e.line(), 2) << bad;
    EXPECT_EQ(e.field(), "fp8_matmul_share") << bad;
  }
}

TEST(HardwareFile, ATf32KernelShareIsTheFilesOwnOrTheMeasuredOne) {
  auto d = tptest::temp_dir("hwfile");
  auto base = io::read_hardware_file(tptest::write_file(d / "base.csv", "name,base\nmine,a100-40gb\n"));
  EXPECT_DOUBLE_EQ(base.gpu.tf32_kernel_share, structure::GpuSpec{}.tf32_kernel_share);
  auto own = io::read_hardware_file(
      tptest::write_file(d / "own.csv", "name,base,tf32_kernel_share\nmine,a100-40gb,1\n"));
  EXPECT_DOUBLE_EQ(own.gpu.tf32_kernel_share, 1);
  // A share of 1 takes convolutions at the sustained TF32 peak; the measured one well below it.
  EXPECT_DOUBLE_EQ(own.gpu.fp32_conv_tflops(), 156);
  EXPECT_LT(base.gpu.fp32_conv_tflops(), 0.5 * 156);
  for (const char* bad : {"0", "3", "half"}) {
    auto f = tptest::write_file(d / "bad.csv", std::string("name,base,tf32_kernel_share\nmine,a100-40gb,") + bad + "\n");
    auto e = tptest::input_error_of([&] { io::read_hardware_file(f); });
    EXPECT_EQ(e.line(), 2) << bad;
    EXPECT_EQ(e.field(), "tf32_kernel_share") << bad;
  }
}

TEST(HardwareFile, ErrorsNameFileLineAndColumn) {
  auto d = tptest::temp_dir("hwfile");
  // A JSON description is said to be one, not read as a header of unknown columns.
  auto json = tptest::write_file(d / "gpu.json", "{\"name\":\"x\",\"fp32_tflops\":10}\n");
  auto j = tptest::input_error_of([&] { io::read_hardware_file(json); });
  EXPECT_EQ(j.file(), json);
  EXPECT_NE(j.message().find("this is JSON"), std::string::npos) << j.message();
  EXPECT_EQ(j.field(), "");
  auto pretty = tptest::write_file(d / "pretty.json", "{\n  \"name\": \"x\",\n  \"fp32_tflops\": 10\n}\n");
  EXPECT_NE(tptest::input_error_of([&] { io::read_hardware_file(pretty); }).message().find("this is JSON"),
            std::string::npos);
  auto missing = tptest::write_file(d / "missing.csv", "# comment\nname,fp32_tflops\nx,10\n");
  auto e = tptest::input_error_of([&] { io::read_hardware_file(missing); });
  EXPECT_EQ(e.file(), missing);
  EXPECT_EQ(e.line(), 2);  // the header's line
  EXPECT_EQ(e.field(), "mem_bw_GBps");
  // Every required column the file lacks is named at once.
  for (const char* c : {"mem_bw_GBps", "gpus_per_node", "intra_node_bw_GBps", "inter_node_bw_GBps"})
    EXPECT_NE(e.message().find(c), std::string::npos) << c << ": " << e.message();
  // So is every required figure a pasted row leaves empty, on the row's line.
  auto blanks = tptest::write_file(d / "blanks.csv",
                                   "name,fp32_tflops,mem_bw_GBps,gpus_per_node,intra_node_bw_GBps,inter_node_bw_GBps\n"
                                   "x,10,,8,,\n");
  e = tptest::input_error_of([&] { io::read_hardware_file(blanks); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "mem_bw_GBps");
  for (const char* c : {"intra_node_bw_GBps", "inter_node_bw_GBps"})
    EXPECT_NE(e.message().find(c), std::string::npos) << c << ": " << e.message();
  EXPECT_EQ(e.message().find("gpus_per_node"), std::string::npos) << e.message();

  auto bad_number = tptest::write_file(d / "nan.csv", "name,base,mem_bw_GBps\nx,t4,fast\n");
  e = tptest::input_error_of([&] { io::read_hardware_file(bad_number); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "mem_bw_GBps");

  auto negative = tptest::write_file(d / "neg.csv", "name,base,fp16_tensor_dense_tflops\nx,t4,-1\n");
  e = tptest::input_error_of([&] { io::read_hardware_file(negative); });
  EXPECT_EQ(e.field(), "fp16_tensor_dense_tflops");

  auto zero_gpus = tptest::write_file(d / "zero.csv", "name,base,gpus_per_node\nx,t4,0\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_hardware_file(zero_gpus); }).field(), "gpus_per_node");

  auto unknown_column = tptest::write_file(d / "typo.csv", "name,base,fp32_tflop\nx,t4,10\n");
  e = tptest::input_error_of([&] { io::read_hardware_file(unknown_column); });
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.field(), "fp32_tflop");

  auto unknown_base = tptest::write_file(d / "base.csv", "name,base\nx,a100-41gb\n");
  e = tptest::input_error_of([&] { io::read_hardware_file(unknown_base); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "base");
  EXPECT_NE(e.message().find("a100-41gb"), std::string::npos);

  auto two_rows = tptest::write_file(d / "two.csv", "name,base\nx,t4\ny,a100\n");
  e = tptest::input_error_of([&] { io::read_hardware_file(two_rows); });
  EXPECT_EQ(e.line(), 3);

  auto empty_name = tptest::write_file(d / "noname.csv", "name,base\n,t4\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_hardware_file(empty_name); }).field(), "name");

  // A sustained share past twice the reference's would run past the datasheet peak.
  auto past_peak = tptest::write_file(d / "share.csv", "name,base,tensor_sustained\nx,t4,50\n");
  e = tptest::input_error_of([&] { io::read_hardware_file(past_peak); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "tensor_sustained");
  auto at_two = tptest::write_file(d / "two-share.csv", "name,base,fp32_sustained\nx,t4,2\n");
  EXPECT_DOUBLE_EQ(io::read_hardware_file(at_two).gpu.fp32_sustained, 2.0);

  // A memory of 0 is no memory: refused, where the transformer verbs would later call it missing.
  auto no_memory = tptest::write_file(d / "mem0.csv", "name,base,mem_GB\nx,h100,0\n");
  e = tptest::input_error_of([&] { io::read_hardware_file(no_memory); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "mem_GB");
}

// A file's GPU named as a catalog GPU, with figures of its own, would be
// read as the catalog's wherever GPUs are told apart by name (the measured
// GPU among plan --gpu's): refused, naming the column. The catalog's own
// figures under its name are that GPU, and read.
TEST(HardwareFile, ACatalogNameWithOtherFiguresIsRefused) {
  auto d = tptest::temp_dir("hwfile");
  auto half = tptest::write_file(d / "t4-half.csv", "name,base,fp32_tflops\nt4,t4,4.05\n");
  auto e = tptest::input_error_of([&] { io::read_hardware_file(half); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "name");
  EXPECT_NE(e.message().find("fp32_tflops 4.05 against 8.1"), std::string::npos) << e.message();
  auto other_base = tptest::write_file(d / "named-t4.csv", "name,base\nt4,a100-40gb\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_hardware_file(other_base); }).field(), "name");
  auto same = tptest::write_file(d / "t4.csv", "name,base\nt4,t4\n");
  EXPECT_EQ(io::read_hardware_file(same).name, "t4");
  // Names are compared by their letters and digits, as everywhere: "T4" is t4.
  auto upper = tptest::write_file(d / "T4-fake.csv", "name,base,fp32_tflops\nT4,t4,80\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_hardware_file(upper); }).field(), "name");
  auto renamed = tptest::write_file(d / "t4-slow.csv", "name,base,fp32_tflops\nt4-slow,t4,4.05\n");
  EXPECT_DOUBLE_EQ(io::read_hardware_file(renamed).gpu.fp32_tflops, 4.05);
  // A file separated by semicolons is said to be one.
  auto semi = tptest::write_file(d / "semi.csv", "name;base\nsemi;a100\n");
  EXPECT_NE(tptest::input_error_of([&] { io::read_hardware_file(semi); }).message().find("this one by ';'"),
            std::string::npos);
  // A reported memory alone is neither unit-checked nor a memory.
  auto reported = tptest::write_file(d / "rep.csv",
                                     "name,fp32_tflops,mem_bw_GBps,gpus_per_node,intra_node_bw_GBps,inter_node_bw_GBps,"
                                     "mem_reported_GiB\nx,60,3000,8,450,400,81559\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_hardware_file(reported); }).field(), "mem_reported_GiB");
}

// An FP8 peak under the 16-bit one is a mistake: refused, naming the column.
TEST(HardwareFile, AnFp8PeakBelowThe16BitPeakIsRefused) {
  auto d = tptest::temp_dir("hwfp8");
  auto slow = tptest::write_file(d / "slow.csv", "name,base,fp8_tflops\nslowfp8,h100,100\n");
  auto e = tptest::input_error_of([&] { io::read_hardware_file(slow); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "fp8_tflops");
  EXPECT_NO_THROW(io::read_hardware_file(tptest::write_file(d / "none.csv", "name,base,fp8_tflops\nnofp8,h100,0\n")));
}

// A 16-bit peak restated over a base moves the base's TF32 and FP8 peaks
// with it (fixed ratios on each architecture); given with it, a TF32 peak
// above it or an FP8 peak past 2.5 times it is refused, naming the column.
TEST(HardwareFile, TheOtherTensorPeaksFollowARestated16BitPeak) {
  auto d = tptest::temp_dir("hwpeaks");
  const auto h100 = *structure::find_builtin_hardware("h100");
  auto low = io::read_hardware_file(tptest::write_file(d / "low.csv", "name,base,fp16_tensor_dense_tflops\nx,h100,100\n"));
  EXPECT_DOUBLE_EQ(low.gpu.tf32_tensor_tflops, h100.gpu.tf32_tensor_tflops * 100 / h100.gpu.fp16_tensor_tflops);
  EXPECT_DOUBLE_EQ(low.gpu.fp8_tensor_tflops, h100.gpu.fp8_tensor_tflops * 100 / h100.gpu.fp16_tensor_tflops);
  auto tf32 = tptest::write_file(d / "tf32.csv", "name,base,fp16_tensor_dense_tflops,tf32_tensor_tflops\nx,h100,100,400\n");
  auto e = tptest::input_error_of([&] { io::read_hardware_file(tf32); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "tf32_tensor_tflops");
  EXPECT_NE(e.message().find("TF32 peak (400 TFLOP/s) is above the 16-bit tensor peak (100)"), std::string::npos)
      << e.what();
  auto sparse = tptest::write_file(d / "sparse.csv", "name,base,fp8_tflops\nx,h100,3958\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_hardware_file(sparse); }).field(), "fp8_tflops");
  EXPECT_NO_THROW(io::read_hardware_file(tptest::write_file(
      d / "whole.csv", "name,base,fp16_tensor_dense_tflops,tf32_tensor_tflops,fp8_tflops\nx,h100,100,50,200\n")));
  // A 16-bit peak of 0 over a base: no tensor cores, so no TF32 or FP8 either.
  auto none = io::read_hardware_file(tptest::write_file(d / "none.csv", "name,base,fp16_tensor_dense_tflops\nx,h100,0\n"));
  EXPECT_DOUBLE_EQ(none.gpu.fp16_tensor_tflops, 0);
  EXPECT_DOUBLE_EQ(none.gpu.bf16_tensor_tflops, 0);
  EXPECT_DOUBLE_EQ(none.gpu.tf32_tensor_tflops, 0);
  EXPECT_DOUBLE_EQ(none.gpu.fp8_tensor_tflops, 0);
  // A node past any machine is refused, naming the column.
  auto huge = tptest::write_file(d / "huge.csv", "name,base,gpus_per_node\nx,h100,2147483647\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_hardware_file(huge); }).field(), "gpus_per_node");
  // And a TF32 or FP8 peak stated without any 16-bit one is refused, naming it.
  for (const char* column : {"tf32_tensor_tflops", "fp8_tflops"}) {
    auto alone = tptest::write_file(d / "alone.csv", std::string("name,fp32_tflops,mem_GB,mem_bw_GBps,gpus_per_node,intra_node_bw_GBps,"
                                                         "inter_node_bw_GBps,") + column + "\nx,10,16,300,4,16,12.5,50\n");
    auto err = tptest::input_error_of([&] { io::read_hardware_file(alone); });
    EXPECT_EQ(err.field(), column);
    EXPECT_NE(err.message().find("no 16-bit tensor peak"), std::string::npos) << err.what();
  }
}

// The memory the transformer verbs plan on: the reported capacity where
// measured (the catalog's H100), else the datasheet's GB as 10^9 bytes; a
// file's own, or none once it restates the base's memory.
TEST(HardwareFile, TheReportedMemoryIsPlannedOnWhereGiven) {
  const double gib = 1024.0 * 1024 * 1024;
  auto h100 = *structure::find_builtin_hardware("h100");
  EXPECT_DOUBLE_EQ(h100.gpu.capacity_bytes(), 81559.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(structure::find_builtin_hardware("a100-80gb")->gpu.capacity_bytes(), 80e9);
  auto d = tptest::temp_dir("hwfile");
  auto given = io::read_hardware_file(tptest::write_file(d / "g.csv", "name,base,mem_reported_GiB\nmine,a100-80gb,79.2\n"));
  EXPECT_DOUBLE_EQ(given.gpu.capacity_bytes(), 79.2 * gib);
  auto kept = io::read_hardware_file(tptest::write_file(d / "k.csv", "name,base,fp32_sustained\nmine,h100,0.9\n"));
  EXPECT_DOUBLE_EQ(kept.gpu.capacity_bytes(), h100.gpu.capacity_bytes());
  auto restated = io::read_hardware_file(tptest::write_file(d / "r.csv", "name,base,mem_GB\nmine,h100,94\n"));
  EXPECT_DOUBLE_EQ(restated.gpu.capacity_bytes(), 94e9) << "the base's reported 79.65 GiB is another card's";
  EXPECT_THROW(io::read_hardware_file(tptest::write_file(d / "z.csv", "name,base,mem_reported_GiB\nmine,h100,0\n")),
               InputError);
  // A MiB figure in the GiB column would make every layout fit: refused, naming the column.
  const auto mib = tptest::write_file(d / "m.csv", "name,base,mem_reported_GiB\nmine,h100,81559\n");
  try {
    io::read_hardware_file(mib);
    ADD_FAILURE() << "81559 GiB for an 80 GB card was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "mem_reported_GiB");
    EXPECT_EQ(e.line(), 2);
  }
}

// A link's bandwidth restated over a base no longer carries the base's link name.
TEST(HardwareFile, ARestatedBandwidthDropsTheBasesLinkName) {
  auto d = tptest::temp_dir("hwlink");
  auto h = io::read_hardware_file(tptest::write_file(d / "eth.csv", "name,base,inter_node_bw_GBps\nx,a100-40gb,12.5\n"));
  EXPECT_DOUBLE_EQ(h.node.inter_node_gbps, 12.5);
  EXPECT_EQ(h.node.inter_link, "as given (12.5 GB/s)");
  EXPECT_EQ(h.node.intra_link, structure::find_builtin_hardware("a100-40gb")->node.intra_link);  // untouched
  auto named = io::read_hardware_file(
      tptest::write_file(d / "named.csv", "name,base,inter_node_bw_GBps,inter_link\nx,a100-40gb,12.5,100 GbE\n"));
  EXPECT_EQ(named.node.inter_link, "100 GbE");
}

// bf16 runs at the fp16 tensor peak: a file restating one over a base restates both.
TEST(HardwareFile, Fp16AndBf16PeaksMoveTogetherOverABase) {
  auto d = tptest::temp_dir("hwfile16");
  auto capped = io::read_hardware_file(
      tptest::write_file(d / "capped.csv", "name,base,fp16_tensor_dense_tflops\nh100-capped,h100,500\n"));
  EXPECT_DOUBLE_EQ(capped.gpu.fp16_tensor_tflops, 500);
  EXPECT_DOUBLE_EQ(capped.gpu.bf16_tensor_tflops, 500);
  auto bf = io::read_hardware_file(
      tptest::write_file(d / "bf.csv", "name,base,bf16_tensor_dense_tflops\nh100-bf,h100,600\n"));
  EXPECT_DOUBLE_EQ(bf.gpu.fp16_tensor_tflops, 600);
  // Both given: each its own; a base without bf16 (the T4) keeps none.
  auto both = io::read_hardware_file(tptest::write_file(
      d / "both.csv", "name,base,fp16_tensor_dense_tflops,bf16_tensor_dense_tflops\nh100-both,h100,500,400\n"));
  EXPECT_DOUBLE_EQ(both.gpu.bf16_tensor_tflops, 400);
  auto t4 = io::read_hardware_file(
      tptest::write_file(d / "t4.csv", "name,base,fp16_tensor_dense_tflops\nt4-fast,t4,100\n"));
  EXPECT_DOUBLE_EQ(t4.gpu.bf16_tensor_tflops, 0);
}

TEST(HardwareFile, ResolveTakesACatalogNameOrAFile) {
  EXPECT_EQ(io::resolve_hardware("T4").name, "t4");
  auto d = tptest::temp_dir("hwfile");
  auto path = tptest::write_file(d / "g.csv", "name,base\nmine,l4\n");
  EXPECT_EQ(io::resolve_hardware(path).name, "mine");
  // Something that is there but no file is said to be so, not missing.
  auto device = tptest::input_error_of([&] { io::resolve_hardware("/dev/null", "--gpu"); });
  EXPECT_NE(device.message().find("not a regular file"), std::string::npos) << device.message();
  auto e = tptest::input_error_of([&] { io::resolve_hardware("a100-41gb", "--to-gpu"); });
  EXPECT_EQ(e.field(), "--to-gpu");
  EXPECT_NE(e.message().find("a100-41gb"), std::string::npos);
  EXPECT_NE(e.message().find("rtx-2080ti"), std::string::npos);  // lists the catalog
}

// Headers in any case; a row pasted from the collected catalog with its
// header (`device` for the name, columns the models do not use read past).
TEST(HardwareFile, HeadersInAnyCaseAndACatalogRowPasted) {
  auto d = tptest::temp_dir("hwfile");
  auto h = io::read_hardware_file(tptest::write_file(d / "case.csv", "Name,BASE,MEM_GB\nx,h100,40\n"));
  EXPECT_EQ(h.name, "x");
  EXPECT_DOUBLE_EQ(h.gpu.memory_gb, 40);
  auto pasted = io::read_hardware_file(tptest::write_file(
      d / "pasted.csv",
      "device,source_project,fp16_tensor_dense_tflops,fp32_tflops,fp64_tflops,num_sms,clock_MHz,mem_GB,mem_bw_GBps,"
      "gpus_per_node,intra_node_bw_GBps,inter_node_bw_GBps\nmy gpu,somewhere,100,20,1,80,1500,24,600,4,16,6.25\n"));
  EXPECT_EQ(pasted.name, "my gpu");
  EXPECT_DOUBLE_EQ(pasted.gpu.fp16_tensor_tflops, 100);
}

// The transformer verbs need the GPU's memory; a path that is no file is said so.
TEST(HardwareFile, TheTransformerVerbsNeedTheMemory) {
  auto d = tptest::temp_dir("hwfile");
  auto path = tptest::write_file(d / "minimal.csv",
                                 "name,fp32_tflops,mem_bw_GBps,gpus_per_node,intra_node_bw_GBps,inter_node_bw_GBps\n"
                                 "x,10,500,4,16,6.25\n");
  EXPECT_EQ(io::resolve_hardware(path).name, "x");
  auto e = tptest::input_error_of([&] { io::resolve_llm_hardware(path, "--gpu"); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.field(), "mem_GB");
  auto r = tptest::run_cli("llm plan --model gpt3-1.3b --gpu " + path + " --tokens 1e10 --global-batch 256");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("mem_GB"), std::string::npos) << r.err;
  auto missing = tptest::input_error_of([&] { io::resolve_hardware((d / "nope.csv").string(), "--gpu"); });
  EXPECT_EQ(missing.message(), "no such hardware file");
}

TEST(HardwareFile, CliShowsAFileAndRejectsAnUnknownName) {
  auto d = tptest::temp_dir("hwfile");
  auto path = tptest::write_file(d / "g.csv", "name,base,mem_bw_GBps\nmine,t4,400\n");
  auto r = tptest::run_cli("hardware " + path + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "mine");
  EXPECT_DOUBLE_EQ(j["mem_bw_GBps"].get<double>(), 400);
  EXPECT_DOUBLE_EQ(j["fp16_tensor_dense_tflops"].get<double>(), 65);

  r = tptest::run_cli("hardware --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), structure::builtin_hardware().size());

  r = tptest::run_cli("hardware a100-41gb");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "", {"a100-41gb"}));
}

// GPUs under one operating system, where NVLink reaches further: a GB200
// NVL72's domain of 72 is 18 trays of 4. A file may say so, within its node.
TEST(HardwareFile, GpusPerHostAreWithinTheNode) {
  const auto gb200 = *structure::find_builtin_hardware("gb200");
  EXPECT_EQ(gb200.node.gpus_per_node, 72);
  EXPECT_EQ(gb200.node.launch_gpus_per_host(), 4);
  EXPECT_EQ(structure::find_builtin_hardware("h100")->node.launch_gpus_per_host(), 8);  // a host is the node
  auto d = tptest::temp_dir("hwfile");
  auto h = io::read_hardware_file(
      tptest::write_file(d / "nvl.csv", "name,base,gpus_per_node,gpus_per_host\nmy-nvl32,h100,32,8\n"));
  EXPECT_EQ(h.node.gpus_per_node, 32);
  EXPECT_EQ(h.node.launch_gpus_per_host(), 8);
  auto e = tptest::input_error_of([&] {
    io::read_hardware_file(tptest::write_file(d / "over.csv", "name,base,gpus_per_host\nmy-h100,h100,16\n"));
  });
  EXPECT_EQ(e.field(), "gpus_per_host");
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("more than the node's 8"), std::string::npos) << e.what();
}
