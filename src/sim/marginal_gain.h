// Greedy marginal-gain allocation (Optimus, EuroSys'18): hand out
// GPUs one at a time to the job whose next GPU gains the most (the optimus
// policy's allocation).
#pragma once
#include <functional>
#include <vector>

namespace trainplan::sim {

// Gives up to `free` GPUs, one at a time, to the job i with the largest
// gain(i) = the gain of raising alloc[i] by one (ties: the larger index).
// gain(i) is asked again after each GPU job i receives; a gain <= 0 means the
// job takes no more. Returns the GPUs left over.
int give_gpus_by_marginal_gain(std::vector<int>& alloc, int free, const std::function<double(size_t)>& gain);

}  // namespace trainplan::sim
