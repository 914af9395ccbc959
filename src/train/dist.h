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
};

// For --workers 1, a communicator whose collectives are no-ops. Otherwise a
// Gloo process group over a TCPStore hosted by rank 0 at
// --master-addr:--master-port, or over a FileStore at --store-path.
// Blocks until every rank has joined (or --timeout passes, then throws).
std::unique_ptr<Communicator> make_communicator(const TrainOptions& o);

}  // namespace trainplan::train
