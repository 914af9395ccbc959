#include "models/llm_time.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "core/cancel.h"
#include "core/error.h"
#include "numerics/levenberg_marquardt.h"

namespace trainplan::models {

using structure::ParallelLayout;
using structure::Precision;
using structure::Recompute;
using structure::TransformerSpec;

namespace {

// The GPU and its links as the time model reads them.
struct Machine {
  double peak = 0;         // FLOP/s of the precision's matrix unit
  double linear_peak = 0;  // FLOP/s of the layers' four linear products (FP8's unit under kFp8, else peak)
  double bandwidth = 0;    // memory, bytes/s
  double intra = 0;        // per GPU within a node, bytes/s one way
  double inter = 0;        // per GPU across nodes (the node's network shared by its GPUs)
  int gpus_per_node = 1;
  double latency_exponent = 0;  // NodeSpec::collective_latency_exponent
};

Machine machine(const structure::HardwareProfile& hw, Precision p) {
  const auto& g = hw.gpu;
  Machine m;
  // Tensor-core products take the datasheet peak: peak_fraction is measured
  // on them directly. Products on the CUDA cores (fp32, or a GPU without
  // tensor cores) take the fp32 peak the GPU sustains (GpuSpec::fp32_sustained,
  // fitted to fp32 framework runs relative to the A100): the power-capped
  // and the newest GPUs reach a smaller share of their fp32 datasheet figure.
  const bool bf16 = p == Precision::kBf16 || p == Precision::kAmpFp32Master || p == Precision::kFp8;
  const double tensor = p == Precision::kFp16 ? g.fp16_tensor_tflops : bf16 ? g.bf16_tensor_tflops : 0;
  m.peak = tensor > 0 ? tensor : g.fp32_matmul_tflops();
  m.peak *= 1e12;
  // FP8 on a GPU without its unit is refused before the model is asked
  // (structure::missing_precision_unit); should it be asked, bf16's peak.
  // FP8 products reach a smaller share of their peak than 16-bit ones of
  // theirs (GpuSpec::fp8_matmul_share), which peak_fraction, measured on
  // 16-bit products, does not know.
  m.linear_peak = p == Precision::kFp8 && g.fp8_tensor_tflops > 0 ? g.fp8_tensor_tflops * g.fp8_matmul_share * 1e12
                                                                  : m.peak;
  m.bandwidth = g.memory_bandwidth_gbps * 1e9;
  m.gpus_per_node = std::max(1, hw.node.gpus_per_node);
  m.latency_exponent = hw.node.collective_latency_exponent;
  m.intra = hw.node.intra_node_gbps * 1e9;
  m.inter = hw.node.inter_node_gbps * 1e9 / m.gpus_per_node;
  return m;
}

double element_bytes(Precision p) { return p == Precision::kFp32 ? 4 : 2; }

// Times of one micro-batch through one layer on one GPU, by part.
struct LayerTimes {
  double linear = 0, core = 0;            // forward matrix products: the four linears, the attention core
  double core_bwd = 0;                    // the attention core's backward products
  double mem_other = 0, mem_core = 0;     // forward memory-bound kernels: the rest, softmax and its dropout
  double mem_other_bwd = 0, mem_core_bwd = 0;  // their backward kernels
  double comm_fwd = 0, comm_bwd = 0;      // tensor-parallel collectives
};

class Costs {
 public:
  Costs(const TransformerSpec& s, const ParallelLayout& l, const Machine& m, const LlmTimeParams& p)
      : s_(s), l_(l), m_(m), p_(p), eb_(element_bytes(l.precision)) {
    // A rank's tokens: its 1/cp of each sequence.
    queries_ = double(s.seq) / l.cp;
    tokens_ = queries_ * l.micro_batch;
    // Tensor-parallel groups are blocks of consecutive ranks, and ranks fill
    // nodes in order: a group size that does not divide a node's GPUs puts
    // some groups across two nodes, and the slowest group sets the pace.
    const bool one_node = l.gpus() <= m.gpus_per_node;
    tp_link_ = l.tp <= m.gpus_per_node && (one_node || m.gpus_per_node % l.tp == 0) ? m.intra : m.inter;
  }

  double gemm(double a, double b, double c, double batch = 1) const {
    return gemm_seconds(a, b, c, batch, eb_, m_.peak, m_.bandwidth, p_.gemm);
  }
  // One of a layer's four linear products: under FP8 on the FP8 unit, its
  // operands one byte an element.
  double linear(double a, double b, double c) const {
    const bool fp8 = l_.precision == Precision::kFp8;
    return gemm_seconds(a, b, c, 1, fp8 ? 1 : eb_, m_.linear_peak, m_.bandwidth, p_.gemm);
  }
  double mem(double bytes) const { return bytes / (m_.bandwidth * p_.gemm.memory_fraction) + p_.gemm.launch_s; }
  // One collective step or send of `bytes`: its latency (growing with the
  // bytes where the hardware says so) and the bytes over the link.
  double step(double bytes, double link) const {
    const double latency = m_.latency_exponent > 0 && bytes > 0
                               ? p_.link_latency_s * std::pow(bytes / 65536.0, m_.latency_exponent)
                               : p_.link_latency_s;
    return latency + bytes / (link * p_.link_fraction);
  }
  // Ring collectives over n ranks: n - 1 steps of bytes / n per pass; an
  // all-gather or reduce-scatter is one pass, an all-reduce two.
  double ring(double bytes, int n, double passes, double link) const {
    if (n <= 1) return 0;
    return passes * (n - 1) * step(bytes / n, link);
  }

  LayerTimes layer() const {
    LayerTimes r;
    double h = s_.hidden, t = l_.tp, T = tokens_, f = s_.ffn(), d = s_.head_dim();
    double qkv = h + 2.0 * s_.kv() * d;
    r.linear = linear(T, h, qkv / t) + linear(T, h / t, h) + linear(T, h, (s_.gated_mlp ? 2 : 1) * f / t) + linear(T, f / t, h);
    double heads = double(l_.micro_batch) * s_.heads / t;
    if (l_.fused_attention()) {
      // A fused kernel keeps the s x s scores on chip: its two products are
      // compute-bound, with no s^2 bytes through memory.
      double flops = 2 * 2.0 * queries_ * d * double(s_.seq) * heads;
      r.core = flops / (m_.peak * p_.gemm.peak_fraction) + p_.gemm.launch_s;
    } else {
      r.core = gemm(queries_, d, s_.seq, heads) + gemm(queries_, s_.seq, d, heads);
    }
    // Twice the forward; the fused kernel's backward recomputes QK^T: 5
    // products' worth, not 4.
    r.core_bwd = (l_.fused_attention() ? 2.5 : 2.0) * r.core;
    double sp = l_.sequence_parallel ? t : 1;
    // Element passes (a read or a write of every element): 2 LayerNorms x 2,
    // 2 fused bias-dropout-residual-adds x 3.5 (the input, the residual, the
    // output and the 1-byte mask; 3 without dropout), as Megatron-LM fuses them.
    const double mask = l_.dropout ? 1 : 0;
    r.mem_other = mem((10 + mask) * T * h * eb_ / sp) + mem((s_.gated_mlp ? 3 : 2) * T * f / t * eb_);
    // Backward, kernel by kernel rather than as twice the forward: a
    // LayerNorm reads dy and x and writes dx, then reads dy and x again for
    // its weights' gradients (5); a bias-dropout-add reads dy and the mask
    // and writes dx (2.5); each residual branch's gradient is added to the
    // residual's (3). GeLU reads dy and x and writes dx (3); SwiGLU reads dy
    // and both inputs and writes both gradients (5). Each kernel launches
    // twice as often as in the forward.
    r.mem_other_bwd = mem((20 + mask) * T * h * eb_ / sp) + mem((s_.gated_mlp ? 5 : 3) * T * f / t * eb_) + 2 * p_.gemm.launch_s;
    // The fused scale-mask-softmax (2 passes) and its dropout (2.5); their
    // backward reads dy and the probabilities and writes dx (3), then reads
    // dy and the mask and writes dx (2.5): 5.5 passes, not twice 4.5.
    // Without dropout, the softmax's alone: 2 and 3.
    // A fused kernel keeps the scores on chip: no softmax pass through memory.
    const double scores = heads * queries_ * s_.seq * eb_;
    r.mem_core = l_.fused_attention() ? 0 : mem((l_.dropout ? 4.5 : 2) * scores);
    if (l_.precision == Precision::kFp8) {
      // Transformer Engine casts each FP8 product's 16-bit input to FP8 and
      // writes its transpose for the weight gradient (a cast-transpose: 2
      // bytes read, 2 written an element). The QKV and FC1 inputs come out of
      // LayerNorms that write FP8 themselves, costing nothing more; the
      // projection's and FC2's inputs (T x h/t, T x f/t) are cast. Backward,
      // the output gradient of each of the four products is cast-transposed.
      const double fc1_out = (s_.gated_mlp ? 2 : 1) * f / t;
      r.mem_other += mem(4 * T * (h / t + f / t));
      r.mem_other_bwd += mem(4 * T * (qkv / t + h / sp + fc1_out + h / sp)) + 4 * p_.gemm.launch_s;
    }
    r.mem_core_bwd = l_.fused_attention() ? 0 : mem((l_.dropout ? 5.5 : 3) * scores) + p_.gemm.launch_s;
    double act = T * h * eb_;
    if (l_.sequence_parallel) {
      r.comm_fwd = ring(act, l_.tp, 4, tp_link_);  // 2 all-gathers + 2 reduce-scatters
      r.comm_bwd = ring(act, l_.tp, 6, tp_link_);  // + the all-gathers redone for the weight gradients
    } else {
      r.comm_fwd = ring(act, l_.tp, 4, tp_link_);  // 2 all-reduces
      r.comm_bwd = ring(act, l_.tp, 4, tp_link_);
    }
    if (l_.tp_comm_overlap && l_.tp > 1 && l_.sequence_parallel) {  // Megatron-LM overlaps them only with sp
      // Transformer Engine splits each collective into tp chunks and runs
      // them beside the chunks of the product that needs or makes them:
      // what the products (forward, and twice that backward) cannot cover
      // waits, and at least one chunk in tp always does.
      r.comm_fwd = std::max(r.comm_fwd / l_.tp, r.comm_fwd - r.linear);
      r.comm_bwd = std::max(r.comm_bwd / l_.tp, r.comm_bwd - 2 * r.linear);
    }
    if (l_.cp > 1) {
      // Context parallelism: the attention runs in cp steps, each on the
      // keys and values of one rank's chunk, which pass round a ring (the
      // rank's K and V: 2·tokens·(kv groups / tp)·d elements) while the
      // step before computes; backward the keys and values go round again
      // with their gradients, twice the bytes. What a step's share of the
      // attention does not cover waits.
      const double kv = 2 * tokens_ * double(s_.kv()) / t * d * eb_;
      const double steps = l_.cp - 1;
      r.comm_fwd += steps * std::max(0.0, step(kv, cp_link()) - r.core / l_.cp);
      r.comm_bwd += steps * std::max(0.0, step(2 * kv, cp_link()) - r.core_bwd / l_.cp);
    }
    return r;
  }

  // The embedding's forward and backward on the first stage.
  double embedding() const {
    double act = tokens_ * s_.hidden * eb_;
    double sp_passes = l_.sequence_parallel ? 1 : 2;  // a reduce-scatter or an all-reduce of the lookup
    return mem(2 * act) + mem(2 * act) + ring(act, l_.tp, sp_passes, tp_link_);
  }
  // The output layer and the cross entropy on the last stage: forward and two
  // backward products, and Megatron-LM's vocabulary-parallel cross entropy
  // kernel by kernel over the fp32 logits (passes of T·V/t fp32 elements):
  // the 16-bit logits made fp32 (1.5), their maximum (1), less it in place
  // (2), exp in place (2), the sum (1), divided in place (2); backward the
  // softmax times the output gradient in place (2) and made 16-bit again
  // (1.5). 13 passes; 10 in fp32, which converts nothing.
  double logits(double* compute) const {
    double T = tokens_, h = s_.hidden, V = s_.vocab, t = l_.tp;
    double g = 3 * gemm(T, h, V / t);
    if (compute) *compute += g;
    double gather = l_.sequence_parallel ? ring(T * h * eb_, l_.tp, 2, tp_link_) : 0;
    const double passes = l_.precision == Precision::kFp32 ? 10 : 13;
    return g + mem(passes * T * V / t * 4) + gather;
  }
  // Consecutive stages are tp·cp·dp ranks apart in Megatron's rank order.
  // Once the pipeline spans nodes some boundary crosses one, and the 1F1B
  // steady state goes at its slowest stage's pace: the network's. (So do the
  // first and last stages' embedding gradients, on different nodes then.)
  double p2p_link() const {
    return double(l_.tp) * l_.cp * l_.dp * l_.pp > m_.gpus_per_node ? m_.inter : m_.intra;
  }
  // The link of a group of n ranks spaced `stride` apart in Megatron's rank
  // order: NVLink within a node; across nodes a ring through each of the
  // group's members on a node, each through its own network share (NCCL
  // runs as many rings as the group has members on a node, and each ring
  // enters and leaves a node once), up to the node's own links.
  double group_link(int n, int stride) const {
    if (double(n) * stride <= m_.gpus_per_node) return m_.intra;
    const int members = std::max(1, std::min(n, m_.gpus_per_node / std::max(1, stride)));
    return std::min(m_.intra, m_.inter * members);
  }
  // Context-parallel ranks follow the tensor-parallel ones.
  double cp_link() const { return group_link(l_.cp, l_.tp); }
  // Sends of one micro-batch's activations (split across tp, then gathered) to
  // the next virtual stage forward and of their gradient backward.
  double p2p() const {
    if (l_.pp <= 1) return 0;
    double bytes = tokens_ * s_.hidden * eb_ / l_.tp;
    return 2.0 * l_.virtual_stages * step(bytes, p2p_link());
  }
  // The gradients are reduced over the data- and context-parallel ranks
  // together (each holds the same weights), which follow the tensor-parallel
  // ones in Megatron's rank order.
  double dp_link() const { return group_link(l_.dp * l_.cp, l_.tp); }

 private:
  const TransformerSpec& s_;
  const ParallelLayout& l_;
  const Machine& m_;
  const LlmTimeParams& p_;
  double eb_;
  double queries_ = 0;  // a rank's positions of one sequence: seq / cp
  double tokens_ = 0;   // queries_ x micro_batch
  double tp_link_ = 0;
};

double stage_params(const TransformerSpec& s, const ParallelLayout& l, int stage) {
  double p = double(structure::stage_layers(s, l, stage)) * s.layer_params() / l.tp;
  if (stage == 0) p += double(s.vocab) * s.hidden / l.tp;
  if (stage == l.pp - 1 && (!s.tied_embeddings || l.pp > 1)) p += double(s.vocab) * s.hidden / l.tp;
  return p;
}

}  // namespace

LlmCollectives llm_collectives(const TransformerSpec& s, const ParallelLayout& l) {
  LlmCollectives c;
  if (l.tp > 1 && !l.sequence_parallel) {
    c.tp_bytes = double(s.seq) / l.cp * l.micro_batch * s.hidden * element_bytes(l.precision);
    const double per_layer = l.recompute == Recompute::kFull ? 6 : 4;  // 2 forward, 2 backward, the forward's again
    c.tp_count = per_layer * double(structure::stage_layers(s, l, 0)) * l.micro_batches();
  }
  if (l.dp > 1 && !l.distributed_optimizer)
    c.dp_bytes = stage_params(s, l, 0) * (l.precision == Precision::kFp16 ? 2 : 4);
  return c;
}

double llm_model_flops(const TransformerSpec& s, const ParallelLayout& l) {
  double T = double(s.seq) * l.micro_batch, h = s.hidden, f = s.ffn(), d = s.head_dim();
  double linear = 2 * T * (h * (h + 2.0 * s.kv() * d) + h * h + (s.gated_mlp ? 3 : 2) * h * f);
  double core = 4 * T * double(s.seq) * h;
  double per_micro_batch = 3 * (s.layers * (linear + core) + 2 * T * h * s.vocab);
  return per_micro_batch * l.micro_batches() * l.dp;
}

LlmTimeBreakdown LlmTimeModel::predict(const TransformerSpec& s, const ParallelLayout& l) const {
  Machine m = machine(hw_, l.precision);
  Costs c(s, l, m, params_);
  LayerTimes lt = c.layer();

  double fwd = lt.linear + lt.core + lt.mem_other + lt.mem_core + lt.comm_fwd;
  double bwd = 2 * lt.linear + lt.mem_other_bwd + lt.mem_core_bwd + lt.core_bwd + lt.comm_bwd;
  double layer_compute = 3 * lt.linear + lt.core + lt.core_bwd;
  double layer_mem = lt.mem_other + lt.mem_core + lt.mem_other_bwd + lt.mem_core_bwd;
  double layer_comm = lt.comm_fwd + lt.comm_bwd;
  if (l.recompute == Recompute::kFull) {
    bwd += fwd;
    layer_compute += lt.linear + lt.core, layer_mem += lt.mem_other + lt.mem_core, layer_comm += lt.comm_fwd;
  } else if (l.recompute == Recompute::kSelective) {
    // Megatron checkpoints the core attention whatever its kernel: with a
    // fused (flash) kernel it stores nothing of s^2 to save, but its forward
    // still runs again in the backward.
    bwd += lt.core + lt.mem_core;
    layer_compute += lt.core, layer_mem += lt.mem_core;
  }
  const double unit = fwd + bwd + params_.layer_overhead_s;
  auto body = [&](int stage) { return structure::stage_layers(s, l, stage) * unit + c.p2p(); };

  double logits_compute = 0;
  double logits = c.logits(&logits_compute), embedding = c.embedding();
  // Per micro-batch step of each stage kind: the first, a stage between (all
  // alike) and the last; with one stage it holds both ends.
  double first = body(0) + embedding + (l.pp == 1 ? logits : 0);
  double last = l.pp == 1 ? first : body(l.pp - 1) + logits;
  double between = l.pp > 2 ? body(1) : 0;
  double slowest = std::max({first, last, between});
  double mean = l.pp == 1 ? first : (first + last + (l.pp - 2) * between) / l.pp;
  // The stage that sets the pace, whose work the breakdown reports.
  const int slow_stage = last >= std::max(first, between) ? l.pp - 1 : first >= between ? 0 : 1;
  const bool last_slowest = slow_stage == l.pp - 1;
  const double layers = structure::stage_layers(s, l, slow_stage);

  int mb = l.micro_batches();
  LlmTimeBreakdown r;
  r.stage_step = slowest;
  r.mean_stage_step = mean;
  r.compute = mb * (layers * layer_compute + (last_slowest ? logits_compute : 0));
  r.memory_bound = mb * layers * layer_mem;
  r.tp_comm = mb * layers * layer_comm;
  r.pp_comm = mb * c.p2p();
  // 1F1B's critical path: the first micro-batch's forward through every
  // stage, m - 1 more at the slowest stage's pace, the last one's backward
  // through every stage: (m - 1)·t_slowest + pp·t_mean, so the bubble beyond
  // m·t_slowest is pp·t_mean - t_slowest ((pp - 1)·t when the stages are
  // alike; with one micro-batch the stages run one after another). The
  // interleaved schedule's bubble is (pp - 1)/vpp of a mean stage
  // (Narayanan et al. 2021) while there are at least pp micro-batches to
  // fill it. With m < pp a micro-batch still passes all pp·vpp chunks in
  // turn: the first takes pp·t_mean, as without interleaving, and each
  // further one follows it a chunk behind, at the heaviest chunk's pace (the
  // last, with the logits, or the first, with the embedding). (Megatron-LM
  // refuses such layouts; `llm plan` never proposes them; `llm predict`
  // prices them as they would run; scripts/dev/pipeline-schedule-check.py
  // simulates them.)
  const double v = l.virtual_stages;
  if (l.virtual_stages == 1) {
    r.bubble = std::max(0.0, l.pp * mean - slowest);
  } else if (mb >= l.pp) {
    r.bubble = (l.pp - 1.0) / v * mean;
  } else {
    const double heaviest_chunk =
        std::max({(first - embedding) / v + embedding, (last - logits) / v + logits, between / v});
    r.bubble = std::max(0.0, l.pp * mean + (mb - 1) * heaviest_chunk - mb * slowest);
  }

  // Data parallelism: the gradients of the largest stage; with the
  // distributed optimizer a reduce-scatter of them and an all-gather of the
  // updated 16-bit weights.
  double params = stage_params(s, l, slow_stage);
  double grad_bytes = l.precision == Precision::kFp16 || l.grad_reduce_in_bf16 ? 2 : 4;
  const int replicas = l.dp * l.cp;  // the ranks that hold the same weights
  double grads = c.ring(params * grad_bytes, replicas, l.distributed_optimizer ? 1 : 2, c.dp_link());
  double gather = l.distributed_optimizer ? c.ring(params * element_bytes(l.precision), replicas, 1, c.dp_link()) : 0;
  // Overlapped, bucket by bucket: a layer's gradients are reduced while the
  // layers before it run their backward (of the last micro-batch), and the
  // updated weights gathered while the layers before them run the next
  // iteration's first forward; what waits is the part the other layers
  // cannot cover, and at least the one layer's share that has nothing left
  // to hide behind.
  if (l.overlap_grad_reduce) grads = std::max(grads / layers, grads - (layers - 1) * bwd);
  if (l.overlap_param_gather) gather = std::max(gather / layers, gather - (layers - 1) * fwd);
  double dp = grads + gather;
  // The tied embedding's gradient, all-reduced between the first and last stage.
  if (l.pp > 1 && s.tied_embeddings)
    dp += c.ring(double(s.vocab) * s.hidden / l.tp * grad_bytes, 2, 2, c.p2p_link());
  r.dp_comm = (1 - params_.dp_overlap) * dp;
  double shard = l.distributed_optimizer ? replicas : 1;
  r.optimizer = c.mem(params * params_.optimizer_bytes_per_param / shard);
  // FP8: each layer weight cast to FP8 with its transpose once an iteration
  // (Transformer Engine keeps them for the later micro-batches): 2 bytes
  // read, 2 written a parameter.
  if (l.precision == Precision::kFp8) r.optimizer += c.mem(4 * layers * s.layer_params() / l.tp);

  r.iteration = mb * slowest + r.bubble + r.dp_comm + r.optimizer + params_.iteration_overhead_s;
  r.flops_per_gpu = llm_model_flops(s, l) / l.gpus();
  return r;
}

void LlmTimeModel::fit(const std::vector<LlmTimeSample>& samples) {
  if (samples.empty()) throw InputError("", 0, "", "no measured iterations to calibrate on");
  std::set<std::tuple<double, double, double>> distinct;
  for (const auto& x : samples) {
    auto r = LlmTimeModel(hw_, given_).predict(x.spec, x.layout);
    distinct.insert({r.compute, r.tp_comm + r.pp_comm + r.dp_comm, r.memory_bound});
  }
  int k = std::min<int>(3, int(distinct.size()));
  const bool all = given_.fit_all && samples.size() >= 8 && distinct.size() >= 8;
  int n = all ? 6 : given_.fit_overheads && distinct.size() >= 3 ? 5 : 3;
  if (n >= 5) k = n;
  const LlmTimeParams& base = given_;
  // x: peak, link, memory fractions; then iteration and layer overheads;
  // then the link latency.
  auto with = [&](const Eigen::VectorXd& x) {
    LlmTimeParams p = base;
    p.gemm.peak_fraction = x(0), p.link_fraction = x(1), p.gemm.memory_fraction = x(2);
    if (x.size() >= 5) p.iteration_overhead_s = x(3), p.layer_overhead_s = x(4);
    if (x.size() >= 6) p.link_latency_s = x(5);
    return p;
  };
  Eigen::VectorXd x0(n), lo = Eigen::VectorXd::Constant(n, kFractionFloor), hi = Eigen::VectorXd::Constant(n, 1.0);
  x0.head(3) << base.gemm.peak_fraction, base.link_fraction, base.gemm.memory_fraction;
  if (n >= 5) {
    x0(3) = base.iteration_overhead_s, x0(4) = base.layer_overhead_s;
    lo(3) = lo(4) = 0, hi(3) = hi(4) = 10;
  }
  if (n >= 6) x0(5) = base.link_latency_s, lo(5) = 0, hi(5) = 0.1;
  auto residuals = [&](const Eigen::VectorXd& x) {
    check_cancelled();
    LlmTimeModel m(hw_, with(x));
    const bool prior = base.fraction_prior_log_sd > 0;
    Eigen::VectorXd r(samples.size() + (prior ? 3 : 0));
    for (size_t i = 0; i < samples.size(); ++i)
      r(i) = m.predict(samples[i].spec, samples[i].layout).iteration / samples[i].seconds - 1;
    if (prior) {
      // Each fraction against its start, the datasheet's.
      const double w = base.relative_noise / base.fraction_prior_log_sd;
      for (int j = 0; j < 3; ++j) r(samples.size() + j) = w * std::log(x(j) / x0(j));
    }
    return r;
  };
  Eigen::Array<bool, Eigen::Dynamic, 1> fixed(n);
  for (int j = 0; j < n; ++j) fixed(j) = j >= k;
  // LlmTimeParams::fit_overheads: the efficiency factors stay as given.
  if (n == 5) fixed(0) = fixed(1) = fixed(2) = true;
  auto res = numerics::bounded_lm(residuals, x0, lo, hi, fixed);
  params_ = with(res.x);
  fitted_factors_ = int((!fixed).count());  // overheads: the two overheads, the fractions held
  fitted_mode_ = n == 6 ? "all" : n == 5 ? "overheads" : "efficiency";
  fitted_configurations_ = int(distinct.size());
}

}  // namespace trainplan::models
