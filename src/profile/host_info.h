// A one-line description of this machine for the samples' `hardware`
// column: CPU model and core count, and the GPUs the NVIDIA driver lists
// (no commas: it goes into a CSV cell).
#pragma once
#include <string>

namespace trainplan::profile {

std::string host_description();  // e.g. "Intel Xeon @ 2.20GHz x2 cores + 1x NVIDIA H200"

}  // namespace trainplan::profile
