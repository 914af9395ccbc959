// Pictures of `evaluate --transfer`: per network, every method's predicted
// step time on the target GPU against the measured one, so that a user sees
// where a transfer errs (the small, host-bound batches or the large ones; one
// GPU or many), not only its MRE.
#pragma once
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

}  // namespace trainplan::scoring
