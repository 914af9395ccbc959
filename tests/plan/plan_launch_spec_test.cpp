// Launch specs run what was profiled: the training command is a template in
// profile --cmd's syntax, filled with the plan's values and never appended to;
// a per-rank command gets each rank's values from its environment. The
// torchrun line is parsed, the PyTorchJob manifest is parsed as YAML, and the
// sbatch script is submitted to the test suite's Slurm and run to the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "core/error.h"
#include "plan/launch_spec.h"
#include "test_util.h"

#ifdef TRAINPLAN_HAVE_YAML_CPP
#include <yaml-cpp/yaml.h>
#endif

using namespace trainplan;
using namespace trainplan::plan;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
LaunchOptions opts(int gpn) {
  LaunchOptions o;
  o.gpus_per_node = gpn;
  o.train_cmd = "python train.py --batch-size {batch} --epochs {epochs}";
  o.job_name = "cifar";
  o.time_limit_s = 3661;
  return o;
}

Config plan_choice(int batch, int workers, int epochs) {
  Config c;
  c.batch = batch;
  c.workers = workers;
  c.epochs = epochs;
  return c;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// The arguments after the script in a torchrun line, the script first.
std::vector<std::string> after(const std::vector<std::string>& w, const std::string& first) {
  auto it = std::find(w.begin(), w.end(), first);
  return it == w.end() ? std::vector<std::string>{} : std::vector<std::string>(it, w.end());
}

const char* kExample = "python3 examples/train_example.py --batch {batch} --epochs {epochs}";

}  // namespace

TEST(PlanLaunchSpec, TorchrunFillsTheTemplateAndAppendsNothing) {
  LaunchOptions o;
  o.train_cmd = kExample;
  o.gpus_per_node = 4;
  const std::string line = torchrun_command(plan_choice(64, 8, 5), o);
  auto w = words(line);
  EXPECT_EQ(w[0], "TRAINPLAN_BATCH=64");
  EXPECT_EQ(w[1], "TRAINPLAN_EPOCHS=5");
  EXPECT_EQ(w[2], "torchrun");
  EXPECT_NE(std::find(w.begin(), w.end(), "--nnodes=2"), w.end()) << line;
  EXPECT_NE(std::find(w.begin(), w.end(), "--nproc_per_node=4"), w.end()) << line;
  EXPECT_EQ(after(w, "examples/train_example.py"),
            (std::vector<std::string>{"examples/train_example.py", "--batch", "64", "--epochs", "5"}))
      << line;
  EXPECT_EQ(line.find('{'), std::string::npos) << line;
}

TEST(PlanLaunchSpec, PerRankCommandsReadTheirRankFromTheEnvironment) {
  LaunchOptions o;
  o.train_cmd = "./train --rank {rank} --world {workers} --addr {master_addr}:{master_port} --b {batch}";
  const std::string line = torchrun_command(plan_choice(32, 2, 3), o);
  // torchrun's agent holds MASTER_PORT for its own store: the ranks meet on the next port.
  EXPECT_NE(line.find("--no-python bash -c './train --rank $RANK --world 2 --addr $MASTER_ADDR:$((MASTER_PORT + 1)) "
                      "--b 32'"),
            std::string::npos)
      << line;
  const std::string slurm = slurm_script(plan_choice(32, 2, 3), o);
  EXPECT_NE(slurm.find("#SBATCH --ntasks-per-node=2"), std::string::npos) << slurm;
  // The node's CPUs shared among its tasks (Slurm would give each one).
  EXPECT_NE(slurm.find("srun --ntasks=2 --ntasks-per-node=2 --cpus-per-task $((SLURM_CPUS_ON_NODE / 2)) bash -c "
                       "'./train --rank $SLURM_PROCID"),
            std::string::npos)
      << slurm;
  EXPECT_NE(slurm.find("one CPU unless your site"), std::string::npos) << slurm;  // nodes of unknown size
  // The rendezvous port is the job's own: jobs on parts of one node do not collide.
  EXPECT_NE(slurm.find("export MASTER_PORT=$((10000 + SLURM_JOB_ID % 20000))\n"), std::string::npos) << slurm;
  EXPECT_NE(slurm.find("--addr $TRAINPLAN_MASTER_ADDR:$MASTER_PORT "), std::string::npos) << slurm;
  EXPECT_EQ(slurm.find("--exclusive"), std::string::npos) << slurm;
  o.gpus_per_node = 2;  // two workers fill the node: taken whole
  const std::string whole = slurm_script(plan_choice(32, 2, 3), o);
  EXPECT_NE(whole.find("#SBATCH --exclusive\n"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("one CPU unless your site"), std::string::npos) << whole;
  o.gpus_per_node = 0;
  // A program that is not Python runs under torchrun --no-python.
  o.train_cmd = "./train --b {batch}";
  EXPECT_NE(torchrun_command(plan_choice(32, 2, 3), o).find("--no-python ./train --b 32"), std::string::npos);
  // Shell syntax runs as the profiler ran it, under bash -c, not split into words.
  for (const char* cmd : {"OMP_NUM_THREADS=1 python3 train.py --b {batch}", "cd /x && python3 train.py --b {batch}",
                          "python3 -u train.py --b {batch}", "python3 train.py --b {batch} | tee log"}) {
    o.train_cmd = cmd;
    const std::string line = torchrun_command(plan_choice(32, 2, 3), o);
    EXPECT_NE(line.find("--no-python bash -c '"), std::string::npos) << line;
    const std::string k8s = k8s_pytorchjob(plan_choice(32, 2, 3), o);
    EXPECT_NE(k8s.find("\"--no-python\", \"bash\", \"-c\""), std::string::npos) << k8s;
  }
  // A transformer's placeholder has no value here: named, not a crash.
  o.train_cmd = "python3 train.py --tp {tp}";
  auto e = tptest::input_error_of([&] { torchrun_command(plan_choice(32, 2, 3), o); });
  EXPECT_EQ(e.field(), "--train-cmd");
}

TEST(PlanLaunchSpec, SlurmScriptCountsWorkersAndEpochsInWords) {
  LaunchOptions o;
  o.train_cmd = kExample;
  EXPECT_NE(slurm_script(plan_choice(16, 1, 1), o).find("batch 16 per worker, 1 worker, 1 epoch\n"), std::string::npos);
  EXPECT_NE(slurm_script(plan_choice(16, 2, 3), o).find("2 workers, 3 epochs"), std::string::npos);
  o.gpus = false;
  EXPECT_EQ(slurm_script(plan_choice(16, 2, 3), o).find("gpus"), std::string::npos);
}

TEST(PlanLaunchSpec, AnUnknownPlaceholderNamesTheOption) {
  LaunchOptions o;
  o.train_cmd = "python train.py --bs {batch_size}";
  try {
    torchrun_command(plan_choice(16, 1, 1), o);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(tptest::names_input_error(std::string("error: ") + e.what(), "", 0, "--train-cmd", {"{batch_size}"}));
  }
}

TEST(PlanLaunchSpec, PyTorchJobParsesAndCarriesThePlan) {
#ifndef TRAINPLAN_HAVE_YAML_CPP
  GTEST_SKIP() << "libyaml-cpp-dev not found at configure time (scripts/install-deps.sh installs it)";
#else
  LaunchOptions o;
  o.train_cmd = kExample;
  o.gpus_per_node = 4;
  o.job_name = "lenet-run";
  o.image = "registry.example/train:1";
  const YAML::Node doc = YAML::Load(k8s_pytorchjob(plan_choice(64, 8, 5), o));
  EXPECT_EQ(doc["apiVersion"].as<std::string>(), "kubeflow.org/v1");
  EXPECT_EQ(doc["kind"].as<std::string>(), "PyTorchJob");
  EXPECT_EQ(doc["metadata"]["name"].as<std::string>(), "lenet-run");
  EXPECT_EQ(doc["spec"]["nprocPerNode"].as<std::string>(), "4");
  const YAML::Node specs = doc["spec"]["pytorchReplicaSpecs"];
  EXPECT_EQ(specs["Master"]["replicas"].as<int>(), 1);
  EXPECT_EQ(specs["Worker"]["replicas"].as<int>(), 1);  // 8 workers = 2 nodes of 4
  for (const char* role : {"Master", "Worker"}) {
    const YAML::Node c = specs[role]["template"]["spec"]["containers"][0];
    EXPECT_EQ(c["image"].as<std::string>(), "registry.example/train:1");
    EXPECT_EQ(c["command"][0].as<std::string>(), "torchrun");
    std::vector<std::string> args;
    for (const auto& a : c["args"]) args.push_back(a.as<std::string>());
    EXPECT_EQ(args, (std::vector<std::string>{"--nproc_per_node=4", "examples/train_example.py", "--batch", "64",
                                              "--epochs", "5"}));
    std::map<std::string, std::string> env;
    for (const auto& e : c["env"]) env[e["name"].as<std::string>()] = e["value"].as<std::string>();
    EXPECT_EQ(env["TRAINPLAN_BATCH"], "64");
    EXPECT_EQ(env["TRAINPLAN_EPOCHS"], "5");
    EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 4);
  }
  // A per-rank command survives YAML quoting intact.
  o.train_cmd = "python3 t.py --rank {rank} --note 'a: b, \"c\"'";
  const YAML::Node per = YAML::Load(k8s_pytorchjob(plan_choice(64, 2, 5), o));
  const YAML::Node args = per["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["args"];
  EXPECT_EQ(args[args.size() - 1].as<std::string>(), "python3 t.py --rank $RANK --note 'a: b, \"c\"'");
#endif
}

TEST(PlanLaunchSpec, SbatchScriptRunsTheExampleToTheEnd) {
  const char* v = std::getenv("TRAINPLAN_SLURM_TEST");
  if (!v || std::string(v) != "1")
    GTEST_SKIP() << "set TRAINPLAN_SLURM_TEST=1 after scripts/slurm-up.sh to submit the script to a real Slurm";
  auto dir = tptest::temp_dir("sbatch");
  LaunchOptions o;
  o.gpus = false;
  o.job_name = "trainplan-test";
  o.train_cmd = std::string("python3 ") + tptest::source_dir() +
                "/examples/train_example.py --batch {batch} --workers {workers} --rank {rank} --epochs {epochs} "
                "--master-addr {master_addr} --master-port {master_port}";
  const std::string script = tptest::write_file(dir / "job.sh", slurm_script(plan_choice(48, 2, 3), o));
  const std::string out = (dir / "job.out").string();
  const int rc = std::system(("cd " + dir.string() + " && sbatch --wait --quiet --output=" + out + " " + script +
                              " > " + (dir / "sbatch.log").string() + " 2>&1")
                                 .c_str());
  ASSERT_EQ(rc, 0) << tptest::read_file(dir / "sbatch.log") << tptest::read_file(out);
  const std::string log = tptest::read_file(out);
  // Both ranks started with the planned batch and epochs, and rank 0 reported every epoch.
  EXPECT_NE(log.find("rank 0/2: batch 48, 3 epochs"), std::string::npos) << log;
  EXPECT_NE(log.find("rank 1/2: batch 48, 3 epochs"), std::string::npos) << log;
  EXPECT_NE(log.find("\"epoch\": 3"), std::string::npos) << log;
  EXPECT_NE(log.find("\"event\": \"done\""), std::string::npos) << log;
}


TEST(PlanLaunchSpec, LayoutKeepsTheSameCountOnEveryNode) {
  EXPECT_EQ(layout_for(8, 4).nodes, 2);
  EXPECT_EQ(layout_for(8, 4).per_node, 4);
  EXPECT_EQ(layout_for(6, 4).per_node, 3);
  EXPECT_FALSE(layout_for(6, 4).regrouped);
  EXPECT_EQ(layout_for(5, 4).nodes, 5);  // 5 is prime: one per node
  EXPECT_TRUE(layout_for(5, 4).regrouped);
  EXPECT_EQ(layout_for(3, 0).nodes, 1);
  EXPECT_EQ(layout_for(3, 0).per_node, 3);
  // The launch line says that the plan priced a packed layout, and how to price this one.
  auto s = torchrun_command(Config{64, 5, 12}, opts(4));
  EXPECT_TRUE(has(s, "laid out as 5 nodes x 1, where the plan priced them on 2 nodes")) << s;
  EXPECT_TRUE(has(s, "--workers 5 --nodes 5")) << s;
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
  EXPECT_TRUE(has(s, "srun --cpus-per-task \"$SLURM_CPUS_ON_NODE\" torchrun --nnodes=2 --nproc_per_node=4")) << s;
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

TEST(PlanLaunchSpec, JobNamesAreCheckedForTheSchedulerThatCarriesThem) {
  LaunchOptions o = opts(4);
  const Config c{64, 4, 2};
  // A newline would have started an #SBATCH directive of its own.
  o.job_name = "run\n#SBATCH --partition=big";
  EXPECT_THROW(launch_spec("slurm", c, o), InputError);
  EXPECT_THROW(launch_spec("k8s", c, o), InputError);
  o.job_name = "";
  EXPECT_THROW(launch_spec("slurm", c, o), InputError);
  // Slurm takes spaces, quoted as a shell word; Kubernetes takes a DNS-1035 label only.
  o.job_name = "my run";
  EXPECT_TRUE(has(launch_spec("slurm", c, o), "#SBATCH --job-name='my run'\n"));
  // One node (c: 4 workers on nodes of 4): pods NAME-master-0, so 54 characters at most.
  for (std::string bad : std::vector<std::string>{"my run", "Cifar", "1cifar", "cifar-", "cifar_10", std::string(55, 'a')}) {
    o.job_name = bad;
    try {
      launch_spec("k8s", c, o);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_TRUE(has(e.what(), "--job-name")) << e.what();
    }
  }
  for (std::string good : std::vector<std::string>{"cifar-10", "a", std::string(54, 'a')}) {
    o.job_name = good;
    EXPECT_NO_THROW(launch_spec("k8s", c, o)) << good;
  }
  // 48 workers on nodes of 4: the last worker pod is NAME-worker-10.
  o.job_name = std::string(54, 'a');
  EXPECT_THROW(launch_spec("k8s", Config{64, 48, 2}, o), InputError);
  o.job_name = std::string(53, 'a');
  EXPECT_NO_THROW(launch_spec("k8s", Config{64, 48, 2}, o));
  // The torchrun line carries no name.
  o.job_name = "";
  EXPECT_NO_THROW(launch_spec("torchrun", c, o));
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
