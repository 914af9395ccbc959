#include "train/options.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace trainplan::train {

namespace {

std::vector<std::string> split_dirs(const std::string& list) {
  std::vector<std::string> dirs;
  std::string::size_type start = 0;
  while (start <= list.size()) {
    auto end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) dirs.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return dirs;
}

// CLI11 reads an empty value ("--seed ''" or "--seed=") as the option's
// default, so a launcher whose variable came out empty would train on a value
// nobody chose. No option of trainplan-train takes an empty value; returns the
// first option given one, or "".
std::string option_with_empty_value(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0 && arg.size() > 2 && arg.find('=') == arg.size() - 1) return arg.substr(0, arg.size() - 1);
    if (arg.empty()) return i > 1 && argv[i - 1][0] == '-' ? std::string(argv[i - 1]) : "argument " + std::to_string(i);
  }
  return "";
}

}  // namespace

std::string user_data_dir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/trainplan/datasets";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/share/trainplan/datasets";
  return "";
}

std::vector<std::string> data_search_path(const std::string& flag_value) {
  if (!flag_value.empty()) return split_dirs(flag_value);
  if (const char* env = std::getenv("TRAINPLAN_DATA_DIR"); env && *env) return split_dirs(env);
  std::vector<std::string> dirs;
  if (const std::string user = user_data_dir(); !user.empty()) dirs.push_back(user);
#ifdef TRAINPLAN_SOURCE_DATA_DIR
  dirs.push_back(TRAINPLAN_SOURCE_DATA_DIR);
#endif
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto prefix_share = (self.parent_path().parent_path() / "share/trainplan/datasets").lexically_normal();
    if (prefix_share != "/usr/local/share/trainplan/datasets" && prefix_share != "/usr/share/trainplan/datasets")
      dirs.push_back(prefix_share.string());
  }
  dirs.push_back("/usr/local/share/trainplan/datasets");
  dirs.push_back("/usr/share/trainplan/datasets");
  dirs.push_back("/usr/share/datasets");
  return dirs;
}

std::optional<std::string> resolve_gpt_options(TrainOptions& o, bool workers_given) {
  const int world = o.tp * o.pp * o.dp;
  if (workers_given && o.workers != world)
    return "--workers " + std::to_string(o.workers) + " must equal --tp * --pp * --dp = " + std::to_string(world) +
           " (or be left out)";
  o.workers = world;
  if (o.backend == "nccl") return "--backend nccl: the gpt workload's collectives are Gloo's";
  if (o.hidden % o.heads != 0)
    return "--heads " + std::to_string(o.heads) + " must divide --hidden " + std::to_string(o.hidden);
  if (o.heads % o.tp != 0)
    return "--tp " + std::to_string(o.tp) + " must divide --heads " + std::to_string(o.heads) +
           " (tensor parallelism splits the attention heads)";
  if (o.layers % o.pp != 0)
    return "--pp " + std::to_string(o.pp) + " must divide --layers " + std::to_string(o.layers) +
           " (each pipeline stage holds the same number of layers)";
  if (o.global_batch == 0) o.global_batch = o.micro_batch * o.dp;
  if (o.global_batch % (o.micro_batch * o.dp) != 0)
    return "--global-batch " + std::to_string(o.global_batch) + " must be a multiple of --micro-batch * --dp = " +
           std::to_string(o.micro_batch * o.dp);
  if (o.min_iterations > o.max_iterations)
    return "--min-iterations " + std::to_string(o.min_iterations) + " must not exceed --max-iterations " +
           std::to_string(o.max_iterations);
  return std::nullopt;
}

ParseResult parse_options(int argc, char** argv) {
  TrainOptions o;
  CLI::App app{
      "trainplan-train: the reference trainer. Trains LeNet-5 on MNIST or an MLP on Fashion-MNIST with\n"
      "synchronous data parallelism: R processes, each on a disjoint shard, gradients averaged with a\n"
      "Gloo all-reduce after every step. Start one process per rank (same arguments, --rank 0..R-1).\n"
      "--workload gpt trains a small GPT with tensor (--tp), pipeline (--pp, 1F1B) and data (--dp)\n"
      "parallelism over tp*pp*dp ranks (docs/TRAINER.md).\n\n"
      "Rank 0 prints one JSON object per line on stdout:\n"
      "  {\"event\":\"epoch\",\"epoch\":k,\"epoch_time_s\":t,\"metric\":acc,\"metric_name\":\"accuracy\",\n"
      "   \"train_loss\":l,\"batch\":B,\"workers\":R,...}  after each epoch\n"
      "  {\"event\":\"done\",\"epochs\":E,\"total_time_s\":T,...}  at the end\n"
      "  with --time-only, {\"event\":\"step_timing\",...} (gpt: {\"event\":\"iteration_timing\",...}) instead\n"
      "  of epochs; gpt without it, {\"event\":\"iteration\",\"iteration\":i,\"loss\":l,...} each iteration\n"
      "Errors go to stderr. Exit codes: 0 ok, 1 runtime failure (data, rendezvous, peer lost), 2 usage.\n\n"
      "Example (two ranks on this machine):\n"
      "  trainplan-train --workload lenet-mnist --batch 32 --workers 2 --rank 0 --master-port 29511 &\n"
      "  trainplan-train --workload lenet-mnist --batch 32 --workers 2 --rank 1 --master-port 29511"};
  // Handled by main() before these options are parsed; listed so that --help names it.
  app.footer(
      "\nThe fork server: trainplan-train --fork-server SOCKET (the only option) loads libtorch once, listens\n"
      "on a Unix socket and runs each request of trainplan-forkrun SOCKET TRAINER ARGS in a forked child\n"
      "(docs/TRAINER.md, \"The fork server\").");
  app.add_option("--workload", o.workload, "What to train")
      ->required()
      ->check(CLI::IsMember({"lenet-mnist", "mlp-fashion", "gpt"}));
  app.add_option("--batch", o.batch, "Per-worker batch size B (global batch is B*R); required except for gpt")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--workers", o.workers, "Number of ranks R; 1 runs without a process group")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--rank", o.rank, "This process's rank, 0..R-1")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--epochs", o.epochs, "Passes over the (subset) training set")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--master-addr", o.master_addr, "Address of rank 0's TCPStore")->capture_default_str();
  app.add_option("--master-port", o.master_port, "Port of rank 0's TCPStore")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  app.add_option("--store-path", o.store_path,
                 "Rendezvous through a FileStore at this path (shared file system) instead of TCP; "
                 "use a fresh path per run");
  app.add_option("--data-dir", o.data_dir,
                 "Directory holding mnist/ or fashion-mnist/ (raw IDX files, gzipped or not), or several "
                 "separated by ':', searched in order [default: $TRAINPLAN_DATA_DIR, else "
                 "${XDG_DATA_HOME:-~/.local/share}/trainplan/datasets (trainplan-datasets fills it), the source "
                 "tree's, <prefix>/share/trainplan/datasets, /usr/local/share/trainplan/datasets, "
                 "/usr/share/trainplan/datasets, /usr/share/datasets (Debian's dataset-fashion-mnist)]");
  app.add_option("--seed", o.seed, "Seed for the initial parameters and the per-epoch shuffle")->capture_default_str();
  app.add_option("--train-subset", o.train_subset, "Train on the first N training images only (0 = all 60000)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--test-subset", o.test_subset, "Evaluate on the first N test images only (0 = all 10000)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--threads", o.threads, "Torch intra-op threads per process (1 was fastest on 2 cores)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--lr", o.lr, "Learning rate [default: 0.01, SGD with momentum; gpt: 0.001, Adam]")
      ->check(CLI::PositiveNumber);
  app.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str()->check(CLI::Range(0.0, 0.999));
  app.add_option("--timeout", o.timeout_s, "Seconds to wait for the rendezvous and for each collective")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.add_option("--device", o.device,
                 "auto: the GPU (rank mod GPU count) when this build has CUDA and sees one, else the CPU")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--backend", o.backend,
                 "Collectives: gloo (any build), nccl (GPU tensors; a build with NCCL), or auto: nccl on a GPU "
                 "when this build has it, else gloo; with --workers 1, auto makes no process group, while a "
                 "named backend makes one anyway (to time its overhead)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  app.add_flag("--time-only", o.time_only,
               "A time trial: warm-up steps, then timed steps until the median step time is known to "
               "+-(--step-ci); prints one step_timing event instead of epochs");
  app.add_option("--warmup-steps", o.warmup_steps, "Untimed steps first (caches, allocator, GPU clocks)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--min-steps", o.min_steps, "--time-only: time at least this many steps")
      ->capture_default_str()
      ->check(CLI::Range(5, 1000000));
  app.add_option("--max-steps", o.max_steps, "--time-only: time at most this many steps")
      ->capture_default_str()
      ->check(CLI::Range(5, 1000000));
  app.add_option("--max-timed-s", o.max_timed_s,
                 "--time-only: also stop once the timed phase has run this many seconds, wall clock, checked every 5 steps (0: no limit); with --time-batches, this many for each batch")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--step-ci", o.step_ci,
                 "--time-only: stop once the median's 95% interval is within +-this fraction of it")
      ->capture_default_str()
      ->check(CLI::Range(0.0001, 1.0));
  app.add_option("--step-clock", o.step_clock,
                 "--time-only: the clock --step-ci watches: wall, cpu (the process's CPU time per step, which "
                 "other processes on the machine barely change), or auto (cpu for one worker with one thread on "
                 "the CPU, else wall: CPU time leaves out waiting for peers); both are reported")
      ->capture_default_str()
      ->check(CLI::IsMember({"wall", "cpu", "auto"}));
  app.add_option("--time-batches", o.time_batches,
                 "--time-only: time these per-worker batches (comma-separated) in this one run, in turn, a few "
                 "steps of each at a time, and print a step_timing event for each; default: --batch alone")
      ->delimiter(',')
      ->check(CLI::Range(int64_t(1), int64_t(1) << 30));
  // The GPT workload (docs/TRAINER.md, "The GPT workload").
  app.add_option("--tp", o.tp, "gpt: tensor-parallel ranks (divides --heads)")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--pp", o.pp, "gpt: pipeline stages (divides --layers)")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--dp", o.dp, "gpt: data-parallel replicas")->capture_default_str()->check(CLI::Range(1, 1024));
  app.add_option("--micro-batch", o.micro_batch, "gpt: sequences per micro-batch")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--global-batch", o.global_batch,
                 "gpt: sequences per iteration over all replicas; a multiple of micro-batch*dp [default: micro-batch*dp]")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--layers", o.layers, "gpt: transformer layers")->capture_default_str()->check(CLI::Range(1, 1024));
  app.add_option("--hidden", o.hidden, "gpt: model width")->capture_default_str()->check(CLI::Range(1, 1 << 16));
  app.add_option("--heads", o.heads, "gpt: attention heads (divides --hidden)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app.add_option("--seq", o.seq, "gpt: tokens per sequence")->capture_default_str()->check(CLI::Range(1, 1 << 16));
  app.add_option("--vocab", o.vocab, "gpt: vocabulary; tokens are the corpus's bytes, so at least 256")
      ->capture_default_str()
      ->check(CLI::Range(256, 1 << 20));
  app.add_option("--precision", o.precision,
                 "gpt: fp32, or bf16 (products, activations and messages in bfloat16 from fp32 weights, "
                 "gradients and Adam moments, as PyTorch's autocast; also spelled amp-fp32-master, the name "
                 "the transformer model gives that layout)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16", "amp-fp32-master"}));
  app.add_option("--corpus", o.corpus,
                 "gpt: the training text, a file or a directory whose regular files are read in name order "
                 "(default: the licence texts of Debian's base-files package)")
      ->capture_default_str();
  app.add_option("--iterations", o.iterations, "gpt: iterations to train (without --time-only)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  app.add_option("--warmup-iterations", o.warmup_iterations, "gpt --time-only: untimed iterations first")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--min-iterations", o.min_iterations, "gpt --time-only: time at least this many iterations")
      ->capture_default_str()
      ->check(CLI::Range(3, 1000000));
  app.add_option("--max-iterations", o.max_iterations, "gpt --time-only: time at most this many iterations")
      ->capture_default_str()
      ->check(CLI::Range(3, 1000000));
  app.add_flag("--check-sync", o.check_sync,
               "Debug: every rank prints {\"event\":\"param_checksum\",...} after the first and the last step");
  app.add_flag("--no-allreduce", o.no_allreduce,
               "Debug: skip the gradient all-reduce, so ranks drift apart (shows the all-reduce is real)");
  if (const std::string option = option_with_empty_value(argc, argv); !option.empty()) {
    std::cerr << "error: " << option << ": an empty value; give one, or leave the option out for its default\n";
    return {std::nullopt, 2};
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return {std::nullopt, rc == 0 ? 0 : 2};
  }
  if (o.workload == "gpt") {
    // The data-parallel workloads' options: passed to gpt, each would be ignored without a word.
    for (const char* option : {"--batch", "--epochs", "--data-dir", "--train-subset", "--test-subset", "--momentum",
                               "--warmup-steps", "--min-steps", "--max-steps", "--max-timed-s", "--step-clock",
                               "--check-sync", "--no-allreduce"})
      if (app.count(option) > 0) {
        std::cerr << "error: " << option << " is an option of the data-parallel workloads; --workload gpt does not "
                     "read it (its own: --tp --pp --dp --micro-batch --global-batch --iterations ...)\n";
        return {std::nullopt, 2};
      }
    if (o.precision == "amp-fp32-master") o.precision = "bf16";
    if (auto problem = resolve_gpt_options(o, app.count("--workers") > 0)) {
      std::cerr << "error: " << *problem << "\n";
      return {std::nullopt, 2};
    }
  } else if (o.batch == 0) {
    std::cerr << "error: --batch is required for --workload " << o.workload << "\n";
    return {std::nullopt, 2};
  }
  if (o.rank >= o.workers) {
    std::cerr << "error: --rank " << o.rank << " must be below --workers " << o.workers << "\n";
    return {std::nullopt, 2};
  }
  if (!o.time_batches.empty() && (!o.time_only || o.workload == "gpt")) {
    std::cerr << "error: --time-batches needs --time-only and a data-parallel workload\n";
    return {std::nullopt, 2};
  }
  if (o.min_steps > o.max_steps) {
    std::cerr << "error: --min-steps " << o.min_steps << " must not exceed --max-steps " << o.max_steps << "\n";
    return {std::nullopt, 2};
  }
  return {o, 0};
}

}  // namespace trainplan::train
