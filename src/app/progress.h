// Progress notes from slow steps of a query, for a CLI or a log.
#pragma once
#include <functional>
#include <string>

namespace trainplan::app {

// Told before a slow step: choosing models by cross-validation, fitting a
// model. Either may be empty.
struct Progress {
  std::function<void(const std::string&)> choosing, fitting;
};

}  // namespace trainplan::app
