// The synchronous data-parallel training loop of `trainplan-train`.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>

namespace c10 {
struct Device;
}

namespace trainplan::train {

struct TrainOptions;
class Communicator;

// Receives one JSON event (a line of output).
using EventSink = std::function<void(const nlohmann::json&)>;

// Trains o.workload for o.epochs on rank o.rank of o.workers.
//
// Each epoch every rank shuffles the same index list (seeded by o.seed and the
// epoch), pads it to a multiple of R by repeating its head, and takes every
// R-th index from its rank on (as torch's DistributedSampler does). It then
// runs ceil(N/R / B) steps of batch B; after each backward pass the gradients
// are summed over ranks with one all-reduce and divided by R, so every
// replica takes the same SGD step. Because rank k's j-th batch holds the
// global positions jBR + k + iR, the union of the R batches of step j is
// exactly the j-th batch of size B*R of a one-worker run with the same seed.
//
// `report` gets the epoch and done events (call it only on rank 0 to print);
// `debug` gets per-rank param_checksum events when o.check_sync is set.
// `connect` is called once the data are loaded (so that a missing file fails
// before the rendezvous) and returns this rank's communicator.
using Connect = std::function<std::unique_ptr<Communicator>()>;
void train(const TrainOptions& o, const Connect& connect, const EventSink& report, const EventSink& debug);

// The device o.device names: "cpu"; "cuda", the GPU of index rank mod GPU
// count (throws without one); "auto", that GPU when this build has CUDA and
// sees one, else the CPU. Every workload trains where this says.
c10::Device pick_device(const TrainOptions& o);

}  // namespace trainplan::train
