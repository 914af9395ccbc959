// trainplan-layer-bench: times the forward and backward pass of randomly drawn
// layers with libtorch on this machine, the training data of Justus et al.'s
// per-layer model (models/layer_time_model.h). One CSV row per
// layer, in the format io/layer_timing_csv.h reads.
#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

struct Drawn {
  std::string kind;  // conv, linear, pool, relu, batchnorm
  int batch = 1, in_channels = 0, out_channels = 0, kernel = 0, stride = 1, padding = 0, height = 0, width = 0;
  int in_features = 0, out_features = 0;
};

template <typename T>
T pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

Drawn draw(std::mt19937_64& rng) {
  Drawn d;
  d.kind = pick<std::string>(rng, {"conv", "conv", "conv", "linear", "linear", "pool", "relu", "batchnorm"});
  d.batch = pick(rng, std::vector<int>{4, 8, 16, 32, 64, 128, 256});
  if (d.kind == "linear") {
    d.in_features = pick(rng, std::vector<int>{10, 32, 64, 84, 120, 256, 400, 512, 784, 1024, 2048});
    d.out_features = pick(rng, std::vector<int>{10, 32, 64, 84, 120, 256, 512, 1024});
    return d;
  }
  d.in_channels = pick(rng, std::vector<int>{1, 3, 6, 16, 32, 64, 128});
  d.height = d.width = pick(rng, std::vector<int>{5, 8, 14, 16, 28, 32});
  if (d.kind == "conv") {
    d.out_channels = pick(rng, std::vector<int>{6, 16, 32, 64, 128});
    d.kernel = std::min(pick(rng, std::vector<int>{1, 3, 5}), d.height);
    d.stride = pick(rng, std::vector<int>{1, 1, 2});
    d.padding = pick(rng, std::vector<int>{0, d.kernel / 2});
  } else if (d.kind == "pool") {
    d.kernel = 2, d.stride = 2;
  }
  return d;
}

// Median seconds of forward + backward (gradient of the output's sum).
double time_layer(const Drawn& d, int reps, const torch::Device& device) {
  torch::nn::AnyModule m;
  torch::Tensor x;
  if (d.kind == "linear") {
    m = torch::nn::AnyModule(torch::nn::Linear(d.in_features, d.out_features));
    x = torch::randn({d.batch, d.in_features});
  } else {
    x = torch::randn({d.batch, d.in_channels, d.height, d.width});
    if (d.kind == "conv")
      m = torch::nn::AnyModule(torch::nn::Conv2d(
          torch::nn::Conv2dOptions(d.in_channels, d.out_channels, d.kernel).stride(d.stride).padding(d.padding)));
    else if (d.kind == "pool")
      m = torch::nn::AnyModule(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(d.kernel).stride(d.stride)));
    else if (d.kind == "relu")
      m = torch::nn::AnyModule(torch::nn::ReLU());
    else
      m = torch::nn::AnyModule(torch::nn::BatchNorm2d(d.in_channels));
  }
  m.ptr()->to(device);
  x = x.to(device);
  x.set_requires_grad(true);
  std::vector<double> t;
  for (int i = 0; i < reps + 2; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto y = m.forward(x);
    y.sum().backward();
    if (device.is_cuda()) torch::cuda::synchronize();  // GPU work is asynchronous
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i >= 2) t.push_back(s);  // two warm-up runs
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int layers = 300, reps = 5, threads = 1;
  uint64_t seed = 1;
  std::string out, device_name = "cpu";
  CLI::App app{"trainplan-layer-bench: time randomly drawn layers (forward + backward) with libtorch on this machine.\n"
               "Writes the layer-timing CSV that `trainplan evaluate --layer-timings` reads (docs/lab/MODELS-TIME.md)."};
  app.add_option("--layers", layers, "Layers to draw and time")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--reps", reps, "Timed repetitions per layer (median kept, after 2 warm-ups)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--threads", threads, "Torch intra-op threads (the trainer's default is 1)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--seed", seed, "Seed of the drawn layers")->capture_default_str();
  app.add_option("--device", device_name, "cpu or cuda (the first GPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("-o,--out", out, "CSV to write")->required();
  CLI11_PARSE(app, argc, argv);
  if (device_name == "cuda" && !torch::cuda::is_available()) {
    std::cerr << "trainplan-layer-bench: --device cuda, but this build has no CUDA or no GPU is visible\n";
    return 2;
  }
  const torch::Device device(device_name == "cuda" ? torch::kCUDA : torch::kCPU);
  at::set_num_threads(threads);
  at::set_num_interop_threads(1);
  torch::manual_seed(static_cast<uint64_t>(seed));
  std::ofstream f(out);
  if (!f) {
    std::cerr << "trainplan-layer-bench: cannot write " << out << "\n";
    return 2;
  }
  f << "# trainplan-layer-bench: device=" << device_name << " threads=" << threads << " reps=" << reps << " seed=" << seed << "\n";
  f << "kind,batch,in_channels,out_channels,kernel,stride,padding,height,width,in_features,out_features,time_s\n";
  std::mt19937_64 rng(seed);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < layers; ++i) {
    const Drawn d = draw(rng);
    const double s = time_layer(d, reps, device);
    f << d.kind << ',' << d.batch << ',' << d.in_channels << ',' << d.out_channels << ',' << d.kernel << ','
      << d.stride << ',' << d.padding << ',' << d.height << ',' << d.width << ',' << d.in_features << ','
      << d.out_features << ',' << s << '\n';
    f.flush();  // a stopped run keeps what it measured
    if ((i + 1) % 25 == 0 || i + 1 == layers) {
      double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "[%d/%d] %.1fs elapsed, ETA %.1fs\n", i + 1, layers, el, el / (i + 1) * (layers - i - 1));
    }
  }
  return 0;
}
