// The collectives the trainer needs, behind a small interface so that a
// single-worker run needs no process group and no rendezvous.
#pragma once
#include <memory>

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
  virtual void barrier() = 0;
  // "none" (one worker, no process group), "gloo" or "nccl".
  virtual const char* backend() const = 0;
};

// For --workers 1 with --backend auto, a communicator whose collectives are
// no-ops. Otherwise a process group over a TCPStore hosted by rank 0 at
// --master-addr:--master-port, or over a FileStore at --store-path: NCCL
// (--backend nccl, or auto on a GPU in a build with NCCL; CPU tensors are
// reduced through the rank's GPU, cuda:rank mod GPU count) or Gloo.
// Blocks until every rank has joined (or --timeout passes, then throws).
std::unique_ptr<Communicator> make_communicator(const TrainOptions& o);

}  // namespace trainplan::train
