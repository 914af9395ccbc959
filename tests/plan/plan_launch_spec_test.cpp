#include <gtest/gtest.h>

#include "core/error.h"
#include "plan/launch_spec.h"

using namespace trainplan;
using namespace trainplan::plan;

namespace {
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
LaunchOptions opts(int gpn) {
  LaunchOptions o;
  o.gpus_per_node = gpn;
  o.job_name = "cifar";
  o.time_limit_s = 3661;
  return o;
}
}  // namespace

TEST(PlanLaunchSpec, LayoutKeepsTheSameCountOnEveryNode) {
  EXPECT_EQ(layout_for(8, 4).nodes, 2);
  EXPECT_EQ(layout_for(8, 4).per_node, 4);
  EXPECT_EQ(layout_for(6, 4).per_node, 3);
  EXPECT_FALSE(layout_for(6, 4).regrouped);
  EXPECT_EQ(layout_for(5, 4).nodes, 5);  // 5 is prime: one per node
  EXPECT_TRUE(layout_for(5, 4).regrouped);
  EXPECT_EQ(layout_for(3, 0).nodes, 1);
  EXPECT_EQ(layout_for(3, 0).per_node, 3);
}

TEST(PlanLaunchSpec, TorchrunCarriesLayoutBatchAndEpochs) {
  auto s = torchrun_command(Config{64, 8, 12}, opts(4));
  EXPECT_TRUE(has(s, "torchrun --nnodes=2 --nproc_per_node=4")) << s;
  EXPECT_TRUE(has(s, "--rdzv_endpoint=$MASTER_ADDR:29500")) << s;
  EXPECT_TRUE(has(s, " train.py --batch-size 64 --epochs 12")) << s;
  EXPECT_FALSE(has(s, "python train.py")) << s;
  EXPECT_TRUE(has(s, "TRAINPLAN_BATCH=64 TRAINPLAN_EPOCHS=12")) << s;
  auto one = torchrun_command(Config{32, 2, 3}, opts(4));
  EXPECT_TRUE(has(one, "--nnodes=1 --nproc_per_node=2")) << one;
  EXPECT_FALSE(has(one, "rdzv")) << one;
}

TEST(PlanLaunchSpec, SlurmScriptHasSbatchHeaderAndSrun) {
  auto s = slurm_script(Config{64, 8, 12}, opts(4));
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_TRUE(has(s, "#SBATCH --job-name=cifar\n"));
  EXPECT_TRUE(has(s, "#SBATCH --nodes=2\n"));
  EXPECT_TRUE(has(s, "#SBATCH --ntasks-per-node=1\n"));
  EXPECT_TRUE(has(s, "#SBATCH --gpus-per-node=4\n"));
  EXPECT_TRUE(has(s, "#SBATCH --time=01:01:01\n")) << s;
  EXPECT_TRUE(has(s, "srun torchrun --nnodes=2 --nproc_per_node=4")) << s;
  EXPECT_TRUE(has(s, "train.py --batch-size 64 --epochs 12")) << s;
}

TEST(PlanLaunchSpec, PyTorchJobHasMasterAndWorkers) {
  auto s = k8s_pytorchjob(Config{64, 12, 5}, opts(4));
  EXPECT_TRUE(has(s, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n")) << s;
  EXPECT_TRUE(has(s, "  name: cifar\n")) << s;
  EXPECT_TRUE(has(s, "nprocPerNode: \"4\"")) << s;
  EXPECT_TRUE(has(s, "    Master:\n      replicas: 1\n")) << s;
  EXPECT_TRUE(has(s, "    Worker:\n      replicas: 2\n")) << s;
  EXPECT_TRUE(has(s, "nvidia.com/gpu: 4")) << s;
  EXPECT_TRUE(has(s, "\"--batch-size\", \"64\", \"--epochs\", \"5\"")) << s;
  auto single = k8s_pytorchjob(Config{64, 2, 5}, opts(4));
  EXPECT_FALSE(has(single, "Worker:")) << single;
}

TEST(PlanLaunchSpec, UnknownKindIsAnInputError) {
  EXPECT_THROW(launch_spec("docker", Config{1, 1, 1}, opts(4)), InputError);
  EXPECT_NO_THROW(launch_spec("k8s", Config{1, 1, 1}, opts(4)));
}

TEST(PlanLaunchSpec, StopAtTargetReachesTheScriptThroughTheEnvironmentOnly) {
  plan::LaunchOptions o;
  o.gpus_per_node = 4;
  Config c{64, 4, 12};
  for (std::string kind : {"torchrun", "slurm", "k8s"})
    EXPECT_EQ(plan::launch_spec(kind, c, o).find("TRAINPLAN_TARGET"), std::string::npos) << kind;
  o.stop_at_target = 0.93;
  o.target_direction = "max";
  for (std::string kind : {"torchrun", "slurm", "k8s"}) {
    std::string s = plan::launch_spec(kind, c, o);
    EXPECT_NE(s.find("TRAINPLAN_TARGET"), std::string::npos) << kind << ":\n" << s;
    EXPECT_NE(s.find("0.93"), std::string::npos) << kind;
    EXPECT_NE(s.find("TRAINPLAN_TARGET_DIRECTION"), std::string::npos) << kind;
    EXPECT_EQ(s.find("--target"), std::string::npos) << kind;  // no argument the script might reject
  }
}
