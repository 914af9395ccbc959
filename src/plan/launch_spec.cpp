#include "plan/launch_spec.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>
#include <sstream>

#include "core/nodes.h"
#include "core/error.h"
#include "profile/command_template.h"
#include "profile/launcher.h"

namespace trainplan::plan {

Layout layout_for(int workers, int gpus_per_node) {
  Layout l;
  if (gpus_per_node <= 0 || workers <= gpus_per_node) {
    l.nodes = 1;
    l.per_node = workers;
    return l;
  }
  int want = trainplan::nodes_for(workers, gpus_per_node);
  int n = want;
  while (workers % n != 0) ++n;
  l.nodes = n;
  l.per_node = workers / n;
  l.regrouped = n != want;
  return l;
}

namespace {

// The command template and the plan's values, and how the ranks get theirs.
struct TrainCommand {
  profile::CommandTemplate tmpl;
  std::map<std::string, std::string> values;  // batch, workers, epochs, nodes
  bool per_rank = false;  // uses {rank}, {master_addr} or {master_port}

  TrainCommand(const Config& c, const LaunchOptions& o, const Layout& l)
      : tmpl(o.train_cmd, "--train-cmd"),
        values{{"batch", std::to_string(c.batch)},
               {"workers", std::to_string(c.workers)},
               {"epochs", std::to_string(c.epochs)},
               {"nodes", std::to_string(l.nodes)}},
        per_rank(tmpl.uses("rank") || tmpl.uses("master_addr") || tmpl.uses("master_port")) {}

  // The command with each rank's values read from the environment at run time.
  std::string for_rank(const std::string& rank, const std::string& addr, const std::string& port) const {
    auto v = values;
    v["rank"] = rank;
    v["master_addr"] = addr;
    v["master_port"] = port;
    return tmpl.expand(v);
  }
};

// What torchrun is given after its own options: the script and its
// arguments, or `--no-python bash -c '...'` for a per-rank command.
std::string torchrun_program(const TrainCommand& t) {
  if (t.per_rank) return "--no-python bash -c " + profile::shell_quote(t.for_rank("$RANK", "$MASTER_ADDR", "$MASTER_PORT"));
  std::string cmd = t.tmpl.expand(t.values);
  for (const char* p : {"python3 ", "python "})
    if (cmd.rfind(p, 0) == 0) return cmd.substr(std::string(p).size());
  const std::string first = cmd.substr(0, cmd.find(' '));
  const bool python_script = first.size() > 3 && first.compare(first.size() - 3, 3, ".py") == 0;
  return python_script ? cmd : "--no-python " + cmd;
}

std::string plural(int n, const char* one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); }

}  // namespace

static std::string layout_note(const Config& c, const LaunchOptions& o, const Layout& l, const char* comment) {
  if (!l.regrouped) return "";
  return fmt::format("{} note: {} workers do not fill {}-GPU nodes evenly; laid out as {} nodes x {}\n", comment,
                     c.workers, o.gpus_per_node, l.nodes, l.per_node);
}

std::string torchrun_command(const Config& c, const LaunchOptions& o) {
  Layout l = layout_for(c.workers, o.gpus_per_node);
  const TrainCommand t(c, o, l);  // a bad template fails before anything is printed
  std::string out = layout_note(c, o, l, "#");
  out += fmt::format("TRAINPLAN_BATCH={} TRAINPLAN_EPOCHS={} ", c.batch, c.epochs);
  if (o.stop_at_target)
    out += fmt::format("TRAINPLAN_TARGET={:g} TRAINPLAN_TARGET_DIRECTION={} ", *o.stop_at_target, o.target_direction);
  out += fmt::format("torchrun --nnodes={} --nproc_per_node={}", l.nodes, l.per_node);
  if (l.nodes > 1) out += " --node_rank=$NODE_RANK --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500";
  out += " " + torchrun_program(t) + "\n";
  return out;
}

static std::string hms(double s) {
  long t = static_cast<long>(std::ceil(s));
  return fmt::format("{:02d}:{:02d}:{:02d}", t / 3600, (t / 60) % 60, t % 60);
}

std::string slurm_script(const Config& c, const LaunchOptions& o) {
  Layout l = layout_for(c.workers, o.gpus_per_node);
  const TrainCommand t(c, o, l);
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << fmt::format("#SBATCH --job-name={}\n", o.job_name);
  s << fmt::format("#SBATCH --nodes={}\n", l.nodes);
  // A per-rank command is one Slurm task per rank; otherwise one torchrun per node.
  s << fmt::format("#SBATCH --ntasks-per-node={}\n", t.per_rank ? l.per_node : 1);
  if (o.gpus) s << fmt::format("#SBATCH --gpus-per-node={}\n", l.per_node);
  if (o.time_limit_s > 0) s << fmt::format("#SBATCH --time={}\n", hms(o.time_limit_s));
  s << layout_note(c, o, l, "#");
  s << fmt::format("# trainplan: batch {} per worker, {}, {}\n", c.batch, plural(c.workers, "worker"),
                   plural(c.epochs, "epoch"));
  s << fmt::format("export TRAINPLAN_BATCH={}\nexport TRAINPLAN_EPOCHS={}\n", c.batch, c.epochs);
  if (o.stop_at_target)
    s << fmt::format("# the epochs are a budget: stop when the validation metric reaches the target\n"
                     "export TRAINPLAN_TARGET={:g}\nexport TRAINPLAN_TARGET_DIRECTION={}\n",
                     *o.stop_at_target, o.target_direction);
  s << "head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  if (t.per_rank) {
    s << "export TRAINPLAN_MASTER_ADDR=$head_node\n";
    s << fmt::format("srun --ntasks={} --ntasks-per-node={} bash -c {}\n", c.workers, l.per_node,
                     profile::shell_quote(t.for_rank("$SLURM_PROCID", "$TRAINPLAN_MASTER_ADDR", "29500")));
  } else {
    s << fmt::format(
        "srun torchrun --nnodes={} --nproc_per_node={} --rdzv_id=$SLURM_JOB_ID --rdzv_backend=c10d "
        "--rdzv_endpoint=$head_node:29500 {}\n",
        l.nodes, l.per_node, torchrun_program(t));
  }
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
  // Flow-style YAML with JSON strings: valid YAML, and any character quoted.
  const TrainCommand t(c, o, l);
  std::vector<std::string> args = {fmt::format("--nproc_per_node={}", l.per_node)};
  if (t.per_rank) {
    args.insert(args.end(), {"--no-python", "bash", "-c", t.for_rank("$RANK", "$MASTER_ADDR", "$MASTER_PORT")});
  } else {
    std::istringstream words(torchrun_program(t));
    for (std::string w; words >> w;) args.push_back(w);
  }
  s << "              args: [";
  for (size_t i = 0; i < args.size(); ++i) s << (i ? ", " : "") << nlohmann::json(args[i]).dump();
  s << "]\n";
  if (o.gpus)
    s << fmt::format("              resources:\n                limits:\n                  nvidia.com/gpu: {}\n", l.per_node);
}

std::string k8s_pytorchjob(const Config& c, const LaunchOptions& o) {
  Layout l = layout_for(c.workers, o.gpus_per_node);
  std::ostringstream s;
  s << layout_note(c, o, l, "#");
  s << fmt::format("# trainplan: batch {} per worker, {}, {}\n", c.batch, plural(c.workers, "worker"),
                   plural(c.epochs, "epoch"));
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
