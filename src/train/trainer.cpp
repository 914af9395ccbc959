#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

#include "train/dist.h"
#include "train/options.h"
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
    auto w = torch::arange(v.numel(), torch::kFloat64).fmod(7).add(1);
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
  auto idx = torch::arange(rank, test.size(), size, torch::kInt64);
  EvalCounts c;
  constexpr int64_t kChunk = 1000;
  for (int64_t s = 0; s < idx.size(0); s += kChunk) {
    auto part = idx.slice(0, s, std::min<int64_t>(s + kChunk, idx.size(0)));
    auto pred = net->forward(test.images.index_select(0, part)).argmax(1);
    c.correct += pred.eq(test.labels.index_select(0, part)).sum().item<double>();
    c.seen += double(part.size(0));
  }
  net->train();
  return c;
}

}  // namespace

void train(const TrainOptions& o, const Connect& connect, const EventSink& report, const EventSink& debug) {
  const auto t_setup = Clock::now();
  WorkloadData data = load_workload_data(o.workload, o.data_dir, o.train_subset, o.test_subset);
  std::unique_ptr<Communicator> comm_ptr = connect();
  Communicator& comm = *comm_ptr;
  const int rank = comm.rank(), size = comm.size();

  torch::manual_seed(o.seed);
  torch::nn::Sequential net = make_network(o.workload);
  std::vector<torch::Tensor> params = net->parameters();
  if (size > 1) broadcast_parameters(params, comm);
  const double lr = o.lr.value_or(default_learning_rate(o.workload));
  torch::optim::SGD opt(params, torch::optim::SGDOptions(lr).momentum(o.momentum));
  net->train();

  const int64_t n = data.train.size();
  const double setup_time = seconds_since(t_setup);
  const auto t_start = Clock::now();
  double train_time = 0;
  int64_t step = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    const std::vector<int64_t> mine = shard_for_epoch(n, rank, size, o.seed, epoch);
    const int64_t shard = int64_t(mine.size());
    const int64_t steps = (shard + o.batch - 1) / o.batch;
    auto mine_t = torch::from_blob(const_cast<int64_t*>(mine.data()), {shard}, torch::kInt64);
    double loss_sum = 0;

    const auto t_epoch = Clock::now();
    for (int64_t s = 0; s < steps; ++s, ++step) {
      auto idx = mine_t.slice(0, s * o.batch, std::min<int64_t>((s + 1) * o.batch, shard));
      auto x = data.train.images.index_select(0, idx);
      auto y = data.train.labels.index_select(0, idx);
      opt.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
      loss.backward();
      if (size > 1 && !o.no_allreduce) average_gradients(params, comm);
      opt.step();
      loss_sum += loss.item<double>() * double(idx.size(0));
      if (o.check_sync && step == 0) debug(param_checksum(params, rank, "first_step"));
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
    report({{"event", "epoch"},
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
            {"eval_time_s", eval_time}});
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

}  // namespace trainplan::train
