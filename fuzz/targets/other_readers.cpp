// Targets for the remaining readers of user files: the Philly trace
// (io/philly.h), DL2's speed table (io/dl2_speed.h), layer and device timings
// (io/layer_timing_csv.h, io/device_timing_csv.h) and the communication
// profile (structure/comm_profile.h, `--comm-profile FILE`).
#include "../fuzz_target.h"
#include "io/device_timing_csv.h"
#include "io/dl2_speed.h"
#include "io/layer_timing_csv.h"
#include "io/philly.h"
#include "structure/comm_profile.h"

namespace trainplan::fuzz {
namespace {

// A target that writes the input to scratch/`file` and runs `read` on its path.
template <class Read>
Target file_target(std::string name, std::string summary, std::string file, std::vector<std::string> dictionary,
                   Read read) {
  const std::string corpus = "fuzz/corpus/" + name;
  return {std::move(name), std::move(summary), {corpus}, std::move(dictionary),
          [file, read](std::string_view input, const std::string& scratch) {
            const std::string path = scratch + "/" + file;
            write_file(path, input);
            return expect_value_or_input_error(path, [&] { read(path); });
          }};
}

TargetRegistrar philly_reg(file_target("philly_csv", "io::read_philly_csv", "philly.csv",
                                       {"timestamp", "duration", "num_gpus", "gpu_time", "cluster", "2017-10-09 ",
                                        "23:59:60", "-", ":"},
                                       [](const std::string& p) { io::read_philly_csv(p); }));

TargetRegistrar dl2_reg(file_target("dl2_speed", "io::read_dl2_speed", "config_speed.txt",
                                    {"'dist_sync'", "'dist_async'", "'resnet-50'", "(", ")", "[", "]", ", "},
                                    [](const std::string& p) { io::read_dl2_speed(p); }));

TargetRegistrar layer_timing_reg(file_target("layer_timings", "io::read_layer_timings", "layers.csv",
                                             {"kind", "batch", "in_channels", "out_channels", "kernel", "stride",
                                              "padding", "height", "width", "in_features", "out_features", "time_s",
                                              "conv", "linear", "pool", "relu", "batchnorm"},
                                             [](const std::string& p) { io::read_layer_timings(p); }));

TargetRegistrar device_timing_reg(file_target("device_timings", "io::read_device_timings", "devices.csv",
                                              {"device", "e2e_ms", "model", "mode", "seq_len", "batch",
                                               "torch_compile_fusion", "A100-40GB", "T4", "H100", "train", "inf"},
                                              [](const std::string& p) { io::read_device_timings(p); }));

TargetRegistrar comm_profile_reg(file_target("comm_profile", "structure::CommProfile::load", "comm.json",
                                             {"\"rho\"", "\"nodes\"", "\"gpus_per_node\"", "\"source\"",
                                              "\"format\"", "\"trainplan-comm-profile-1\""},
                                             [](const std::string& p) { structure::CommProfile::load(p); }));

}  // namespace
}  // namespace trainplan::fuzz
