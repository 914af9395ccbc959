// The collectives the trainer needs, behind a small interface so that a
// single-worker run needs no process group and no rendezvous.
#pragma once
#include <functional>
#include <memory>
#include <vector>

namespace at {
class Tensor;
}

namespace trainplan::train {

struct TrainOptions;

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In-place sum over all ranks; every rank ends with the same values.
  virtual void allreduce_sum(at::Tensor& t) = 0;
  // In-place copy of rank `root`'s tensor to every rank.
  virtual void broadcast(at::Tensor& t, int root) = 0;
  // In-place element-wise maximum over all ranks.
  virtual void allreduce_max(at::Tensor& t) = 0;
  virtual void barrier() = 0;
  // Point-to-point within the group (ranks are the group's): isend posts the
  // send and returns at once with a function that waits for its completion
  // (the tensor is kept alive until then); recv blocks until `t` is filled.
  // Messages between two ranks with the same tag arrive in the order sent.
  // Throw std::logic_error where the backend has none (one-rank groups).
  virtual std::function<void()> isend(const at::Tensor& t, int dst, int tag);
  virtual void recv(at::Tensor& t, int src, int tag);
  // "none" (one worker, no process group), "gloo" or "nccl".
  virtual const char* backend() const = 0;
};

// A communicator that passes every call to another and adds up the wall
// seconds this rank spent inside them: blocked in a collective or a receive,
// or waiting for a send to complete. On a synchronous backend (Gloo) that is
// the transfer plus the wait for the slowest member to arrive, so the
// minimum over a group's members approximates the transfer alone.
class TimedCommunicator final : public Communicator {
 public:
  explicit TimedCommunicator(std::unique_ptr<Communicator> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  void allreduce_sum(at::Tensor& t) override;
  void broadcast(at::Tensor& t, int root) override;
  void allreduce_max(at::Tensor& t) override;
  void barrier() override;
  std::function<void()> isend(const at::Tensor& t, int dst, int tag) override;
  void recv(at::Tensor& t, int src, int tag) override;
  const char* backend() const override { return inner_->backend(); }

  // Seconds spent in calls since construction or the last reset().
  double seconds() const { return seconds_; }
  void reset() { seconds_ = 0; }

 private:
  template <class F>
  void timed(F&& f);
  std::unique_ptr<Communicator> inner_;
  double seconds_ = 0;
};

// For --workers 1 with --backend auto, a communicator whose collectives are
// no-ops. Otherwise a process group over a TCPStore hosted by rank 0 at
// --master-addr:--master-port, or over a FileStore at --store-path: NCCL
// (--backend nccl, or auto on a GPU in a build with NCCL; CPU tensors are
// reduced through the rank's GPU, cuda:rank mod GPU count) or Gloo.
// Blocks until every rank has joined (or --timeout passes, then throws).
std::unique_ptr<Communicator> make_communicator(const TrainOptions& o);

// The process groups of a tensor-, pipeline- and data-parallel job: the world
// and, for this rank, the members (global ranks, in group-rank order) of its
// tensor-, data- and pipeline-parallel groups. Every group is a Gloo process
// group on a PrefixStore over one rendezvous store (TCPStore or FileStore as
// make_communicator), so one --master-port serves them all; a group of one
// member is a no-op communicator (pipeline sends need two stages). GPU
// tensors go through host copies (Gloo moves host memory), and bf16 or fp16
// ones are summed in fp32.
struct ParallelGroups {
  std::unique_ptr<Communicator> world, tp, dp, pp;
};
ParallelGroups make_parallel_groups(const TrainOptions& o, const std::vector<int>& tp_members,
                                    const std::vector<int>& dp_members, const std::vector<int>& pp_members);

}  // namespace trainplan::train
