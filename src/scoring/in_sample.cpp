#include "scoring/in_sample.h"

#include <vector>

#include "core/cancel.h"
#include "scoring/evaluate.h"
#include "scoring/mre.h"

namespace trainplan::scoring {

InSampleScore in_sample_time(const models::TimeModel& m, const SampleSet& samples) {
  std::vector<double> pred, truth;
  for (const auto& x : distinct_time_configs(samples).samples) {
    check_cancelled();
    pred.push_back(m.predict(x.batch, x.workers, x.nodes)), truth.push_back(x.epoch_time_s);
  }
  return {mre(pred, truth), truth.size()};
}

InSampleScore in_sample_metric(const models::MetricModel& m, const SampleSet& samples) {
  require_scoreable_metric(samples);
  std::vector<double> pred, truth;
  for (const auto& x : samples.with_metric()) {
    check_cancelled();
    pred.push_back(m.predict(x.batch, x.workers, x.epochs)), truth.push_back(*x.metric);
  }
  return {mre(pred, truth), truth.size()};
}

}  // namespace trainplan::scoring
