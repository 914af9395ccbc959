// A verb's output is never a file it reads: -o, --out and --jobs-csv naming
// an input, or a file already inside an input folder (a trace's
// placements.csv), are refused with exit 2 before any work, and the input is
// left as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_util.h"

namespace {

namespace fs = std::filesystem;

struct Case {
  std::string command;
  fs::path input;  // the file the command must leave as it was
};

void expect_refused(const Case& c) {
  const std::string before = tptest::read_file(c.input);
  const auto r = tptest::run_cli(c.command);
  EXPECT_EQ(r.exit_code, 2) << c.command << "\n" << r.err;
  EXPECT_NE(r.err.find("writing it would replace"), std::string::npos) << c.command << "\n" << r.err;
  EXPECT_EQ(tptest::read_file(c.input), before) << c.command;
}

TEST(OutputNeverAnInput, TraceFoldersWorkloadsAndTrialsAreNeverOverwritten) {
  const auto d = tptest::temp_dir("output_never_an_input");
  const fs::path trace = d / "traces" / "net" / "placements.csv";
  fs::create_directories(trace.parent_path());
  tptest::write_file(trace, "placement,local_bsz,step_time,sync_time\n1,32,0.04,0.0005\n2,32,0.05,0.002\n");
  const fs::path workload = d / "workload.csv";
  tptest::write_file(workload, "name,time,application,num_replicas,batch_size\njob-0,0,cifar10,1,128\n");
  const fs::path trials = d / "trials.csv";
  tptest::write_file(trials, tptest::synthetic_samples_csv());
  const fs::path samples = d / "samples.csv";
  tptest::write_file(samples, tptest::synthetic_samples_csv());
  const std::string traces = (d / "traces").string();
  const fs::path hw = d / "gpu.csv";
  tptest::write_file(hw, "name,base,fp32_tflops\nmygpu,a100-40gb,20\n");
  for (const Case& c : std::vector<Case>{
           {"comm-profile -d " + traces + " -o " + trace.string(), trace},
           {"simulate --workload " + workload.string() + " --data " + traces + " --jobs-csv " + workload.string(),
            workload},
           {"simulate --workload " + workload.string() + " --data " + traces + " --jobs-csv " + trace.string(), trace},
           {"transfer --samples " + samples.string() + " --from-gpu t4 --to-gpu h100 --trials " + trials.string() +
                " -o " + trials.string(),
            trials},
           {"transfer --from " + (d / "traces" / "net").string() + " --from-gpu t4 --to-gpu a100-40gb --batches 32 "
                "-o " + trace.string(),
            trace},
           // With --cluster, a group's step-time folder and a group's GPU given as a hardware file.
           {"simulate --workload " + workload.string() + " --data " + traces + " --cluster t4=1x4,a100-40gb=1x4 "
                "--step-times a100-40gb=" + traces + " --jobs-csv " + trace.string(),
            trace},
           {"simulate --workload " + workload.string() + " --data " + traces + " --cluster t4=1x4," + hw.string() +
                "=1x4 --jobs-csv " + hw.string(),
            hw},
       })
    expect_refused(c);
  // A new file beside the traces is no input: written.
  const auto fresh = tptest::run_cli("transfer --from " + (d / "traces" / "net").string() +
                                     " --from-gpu t4 --to-gpu a100-40gb --batches 32 --placements 1 -o " +
                                     (d / "traces" / "moved.csv").string());
  EXPECT_EQ(fresh.err.find("writing it would replace"), std::string::npos) << fresh.err;
}

}  // namespace
