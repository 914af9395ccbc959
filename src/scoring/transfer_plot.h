// Pictures of `evaluate --transfer`: per network, every method's predicted
// step time on the target GPU against the measured one, so that a user sees
// where a transfer errs (the small, host-bound batches or the large ones; one
// GPU or many), not only its MRE.
#pragma once
#include <string>
#include <vector>

#include "io/gnuplot.h"
#include "scoring/transfer_eval.h"

namespace trainplan::scoring {

// One panel per network, in the report's order, from the first seed's
// answers (NetworkTransfer::first_seed_points): log-log, one series per
// method ranked by that seed's MRE (the best drawn last, on top; a method
// keeps its colour in every panel), the target trials the headline method
// was fitted on as open circles, and the line predicted = measured. A
// network with nothing drawable gives no panel.
std::vector<io::PlotPanel> transfer_panels(const TransferReport& r);

// Pictures of `transfer --plot`: a job's times predicted on the target GPU
// beside those measured on the source, by the batch per GPU, one colour per
// group of configurations (a placement of a trace, a worker count of
// samples).
struct TransferPredictedTime {
  std::string group;  // "placement 4", "2 workers"
  double batch = 0;   // per GPU
  double time_s = 0, low80_s = 0, high80_s = 0;  // predicted, with its 80% interval (low = high = time: none)
  // The predicted step's parts, for the breakdown panel; negative: not known.
  double host_s = -1, gpu_s = -1, exposed_comm_s = -1;
  // GPUs the group runs on, and their nodes: the breakdown is of the group
  // on the most GPUs, across the most nodes of those.
  int gpus = 1, nodes = 1;
};
struct TransferMeasuredTime {
  std::string group;
  double batch = 0, time_s = 0;
};
struct TransferPlotLabels {
  std::string title;                  // the first panel's (the job, the two GPUs)
  std::string from, to;               // the GPUs' names
  std::string time = "seconds per step";  // the time's axis label
};
// Left: log-log time against batch, each group's prediction on `to` as a
// line with its 80% interval dashed about it (a dashed bar at a single
// batch), its measurements on `from` as circles and the steps measured on
// `to` that corrected it (`target_measured`) as squares, in the group's
// colour; at most 8 groups (evenly spread over those given, in order; the
// title says how many were left out). Right, when the rows carry their
// parts: the predicted time of the drawn group on the most GPUs (of those,
// across the most nodes) split into host, GPU and exposed communication, by
// batch. A group's repeated batch is drawn once. Empty when no row is
// drawable.
std::vector<io::PlotPanel> transfer_prediction_panels(const std::vector<TransferPredictedTime>& predicted,
                                                      const std::vector<TransferMeasuredTime>& measured,
                                                      const TransferPlotLabels& labels,
                                                      const std::vector<TransferMeasuredTime>& target_measured = {});

}  // namespace trainplan::scoring
