#include "train/dist.h"

#if defined(TRAINPLAN_WITH_GLOO) || defined(TRAINPLAN_WITH_NCCL)
#define TRAINPLAN_WITH_C10D
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#ifdef TRAINPLAN_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef TRAINPLAN_WITH_NCCL
#include <torch/cuda.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/affinity.h"
#include "train/options.h"

namespace trainplan::train {

std::function<void()> Communicator::isend(const at::Tensor&, int, int) {
  throw std::logic_error(std::string("point-to-point send is not available on a '") + backend() + "' group");
}
void Communicator::recv(at::Tensor&, int, int) {
  throw std::logic_error(std::string("point-to-point receive is not available on a '") + backend() + "' group");
}

template <class F>
void TimedCommunicator::timed(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
void TimedCommunicator::allreduce_sum(at::Tensor& t) {
  timed([&] { inner_->allreduce_sum(t); });
}
void TimedCommunicator::broadcast(at::Tensor& t, int root) {
  timed([&] { inner_->broadcast(t, root); });
}
void TimedCommunicator::allreduce_max(at::Tensor& t) {
  timed([&] { inner_->allreduce_max(t); });
}
void TimedCommunicator::barrier() {
  timed([&] { inner_->barrier(); });
}
std::function<void()> TimedCommunicator::isend(const at::Tensor& t, int dst, int tag) {
  std::function<void()> wait;
  timed([&] { wait = inner_->isend(t, dst, tag); });
  return [this, wait = std::move(wait)] { timed(wait); };
}
void TimedCommunicator::recv(at::Tensor& t, int src, int tag) {
  timed([&] { inner_->recv(t, src, tag); });
}

namespace {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(at::Tensor&) override {}
  void broadcast(at::Tensor&, int) override {}
  void allreduce_max(at::Tensor&) override {}
  void barrier() override {}
  const char* backend() const override { return "none"; }
};

#ifdef TRAINPLAN_WITH_C10D
c10::intrusive_ptr<c10d::Store> make_store(const TrainOptions& o, std::chrono::milliseconds timeout) {
  c10::intrusive_ptr<c10d::Store> store;
  if (!o.store_path.empty()) {
    store = c10::make_intrusive<c10d::FileStore>(o.store_path, o.workers);
  } else {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(o.master_port);
    so.isServer = o.rank == 0;
    so.numWorkers = static_cast<std::size_t>(o.workers);
    so.waitWorkers = true;
    so.timeout = timeout;
    store = c10::make_intrusive<c10d::TCPStore>(o.master_addr, so);
  }
  store->setTimeout(timeout);
  return store;
}
#endif

#ifdef TRAINPLAN_WITH_GLOO
// Gloo moves host memory. A GPU tensor, or a reduced-precision one (summed
// in fp32, as Megatron reduces bf16 gradients in fp32), goes through a host
// fp32 copy; so ranks that share one GPU can still form groups, at the cost
// of the copies.
bool reduced_precision(const at::Tensor& t) { return t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf; }

// For a GPU or reduced-precision tensor: runs `op` on a host copy (bf16 and
// fp16 widened to fp32) and copies the result back, returning true. A host
// tensor Gloo takes as it is returns false untouched.
template <class Op>
bool through_host(at::Tensor& t, Op op) {
  if (!t.is_cuda() && !reduced_precision(t)) return false;
  at::Tensor host = t.to(at::kCPU, reduced_precision(t) ? at::kFloat : t.scalar_type());
  op(host);
  t.copy_(host);
  return true;
}

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(c10::intrusive_ptr<c10d::Store> store, int rank, int size, std::chrono::milliseconds timeout,
                   bool loopback)
      : store_(std::move(store)), rank_(rank), size_(size) {
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    opts->devices.push_back(loopback ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                     : c10d::ProcessGroupGloo::createDefaultDevice());
    // One Gloo worker thread: collectives are issued one at a time and the
    // cores are better spent on compute.
    opts->threads = 1;
    pg_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store_, rank, size, opts);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce_sum(at::Tensor& t) override {
    if (through_host(t, [&](at::Tensor& host) { allreduce_sum(host); })) return;
    std::vector<at::Tensor> v{t};
    pg_->allreduce(v)->wait();
  }

  void broadcast(at::Tensor& t, int root) override {
    if (through_host(t, [&](at::Tensor& host) { broadcast(host, root); })) return;
    std::vector<at::Tensor> v{t};
    c10d::BroadcastOptions bo;
    bo.rootRank = root;
    pg_->broadcast(v, bo)->wait();
  }

  void allreduce_max(at::Tensor& t) override {
    if (through_host(t, [&](at::Tensor& host) { allreduce_max(host); })) return;
    std::vector<at::Tensor> v{t};
    c10d::AllreduceOptions ao;
    ao.reduceOp = c10d::ReduceOp::MAX;
    pg_->allreduce(v, ao)->wait();
  }

  // Point-to-point moves bytes, so any dtype goes as it is; a GPU tensor is
  // copied to the host first (the copy waits for the kernels that made it).
  std::function<void()> isend(const at::Tensor& t, int dst, int tag) override {
    auto v = std::make_shared<std::vector<at::Tensor>>(std::vector<at::Tensor>{t.cpu().contiguous()});
    auto work = pg_->send(*v, dst, tag);
    return [v, work] { work->wait(); };
  }

  void recv(at::Tensor& t, int src, int tag) override {
    if (t.is_cuda()) {
      at::Tensor host = at::empty(t.sizes(), t.options().device(at::kCPU));
      recv(host, src, tag);
      t.copy_(host);
      return;
    }
    std::vector<at::Tensor> v{t};
    pg_->recv(v, src, tag)->wait();
  }

  void barrier() override { pg_->barrier()->wait(); }
  const char* backend() const override { return "gloo"; }

 private:
  c10::intrusive_ptr<c10d::Store> store_;  // rank 0 hosts the TCP server: keep it alive
  int rank_, size_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
};

bool is_loopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0; }

std::unique_ptr<Communicator> connect_gloo(const TrainOptions& o) {
  std::chrono::milliseconds timeout(int64_t(o.timeout_s) * 1000);
  return std::make_unique<GlooCommunicator>(make_store(o, timeout), o.rank, o.workers, timeout,
                                            is_loopback(o.master_addr));
}
#else
std::unique_ptr<Communicator> connect_gloo(const TrainOptions&) {
  // A libtorch without the Gloo headers (some PyTorch wheels) still trains
  // on one worker; several need a process group.
  throw std::runtime_error("this trainplan-train was built without Gloo, so it runs --workers 1 only");
}
#endif

#ifdef TRAINPLAN_WITH_NCCL
// NCCL reduces GPU tensors only: a CPU tensor (a flag, a count) goes through
// the rank's GPU and back.
class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(c10::intrusive_ptr<c10d::Store> store, int rank, int size, std::chrono::milliseconds timeout)
      : store_(std::move(store)),
        rank_(rank),
        size_(size),
        gpu_(c10::kCUDA, static_cast<c10::DeviceIndex>(rank % int(torch::cuda::device_count()))) {
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = timeout;
    pg_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store_, rank, size, opts);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce_sum(at::Tensor& t) override {
    run(t, [&](std::vector<at::Tensor>& v) { pg_->allreduce(v)->wait(); });
  }

  void broadcast(at::Tensor& t, int root) override {
    c10d::BroadcastOptions bo;
    bo.rootRank = root;
    run(t, [&](std::vector<at::Tensor>& v) { pg_->broadcast(v, bo)->wait(); });
  }

  void allreduce_max(at::Tensor& t) override {
    c10d::AllreduceOptions ao;
    ao.reduceOp = c10d::ReduceOp::MAX;
    run(t, [&](std::vector<at::Tensor>& v) { pg_->allreduce(v, ao)->wait(); });
  }

  // A one-element all-reduce read back on the host: unlike the group's own
  // barrier, it needs no guess of which GPU each rank uses, and it returns
  // only once every rank has reached it.
  void barrier() override {
    at::Tensor t = at::zeros({1}, at::TensorOptions().device(gpu_));
    std::vector<at::Tensor> v{t};
    pg_->allreduce(v)->wait();
    (void)t.item<float>();
  }
  const char* backend() const override { return "nccl"; }

 private:
  template <class F>
  void run(at::Tensor& t, F collective) {
    if (t.is_cuda()) {
      std::vector<at::Tensor> v{t};
      collective(v);
      return;
    }
    std::vector<at::Tensor> v{t.to(gpu_)};
    collective(v);
    t.copy_(v[0].cpu());
  }

  c10::intrusive_ptr<c10d::Store> store_;
  int rank_, size_;
  c10::Device gpu_;
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> pg_;
};

std::unique_ptr<Communicator> connect_nccl(const TrainOptions& o) {
  if (!torch::cuda::is_available()) throw std::runtime_error("--backend nccl needs a visible GPU");
  std::chrono::milliseconds timeout(int64_t(o.timeout_s) * 1000);
  return std::make_unique<NcclCommunicator>(make_store(o, timeout), o.rank, o.workers, timeout);
}
#else
std::unique_ptr<Communicator> connect_nccl(const TrainOptions&) {
  throw std::runtime_error("this trainplan-train was built without NCCL: use --backend gloo");
}
#endif

// --backend auto: NCCL when this build has it and the trainer runs on a GPU.
std::string resolve_backend(const TrainOptions& o) {
  if (o.backend != "auto") return o.backend;
#ifdef TRAINPLAN_WITH_NCCL
  if (o.device != "cpu" && torch::cuda::is_available()) return "nccl";
#endif
  return "gloo";
}

}  // namespace

ParallelGroups make_parallel_groups(const TrainOptions& o, const std::vector<int>& tp_members,
                                    const std::vector<int>& dp_members, const std::vector<int>& pp_members) {
  ParallelGroups g;
  if (o.workers == 1) {
    g.world = std::make_unique<LocalCommunicator>();
    g.tp = std::make_unique<LocalCommunicator>();
    g.dp = std::make_unique<LocalCommunicator>();
    g.pp = std::make_unique<LocalCommunicator>();
    return g;
  }
#ifdef TRAINPLAN_WITH_GLOO
  const std::string where = o.store_path.empty() ? "TCPStore " + o.master_addr + ":" + std::to_string(o.master_port)
                                                 : "FileStore " + o.store_path;
  try {
    std::chrono::milliseconds timeout(int64_t(o.timeout_s) * 1000);
    HelpersOnSharedCpus helpers;
    auto store = make_store(o, timeout);
    const bool loopback = is_loopback(o.master_addr);
    g.world = std::make_unique<GlooCommunicator>(store, o.rank, o.workers, timeout, loopback);
    // A group's prefix names its members, so every member derives the same
    // key space and different groups never share one.
    auto group = [&](const char* kind, const std::vector<int>& members) -> std::unique_ptr<Communicator> {
      if (members.size() <= 1) return std::make_unique<LocalCommunicator>();
      std::string prefix = kind;
      int mine = -1;
      for (size_t i = 0; i < members.size(); ++i) {
        prefix += "_" + std::to_string(members[i]);
        if (members[i] == o.rank) mine = int(i);
      }
      if (mine < 0) throw std::logic_error(std::string(kind) + " group does not contain this rank");
      auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
      return std::make_unique<GlooCommunicator>(prefixed, mine, int(members.size()), timeout, loopback);
    };
    g.tp = group("tp", tp_members);
    g.dp = group("dp", dp_members);
    g.pp = group("pp", pp_members);
  } catch (const c10::Error& e) {
    throw std::runtime_error("gloo rendezvous of " + std::to_string(o.workers) + " workers through " + where +
                             " failed (--timeout " + std::to_string(o.timeout_s) + " s): " +
                             e.what_without_backtrace());
  } catch (const std::logic_error&) {
    throw;
  } catch (const std::exception& e) {  // the store's socket errors, as the data-parallel path says them
    throw std::runtime_error("gloo rendezvous of " + std::to_string(o.workers) + " workers through " + where +
                             " failed (--timeout " + std::to_string(o.timeout_s) + " s): " + e.what());
  }
  return g;
#else
  (void)tp_members, (void)dp_members, (void)pp_members;
  throw std::runtime_error("this trainplan-train was built without Gloo, so it runs one process only");
#endif
}

std::unique_ptr<Communicator> make_communicator(const TrainOptions& o) {
  if (o.workers == 1 && o.backend == "auto") return std::make_unique<LocalCommunicator>();
  const std::string backend = resolve_backend(o);
  auto failure = [&](const std::string& why) {
    const std::string where = o.store_path.empty()
                                  ? "TCPStore " + o.master_addr + ":" + std::to_string(o.master_port)
                                  : "FileStore " + o.store_path;
    return std::runtime_error(backend + " rendezvous of " + std::to_string(o.workers) + " workers through " + where +
                              " failed (--timeout " + std::to_string(o.timeout_s) +
                              " s; are all ranks started with the same address and port?): " + why);
  };
  try {
    HelpersOnSharedCpus helpers;  // Gloo's threads, NCCL's proxy, the store's server (train/affinity.h)
    return backend == "nccl" ? connect_nccl(o) : connect_gloo(o);
  } catch (const c10::Error& e) {
    throw failure(e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw failure(e.what());
  }
}

}  // namespace trainplan::train
