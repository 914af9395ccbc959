#include "plan/launch_spec.h"

#include <fmt/format.h>

#include <cctype>
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
        per_rank(tmpl.uses("rank") || tmpl.uses("master_addr") || tmpl.uses("master_port")) {
    // The transformer grid's placeholders have no value in a data-parallel plan.
    for (const auto& name : profile::CommandTemplate::placeholder_names())
      if (tmpl.uses(name) && !values.count(name) && name != "rank" && name != "master_addr" && name != "master_port")
        throw InputError("", 0, "--train-cmd",
                         fmt::format("{{{}}} has no value in a data-parallel plan, which fills {{batch}}, {{workers}}, "
                                     "{{epochs}}, {{nodes}}, {{rank}}, {{master_addr}} and {{master_port}} (for a "
                                     "transformer's layout: trainplan llm plan --emit)",
                                     name));
  }

  // The command with each rank's values read from the environment at run time.
  std::string for_rank(const std::string& rank, const std::string& addr, const std::string& port) const {
    auto v = values;
    v["rank"] = rank;
    v["master_addr"] = addr;
    v["master_port"] = port;
    return tmpl.expand(v);
  }
};

// What torchrun is given after its own options, word by word, for a
// command of plain words: a Python script and its arguments (`python3
// train.py ...`, `train.py ...`), or `--no-python PROGRAM ARGS`. Anything
// else goes to `--no-python bash -c 'CMD'`, as the profiler ran it: a
// per-rank command, an environment assignment, `&&`, a pipe, quotes, an
// interpreter option such as `-u`.
std::vector<std::string> torchrun_program(const TrainCommand& t) {
  // torchrun's agent holds its own store at MASTER_ADDR:MASTER_PORT; a
  // program that hosts its rendezvous there (as trainplan-train's rank 0
  // does) could not bind it, so the ranks meet on the next port.
  if (t.per_rank) return {"--no-python", "bash", "-c", t.for_rank("$RANK", "$MASTER_ADDR", "$((MASTER_PORT + 1))")};
  const std::string cmd = t.tmpl.expand(t.values);
  std::vector<std::string> words;
  std::istringstream in(cmd);
  for (std::string w; in >> w;) words.push_back(w);
  const bool plain = !words.empty() && cmd.find_first_of("=&|;<>$`'\"\\(){}*?~#!") == std::string::npos;
  if (plain && (words[0] == "python3" || words[0] == "python") && words.size() > 1 && words[1][0] != '-')
    words.erase(words.begin());
  if (!plain || words[0] == "python3" || words[0] == "python") return {"--no-python", "bash", "-c", cmd};
  const bool script = words[0].size() > 3 && words[0].compare(words[0].size() - 3, 3, ".py") == 0;
  if (!script) words.insert(words.begin(), "--no-python");  // a program of its own, run as it is
  return words;
}

// The same as one shell word list.
std::string torchrun_program_text(const TrainCommand& t) {
  std::string out;
  for (const auto& w : torchrun_program(t)) out += (out.empty() ? "" : " ") + profile::shell_word(w);
  return out;
}

std::string plural(int n, const char* one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); }

}  // namespace

static std::string layout_note(const Config& c, const LaunchOptions& o, const Layout& l, const char* comment) {
  if (!l.regrouped) return "";
  // The plan priced the workers packed (ceil(workers / gpus_per_node) nodes,
  // the last one part full); a launcher starts as many ranks on every node,
  // so the run spans more nodes than were priced.
  return fmt::format(
      "{0} note: {1} workers do not fill {2}-GPU nodes evenly; laid out as {3} nodes x {4}, where the plan priced "
      "them on {5} nodes: check the time with `trainplan predict ... --workers {1} --nodes {3}`, or plan with "
      "--batches and a worker count that fills the nodes\n",
      comment, c.workers, o.gpus_per_node, l.nodes, l.per_node, trainplan::nodes_for(c.workers, o.gpus_per_node));
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
  out += " " + torchrun_program_text(t) + "\n";
  return out;
}

std::string slurm_time(double seconds) {
  long t = static_cast<long>(std::ceil(seconds));
  return fmt::format("{:02d}:{:02d}:{:02d}", t / 3600, (t / 60) % 60, t % 60);
}

void check_job_name(const std::string& kind, const std::string& name, int nodes) {
  if (name.empty()) throw InputError("", 0, "--job-name", "must not be empty");
  for (unsigned char ch : name)
    if (ch < 0x20 || ch == 0x7f)
      throw InputError("", 0, "--job-name", "must not hold control characters (a newline would start a line of its own)");
  if (kind != "k8s") return;
  auto lower_alnum = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); };
  const std::string longest_pod = nodes > 1 ? fmt::format("-worker-{}", nodes - 2) : "-master-0";
  const size_t most = 63 - longest_pod.size();
  bool ok = name.size() <= most && name.front() >= 'a' && name.front() <= 'z' && lower_alnum(name.back());
  for (char ch : name) ok = ok && (lower_alnum(ch) || ch == '-');
  if (!ok)
    throw InputError("", 0, "--job-name",
                     fmt::format("'{}' is not a Kubernetes job name: use a-z, 0-9 and '-', start with a letter, "
                                 "end with a letter or digit, at most {} characters (its pods are named "
                                 "NAME{}, within 63)",
                                 name, most, longest_pod));
}

// A container image reference ([registry[:port]/]name[:tag][@digest]) goes
// into the manifest's YAML unquoted: only the characters such a reference
// has, so that none of YAML's own (': ', '#', quotes, a newline) gets in.
void check_image(const std::string& image) {
  bool ok = !image.empty() && image.front() != '-' && image.front() != '.' && image.front() != ':';
  for (unsigned char ch : image) ok = ok && (std::isalnum(ch) || ch == '.' || ch == '_' || ch == '-' || ch == '/' ||
                                             ch == ':' || ch == '@');
  if (!ok)
    throw InputError("", 0, "--image",
                     "'" + image + "' is not a container image reference ([registry[:port]/]name[:tag][@digest]: "
                     "letters, digits and . _ - / : @)");
}

std::string slurm_script(const Config& c, const LaunchOptions& o) {
  Layout l = layout_for(c.workers, o.gpus_per_node);
  const TrainCommand t(c, o, l);
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << fmt::format("#SBATCH --job-name={}\n", profile::shell_word(o.job_name));
  s << fmt::format("#SBATCH --nodes={}\n", l.nodes);
  // A per-rank command is one Slurm task per rank; otherwise one torchrun per node.
  s << fmt::format("#SBATCH --ntasks-per-node={}\n", t.per_rank ? l.per_node : 1);
  if (o.gpus) s << fmt::format("#SBATCH --gpus-per-node={}\n", l.per_node);
  // Whole nodes are taken whole, with every core; a task is otherwise given one CPU.
  const bool whole = o.gpus_per_node > 0 && l.per_node >= o.gpus_per_node;
  if (whole) s << "#SBATCH --exclusive\n";
  if (o.time_limit_s > 0) s << fmt::format("#SBATCH --time={}\n", slurm_time(o.time_limit_s));
  s << layout_note(c, o, l, "#");
  s << fmt::format("# trainplan: batch {} per worker, {}, {}\n", c.batch, plural(c.workers, "worker"),
                   plural(c.epochs, "epoch"));
  if (!whole)
    s << "# Part of a node (or nodes of unknown size): Slurm gives each task one CPU unless your site sets\n"
         "# DefCpuPerGPU; add #SBATCH --cpus-per-task=N for the ranks and their data loaders.\n";
  s << fmt::format("export TRAINPLAN_BATCH={}\nexport TRAINPLAN_EPOCHS={}\n", c.batch, c.epochs);
  if (o.stop_at_target)
    s << fmt::format("# the epochs are a budget: stop when the validation metric reaches the target\n"
                     "export TRAINPLAN_TARGET={:g}\nexport TRAINPLAN_TARGET_DIRECTION={}\n",
                     *o.stop_at_target, o.target_direction);
  s << "head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  s << kMasterPortOfTheJob << "\n";
  if (t.per_rank) {
    s << "export TRAINPLAN_MASTER_ADDR=$head_node\n";
    s << fmt::format("srun --ntasks={} --ntasks-per-node={} --cpus-per-task $((SLURM_CPUS_ON_NODE / {})) bash -c {}\n",
                     c.workers, l.per_node, l.per_node,
                     profile::shell_quote(t.for_rank("$SLURM_PROCID", "$TRAINPLAN_MASTER_ADDR", "$MASTER_PORT")));
  } else {
    s << fmt::format(
        "{} torchrun --nnodes={} --nproc_per_node={} --rdzv_id=$SLURM_JOB_ID --rdzv_backend=c10d "
        "--rdzv_endpoint=$head_node:$MASTER_PORT {}\n",
        kSrunWithNodeCpus, l.nodes, l.per_node, torchrun_program_text(t));
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
  for (auto& w : torchrun_program(t)) args.push_back(std::move(w));
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
  if (kind == "slurm" || kind == "k8s") check_job_name(kind, o.job_name, layout_for(c.workers, o.gpus_per_node).nodes);
  if (kind == "k8s") check_image(o.image);
  if (kind == "torchrun") return torchrun_command(c, o);
  if (kind == "slurm") return slurm_script(c, o);
  if (kind == "k8s") return k8s_pytorchjob(c, o);
  throw InputError("unknown --emit '" + kind + "' (known: torchrun, slurm, k8s)");
}

}  // namespace trainplan::plan
