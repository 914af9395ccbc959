#include "train/workloads.h"

#include <filesystem>
#include <stdexcept>

namespace trainplan::train {
namespace {

struct Normalisation {
  const char* subdir;
  double mean, stddev;  // of the training pixels in [0, 1]
};

Normalisation normalisation_for(const std::string& workload) {
  if (workload == "lenet-mnist") return {"mnist", 0.1307, 0.3081};
  if (workload == "mlp-fashion") return {"fashion-mnist", 0.2860, 0.3530};
  throw std::invalid_argument("unknown workload '" + workload + "' (lenet-mnist or mlp-fashion)");
}

LabelledImages read_split(const std::string& dir, torch::data::datasets::MNIST::Mode mode, int64_t subset,
                          const Normalisation& n) {
  const bool train = mode == torch::data::datasets::MNIST::Mode::kTrain;
  const std::string prefix = train ? "train" : "t10k";
  for (const char* kind : {"-images-idx3-ubyte", "-labels-idx1-ubyte"}) {
    auto p = std::filesystem::path(dir) / (prefix + kind);
    if (!std::filesystem::exists(p))
      throw std::runtime_error("missing data file " + p.string() +
                               " (pass --data-dir or set TRAINPLAN_DATA_DIR; scripts/install-deps.sh installs it)");
  }
  // torch's reader handles MNIST and Fashion-MNIST alike: same IDX layout and
  // file names. It returns pixels scaled to [0, 1].
  torch::data::datasets::MNIST ds(dir, mode);
  LabelledImages out{ds.images(), ds.targets()};
  if (subset > 0 && subset < out.size()) {
    out.images = out.images.slice(0, 0, subset);
    out.labels = out.labels.slice(0, 0, subset);
  }
  out.images = ((out.images - n.mean) / n.stddev).contiguous();
  out.labels = out.labels.to(torch::kInt64).contiguous();
  return out;
}

}  // namespace

WorkloadData load_workload_data(const std::string& workload, const std::string& data_dir, int64_t train_subset,
                                int64_t test_subset) {
  auto n = normalisation_for(workload);
  std::string dir = (std::filesystem::path(data_dir) / n.subdir).string();
  return {read_split(dir, torch::data::datasets::MNIST::Mode::kTrain, train_subset, n),
          read_split(dir, torch::data::datasets::MNIST::Mode::kTest, test_subset, n)};
}

torch::nn::Sequential make_network(const std::string& workload) {
  namespace nn = torch::nn;
  if (workload == "lenet-mnist") {
    // LeNet-5 (LeCun et al. 1998) with the common modern substitutions:
    // ReLU for the scaled tanh, max-pooling for the trainable subsampling,
    // a full C3 connection table, and a linear output layer with softmax loss
    // in place of the RBF units. 61,706 parameters.
    return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 6, 5).padding(2)), nn::ReLU(),
                          nn::MaxPool2d(nn::MaxPool2dOptions(2)),                       // 6x14x14
                          nn::Conv2d(nn::Conv2dOptions(6, 16, 5)), nn::ReLU(),          // 16x10x10
                          nn::MaxPool2d(nn::MaxPool2dOptions(2)),                       // 16x5x5
                          nn::Flatten(), nn::Linear(400, 120), nn::ReLU(), nn::Linear(120, 84), nn::ReLU(),
                          nn::Linear(84, 10));
  }
  if (workload == "mlp-fashion") {
    // 784-256-128-10 with ReLU: 235,146 parameters.
    return nn::Sequential(nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 128), nn::ReLU(),
                          nn::Linear(128, 10));
  }
  throw std::invalid_argument("unknown workload '" + workload + "' (lenet-mnist or mlp-fashion)");
}

// 0.01 with momentum 0.9 is stable for both at b = 16; 0.05 made the MLP diverge
// at b = 16 (23.6% accuracy after one epoch, docs/TRAINER.md).
double default_learning_rate(const std::string&) { return 0.01; }

}  // namespace trainplan::train
