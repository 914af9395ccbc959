// The hardware catalog: names, aliases, the figures the transfer and the
// transformer models read, and the fit of the sustained fractions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "io/device_timing_csv.h"
#include "structure/gpu_catalog.h"
#include "test_util.h"

using namespace trainplan;
using structure::find_builtin_hardware;

TEST(GpuCatalog, HasEveryNameTheTransferInterfaceNames) {
  for (const char* name : {"t4", "v100", "a100-40gb", "a100-80gb", "h100", "h200", "l4", "rtx-2080ti"}) {
    auto h = find_builtin_hardware(name);
    ASSERT_TRUE(h.has_value()) << name;
    EXPECT_EQ(h->name, name);
    EXPECT_GT(h->gpu.fp32_tflops, 0) << name;
    EXPECT_GT(h->gpu.fp16_tensor_tflops, h->gpu.fp32_tflops) << name << ": every one has tensor cores";
    EXPECT_GT(h->gpu.memory_gb, 0) << name;
    EXPECT_GT(h->gpu.memory_bandwidth_gbps, 0) << name;
    EXPECT_GE(h->node.gpus_per_node, 1) << name;
    EXPECT_GT(h->node.intra_node_gbps, 0) << name;
    EXPECT_GT(h->node.inter_node_gbps, 0) << name;
    EXPECT_FALSE(h->sources.empty()) << name;
    EXPECT_EQ(h->origin, "built-in");
  }
}

TEST(GpuCatalog, NamesAreCaseInsensitiveAndKnowAliases) {
  EXPECT_EQ(find_builtin_hardware("T4")->name, "t4");
  EXPECT_EQ(find_builtin_hardware("Tesla T4")->name, "t4");
  EXPECT_EQ(find_builtin_hardware("A100")->name, "a100-40gb");
  EXPECT_EQ(find_builtin_hardware("NVIDIA H100 80GB HBM3")->name, "h100");
  EXPECT_FALSE(find_builtin_hardware("a100-41gb").has_value());
  EXPECT_FALSE(find_builtin_hardware("").has_value());
  auto names = structure::builtin_hardware_names();
  EXPECT_EQ(names.size(), structure::builtin_hardware().size());
}

TEST(GpuCatalog, NamesMatchWhateverTheSeparators) {
  EXPECT_EQ(find_builtin_hardware("A100 40GB")->name, "a100-40gb");
  EXPECT_EQ(find_builtin_hardware("a100_80gb")->name, "a100-80gb");
  EXPECT_EQ(find_builtin_hardware("RTX 2080 Ti")->name, "rtx-2080ti");
  EXPECT_EQ(find_builtin_hardware(" H100 ")->name, "h100");
  EXPECT_EQ(find_builtin_hardware("A100-PCIe-80GB")->name, "a100-pcie-80gb");
  EXPECT_FALSE(find_builtin_hardware("-- _").has_value());
  EXPECT_FALSE(find_builtin_hardware("a100 41gb").has_value());
  // The names drivers print (nvidia-smi), with their vendor and brand words.
  for (const auto& [printed, name] : {std::pair{"NVIDIA A100-SXM4-80GB", "a100-80gb"}, {"Tesla V100-SXM2-32GB", "v100"},
                                      {"NVIDIA GeForce RTX 2080 Ti", "rtx-2080ti"}, {"NVIDIA Tesla T4", "t4"},
                                      {"NVIDIA H200", "h200"}, {"h100-sxm5-80gb", "h100"}})
    EXPECT_EQ(find_builtin_hardware(printed)->name, name) << printed;
  EXPECT_FALSE(find_builtin_hardware("NVIDIA").has_value());
  // No entry's name or alias, compared this way, hides a later entry's name.
  for (const auto& name : structure::builtin_hardware_names()) EXPECT_EQ(find_builtin_hardware(name)->name, name);
}

// Fused attention takes half-precision tensors: an fp32 layout that asks for
// it, or runs context parallelism, names the kernel it cannot have.
TEST(GpuCatalog, FusedAttentionNeedsHalfPrecision) {
  const auto h100 = *find_builtin_hardware("h100");
  structure::ParallelLayout l;
  l.flash_attention = true, l.precision = structure::Precision::kBf16;
  EXPECT_FALSE(structure::missing_unit(h100, l).has_value());
  l.precision = structure::Precision::kFp32;
  auto p = structure::missing_unit(h100, l);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->field, "flash_attention");
  EXPECT_NE(p->message.find("fp16 or bf16 tensors only"), std::string::npos) << p->message;
  l.flash_attention = false, l.cp = 2;
  EXPECT_EQ(structure::missing_unit(h100, l)->field, "cp");
  l.precision = structure::Precision::kAmpFp32Master;  // attention under autocast runs in bf16
  EXPECT_FALSE(structure::missing_unit(h100, l).has_value());
}

// An alias is told from the key: the CLI says which entry "a100" stood for.
TEST(GpuCatalog, AnAliasSaysTheKeyItStandsFor) {
  EXPECT_EQ(structure::builtin_alias_target("a100"), "a100-40gb");
  EXPECT_EQ(structure::builtin_alias_target("A100-SXM4-40GB"), "a100-40gb");
  EXPECT_FALSE(structure::builtin_alias_target("A100 40GB").has_value());  // the key, spelt otherwise
  EXPECT_FALSE(structure::builtin_alias_target("NVIDIA Tesla T4").has_value());  // the key with a vendor's words
  EXPECT_FALSE(structure::builtin_alias_target("h100").has_value());
  EXPECT_FALSE(structure::builtin_alias_target("no-such-gpu").has_value());
  EXPECT_FALSE(structure::builtin_alias_target("./a100").has_value());
}

// A profiler's free-text label names its catalog GPU; a label that names
// none, or two, names nothing.
TEST(GpuCatalog, ALabelNamesTheGpuAmongItsWords) {
  using structure::find_builtin_hardware_in;
  EXPECT_EQ(find_builtin_hardware_in("NVIDIA H200 141GB (libtorch 2.11 CUDA 13.0; 16-CPU VM)")->name, "h200");
  EXPECT_EQ(find_builtin_hardware_in("Tesla A100 80GB PCIe? no: SXM")->name, "a100-80gb");
  EXPECT_EQ(find_builtin_hardware_in("t4")->name, "t4");
  EXPECT_FALSE(find_builtin_hardware_in("AMD EPYC 7742 x2 cores").has_value());
  EXPECT_FALSE(find_builtin_hardware_in("t4 and v100 mixed").has_value());
}

// Every entry carries what the models read, with its sources; a PCIe card is
// told from the SXM one by its name, and the FP8 refusal names every GPU that
// has FP8 units.
TEST(GpuCatalog, EveryEntryIsCompleteAndFp8IsNamedWhereItExists) {
  for (const auto& h : structure::builtin_hardware()) {
    EXPECT_GT(h.gpu.fp32_tflops, 0) << h.name;
    EXPECT_GT(h.gpu.memory_gb, 0) << h.name;
    EXPECT_GT(h.gpu.memory_bandwidth_gbps, 0) << h.name;
    EXPECT_GT(h.node.intra_node_gbps, 0) << h.name;
    EXPECT_GT(h.node.inter_node_gbps, 0) << h.name;
    EXPECT_FALSE(h.sources.empty()) << h.name;
    // bf16, where a GPU has it, runs at the fp16 rate.
    if (h.gpu.bf16_tensor_tflops > 0) EXPECT_DOUBLE_EQ(h.gpu.bf16_tensor_tflops, h.gpu.fp16_tensor_tflops) << h.name;
  }
  EXPECT_EQ(find_builtin_hardware("H100 PCIe")->name, "h100-pcie");
  EXPECT_LT(find_builtin_hardware("h100-pcie")->gpu.fp16_tensor_tflops, find_builtin_hardware("h100")->gpu.fp16_tensor_tflops);
  EXPECT_EQ(find_builtin_hardware("RTX A6000")->name, "a6000");
  EXPECT_EQ(find_builtin_hardware("NVIDIA A40")->name, "a40");
  auto why = structure::missing_precision_unit(*find_builtin_hardware("a40"), structure::Precision::kFp8);
  ASSERT_TRUE(why.has_value());
  for (const auto& h : structure::builtin_hardware())
    if (h.gpu.fp8_tensor_tflops > 0) EXPECT_NE(why->find(h.name), std::string::npos) << *why;
  EXPECT_FALSE(structure::missing_precision_unit(*find_builtin_hardware("h100-pcie"), structure::Precision::kFp8));
}

TEST(GpuCatalog, DatasheetRatiosOfTheDevelopmentPair) {
  auto t4 = *find_builtin_hardware("t4"), a100 = *find_builtin_hardware("a100-40gb");
  // The figures: about 2.4x in fp32 peak, 4.8x in fp16 tensor peak and bandwidth.
  EXPECT_NEAR(a100.gpu.fp32_tflops / t4.gpu.fp32_tflops, 2.4, 0.05);
  EXPECT_NEAR(a100.gpu.fp16_tensor_tflops / t4.gpu.fp16_tensor_tflops, 4.8, 0.05);
  EXPECT_NEAR(a100.gpu.memory_bandwidth_gbps / t4.gpu.memory_bandwidth_gbps, 4.86, 0.05);
  // fp32 convolutions run on TF32 tensor cores on Ampere, at the share of the TF32 peak that
  // the measured kernels reach, on the CUDA cores of a T4.
  EXPECT_DOUBLE_EQ(a100.gpu.fp32_conv_tflops(), 156 * a100.gpu.tensor_sustained * a100.gpu.tf32_kernel_share);
  EXPECT_GT(a100.gpu.fp32_conv_tflops(), a100.gpu.fp32_tflops * a100.gpu.fp32_sustained);
  EXPECT_DOUBLE_EQ(t4.gpu.fp32_conv_tflops(), 8.1 * t4.gpu.fp32_sustained);
  // TF32 units never slow fp32 matrix work: where their share of the TF32 peak is below the
  // CUDA cores' (an A6000), the CUDA cores' rate stands.
  auto a6000 = *find_builtin_hardware("a6000");
  EXPECT_GE(a6000.gpu.fp32_conv_tflops(), a6000.gpu.fp32_tflops * a6000.gpu.fp32_sustained);
  a6000.gpu.fp32_matmul_tf32 = true;
  EXPECT_GE(a6000.gpu.fp32_matmul_tflops(), a6000.gpu.fp32_tflops * a6000.gpu.fp32_sustained);
  auto t4_tf32 = t4;
  t4_tf32.gpu.tf32_tensor_tflops = 10;
  EXPECT_GE(t4_tf32.gpu.fp32_conv_tflops(), t4.gpu.fp32_conv_tflops());
  EXPECT_DOUBLE_EQ(t4.gpu.amp_matrix_tflops(), 65 * t4.gpu.tensor_sustained);
  // A GPU without tensor cores does mixed-precision matrix work at its fp32 rate.
  auto p100 = *find_builtin_hardware("p100");
  EXPECT_DOUBLE_EQ(p100.gpu.amp_matrix_tflops(), p100.gpu.fp32_tflops * p100.gpu.fp32_sustained);
}

TEST(GpuCatalog, InterconnectSpecCarriesTheLinks) {
  auto spec = structure::interconnect_spec(*find_builtin_hardware("a100-40gb"));
  EXPECT_DOUBLE_EQ(spec.intra_node_bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(spec.inter_node_bytes_per_s, 200e9);
  EXPECT_NE(spec.name.find("A100"), std::string::npos);
}

TEST(GpuCatalog, SustainedFractionFitRecoversKnownFractions) {
  // t = W / (fp32 peak x f): three workloads on four devices, known f.
  std::map<std::string, double> f = {{"a100-pcie-40gb", 1.0}, {"t4", 0.5}, {"v100-pcie", 0.9}, {"l4", 0.3}};
  std::vector<structure::DeviceTiming> timings;
  for (auto [w, work] : {std::pair<std::string, double>{"a", 1e12}, {"b", 3e12}, {"c", 0.2e12}})
    for (const auto& [d, frac] : f)
      timings.push_back({w, d, work / (find_builtin_hardware(d)->gpu.fp32_tflops * 1e12 * frac)});
  timings.push_back({"only-one-device", "t4", 5.0});  // ignored: timed on one device
  auto fit = structure::fit_sustained_fractions(timings, "a100-pcie-40gb");
  ASSERT_EQ(fit.size(), 4u);
  for (const auto& s : fit) {
    EXPECT_NEAR(s.fraction, f[s.device], 1e-6) << s.device;
    EXPECT_EQ(s.timings, 3) << s.device;
    EXPECT_LT(s.rms_log_residual, 1e-6) << s.device;
  }
  EXPECT_THROW(structure::fit_sustained_fractions({{"a", "no-such-gpu", 1.0}}), InputError);
  EXPECT_THROW(structure::fit_sustained_fractions(timings, "h100"), InputError);  // reference never timed
}

// The catalog's sustained fractions are what NeuSight's measured runs give.
TEST(GpuCatalog, SustainedFractionsReproduceFromNeuSight) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto dt = io::read_device_timings(tptest::shared_data_dir() + "/llm/neusight_single_gpu_measured.csv");
  auto fit = structure::fit_sustained_fractions(dt.timings, "a100-pcie-40gb");
  ASSERT_GE(fit.size(), 7u);
  for (const auto& s : fit) {
    auto h = find_builtin_hardware(s.device);
    EXPECT_NEAR(h->gpu.fp32_sustained, s.fraction, 0.01) << s.device;
  }
  auto t4 = std::find_if(fit.begin(), fit.end(), [](const auto& s) { return s.device == "t4"; });
  ASSERT_NE(t4, fit.end());
  EXPECT_NEAR(t4->fraction, 0.61, 0.01);  // the 70 W card sustains well below its boost-clock peak
  EXPECT_EQ(dt.skipped_devices.size(), 3u);  // the three AMD GPUs, not in the catalog
}

// hardware --calibrate names what is wrong: a reference outside the catalog,
// a file with no timing of a catalog GPU (its path named).
TEST(GpuCatalog, CalibrateNamesAnUnknownReferenceAndAnEmptyFile) {
  auto dir = tptest::temp_dir("hw_calibrate");
  const std::string header =
      "model,hf_architecture,num_layers,hidden,heads,ffn_hidden,vocab,seq_len,device,mode,batch,torch_compile_fusion,"
      "precision,fw_ms,bw_ms,e2e_ms,device_fp32_gflops_cfg,device_mem_bw_GBps_cfg,device_mem_GB_cfg,source\n";
  const auto empty = tptest::write_file(dir / "empty.csv", header);
  auto r = tptest::run_cli("hardware --calibrate " + empty);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(empty), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no timing of a catalog GPU"), std::string::npos) << r.err;
  auto ref = tptest::run_cli("hardware --calibrate " + empty + " --reference nosuch");
  EXPECT_EQ(ref.exit_code, 2) << ref.err;
  EXPECT_TRUE(tptest::names_input_error(ref.err, "", 0, "--reference")) << ref.err;
}
