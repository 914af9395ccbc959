#include "train/trainer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

#include "train/affinity.h"
#include "train/epoll_backoff.h"
#include "train/dist.h"
#include "train/options.h"
#include "train/step_timing.h"
#include "train/workloads.h"

namespace trainplan::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// This rank's sample indices for one epoch (see trainer.h).
std::vector<int64_t> shard_for_epoch(int64_t n, int rank, int size, uint64_t seed, int epoch) {
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch));
  std::shuffle(perm.begin(), perm.end(), gen);
  const int64_t per_rank = (n + size - 1) / size;
  for (int64_t i = 0; int64_t(perm.size()) < per_rank * size; ++i) perm.push_back(perm[i % n]);
  std::vector<int64_t> mine;
  mine.reserve(per_rank);
  for (int64_t i = rank; i < per_rank * size; i += size) mine.push_back(perm[i]);
  return mine;
}

// Averages the gradients of `params` over all ranks with a single all-reduce.
void average_gradients(const std::vector<torch::Tensor>& params, Communicator& comm) {
  std::vector<torch::Tensor> flat_grads;
  flat_grads.reserve(params.size());
  for (const auto& p : params) flat_grads.push_back(p.grad().reshape(-1));
  torch::Tensor flat = torch::cat(flat_grads);
  comm.allreduce_sum(flat);
  flat.div_(comm.size());
  int64_t off = 0;
  for (const auto& p : params) {
    const int64_t n = p.numel();
    p.grad().view(-1).copy_(flat.slice(0, off, off + n));
    off += n;
  }
}

// Broadcasts rank 0's parameters so that all replicas start identical even if
// torch's generator behaved differently somewhere.
void broadcast_parameters(const std::vector<torch::Tensor>& params, Communicator& comm) {
  torch::NoGradGuard no_grad;
  for (auto p : params) {
    torch::Tensor t = p.detach();
    comm.broadcast(t, 0);
  }
}

// A checksum that changes when any parameter changes or two swap places.
nlohmann::json param_checksum(const std::vector<torch::Tensor>& params, int rank, const std::string& when) {
  torch::NoGradGuard no_grad;
  double sum = 0, weighted = 0;
  for (const auto& p : params) {
    auto v = p.detach().reshape(-1).to(torch::kFloat64);
    sum += v.sum().item<double>();
    auto w = torch::arange(v.numel(), v.options()).fmod(7).add(1);
    weighted += (v * w).sum().item<double>();
  }
  return {{"event", "param_checksum"}, {"rank", rank}, {"when", when}, {"sum", sum}, {"weighted", weighted}};
}

struct EvalCounts {
  double correct = 0, seen = 0;
};

// Evaluates this rank's share (every R-th image) of the test set.
EvalCounts evaluate_shard(torch::nn::Sequential& net, const LabelledImages& test, int rank, int size) {
  torch::NoGradGuard no_grad;
  net->eval();
  auto idx = torch::arange(rank, test.size(), size, torch::TensorOptions(torch::kInt64).device(test.labels.device()));
  EvalCounts c;
  constexpr int64_t kChunk = 128;
  for (int64_t s = 0; s < idx.size(0); s += kChunk) {
    auto part = idx.slice(0, s, std::min<int64_t>(s + kChunk, idx.size(0)));
    auto pred = net->forward(test.images.index_select(0, part)).argmax(1);
    c.correct += pred.eq(test.labels.index_select(0, part)).sum().item<double>();
    c.seen += double(part.size(0));
  }
  net->train();
  return c;
}

LabelledImages to_device(const LabelledImages& d, const torch::Device& device) {
  return {d.images.to(device), d.labels.to(device)};
}

// CPU time of this process, all threads, in seconds. A step's CPU time is
// what it costs when no other process competes for the cores: a busy machine
// stretches the wall time of a step, not its CPU time.
double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

nlohmann::json step_fields(const StepTimeSummary& s, const StepTimeSummary& cpu) {
  return {{"step_time_median_s", s.median_s},
          {"step_time_p10_s", s.p10_s},
          {"step_time_p90_s", s.p90_s},
          {"step_time_ci95_s", {s.ci95_low_s, s.ci95_high_s}},
          {"steps_timed", s.n},
          {"step_outliers", s.outliers},
          {"step_cpu_median_s", cpu.median_s},
          {"step_cpu_ci95_s", {cpu.ci95_low_s, cpu.ci95_high_s}},
          {"step_cpu_outliers", cpu.outliers}};
}

// One SGD step on the images at `idx`: forward, backward, gradient
// all-reduce, update. Returns the summed loss over the batch; reading it back
// waits for the device, so a wall clock around the call times the whole step.
struct Stepper {
  torch::nn::Sequential& net;
  torch::optim::SGD& opt;
  const std::vector<torch::Tensor>& params;
  Communicator& comm;
  const LabelledImages& train;
  bool allreduce;

  double operator()(const torch::Tensor& idx) {
    auto x = train.images.index_select(0, idx);
    auto y = train.labels.index_select(0, idx);
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    if (allreduce) average_gradients(params, comm);
    opt.step();
    return loss.item<double>() * double(idx.size(0));
  }
};

// A run that times several batches takes this many steps of one batch
// before the next; the first of each turn is not timed, as it meets caches
// that the other batch's sizes had filled. Timed step by step in turn, a
// batch of 32 read 3-4% slower against 128 than in a run of its own; in
// turns of four with the first dropped, within the runs' own scatter.
constexpr int kTurnSteps = 4;

// --time-only: warm-up steps, then timed full-batch steps until every rank's
// median is known to +-o.step_ci (95%) or o.max_steps are timed. The ranks
// agree on when to stop through a one-element all-reduce every few steps, so
// they take the same number of steps. With o.time_batches, each of those
// batches in turn (kTurnSteps at a time), each until its median is known or
// it has o.max_steps, and then left out of the turns; a step_timing event
// for each.
void time_steps(const TrainOptions& o, Stepper& step, int64_t n, const torch::Device& device,
                const EventSink& report, Clock::time_point t_start) {
  const int rank = step.comm.rank(), size = step.comm.size();
  int epoch = 1;
  double shuffle_s = 0;
  auto shard_on_device = [&](int e) {
    const auto t0 = Clock::now();
    std::vector<int64_t> mine = shard_for_epoch(n, rank, size, o.seed, e);
    auto t = torch::tensor(mine, torch::kInt64).to(device);
    shuffle_s = seconds_since(t0);
    return t;
  };
  torch::Tensor mine = shard_on_device(epoch);
  const int64_t shard = mine.size(0);
  int64_t pos = 0;
  auto next_batch = [&](int64_t b) {
    b = std::min(b, shard);
    if (pos + b > shard) mine = shard_on_device(++epoch), pos = 0;  // full batches only
    auto idx = mine.slice(0, pos, pos + b);
    pos += b;
    return idx;
  };

  const std::vector<int64_t> batches = o.time_batches.empty() ? std::vector<int64_t>{o.batch} : o.time_batches;
  const bool in_turn = batches.size() > 1;
  const int turn = in_turn ? kTurnSteps : 1;
  for (int64_t b : batches)
    for (int s = 0; s < o.warmup_steps; ++s) step(next_batch(b));
  const size_t k = batches.size();
  std::vector<std::vector<double>> times(k), cpu_times(k);
  for (size_t i = 0; i < k; ++i) times[i].reserve(size_t(o.max_steps)), cpu_times[i].reserve(size_t(o.max_steps));
  const std::string clock = o.step_clock != "auto"                                    ? o.step_clock
                            : size == 1 && o.threads == 1 && device.is_cpu() ? "cpu"
                                                                             : "wall";
  // A batch is done once every rank's median of it is known (converged) or
  // it has max_steps; the ranks agree on both, so they step the same batches.
  std::vector<char> converged(k, 0);
  auto done = [&](size_t i) { return converged[i] || int(times[i].size()) >= o.max_steps; };
  auto all_done = [&] {
    for (size_t i = 0; i < k; ++i)
      if (!done(i)) return false;
    return true;
  };
  const auto timing_start = Clock::now();
  // One pass: a turn of each batch not done (one step of the one batch).
  while (!all_done()) {
    for (size_t i = 0; i < k; ++i)
      for (int s = 0; s < turn && !done(i); ++s) {
        auto idx = next_batch(batches[i]);
        const auto t0 = Clock::now();
        const double c0 = process_cpu_s();
        step(idx);
        if (in_turn && s == 0) continue;
        times[i].push_back(seconds_since(t0));
        cpu_times[i].push_back(process_cpu_s() - c0);
      }
    int fewest = o.max_steps;
    for (size_t i = 0; i < k; ++i)
      if (!done(i)) fewest = std::min(fewest, int(times[i].size()));
    if (fewest >= o.min_steps && (in_turn || fewest % 5 == 0 || fewest == o.max_steps)) {
      // Every rank's vote in one all-reduce: each batch converged on all, or any out of time.
      std::vector<double> votes(k + 1, 0.0);
      for (size_t i = 0; i < k; ++i)
        votes[i] = done(i) || summarise_step_times(clock == "cpu" ? cpu_times[i] : times[i])
                                      .ci95_relative_half_width() <= o.step_ci;
      votes[k] = o.max_timed_s > 0 && seconds_since(timing_start) >= o.max_timed_s * double(k);
      auto flags = torch::tensor(votes, torch::kFloat64);
      step.comm.allreduce_sum(flags);
      for (size_t i = 0; i < k; ++i)
        if (!done(i) && flags[long(i)].item<double>() >= size - 0.5) converged[i] = 1;
      if (flags[long(k)].item<double>() > 0.5) break;
    }
  }
  const double timing_wall_s = seconds_since(timing_start);
  // What every batch's line shares, read once.
  nlohmann::json shared = thread_cpu_fields();
  shared.update(epoll_backoff_fields());
  for (size_t i = 0; i < k; ++i) {
    const int64_t batch = batches[i];
    const StepTimeSummary summary = summarise_step_times(times[i]);
    const StepTimeSummary cpu_summary = summarise_step_times(cpu_times[i]);
    const int64_t steps_per_epoch = (shard + batch - 1) / batch;
    nlohmann::json ev = {{"event", "step_timing"},
                         {"workload", o.workload},
                         {"batch", batch},
                         {"workers", size},
                         {"device", device.str()}, {"backend", step.comm.backend()},
                         {"warmup_steps", o.warmup_steps},
                         {"converged", converged[i] != 0},
                         {"step_ci_target", o.step_ci},
                         {"max_timed_s", o.max_timed_s},
                         {"timing_wall_s", timing_wall_s},
                         {"step_clock", clock},
                         {"threads", o.threads},
                         {"step_time_mean_s", summary.mean_s},
                         {"steps_per_epoch", steps_per_epoch},
                         {"train_samples", n},
                         {"epoch_overhead_s", shuffle_s},
                         {"epoch_time_estimate_s", double(steps_per_epoch) * summary.median_s + shuffle_s}};
    if (in_turn) ev["time_batches"] = batches, ev["turn_steps"] = turn;
    ev.update(step_fields(summary, cpu_summary));
    ev.update(shared);
    report(ev);
  }
  step.comm.barrier();
  report({{"event", "done"},
          {"epochs", 0},
          {"total_time_s", seconds_since(t_start)},
          {"workload", o.workload},
          {"batch", o.batch},
          {"workers", size}});
}

}  // namespace

void train(const TrainOptions& o, const Connect& connect, const EventSink& report, const EventSink& debug) {
  const auto t_setup = Clock::now();
  const torch::Device device = pick_device(o);
  WorkloadData data = load_workload_data(o.workload, o.data_dir, o.train_subset, o.test_subset);
  data.train = to_device(data.train, device);
  data.test = to_device(data.test, device);
  std::unique_ptr<Communicator> comm_ptr = connect();
  Communicator& comm = *comm_ptr;
  const int rank = comm.rank(), size = comm.size();

  torch::manual_seed(o.seed);
  torch::nn::Sequential net = make_network(o.workload);
  net->to(device);
  std::vector<torch::Tensor> params = net->parameters();
  if (size > 1) broadcast_parameters(params, comm);
  const double lr = o.lr.value_or(default_learning_rate(o.workload));
  torch::optim::SGD opt(params, torch::optim::SGDOptions(lr).momentum(o.momentum));
  net->train();
  Stepper step{net, opt, params, comm, data.train, size > 1 && !o.no_allreduce};

  const int64_t n = data.train.size();
  const double setup_time = seconds_since(t_setup);
  const auto t_start = Clock::now();
  if (o.time_only) return time_steps(o, step, n, device, report, t_start);

  double train_time = 0;
  int64_t global_step = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    const std::vector<int64_t> mine = shard_for_epoch(n, rank, size, o.seed, epoch);
    const int64_t shard = int64_t(mine.size());
    const int64_t steps = (shard + o.batch - 1) / o.batch;
    auto mine_t = torch::tensor(mine, torch::kInt64).to(device);
    double loss_sum = 0;
    std::vector<double> step_times, step_cpu;
    step_times.reserve(size_t(steps));
    step_cpu.reserve(size_t(steps));

    const auto t_epoch = Clock::now();
    for (int64_t s = 0; s < steps; ++s, ++global_step) {
      auto idx = mine_t.slice(0, s * o.batch, std::min<int64_t>((s + 1) * o.batch, shard));
      const auto t_step = Clock::now();
      const double c_step = process_cpu_s();
      loss_sum += step(idx);
      step_times.push_back(seconds_since(t_step));
      step_cpu.push_back(process_cpu_s() - c_step);
      if (o.check_sync && global_step == 0) debug(param_checksum(params, rank, "first_step"));
    }
    const double epoch_time = seconds_since(t_epoch);
    train_time += epoch_time;
    if (o.check_sync && epoch == o.epochs) debug(param_checksum(params, rank, "last_step"));

    const auto t_eval = Clock::now();
    EvalCounts ev = evaluate_shard(net, data.test, rank, size);
    // One small all-reduce gives rank 0 the global loss and accuracy.
    auto totals = torch::tensor({loss_sum, double(shard), ev.correct, ev.seen}, torch::kFloat64);
    comm.allreduce_sum(totals);
    const double eval_time = seconds_since(t_eval);
    nlohmann::json event = {{"event", "epoch"},
                            {"epoch", epoch},
                            {"epoch_time_s", epoch_time},
                            {"metric", totals[2].item<double>() / totals[3].item<double>()},
                            {"metric_name", "accuracy"},
                            {"train_loss", totals[0].item<double>() / totals[1].item<double>()},
                            {"batch", o.batch},
                            {"workers", size},
                            {"workload", o.workload},
                            {"steps", steps},
                            {"train_samples", n},
                            {"test_samples", int64_t(totals[3].item<double>())},
                            {"eval_time_s", eval_time},
                            {"device", device.str()},
                            {"threads", o.threads},
                            {"backend", comm.backend()}};
    event.update(step_fields(summarise_step_times(step_times), summarise_step_times(step_cpu)));
    report(event);
  }
  comm.barrier();  // no rank leaves (and rank 0 takes its TCPStore down) while others still run
  report({{"event", "done"},
          {"epochs", o.epochs},
          {"total_time_s", seconds_since(t_start)},
          {"train_time_s", train_time},
          {"setup_time_s", setup_time},
          {"workload", o.workload},
          {"batch", o.batch},
          {"workers", size},
          {"lr", lr}});
}

torch::Device pick_device(const TrainOptions& o) {
  const bool gpu = torch::cuda::is_available();
  if (o.device == "cpu" || (o.device == "auto" && !gpu)) return torch::Device(torch::kCPU);
  if (!gpu)
    throw std::runtime_error("--device cuda: this trainplan-train was built without CUDA, or no GPU is visible");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(o.rank % int(torch::cuda::device_count())));
}

}  // namespace trainplan::train
