#include "train/workloads.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>
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

uint32_t read_be32(std::istream& in) {
  unsigned char b[4];
  if (!in.read(reinterpret_cast<char*>(b), 4)) return 0;
  return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | uint32_t(b[3]);
}

// The first `subset` items (all if 0) of an IDX file (LeCun's format: a
// big-endian magic number, one count per dimension, then unsigned bytes), as
// a [n, item dims...] byte tensor. torch's MNIST reader always reads all
// 60,000 images and converts them to floats, which costs a short time trial
// most of its start-up; this reads only what the trial uses.
torch::Tensor read_idx(const std::filesystem::path& p, uint32_t magic, int64_t subset) {
  std::ifstream in(p, std::ios::binary);
  auto fail = [&](const std::string& what) { return std::runtime_error(p.string() + ": " + what); };
  if (!in && !std::filesystem::exists(p))
    throw std::runtime_error("missing data file " + p.string() +
                             " (pass --data-dir or set TRAINPLAN_DATA_DIR; scripts/install-deps.sh installs it)");
  if (!in) throw fail("cannot open");
  if (read_be32(in) != magic) throw fail("not an IDX file of the expected kind (magic number)");
  std::vector<int64_t> shape{read_be32(in)};
  for (uint32_t d = 0; d < (magic & 0xff) - 1; ++d) shape.push_back(read_be32(in));
  if (!in) throw fail("truncated header");
  if (subset > 0 && subset < shape[0]) shape[0] = subset;
  auto t = torch::empty(shape, torch::kByte);
  if (!in.read(reinterpret_cast<char*>(t.data_ptr()), t.numel())) throw fail("truncated: fewer items than its header says");
  return t;
}

LabelledImages read_split(const std::string& dir, bool train, int64_t subset, const Normalisation& n) {
  const std::string prefix = train ? "train" : "t10k";
  // MNIST and Fashion-MNIST share the IDX layout and file names. Pixels are
  // scaled to [0, 1] as torch's reader scales them, then normalised.
  auto images = read_idx(std::filesystem::path(dir) / (prefix + "-images-idx3-ubyte"), 0x803, subset);
  auto labels = read_idx(std::filesystem::path(dir) / (prefix + "-labels-idx1-ubyte"), 0x801, subset);
  if (images.size(0) != labels.size(0))
    throw std::runtime_error(dir + ": " + prefix + " images and labels differ in count");
  auto pixels = images.unsqueeze(1).to(torch::kFloat32).div_(255);
  return {(pixels - n.mean) / n.stddev, labels.to(torch::kInt64)};
}

}  // namespace

WorkloadData load_workload_data(const std::string& workload, const std::string& data_dir, int64_t train_subset,
                                int64_t test_subset) {
  auto n = normalisation_for(workload);
  std::string dir = (std::filesystem::path(data_dir) / n.subdir).string();
  return {read_split(dir, true, train_subset, n), read_split(dir, false, test_subset, n)};
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
