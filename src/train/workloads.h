// The two reference workloads: LeNet-5 on MNIST and a small MLP on
// Fashion-MNIST. Each is a network plus its whole data set held in memory.
#pragma once
#include <torch/torch.h>

#include <string>

namespace trainplan::train {

// Images normalised to zero mean and unit variance, shape [N, 1, 28, 28];
// labels int64 in [0, 10), shape [N].
struct LabelledImages {
  torch::Tensor images;
  torch::Tensor labels;
  int64_t size() const { return labels.size(0); }
};

struct WorkloadData {
  LabelledImages train;  // the first `train_subset` of the 60k images (all if 0)
  LabelledImages test;   // the first `test_subset` of the 10k images (all if 0)
};

// Reads `mnist/` or `fashion-mnist/` (raw IDX files, each plain or gzipped)
// from the first directory of data_search_path(data_dir) that holds it.
// Throws std::runtime_error naming the missing or damaged file, or, when
// several directories were searched, listing them and how to get the data.
WorkloadData load_workload_data(const std::string& workload, const std::string& data_dir, int64_t train_subset,
                                int64_t test_subset);

// A freshly initialised network; its initial weights come from torch's
// global generator, so seed it first for identical replicas.
torch::nn::Sequential make_network(const std::string& workload);

// The SGD learning rate used when --lr is not given.
double default_learning_rate(const std::string& workload);

}  // namespace trainplan::train
