// trainplan-gemm-bench: measures the throughput of the matrix products a
// transformer layer runs (QKV, attention output, the two FFN products, each
// for a tensor-parallel split of the weights) and of square products, with
// libtorch on this machine's CPU or GPU. One CSV row per shape: the data of a
// size-dependent matmul efficiency, a fraction of the datasheet's peak.
#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

struct Shape {
  std::string kind;  // qkv, attn_out, fc1, fc2, square
  int64_t m, n, k;   // [m, k] x [k, n]
  int hidden = 0, tp = 1;
};

std::vector<Shape> transformer_shapes(const std::vector<int64_t>& tokens, const std::vector<int>& hiddens,
                                      const std::vector<int>& tps) {
  std::vector<Shape> v;
  for (int64_t m : tokens)
    for (int h : hiddens)
      for (int tp : tps) {
        if (h % tp != 0) continue;
        v.push_back({"qkv", m, 3 * int64_t(h) / tp, h, h, tp});
        v.push_back({"attn_out", m, h, int64_t(h) / tp, h, tp});
        v.push_back({"fc1", m, 4 * int64_t(h) / tp, h, h, tp});
        v.push_back({"fc2", m, h, 4 * int64_t(h) / tp, h, tp});
      }
  return v;
}

void sync(const torch::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize();
}

// Median seconds of one product over `reps` batches of products, each batch
// long enough (>= min_batch_s) that the clock and the launch do not dominate.
double time_product(const Shape& s, torch::ScalarType dtype, const torch::Device& device, int reps,
                    double min_batch_s) {
  auto opts = torch::TensorOptions(dtype).device(device);
  auto a = torch::randn({s.m, s.k}, opts), b = torch::randn({s.k, s.n}, opts);
  auto c = torch::empty({s.m, s.n}, opts);
  using Clock = std::chrono::steady_clock;
  auto run = [&](int count) {
    sync(device);
    const auto t0 = Clock::now();
    for (int i = 0; i < count; ++i) torch::mm_out(c, a, b);
    sync(device);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  run(2);  // warm-up: library heuristics, allocator, clocks
  int count = 1;
  double t = run(count);
  while (t < min_batch_s && count < (1 << 20)) {
    count *= 2;
    t = run(count);
  }
  std::vector<double> per;
  per.push_back(t / count);
  for (int r = 1; r < reps; ++r) per.push_back(run(count) / count);
  std::nth_element(per.begin(), per.begin() + per.size() / 2, per.end());
  return per[per.size() / 2];
}

template <typename T>
std::vector<T> parse_list(const std::string& text) {
  std::vector<T> v;
  std::string item;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',') {
      if (!item.empty()) v.push_back(static_cast<T>(std::stoll(item)));
      item.clear();
    } else {
      item += text[i];
    }
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out, device_name = "cpu", dtype_name = "fp32";
  std::string tokens_text = "512,2048,8192", hidden_text = "1024,2048,4096,8192", tp_text = "1,4";
  std::string square_text = "256,512,1024,2048,4096,8192";
  int reps = 5, threads = 1;
  double min_batch_ms = 20;
  CLI::App app{"trainplan-gemm-bench: time the matrix products of a transformer layer (and square ones) with libtorch.\n"
               "Writes CSV rows kind,m,n,k,hidden,tp,dtype,device,time_s,tflops."};
  app.add_option("--device", device_name, "cpu or cuda (the first GPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--dtype", dtype_name, "fp32, fp16 or bf16")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  app.add_option("--tokens", tokens_text, "Rows m (micro-batch x sequence length)")->capture_default_str();
  app.add_option("--hidden", hidden_text, "Hidden sizes h")->capture_default_str();
  app.add_option("--tp", tp_text, "Tensor-parallel splits of the weights")->capture_default_str();
  app.add_option("--square", square_text, "Square products n x n x n (empty: none)")->capture_default_str();
  app.add_option("--reps", reps, "Timed batches per shape (median kept)")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--min-batch-ms", min_batch_ms, "Each timed batch of products lasts at least this long")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10000.0));
  app.add_option("--threads", threads, "Torch intra-op threads (CPU)")->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("-o,--out", out, "CSV to write")->required();
  CLI11_PARSE(app, argc, argv);
  if (device_name == "cuda" && !torch::cuda::is_available()) {
    std::cerr << "trainplan-gemm-bench: --device cuda, but this build has no CUDA or no GPU is visible\n";
    return 2;
  }
  at::set_num_threads(threads);
  const torch::Device device(device_name == "cuda" ? torch::kCUDA : torch::kCPU);
  const torch::ScalarType dtype = dtype_name == "bf16"   ? torch::kBFloat16
                                  : dtype_name == "fp16" ? torch::kHalf
                                                         : torch::kFloat;
  std::vector<Shape> shapes;
  try {
    shapes = transformer_shapes(parse_list<int64_t>(tokens_text), parse_list<int>(hidden_text), parse_list<int>(tp_text));
    for (int64_t n : parse_list<int64_t>(square_text)) shapes.push_back({"square", n, n, n});
  } catch (const std::exception&) {
    std::cerr << "trainplan-gemm-bench: --tokens, --hidden, --tp and --square take comma-separated integers\n";
    return 2;
  }
  std::ofstream f(out);
  if (!f) {
    std::cerr << "trainplan-gemm-bench: cannot write " << out << "\n";
    return 2;
  }
  f << "# trainplan-gemm-bench: device=" << device_name << " dtype=" << dtype_name << " reps=" << reps
    << " min_batch_ms=" << min_batch_ms << "\n";
  f << "kind,m,n,k,hidden,tp,dtype,device,time_s,tflops\n";
  torch::manual_seed(1);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    const double t = time_product(s, dtype, device, reps, min_batch_ms / 1000);
    const double tflops = 2.0 * double(s.m) * double(s.n) * double(s.k) / t / 1e12;
    f << s.kind << ',' << s.m << ',' << s.n << ',' << s.k << ',' << s.hidden << ',' << s.tp << ',' << dtype_name
      << ',' << device_name << ',' << t << ',' << tflops << '\n';
    f.flush();  // a stopped run keeps what it measured
    if ((i + 1) % 16 == 0 || i + 1 == shapes.size())
      std::cerr << "[" << i + 1 << "/" << shapes.size() << "] " << s.kind << " " << s.m << "x" << s.n << "x" << s.k
                << ": " << tflops << " TFLOP/s\n";
  }
  return 0;
}
