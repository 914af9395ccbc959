#include "train/workloads.h"

#ifdef TRAINPLAN_WITH_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>
#include <stdexcept>

#include "train/options.h"

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

// An IDX file read as a byte stream: through zlib where the build has it, which
// reads a gzipped file (as Debian's dataset packages ship them) and a plain
// one alike; else plain files only.
class IdxStream {
 public:
  explicit IdxStream(const std::filesystem::path& p) : path_(p) {
#ifdef TRAINPLAN_WITH_ZLIB
    gz_ = gzopen(p.c_str(), "rb");
#else
    in_.open(p, std::ios::binary);
#endif
  }
  ~IdxStream() {
#ifdef TRAINPLAN_WITH_ZLIB
    if (gz_) gzclose(gz_);
#endif
  }
  IdxStream(const IdxStream&) = delete;
  IdxStream& operator=(const IdxStream&) = delete;
  bool is_open() const {
#ifdef TRAINPLAN_WITH_ZLIB
    return gz_ != nullptr;
#else
    return in_.is_open();
#endif
  }
  // Whether all `n` bytes were read; a damaged gzip stream throws, naming the file.
  bool read(void* into, int64_t n) {
#ifdef TRAINPLAN_WITH_ZLIB
    auto* p = static_cast<char*>(into);
    while (n > 0) {
      const unsigned chunk = unsigned(std::min<int64_t>(n, 1 << 30));
      const int got = gzread(gz_, p, chunk);
      if (got < 0) {
        int code = 0;
        throw std::runtime_error(path_.string() + ": " + gzerror(gz_, &code));
      }
      if (got == 0) return false;
      p += got;
      n -= got;
    }
    return true;
#else
    return bool(in_.read(static_cast<char*>(into), n));
#endif
  }
  uint32_t read_be32() {
    unsigned char b[4];
    if (!read(b, 4)) return 0;
    return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | uint32_t(b[3]);
  }

 private:
  std::filesystem::path path_;
#ifdef TRAINPLAN_WITH_ZLIB
  gzFile gz_ = nullptr;
#else
  std::ifstream in_;
#endif
};

// `dir/name`, else `dir/name.gz` where the build reads gzip; empty when neither exists.
std::filesystem::path idx_file(const std::filesystem::path& dir, const std::string& name) {
  std::error_code ec;
  if (std::filesystem::exists(dir / name, ec)) return dir / name;
  const auto gz = dir / (name + ".gz");
#ifdef TRAINPLAN_WITH_ZLIB
  if (std::filesystem::exists(gz, ec)) return gz;
#else
  if (std::filesystem::exists(gz, ec))
    throw std::runtime_error(gz.string() + " is gzipped, and this trainplan-train was built without zlib: gunzip it, "
                             "or rebuild with zlib (zlib1g-dev)");
#endif
  return {};
}

// How a workload's data set is had, for the messages that miss it.
std::string how_to_get(const std::string& subdir) {
  if (subdir == "fashion-mnist")
    return "Debian's dataset-fashion-mnist installs Fashion-MNIST in /usr/share/datasets (apt install dataset-fashion-mnist)";
  return "trainplan-datasets fetches MNIST into " + user_data_dir();
}

// The first `subset` items (all if 0) of an IDX file (LeCun's format: a
// big-endian magic number, one count per dimension, then unsigned bytes), as
// a [n, item dims...] byte tensor. torch's MNIST reader always reads all
// 60,000 images and converts them to floats, which costs a short time trial
// most of its start-up; this reads only what the trial uses.
torch::Tensor read_idx(const std::filesystem::path& dir, const std::string& name, uint32_t magic, int64_t subset) {
  std::filesystem::path p = idx_file(dir, name);
  if (p.empty())
    throw std::runtime_error("missing data file " + (dir / name).string() + " (" +
                             how_to_get(dir.filename().string()) + "; pass --data-dir or set TRAINPLAN_DATA_DIR)");
  IdxStream in(p);
  auto fail = [&](const std::string& what) { return std::runtime_error(p.string() + ": " + what); };
  if (!in.is_open()) throw fail("cannot open");
  if (in.read_be32() != magic) throw fail("not an IDX file of the expected kind (magic number)");
  std::vector<int64_t> shape{in.read_be32()};
  for (uint32_t d = 0; d < (magic & 0xff) - 1; ++d) shape.push_back(in.read_be32());
  for (int64_t extent : shape)
    if (extent == 0) throw fail("truncated header");
  if (subset > 0 && subset < shape[0]) shape[0] = subset;
  auto t = torch::empty(shape, torch::kByte);
  if (!in.read(t.data_ptr(), t.numel())) throw fail("truncated: fewer items than its header says");
  return t;
}

LabelledImages read_split(const std::filesystem::path& dir, bool train, int64_t subset, const Normalisation& n) {
  const std::string prefix = train ? "train" : "t10k";
  // MNIST and Fashion-MNIST share the IDX layout and file names. Pixels are
  // scaled to [0, 1] as torch's reader scales them, then normalised.
  auto images = read_idx(dir, prefix + "-images-idx3-ubyte", 0x803, subset);
  auto labels = read_idx(dir, prefix + "-labels-idx1-ubyte", 0x801, subset);
  if (images.size(0) != labels.size(0))
    throw std::runtime_error(dir.string() + ": " + prefix + " images and labels differ in count");
  // A subset past the data is not an error (the whole split is a valid trial),
  // but a trial that trains on fewer images than asked must say so.
  if (subset > images.size(0))
    std::cerr << "warning: --" << (train ? "train" : "test") << "-subset " << subset << " is more than the "
              << images.size(0) << " " << (train ? "training" : "test") << " images in " << dir.string()
              << "; using all " << images.size(0) << "\n";
  auto pixels = images.unsqueeze(1).to(torch::kFloat32).div_(255);
  return {(pixels - n.mean) / n.stddev, labels.to(torch::kInt64)};
}

// The first directory of the search path that holds the workload's training
// images. With one directory given, that directory (a missing file is then
// named); with none found among several, an error listing where it looked.
std::filesystem::path find_data(const std::string& workload, const Normalisation& n, const std::string& data_dir) {
  const auto dirs = data_search_path(data_dir);
  if (dirs.empty()) throw std::runtime_error("--data-dir or $TRAINPLAN_DATA_DIR names no directory");
  if (dirs.size() == 1) return std::filesystem::path(dirs[0]) / n.subdir;
  std::string looked;
  for (const auto& d : dirs) {
    const auto dir = std::filesystem::path(d) / n.subdir;
    if (!idx_file(dir, "train-images-idx3-ubyte").empty()) return dir;
    looked += "\n  " + dir.string();
  }
  throw std::runtime_error("no " + std::string(n.subdir) + " data for --workload " + workload +
                           " (train-images-idx3-ubyte, gzipped or not) in any of:" + looked + "\n" +
                           how_to_get(n.subdir) + "; or pass --data-dir DIR or set TRAINPLAN_DATA_DIR to the "
                           "directory that holds " + n.subdir + "/");
}

}  // namespace

WorkloadData load_workload_data(const std::string& workload, const std::string& data_dir, int64_t train_subset,
                                int64_t test_subset) {
  auto n = normalisation_for(workload);
  const auto dir = find_data(workload, n, data_dir);
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
