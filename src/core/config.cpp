#include "core/config.h"

#include <fmt/format.h>

namespace trainplan {

std::string to_string(const Config& c) {
  return fmt::format("batch={} workers={} epochs={}", c.batch, c.workers, c.epochs);
}

}  // namespace trainplan
