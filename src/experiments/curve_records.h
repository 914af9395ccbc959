// How the metric the co-configuration benchmark judges moves where its
// targets lie. The judge (replay/ReplayOracle) reads a run's metric as the best
// value its validation curve has reached so far, so it moves in steps: one at
// each evaluation that sets a record, flat in between. Where a run nears its
// best, records come several epochs apart because the curve's noise from one
// evaluation to the next is larger than its progress per epoch. A target there
// is met at the epoch the next record happens to fall on, which no smooth model
// of the curve can place to the epoch (`trainplan bench records`).
#pragma once
#include <string>
#include <vector>

#include "core/sample.h"
#include "io/pollux_trace.h"

namespace trainplan::experiments {

struct RecordsParams {
  // The window: from where the running best first covers `from` of the way
  // from the first evaluation to the final best, to where it first covers `to`
  // (the benchmark's scenario targets lie at 0.80 to 0.98 of a trace's range).
  double from = 0.80, to = 0.98;
};

struct CurveRecords {
  long global_batch = 0;
  double last_epoch = 0;             // data epochs of the curve's last evaluation
  double window_from = 0, window_to = 0;  // data epochs of the window's ends
  int window_steps = 0;              // evaluations after window_from up to window_to
  int window_records = 0;            // of them, those that beat every earlier evaluation
  // Data epochs between consecutive records in the window, from the record at
  // window_from (0 when the window holds no step).
  double mean_flat_epochs = 0;
  double longest_flat_epochs = 0;
  // Share of the window's steps that make the raw metric worse than the evaluation before.
  double worse_steps = 0;
};

// Fewer evaluations than this tell records from noise no better than chance.
inline constexpr size_t kMinRecordsEvaluations = 4;

// One curve: data epochs of row k = iteration_k * global_batch / dataset_size.
// Throws InputError (naming the curve's file) when dataset_size <= 0, the
// curve has fewer than kMinRecordsEvaluations evaluations, or the window is
// not 0 <= from < to <= 1.
CurveRecords curve_records(const io::ValidationCurve& curve, long dataset_size, MetricDirection direction,
                           const RecordsParams& params = {});

}  // namespace trainplan::experiments
