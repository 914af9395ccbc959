// A model held to the profiled trials of each configuration, and to the
// points read off their learning curves (SampleSet::curve), which count as
// trials here. The metric of a
// run (best so far, as the replay traces and checkpoint selection report it)
// cannot get worse with more epochs, so at (b, r, e) it is
//  * at least as good as the best a trial of (b, r) reached within e epochs
//    (the floor; where several trials ran the same epochs, reruns, the worst
//    of them: each run vouches for itself, not for the next), and
//  * no better than the worst a trial of (b, r) reached with e epochs or more
//    (the cap),
// whatever a model says. Both come from measurements, so they hold where a
// model's interval may not: a trial that met the target at e1 epochs makes
// every e >= e1 feasible, one that missed it at e2 rules out every e <= e2.
// Where the two disagree (reruns: the floor better than the cap), neither
// holds for the next run, and the model's value is held between them: the
// luckiest rerun does not make a configuration feasible that the others
// missed. Monotone in epochs whenever the wrapped model is. Epoch times pass
// through unchanged.
//
// With the `point` model the wrapped (pessimistic) side was made from, the
// pessimistic side at a measured configuration is also shifted by the point
// model's misfit at its trials of e' >= e epochs, where that misfit is
// optimistic (the model promised better than the trial measured): at e, no
// better than inner(e) + (trial - point(e')) for each. Why: the interval is
// calibrated on the model's error where it has no sample; a run's own trial
// shows its error there, and the errors at the epochs before a trial move
// with it. Only later trials, as for the cap, so the result stays monotone.
#pragma once
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/sample.h"
#include "models/performance_model.h"

namespace trainplan::uncertainty {

class MeasuredBoundsModel : public models::PerformanceModel {
 public:
  MeasuredBoundsModel(std::shared_ptr<const models::PerformanceModel> inner, const SampleSet& samples,
                      std::shared_ptr<const models::PerformanceModel> point = nullptr);
  std::optional<double> epoch_time(int batch, int workers, int nodes) const override;
  std::optional<double> metric(int batch, int workers, double epochs) const override;
  MetricDirection direction() const override { return inner_->direction(); }
  std::string name() const override;

 private:
  struct Trials {
    std::vector<double> epochs;  // increasing
    std::vector<double> floor;   // best over epoch counts <= epochs[i] of the worst trial at each
    std::vector<double> cap;     // worst metric over trials with >= epochs[i] epochs
    std::vector<double> shift;   // largest optimistic misfit of the point model over trials with >= epochs[i] epochs (0: none)
  };
  std::shared_ptr<const models::PerformanceModel> inner_, point_;
  bool curves_ = false;  // some trials came with learning-curve points
  std::map<std::pair<double, int>, Trials> trials_;  // by (batch, workers)
};

}  // namespace trainplan::uncertainty
