// The GPT workload: model, tensor-parallel layers, the 1F1B pipeline
// schedule, the data-parallel gradient all-reduce and the timed iterations
// (contract in gpt.h, description in docs/TRAINER.md).
#include "train/gpt.h"

#include <sys/resource.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/torch.h>
#ifdef TRAINPLAN_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <unordered_map>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/affinity.h"
#include "train/epoll_backoff.h"
#include "train/dist.h"
#include "train/options.h"
#include "train/step_timing.h"
#include "train/trainer.h"

namespace trainplan::train {
namespace {

using Clock = std::chrono::steady_clock;
using torch::Tensor;
namespace fs = std::filesystem;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---- memory: the bytes of live CPU tensors, and their peak ----
//
// The c10 CPU allocator keeps no statistics, and a process's peak RSS mixes
// in libtorch's code, Gloo's buffers and the allocator's caching. What the
// memory model predicts is tensor bytes (weights, gradients, optimizer
// state, activations), so this wraps the CPU allocator and counts exactly
// those, like torch.cuda.max_memory_allocated on a GPU.
std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

// Sizes of the live blocks: some callers (raw_allocate) need the context to
// be the data pointer itself, so the size is looked up on free.
std::mutex g_sizes_mutex;
std::unordered_map<void*, int64_t> g_sizes;

void counted_delete(void* data) {
  if (!data) return;
  int64_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(g_sizes_mutex);
    auto it = g_sizes.find(data);
    if (it != g_sizes.end()) bytes = it->second, g_sizes.erase(it);
  }
  g_live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  c10::free_cpu(data);
}

// libtorch 2.3 made allocate() non-const and added copy_data(); declaring
// both forms without `override` builds against either generation (the form
// the base class lacks is a mere overload).
class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) { return counted_allocate(n); }
  c10::DataPtr allocate(size_t n) const { return counted_allocate(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }
  c10::DeleterFnPtr raw_deleter() const override { return &counted_delete; }

 private:
  static c10::DataPtr counted_allocate(size_t n) {
    void* data = n == 0 ? nullptr : c10::alloc_cpu(n);
    if (data) {
      std::lock_guard<std::mutex> lock(g_sizes_mutex);
      g_sizes[data] = int64_t(n);
    }
    const int64_t live = g_live_bytes.fetch_add(int64_t(data ? n : 0), std::memory_order_relaxed) + int64_t(data ? n : 0);
    int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
    while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
    }
    return {data, data, &counted_delete, c10::Device(c10::DeviceType::CPU)};
  }
};

void install_counting_allocator() {
  static CountingAllocator* counting = [] {
    auto* a = new CountingAllocator();
    c10::SetCPUAllocator(a, /*priority=*/100);
    return a;
  }();
  (void)counting;
}

// On a GPU the tensors live in CUDA's caching allocator, whose statistics
// count the bytes handed out (torch.cuda.max_memory_allocated); index 0 of
// its stat arrays is the aggregate over pools.
void reset_peak(const torch::Device& device) {
  g_peak_bytes.store(g_live_bytes.load());
#ifdef TRAINPLAN_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#else
  (void)device;
#endif
}

int64_t peak_tensor_bytes(const torch::Device& device) {
#ifdef TRAINPLAN_WITH_CUDA
  if (device.is_cuda()) return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()).allocated_bytes[0].peak;
#endif
  if (device.is_cuda()) return -1;  // a CUDA build without the allocator's statistics
  return g_peak_bytes.load();
}

const char* peak_memory_kind(const torch::Device& device) {
  return device.is_cuda() ? "tensor bytes allocated (CUDA caching allocator's peak), after warm-up"
                          : "tensor bytes allocated (CPU allocator, counted), after warm-up";
}

int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return int64_t(u.ru_maxrss) * 1024;  // Linux reports KiB
}

// ---- the corpus ----

// The bytes of `path` (a file), or of the regular files directly under it
// (a directory) in name order; symbolic links are skipped so that aliases
// such as common-licenses/GPL -> GPL-3 are read once. Held as bytes outside
// the tensor allocator: the text is the data loader's, not the training's,
// and is not in the peak memory (a micro-batch's tokens are).
std::string load_corpus(const std::string& path, int64_t min_bytes) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec))
      if (!e.is_symlink() && e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    throw std::runtime_error("--corpus " + path + ": no such file or directory");
  }
  std::string bytes;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    bytes.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (int64_t(bytes.size()) < min_bytes)
    throw std::runtime_error("--corpus " + path + ": " + std::to_string(bytes.size()) +
                             " bytes, fewer than the " + std::to_string(min_bytes) + " one sequence needs");
  return bytes;
}

// ---- tensor-parallel regions (Megatron-LM's f and g operators) ----

Communicator* g_tp = nullptr;  // this rank's tensor-parallel group

// Identity forward; the backward sums the input gradient over the tensor-
// parallel group, since each rank's column-parallel product saw the whole
// input but produced only its share of the gradient.
struct CopyToTp : torch::autograd::Function<CopyToTp> {
  static Tensor forward(torch::autograd::AutogradContext*, Tensor x) { return x; }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext*, torch::autograd::tensor_list g) {
    Tensor sum = g[0].contiguous().clone();
    g_tp->allreduce_sum(sum);
    return {sum};
  }
};

// Sum over the tensor-parallel group forward (the row-parallel product's
// partial outputs); identity backward, as every rank needs the full gradient.
struct ReduceFromTp : torch::autograd::Function<ReduceFromTp> {
  static Tensor forward(torch::autograd::AutogradContext*, Tensor x) {
    Tensor sum = x.contiguous().clone();
    g_tp->allreduce_sum(sum);
    return sum;
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext*, torch::autograd::tensor_list g) {
    return {g[0]};
  }
};

Tensor copy_to_tp(const Tensor& x, int tp) { return tp == 1 ? x : CopyToTp::apply(x); }
Tensor reduce_from_tp(const Tensor& x, int tp) { return tp == 1 ? x : ReduceFromTp::apply(x); }

// ---- the model ----

struct Layer {
  Tensor ln1_w, ln1_b, w_qkv, b_qkv, w_o, b_o;  // w_qkv: this rank's heads of Q, K and V
  Tensor ln2_w, ln2_b, w_1, b_1, w_2, b_2;      // w_1 column-, w_2 row-parallel
};

struct Stage {
  bool first = false, last = false;
  Tensor wte, wpe;          // first stage: token and position embeddings (replicated over tp)
  std::vector<Layer> layers;
  Tensor lnf_w, lnf_b, head;  // last stage: final norm and the (untied) output layer
  std::vector<Tensor> params;
};

struct Shape {
  int layers, hidden, heads, seq, vocab, tp;
  torch::ScalarType compute;  // of products and activations; weights stay fp32
  int local_heads() const { return heads / tp; }
  int head_dim() const { return hidden / heads; }
};

// Draws the whole model's weights in one fixed order from torch's generator
// (seeded by the caller) and keeps this rank's: the stage's layers, and of
// each the tensor-parallel slice. Column-parallel weights keep rows
// (output features, heads contiguous), row-parallel ones keep columns.
Stage build_stage(const Shape& s, int tp_rank, int pp_rank, int pp, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  const int64_t h = s.hidden, f = 4 * s.hidden, L = s.layers, V = s.vocab, S = s.seq;
  const int64_t hl = h / s.tp, fl = f / s.tp;
  const int per_stage = s.layers / pp;
  Stage st;
  st.first = pp_rank == 0;
  st.last = pp_rank == pp - 1;
  auto rows = [&](const Tensor& w, int64_t part) { return w.slice(0, tp_rank * part, (tp_rank + 1) * part).clone(); };
  auto cols = [&](const Tensor& w, int64_t part) { return w.slice(1, tp_rank * part, (tp_rank + 1) * part).clone(); };
  const double out_std = 0.02 / std::sqrt(2.0 * double(L));  // GPT-2's scaled init of the residual projections

  Tensor wte = torch::randn({V, h}) * 0.02, wpe = torch::randn({S, h}) * 0.01;
  if (st.first) st.wte = wte, st.wpe = wpe;
  for (int l = 0; l < s.layers; ++l) {
    Tensor wq = torch::randn({h, h}) * 0.02, wk = torch::randn({h, h}) * 0.02, wv = torch::randn({h, h}) * 0.02;
    Tensor wo = torch::randn({h, h}) * out_std;
    Tensor w1 = torch::randn({f, h}) * 0.02, w2 = torch::randn({h, f}) * out_std;
    Tensor bq = torch::randn({h}) * 0.01, bk = torch::randn({h}) * 0.01, bv = torch::randn({h}) * 0.01;
    Tensor bo = torch::randn({h}) * 0.01, b1 = torch::randn({f}) * 0.01, b2 = torch::randn({h}) * 0.01;
    if (l / per_stage != pp_rank) continue;
    Layer y;
    y.ln1_w = torch::ones({h}), y.ln1_b = torch::zeros({h});
    y.ln2_w = torch::ones({h}), y.ln2_b = torch::zeros({h});
    y.w_qkv = torch::cat({rows(wq, hl), rows(wk, hl), rows(wv, hl)}, 0);
    y.b_qkv = torch::cat({rows(bq, hl), rows(bk, hl), rows(bv, hl)}, 0);
    y.w_o = cols(wo, hl), y.b_o = bo.clone();
    y.w_1 = rows(w1, fl), y.b_1 = rows(b1, fl);
    y.w_2 = cols(w2, fl), y.b_2 = b2.clone();
    st.layers.push_back(std::move(y));
  }
  Tensor head = torch::randn({V, h}) * 0.02;
  if (st.last) st.lnf_w = torch::ones({h}), st.lnf_b = torch::zeros({h}), st.head = head;

  auto add = [&](Tensor& t) {
    t = t.to(device).contiguous();
    t.set_requires_grad(true);
    st.params.push_back(t);
  };
  if (st.first) add(st.wte), add(st.wpe);
  for (auto& y : st.layers)
    for (Tensor* t : {&y.ln1_w, &y.ln1_b, &y.w_qkv, &y.b_qkv, &y.w_o, &y.b_o, &y.ln2_w, &y.ln2_b, &y.w_1, &y.b_1,
                      &y.w_2, &y.b_2})
      add(*t);
  if (st.last) add(st.lnf_w), add(st.lnf_b), add(st.head);
  return st;
}

// A weight in the compute precision: the fp32 tensor itself, or a bf16 copy
// that autograd keeps for the backward and whose gradient arrives in fp32.
Tensor as_compute(const Tensor& w, const Shape& s) { return w.to(s.compute); }

// One transformer layer on x [b, s, h] (pre-norm, as GPT-2).
Tensor layer_forward(const Layer& y, const Shape& s, const Tensor& x, const Tensor& causal_mask) {
  const int64_t b = x.size(0), S = x.size(1), al = s.local_heads(), d = s.head_dim(), hl = al * d;
  Tensor a = copy_to_tp(torch::layer_norm(x, {s.hidden}, as_compute(y.ln1_w, s), as_compute(y.ln1_b, s)), s.tp);
  Tensor qkv = torch::linear(a, as_compute(y.w_qkv, s), as_compute(y.b_qkv, s));  // [b, s, 3·h/tp]
  auto heads = [&](int64_t i) { return qkv.slice(2, i * hl, (i + 1) * hl).view({b, S, al, d}).transpose(1, 2); };
  Tensor q = heads(0) * (1.0 / std::sqrt(double(d))), k = heads(1), v = heads(2);
  Tensor scores = torch::matmul(q, k.transpose(-2, -1)).masked_fill(causal_mask, -INFINITY);
  Tensor ctx = torch::matmul(torch::softmax(scores, -1), v).transpose(1, 2).reshape({b, S, hl});
  Tensor x1 = x + reduce_from_tp(torch::linear(ctx, as_compute(y.w_o, s)), s.tp) + as_compute(y.b_o, s);
  Tensor m = copy_to_tp(torch::layer_norm(x1, {s.hidden}, as_compute(y.ln2_w, s), as_compute(y.ln2_b, s)), s.tp);
  Tensor g = torch::gelu(torch::linear(m, as_compute(y.w_1, s), as_compute(y.b_1, s)));
  return x1 + reduce_from_tp(torch::linear(g, as_compute(y.w_2, s)), s.tp) + as_compute(y.b_2, s);
}

// ---- data: which sequences an iteration trains on ----

// The global batch of iteration `it`: `g` start offsets drawn from a
// generator seeded by the seed and the iteration, identical on every rank.
// Replica r takes sequences [r·g/dp, (r+1)·g/dp), and its micro-batch j the
// j-th run of micro_batch sequences of those; so the union over replicas and
// micro-batches is the same batch for any layout.
std::vector<int64_t> batch_offsets(uint64_t seed, int64_t it, int g, int64_t corpus_len, int seq) {
  std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + uint64_t(it) * 0xBF58476D1CE4E5B9ULL + 1);
  std::uniform_int_distribution<int64_t> pick(0, corpus_len - seq - 1);
  std::vector<int64_t> off(size_t(g), 0);
  for (auto& o : off) o = pick(gen);
  return off;
}

// ---- one iteration: the 1F1B schedule, then the data-parallel all-reduce ----

struct Rank {
  int tp_rank, dp_rank, pp_rank;
};

class GptTrainer {
 public:
  GptTrainer(const TrainOptions& o, ParallelGroups& g, Rank r, const std::string& corpus, torch::Device device)
      : o_(o),
        g_(g),
        r_(r),
        shape_{o.layers, o.hidden, o.heads, o.seq, o.vocab, o.tp,
               o.precision == "bf16" ? torch::kBFloat16 : torch::kFloat32},
        device_(device),
        corpus_(corpus),
        micro_batches_(o.global_batch / (o.micro_batch * o.dp)) {
    torch::manual_seed(o.seed);
    stage_ = build_stage(shape_, r.tp_rank, r.pp_rank, o.pp, device);
    // One flat gradient buffer that the parameters' gradients view: the
    // backward accumulates into it in place and the data-parallel
    // all-reduce sends it whole, without a copy (as Megatron's grad buffer).
    int64_t n = 0;
    for (const auto& p : stage_.params) n += p.numel();
    grad_buffer_ = torch::zeros({n}, torch::TensorOptions().device(device));
    int64_t off = 0;
    for (auto& p : stage_.params) {
      p.mutable_grad() = grad_buffer_.slice(0, off, off + p.numel()).view(p.sizes());
      off += p.numel();
    }
    opt_ = std::make_unique<torch::optim::Adam>(stage_.params, torch::optim::AdamOptions(o.lr.value_or(1e-3)));
    causal_mask_ = torch::ones({o.seq, o.seq}, torch::TensorOptions(torch::kBool).device(device)).triu(1);
  }

  int64_t parameters_on_rank() const { return grad_buffer_.numel(); }

  // One training iteration; returns this rank's share of the global mean
  // loss (non-zero on the last stage only).
  double iterate(int64_t it) {
    grad_buffer_.zero_();
    const int m = micro_batches_, pp = o_.pp, p = r_.pp_rank;
    const std::vector<int64_t> offsets = batch_offsets(o_.seed, it, o_.global_batch, int64_t(corpus_.size()), o_.seq);
    const int64_t replica_base = int64_t(r_.dp_rank) * m * o_.micro_batch;
    const int64_t b = o_.micro_batch, S = o_.seq, h = o_.hidden;
    const auto activations = torch::TensorOptions().dtype(shape_.compute).device(device_);

    std::vector<Tensor> inputs(static_cast<size_t>(m)), outputs(static_cast<size_t>(m));
    // Sends in flight, by micro-batch. Each holds its tensor until waited
    // for, so each is waited for as soon as it is known to have arrived: a
    // stage's peak then holds the micro-batches 1F1B keeps in flight, not
    // one buffer per micro-batch of the iteration.
    std::vector<std::function<void()>> sent_forward(static_cast<size_t>(m)), sent_backward(static_cast<size_t>(m));
    auto settle = [](std::function<void()>& wait) {
      if (wait) wait(), wait = nullptr;
    };
    // The previous stage's backward of micro-batch j, which receives this
    // stage's input gradient j, comes before its forward of j + warmup + 1.
    const int previous_warmup = std::min(pp - p, m);
    Tensor loss_sum = torch::zeros({}, torch::TensorOptions().device(device_));  // read once: no sync per micro-batch

    auto tokens = [&](int j, int shift) {
      Tensor t = torch::empty({b, S}, torch::kInt64);
      int64_t* out = t.data_ptr<int64_t>();
      for (int64_t i = 0; i < b; ++i) {
        const int64_t start = offsets[size_t(replica_base + j * b + i)] + shift;
        for (int64_t k = 0; k < S; ++k) out[i * S + k] = static_cast<unsigned char>(corpus_[size_t(start + k)]);
      }
      return t.to(device_);
    };
    auto forward = [&](int j) {
      Tensor x;
      if (stage_.first) {
        x = torch::embedding(as_compute(stage_.wte, shape_), tokens(j, 0)) + as_compute(stage_.wpe, shape_);
      } else {
        Tensor received = torch::empty({b, S, h}, activations);
        g_.pp->recv(received, p - 1, /*tag=*/0);
        if (const int done = j - previous_warmup - 1; done >= 0) settle(sent_backward[size_t(done)]);
        received.set_requires_grad(true);
        inputs[size_t(j)] = received;
        x = received;
      }
      for (const auto& y : stage_.layers) x = layer_forward(y, shape_, x, causal_mask_);
      if (stage_.last) {
        Tensor normed = torch::layer_norm(x, {h}, as_compute(stage_.lnf_w, shape_), as_compute(stage_.lnf_b, shape_));
        // The loss in fp32, as Megatron's and autocast's cross-entropy.
        Tensor logits = torch::linear(normed, as_compute(stage_.head, shape_)).to(torch::kFloat32);
        // Scaled so that the accumulated gradients over m micro-batches and
        // the sum over dp replicas give the gradient of the global mean loss.
        Tensor loss = torch::nn::functional::cross_entropy(logits.view({b * S, o_.vocab}), tokens(j, 1).view({b * S})) /
                      double(m * o_.dp);
        loss_sum += loss.detach();
        outputs[size_t(j)] = loss;
      } else {
        sent_forward[size_t(j)] = g_.pp->isend(x.detach(), p + 1, /*tag=*/0);
        outputs[size_t(j)] = x;
      }
    };
    auto backward = [&](int j) {
      if (stage_.last) {
        outputs[size_t(j)].backward();
      } else {
        Tensor grad = torch::empty({b, S, h}, activations);
        g_.pp->recv(grad, p + 1, /*tag=*/1);
        settle(sent_forward[size_t(j)]);  // the next stage had it before it sent this gradient
        outputs[size_t(j)].backward(grad);
      }
      if (!stage_.first) sent_backward[size_t(j)] = g_.pp->isend(inputs[size_t(j)].grad(), p - 1, /*tag=*/1);
      inputs[size_t(j)] = Tensor();
      outputs[size_t(j)] = Tensor();  // frees the micro-batch's activations
    };

    // 1F1B (Narayanan et al. 2021): stage p runs pp-p-1 forwards first, then
    // alternates one forward and one backward, then drains the backwards.
    // Sends are posted without waiting, so neighbours never block each other.
    const int warmup = std::min(pp - p - 1, m);
    int fwd = 0, bwd = 0;
    for (; fwd < warmup; ++fwd) forward(fwd);
    for (; fwd < m; ++fwd, ++bwd) forward(fwd), backward(bwd);
    for (; bwd < m; ++bwd) backward(bwd);
    for (auto& wait : sent_forward) settle(wait);
    for (auto& wait : sent_backward) settle(wait);

    g_.dp->allreduce_sum(grad_buffer_);
    opt_->step();
    // Kernels run asynchronously on a GPU: reading one updated weight back
    // waits for the step, so a wall clock around iterate() times all of it.
    if (device_.is_cuda()) (void)stage_.params.back().view(-1)[0].item<float>();
    return stage_.last ? loss_sum.item<double>() : 0.0;
  }

 private:
  const TrainOptions& o_;
  ParallelGroups& g_;
  Rank r_;
  Shape shape_;
  torch::Device device_;
  const std::string& corpus_;
  int micro_batches_;
  Stage stage_;
  Tensor grad_buffer_, causal_mask_;
  std::unique_ptr<torch::optim::Adam> opt_;
};

// The global mean loss of an iteration, on every rank: the last stage's
// tensor-parallel rank 0 of each replica contributes its share.
double global_loss(double share, const Rank& r, const TrainOptions& o, Communicator& world) {
  auto t = torch::tensor({(r.pp_rank == o.pp - 1 && r.tp_rank == 0) ? share : 0.0}, torch::kFloat64);
  world.allreduce_sum(t);
  return t.item<double>();
}

}  // namespace

void train_gpt(const TrainOptions& o, const EventSink& report) {
  install_counting_allocator();
  const auto t_setup = Clock::now();
  const Rank r{o.rank % o.tp, (o.rank / o.tp) % o.dp, o.rank / (o.tp * o.dp)};
  const std::string corpus = load_corpus(o.corpus, int64_t(o.seq) + 2);

  std::vector<int> tp_members, dp_members, pp_members;
  for (int i = 0; i < o.tp; ++i) tp_members.push_back(r.pp_rank * o.tp * o.dp + r.dp_rank * o.tp + i);
  for (int i = 0; i < o.dp; ++i) dp_members.push_back(r.pp_rank * o.tp * o.dp + i * o.tp + r.tp_rank);
  for (int i = 0; i < o.pp; ++i) pp_members.push_back(i * o.tp * o.dp + r.dp_rank * o.tp + r.tp_rank);
  ParallelGroups groups = make_parallel_groups(o, tp_members, dp_members, pp_members);
  // Each parallel group's wall time, reported with the timed iterations
  // (none for a group of one, whose calls do nothing).
  auto timed = [](std::unique_ptr<Communicator>& c) -> TimedCommunicator* {
    if (c->size() <= 1) return nullptr;
    auto t = std::make_unique<TimedCommunicator>(std::move(c));
    TimedCommunicator* raw = t.get();
    c = std::move(t);
    return raw;
  };
  TimedCommunicator* const group_clocks[3] = {timed(groups.tp), timed(groups.pp), timed(groups.dp)};
  g_tp = groups.tp.get();
  Communicator& world = *groups.world;

  const torch::Device device = pick_device(o);
  GptTrainer trainer(o, groups, r, corpus, device);
  const int64_t micro_batches = o.global_batch / (o.micro_batch * o.dp);
  nlohmann::json layout = {{"workload", "gpt"},     {"tp", o.tp},
                           {"pp", o.pp},            {"dp", o.dp},
                           {"micro_batch", o.micro_batch}, {"global_batch", o.global_batch},
                           {"micro_batches", micro_batches}, {"layers", o.layers},
                           {"hidden", o.hidden},    {"heads", o.heads},
                           {"seq", o.seq},          {"vocab", o.vocab},
                           {"workers", o.workers},  {"backend", world.backend()},
                           {"device", device.str()}, {"precision", o.precision}};
  const double setup_time = seconds_since(t_setup);
  const auto t_start = Clock::now();
  int64_t it = 0;

  if (!o.time_only) {
    for (; it < o.iterations; ++it) {
      const auto t0 = Clock::now();
      const double share = trainer.iterate(it);
      const double seconds = seconds_since(t0);
      nlohmann::json ev = {{"event", "iteration"}, {"iteration", it + 1}, {"loss", global_loss(share, r, o, world)},
                           {"iteration_time_s", seconds}};
      ev.update(layout);
      report(ev);
    }
  } else {
    for (; it < o.warmup_iterations; ++it) trainer.iterate(it);
    // Peaks from here on: the setup's full-model draw is gone, and the
    // optimizer's moments exist since the first step.
    world.barrier();
    reset_peak(device);
    for (auto* c : group_clocks)
      if (c) c->reset();
    std::vector<double> times;
    double last_loss = 0;
    bool converged = false;
    while (int(times.size()) < o.max_iterations) {
      world.barrier();  // every rank starts the iteration together
      const auto t0 = Clock::now();
      const double share = trainer.iterate(it++);
      times.push_back(seconds_since(t0));
      last_loss = share;
      const int timed = int(times.size());
      if (timed >= o.min_iterations && (timed % 5 == 0 || timed == o.max_iterations)) {
        // An iteration ends on the rank that finishes last: the maximum over
        // ranks of each iteration's time is what the job took.
        auto all = torch::tensor(times, torch::kFloat64);
        world.allreduce_max(all);
        std::vector<double> slowest(all.data_ptr<double>(), all.data_ptr<double>() + all.numel());
        auto ok = torch::tensor({summarise_step_times(slowest).ci95_relative_half_width() <= o.step_ci ? 1.0 : 0.0},
                                torch::kFloat64);
        world.allreduce_sum(ok);  // the same answer everywhere, from the same data
        if (ok.item<double>() >= o.workers - 0.5) {
          converged = true;
          break;
        }
      }
    }
    auto all = torch::tensor(times, torch::kFloat64);
    world.allreduce_max(all);
    std::vector<double> slowest(all.data_ptr<double>(), all.data_ptr<double>() + all.numel());
    const StepTimeSummary s = summarise_step_times(slowest);
    auto peaks = torch::zeros({o.workers}, torch::kFloat64), rss = torch::zeros({o.workers}, torch::kFloat64);
    peaks[o.rank] = double(peak_tensor_bytes(device));
    rss[o.rank] = double(peak_rss_bytes());
    world.allreduce_sum(peaks);
    world.allreduce_sum(rss);
    // Seconds per timed iteration each rank spent in its tensor-, pipeline-
    // and data-parallel groups' calls (0 where its group has one member).
    auto group_seconds = torch::zeros({3, o.workers}, torch::kFloat64);
    for (int k = 0; k < 3; ++k)
      if (group_clocks[k]) group_seconds[k][o.rank] = group_clocks[k]->seconds() / double(times.size());
    world.allreduce_sum(group_seconds);
    auto params = torch::zeros({o.workers}, torch::kFloat64);
    params[o.rank] = double(trainer.parameters_on_rank());
    world.allreduce_sum(params);
    auto vec = [](const Tensor& t) {
      return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
    };
    nlohmann::json ev = {{"event", "iteration_timing"},
                         {"iteration_time_s", s.median_s},
                         {"ci95", {s.ci95_low_s, s.ci95_high_s}},
                         {"iteration_time_mean_s", s.mean_s},
                         {"iteration_time_p10_s", s.p10_s},
                         {"iteration_time_p90_s", s.p90_s},
                         {"iterations_timed", s.n},
                         {"outliers", s.outliers},
                         {"warmup_iterations", o.warmup_iterations},
                         {"converged", converged},
                         {"peak_memory_bytes", peaks.max().item<double>()},
                         {"peak_memory_bytes_per_rank", vec(peaks)},
                         {"peak_memory_kind", peak_memory_kind(device)},
                         {"peak_rss_bytes_per_rank", vec(rss)},
                         {"parameters_per_rank", vec(params)},
                         {"tp_comm_s_per_rank", vec(group_seconds[0])},
                         {"pp_comm_s_per_rank", vec(group_seconds[1])},
                         {"dp_comm_s_per_rank", vec(group_seconds[2])},
                         {"loss", global_loss(last_loss, r, o, world)}};
    ev.update(thread_cpu_fields());
    ev.update(epoll_backoff_fields());
    ev.update(layout);
    report(ev);
  }
  world.barrier();  // rank 0 hosts the store: nobody may still need it
  nlohmann::json done = {{"event", "done"},
                         {"iterations", it},
                         {"total_time_s", seconds_since(t_start)},
                         {"setup_time_s", setup_time}};
  done.update(layout);
  report(done);
}

}  // namespace trainplan::train
