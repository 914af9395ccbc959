// Command-line options of `trainplan-train`, the reference data-parallel
// trainer, and their parser. Kept free of torch headers so that it compiles fast.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainplan::train {

struct TrainOptions {
  std::string workload;          // "lenet-mnist", "mlp-fashion" or "gpt"
  int batch = 0;                 // per-worker batch B (not for gpt)
  int workers = 1;               // R processes in the group
  int rank = 0;                  // this process, 0..R-1
  int epochs = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string store_path;        // FileStore rendezvous when set, else TCPStore
  // Directories that may hold mnist/ and fashion-mnist/, searched in order;
  // one directory, or several separated by ':' (see data_search_path).
  std::string data_dir;
  uint64_t seed = 1;
  int64_t train_subset = 0;      // first N training images; 0 = all
  int64_t test_subset = 0;       // first N test images; 0 = all 10k
  int threads = 1;               // torch intra-op threads per process
  std::optional<double> lr;      // default depends on the workload
  double momentum = 0.9;
  int timeout_s = 120;           // rendezvous and collective timeout
  // Where the network trains: "auto" (the GPU of index rank % GPUs when a
  // CUDA build sees one, else the CPU), "cpu" or "cuda".
  std::string device = "auto";
  std::string backend = "auto";  // collectives: auto, gloo or nccl
  // A time trial (--time-only): no epochs, no evaluation; warm-up steps, then
  // timed steps until the 95% interval of the median step time is within
  // +-step_ci of the median, or max_steps are timed (see trainer.h).
  bool time_only = false;
  int warmup_steps = 10;
  int min_steps = 20;
  int max_steps = 400;
  double step_ci = 0.02;
  // Also stop once the timed phase has run this many seconds of wall clock,
  // checked every 5 steps (0: no limit), so
  // that a trial's cost is bounded on a busy machine, where the interval may
  // never narrow; the step_timing event then says converged false. With
  // time_batches, this many seconds for each batch.
  double max_timed_s = 0;
  // The clock the stop rule above watches: "wall", "cpu" (this process's
  // CPU time per step, all its threads: what a step costs when no other
  // process competes for the cores; both are always reported), or "auto"
  // (cpu for one worker with one thread on the CPU, where nothing is waited
  // for; wall otherwise, where a step waits for its peers).
  std::string step_clock = "wall";
  // --time-only: the per-worker batches to time in this one run, in turn, a
  // few steps of each at a time (trainer.h); empty: --batch alone. The
  // times of several batches taken in one process, interleaved, keep their
  // ratios where separate runs move with the machine's speed from second to
  // second (docs/lab/PROFILING-NOISE.md).
  std::vector<int64_t> time_batches;
  // Debug switches, used by the tests to show that the all-reduce is real.
  bool check_sync = false;       // every rank prints parameter checksums
  bool no_allreduce = false;     // skip the gradient all-reduce

  // --workload gpt (docs/TRAINER.md, "The GPT workload"): a byte-level GPT
  // trained with tensor (tp), pipeline (pp) and data (dp) parallelism over
  // tp*pp*dp processes; --workers, when given, must equal that product.
  int tp = 1, pp = 1, dp = 1;
  int micro_batch = 1;           // sequences per micro-batch
  int global_batch = 0;          // sequences per iteration; 0: micro_batch*dp
  int layers = 4, hidden = 128, heads = 4, seq = 64, vocab = 256;
  // gpt: "fp32", or "bf16": products, activations and the messages between
  // ranks in bfloat16 from fp32 weights, gradients and Adam moments (as
  // PyTorch's autocast; the planner's precision amp-fp32-master).
  std::string precision = "fp32";
  std::string corpus = "/usr/share/common-licenses";  // a file, or a directory of files
  int iterations = 10;           // gpt: iterations to run (without --time-only)
  int warmup_iterations = 2;     // gpt --time-only: untimed iterations first
  int min_iterations = 10;       // gpt --time-only: timed iterations at least
  int max_iterations = 40;       //   and at most
};

// Result of parsing argv: either options to run, or an exit code to return
// now (after --help, or after a usage error already printed to stderr).
struct ParseResult {
  std::optional<TrainOptions> options;
  int exit_code = 0;
};

ParseResult parse_options(int argc, char** argv);

// --workload gpt: sets o.workers to tp*pp*dp and o.global_batch's default;
// returns the first problem (naming the option) or nullopt.
std::optional<std::string> resolve_gpt_options(TrainOptions& o, bool workers_given);

// Where the trainer looks for a workload's data, in order: the directories of
// `flag_value` (--data-dir), else those of $TRAINPLAN_DATA_DIR (each one
// directory or several separated by ':'), else the default list:
//   ${XDG_DATA_HOME:-$HOME/.local/share}/trainplan/datasets  (trainplan-datasets puts MNIST here)
//   the source tree's third_party/datasets                  (scripts/install-deps.sh; a build
//                                                              from source only)
//   <executable>/../share/trainplan/datasets, /usr/local/share/trainplan/datasets,
//   /usr/share/trainplan/datasets
//   /usr/share/datasets                                     (Debian's dataset-fashion-mnist)
std::vector<std::string> data_search_path(const std::string& flag_value);
// The first of the default list: where trainplan-datasets puts MNIST for this
// user ("" without $XDG_DATA_HOME and $HOME).
std::string user_data_dir();

}  // namespace trainplan::train
