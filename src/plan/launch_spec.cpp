#include "plan/launch_spec.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace trainplan::plan {

Layout layout_for(int workers, int gpus_per_node) {
  Layout l;
  if (gpus_per_node <= 0 || workers <= gpus_per_node) {
    l.nodes = 1;
    l.per_node = workers;
    return l;
  }
  int want = (workers + gpus_per_node - 1) / gpus_per_node;
  int n = want;
  while (workers % n != 0) ++n;
  l.nodes = n;
  l.per_node = workers / n;
  l.regrouped = n != want;
  return l;
}

std::string script_of(const std::string& train_cmd) {
  for (const char* p : {"python3 ", "python "})
    if (train_cmd.rfind(p, 0) == 0) return train_cmd.substr(std::string(p).size());
  return train_cmd;
}

static std::string script_args(const Config& c, const LaunchOptions& o) {
  return fmt::format("{} --batch-size {} --epochs {}", script_of(o.train_cmd), c.batch, c.epochs);
}

static std::string layout_note(const Config& c, const LaunchOptions& o, const Layout& l, const char* comment) {
  if (!l.regrouped) return "";
  return fmt::format("{} note: {} workers do not fill {}-GPU nodes evenly; laid out as {} nodes x {}\n", comment,
                     c.workers, o.gpus_per_node, l.nodes, l.per_node);
}

std::string torchrun_command(const Config& c, const LaunchOptions& o) {
  Layout l = layout_for(c.workers, o.gpus_per_node);
  std::string out = layout_note(c, o, l, "#");
  out += fmt::format("TRAINPLAN_BATCH={} TRAINPLAN_EPOCHS={} ", c.batch, c.epochs);
  if (o.stop_at_target)
    out += fmt::format("TRAINPLAN_TARGET={:g} TRAINPLAN_TARGET_DIRECTION={} ", *o.stop_at_target, o.target_direction);
  out += fmt::format("torchrun --nnodes={} --nproc_per_node={}", l.nodes, l.per_node);
  if (l.nodes > 1) out += " --node_rank=$NODE_RANK --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500";
  out += " " + script_args(c, o) + "\n";
  return out;
}

static std::string hms(double s) {
  long t = static_cast<long>(std::ceil(s));
  return fmt::format("{:02d}:{:02d}:{:02d}", t / 3600, (t / 60) % 60, t % 60);
}

std::string slurm_script(const Config& c, const LaunchOptions& o) {
  Layout l = layout_for(c.workers, o.gpus_per_node);
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << fmt::format("#SBATCH --job-name={}\n", o.job_name);
  s << fmt::format("#SBATCH --nodes={}\n", l.nodes);
  s << "#SBATCH --ntasks-per-node=1\n";
  s << fmt::format("#SBATCH --gpus-per-node={}\n", l.per_node);
  if (o.time_limit_s > 0) s << fmt::format("#SBATCH --time={}\n", hms(o.time_limit_s));
  s << layout_note(c, o, l, "#");
  s << fmt::format("# trainplan: batch {} per worker, {} workers, {} epochs\n", c.batch, c.workers, c.epochs);
  s << fmt::format("export TRAINPLAN_BATCH={}\nexport TRAINPLAN_EPOCHS={}\n", c.batch, c.epochs);
  if (o.stop_at_target)
    s << fmt::format("# the epochs are a budget: stop when the validation metric reaches the target\n"
                     "export TRAINPLAN_TARGET={:g}\nexport TRAINPLAN_TARGET_DIRECTION={}\n",
                     *o.stop_at_target, o.target_direction);
  s << "head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  s << fmt::format(
      "srun torchrun --nnodes={} --nproc_per_node={} --rdzv_id=$SLURM_JOB_ID --rdzv_backend=c10d "
      "--rdzv_endpoint=$head_node:29500 {}\n",
      l.nodes, l.per_node, script_args(c, o));
  return s.str();
}

static void replica(std::ostringstream& s, const char* role, int replicas, const Config& c, const LaunchOptions& o,
                    const Layout& l) {
  s << fmt::format("    {}:\n", role);
  s << fmt::format("      replicas: {}\n", replicas);
  s << "      restartPolicy: OnFailure\n";
  s << "      template:\n        spec:\n          containers:\n";
  s << "            - name: pytorch\n";
  s << fmt::format("              image: {}\n", o.image);
  s << "              env:\n";
  s << fmt::format("                - name: TRAINPLAN_BATCH\n                  value: \"{}\"\n", c.batch);
  s << fmt::format("                - name: TRAINPLAN_EPOCHS\n                  value: \"{}\"\n", c.epochs);
  if (o.stop_at_target)
    s << fmt::format("                - name: TRAINPLAN_TARGET\n                  value: \"{:g}\"\n"
                     "                - name: TRAINPLAN_TARGET_DIRECTION\n                  value: \"{}\"\n",
                     *o.stop_at_target, o.target_direction);
  s << fmt::format("              command: [\"torchrun\"]\n");
  s << "              args: [";
  std::istringstream words(script_args(c, o));
  std::string w;
  bool first = true;
  while (words >> w) {
    s << (first ? "" : ", ") << '"' << w << '"';
    first = false;
  }
  s << "]\n";
  s << fmt::format("              resources:\n                limits:\n                  nvidia.com/gpu: {}\n", l.per_node);
}

std::string k8s_pytorchjob(const Config& c, const LaunchOptions& o) {
  Layout l = layout_for(c.workers, o.gpus_per_node);
  std::ostringstream s;
  s << layout_note(c, o, l, "#");
  s << fmt::format("# trainplan: batch {} per worker, {} workers, {} epochs\n", c.batch, c.workers, c.epochs);
  s << "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n";
  s << fmt::format("  name: {}\n", o.job_name);
  s << "spec:\n";
  s << fmt::format("  nprocPerNode: \"{}\"\n", l.per_node);
  s << "  pytorchReplicaSpecs:\n";
  replica(s, "Master", 1, c, o, l);
  if (l.nodes > 1) replica(s, "Worker", l.nodes - 1, c, o, l);
  return s.str();
}

std::string launch_spec(const std::string& kind, const Config& c, const LaunchOptions& o) {
  if (kind == "torchrun") return torchrun_command(c, o);
  if (kind == "slurm") return slurm_script(c, o);
  if (kind == "k8s") return k8s_pytorchjob(c, o);
  throw InputError("unknown --emit '" + kind + "' (known: torchrun, slurm, k8s)");
}

}  // namespace trainplan::plan
