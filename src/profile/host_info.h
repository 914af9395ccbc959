// A one-line description of this machine for the samples' `hardware`
// column: CPU model and core count (no commas: it goes into a CSV cell).
#pragma once
#include <string>

namespace trainplan::profile {

std::string host_description();  // e.g. "Intel Xeon @ 2.20GHz x2 cores"

}  // namespace trainplan::profile
