// Targets for the CSV readers: samples (io/sample_csv.h), scheduling
// workloads (io/workload_csv.h) and hardware files (io/hardware_file.h).
#include "../fuzz_target.h"
#include "io/hardware_file.h"
#include "io/sample_csv.h"
#include "io/workload_csv.h"

namespace trainplan::fuzz {
namespace {

// A sample set the reader accepted must survive its own writer: what
// format_samples_csv writes, parse_samples_csv reads back.
bool run_samples(std::string_view input, const std::string&) {
  const std::string name = "samples.csv";
  SampleSet set;
  const bool parsed = expect_value_or_input_error(name, [&] { set = io::parse_samples_csv(std::string(input), name); });
  if (!parsed) return false;
  const std::string written = io::format_samples_csv(set);
  try {
    SampleSet again = io::parse_samples_csv(written, "rewritten.csv");
    if (again.samples.size() != set.samples.size() || again.curve.size() != set.curve.size())
      throw ContractBreach("the rewritten samples have other row counts:\n" + written);
  } catch (const InputError& e) {
    throw ContractBreach(std::string("the writer's output is rejected by the reader: ") + e.what() + "\n" + written);
  }
  return true;
}

TargetRegistrar samples_reg({"sample_csv",
                             "io::parse_samples_csv on the text, then the writer's output read back",
                             {"fuzz/corpus/sample_csv", "examples/lenet-mnist-samples.csv", "examples/mlp-fashion-1worker.csv"},
                             {"batch", "workers", "epochs", "epoch_time_s", "metric", "nodes", "model", "hardware",
                              "grad_sqr", "grad_var", "time_spread", "source", "trial", "curve", "metric=max",
                              "metric=min", "dataset_size=", "# trainplan: metric=max dataset_size=50000\n"},
                             run_samples});

bool run_workload(std::string_view input, const std::string& scratch) {
  const std::string path = scratch + "/workload.csv";
  write_file(path, input);
  bool parsed = expect_value_or_input_error(path, [&] { io::read_workload_csv(path); });
  // With the applications known, as the simulator reads it.
  parsed &= expect_value_or_input_error(path, [&] { io::read_workload_csv(path, {"cifar10", "bert", "imagenet"}); });
  return parsed;
}

TargetRegistrar workload_reg({"workload_csv",
                              "io::read_workload_csv, with and without a set of known applications",
                              {"fuzz/corpus/workload_csv"},
                              {"name", "time", "application", "num_replicas", "batch_size", "deadline", "cifar10",
                               "bert", "imagenet"},
                              run_workload});

bool run_hardware(std::string_view input, const std::string& scratch) {
  const std::string path = scratch + "/gpu.csv";
  write_file(path, input);
  bool parsed = expect_value_or_input_error(path, [&] { io::read_hardware_file(path); });
  parsed &= expect_value_or_input_error(path, [&] { io::resolve_hardware(path, "--gpu"); });
  return parsed;
}

TargetRegistrar hardware_reg({"hardware_file",
                              "io::read_hardware_file and io::resolve_hardware on a file",
                              {"fuzz/corpus/hardware_file"},
                              {"name", "base", "fp16_tensor_dense_tflops", "bf16_tensor_dense_tflops",
                               "tf32_tensor_tflops", "fp32_tflops", "mem_GB", "mem_bw_GBps", "fp32_sustained",
                               "tensor_sustained", "gpus_per_node", "intra_node_bw_GBps", "inter_node_bw_GBps",
                               "intra_link", "inter_link", "full_name", "source", "notes", "t4", "a100-40gb", "h100"},
                              run_hardware});

}  // namespace
}  // namespace trainplan::fuzz
