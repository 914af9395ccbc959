#include "models/config_pooled_time_model.h"

#include <fmt/format.h>

#include "models/pooled_samples.h"

namespace trainplan::models {

void ConfigPooledTimeModel::fit(const SampleSet& samples) {
  const SampleSet pooled = distinct_time_configs(samples);
  inner_->fit(pooled);
  rows_ = samples.size();
  configs_ = pooled.size();
}

std::string ConfigPooledTimeModel::describe() const {
  std::string d = inner_->describe();
  if (rows_ > configs_)
    d += fmt::format("{}samples: {} rows pooled into {} configurations, one point each (their epochs-weighted mean "
                     "epoch time)",
                     d.empty() || d.back() == '\n' ? "" : "\n", rows_, configs_);
  return d;
}

}  // namespace trainplan::models
