// `evaluate --transfer`: how well step times measured on one GPU predict the
// step times of the same networks on another (docs/TRANSFER.md).
//
// For each network found under both trace folders (Pollux format, one folder
// per network, or the two folders themselves), every transfer method is
// fitted on all of the source's rows (placements.csv and scalability.csv)
// plus K rows of the target's placements.csv drawn by the seed, and predicts
// every other row of the target's placements.csv. The score is equation 12,
// sum |pred - true| / sum true, over the predicted rows. All methods see the
// same trials.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "models/transfer.h"
#include "models/transfer_split.h"
#include "structure/gpu_catalog.h"

namespace trainplan::scoring {

struct TransferEvalOptions {
  std::string from, to;  // trace folders
  structure::HardwareProfile from_hw, to_hw;
  int target_trials = 0;
  std::vector<uint64_t> seeds = {1};  // one evaluation per seed (trials differ)
  std::vector<std::string> methods;   // registered transfer methods; empty: all
  std::string headline = "split-transfer";  // the method "mre" reports
  // When set, every predicted row of the first seed is written here (CSV:
  // network, method, placement, batch, measured and predicted step time).
  std::string rows_out;
  // The network's layer graph by name (trainplan network), for one pair of
  // folders whose names do not say it; "" takes it from the folders' names.
  std::string network;
  // The training's precision when known, profiled and on the target
  // (models::TransferProblem::precision).
  models::TrainingPrecision precision;
  // Told before each network's fits ("network 2/6 cifar10"), for a CLI's
  // progress line; may be empty.
  std::function<void(const std::string&)> progress;
};

// Mean over the predicted rows of split-transfer's parts, seconds.
struct MeanParts {
  double host = 0, gpu_fixed = 0, compute = 0, memory = 0, exposed_comm = 0, total = 0;
};

// split-transfer on one network with one seed's trials.
struct SplitSeedDetail {
  uint64_t seed = 0;
  double host = 1, gpu_step = 1, gpu_example = 1, comm = 1, host_base_s = 0;  // fitted factors
  bool comm_fitted = false;
  // The part whose mean over the predicted rows the trials moved most, in
  // seconds ("host", "gpu_step", "gpu_example", or "comm": the exposed
  // all-reduce), or "none" when none moved by 2% of the step; and its mean
  // after the trials over its mean before.
  std::string corrected;
  double correction = 1;
  MeanParts fitted_parts;    // with the factors
  double mre = 0;
};

struct NetworkTransfer {
  std::string network;
  std::string from_dir, to_dir;
  size_t source_rows = 0, target_rows = 0, predicted_rows = 0;
  std::map<std::string, std::vector<double>> mre;  // method -> MRE per seed (options' order)
  // For methods that say how far off they may be (TransferModel::log_sd):
  // per seed, the share of predicted rows inside the 80% interval, and the
  // median row's interval factor exp(z sd) (the interval is the prediction
  // times and divided by it).
  std::map<std::string, std::vector<double>> holds80, factor80;
  // split-transfer's decomposition (when it ran): the source fit, the
  // hardware ratios and the parts before trials are seed-independent.
  bool has_split = false;
  nlohmann::json split_source, split_ratios;
  MeanParts prior_parts;
  std::vector<SplitSeedDetail> split_seeds;
  std::string describe;  // split-transfer's describe() for the first seed
  // The first seed's answers, for pictures: each method's (measured,
  // predicted) step time at every predicted row, and the headline method's at
  // the trials it was fitted on.
  std::map<std::string, std::vector<std::pair<double, double>>> first_seed_points;
  std::vector<std::pair<double, double>> first_seed_trials;
};

struct TransferReport {
  TransferEvalOptions options;
  std::vector<std::string> methods;
  std::vector<NetworkTransfer> networks;
  // Networks under only one of the folders, and those whose target trace has
  // no row left to predict past the K trials (each with why).
  std::vector<std::string> skipped;
  // The traces among them that could not be read (file, line and column):
  // the caller exits 2 after the answer.
  std::vector<InputError> unreadable;
  // What the caller should know of the pairing: two single-network folders
  // whose names are different networks of the zoo.
  std::vector<std::string> warnings;
};

// Throws InputError when no network is left to score: none common to both
// folders, none readable (the first unreadable trace's file, line and
// column), K at least every common target's rows; or an unknown method. A
// network whose trace is unreadable or too short among others is skipped
// (and an unreadable one kept in `unreadable`).
TransferReport evaluate_transfer(const TransferEvalOptions& opts);

// The median over seeds of a network's MRE for `method`.
double seed_median(const NetworkTransfer& n, const std::string& method);
// The median over networks of seed_median.
double network_median(const TransferReport& r, const std::string& method);
// The normal quantile of an 80% two-sided interval.
inline constexpr double kZ80 = 1.2815515655446004;

nlohmann::json transfer_json(const TransferReport& r);
std::string format_transfer(const TransferReport& r);

// The order in which `evaluate --transfer` takes a target's `rows` rows as
// trials under `seed` (the first K are its K trials): a seed names the same
// rows wherever trials are drawn (`simulate --gpu --target-trials`).
std::vector<size_t> trial_order(size_t rows, uint64_t seed);

// Trace rows as transfer samples: placements.csv (and scalability.csv when
// `with_scalability`, each row spread evenly over its nodes).
std::vector<models::StepSample> trace_samples(const std::string& dir, bool with_scalability);

// The hardware ratios split-transfer scaled each part by, as JSON
// ("per_example_gpu", "inter_node_link", "precision", ...).
nlohmann::json ratios_json(const models::SplitRatios& r);

}  // namespace trainplan::scoring
