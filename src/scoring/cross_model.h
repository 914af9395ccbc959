// Predicting a network's step time before profiling it: leave-one-network-out
// over the Pollux traces (each trace is one network on the same T4 cluster).
// For each held-out trace, every row of its placements.csv (placement,
// per-GPU batch, measured step time) is predicted by:
//   paleo           PALEO's formula with datasheet figures (fits nothing);
//   paleo-transfer  PALEO's terms with factors fitted (NNLS) on the other
//                   networks' rows: the cluster's efficiency, learned once;
//   horus-xgb       Horus's graph features (conv and linear layer counts,
//                   parameters, FLOPs, batch; here with workers and nodes)
//                   fed to gradient-boosted trees trained on the other rows;
//   horus-xgb-residual  the same trees fitted to log(measured / paleo-transfer),
//                   so that they correct the analytical model, not replace it;
// and, as the bar that profiling sets, paleo-fit: the factors fitted on the
// held-out network's own rows, 5-fold cross-validated.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace trainplan::scoring {

struct CrossModelOptions {
  int folds = 5;      // for the paleo-fit reference
  uint64_t seed = 1;  // folds and trees
};

struct CrossModelRow {
  std::string trace, network;
  int rows = 0;
  std::map<std::string, double> mre;  // method -> MRE on the trace's step times
};

struct CrossModelReport {
  std::vector<std::string> methods;  // column order
  std::vector<CrossModelRow> traces;
  std::vector<std::string> skipped;  // traces without a known network, and why
};

// Runs the evaluation on the traces found under `data` (io::find_pollux_traces).
// Throws InputError when fewer than two traces have a known network.
CrossModelReport evaluate_cross_model(const std::string& data, const CrossModelOptions& opts = {});

std::string format_cross_model(const CrossModelReport& r);
std::string cross_model_json(const CrossModelReport& r);

}  // namespace trainplan::scoring
