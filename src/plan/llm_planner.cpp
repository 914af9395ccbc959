#include "plan/llm_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

#include "core/cancel.h"
#include "core/error.h"
#include "core/price.h"
#include "plan/cost_time_frontier.h"

namespace trainplan::plan {

using structure::ParallelLayout;
using structure::Recompute;
using structure::TransformerSpec;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::vector<int> divisors(int n, int at_most) {
  std::vector<int> d;
  for (int i = 1; i <= std::min(n, at_most); ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// Lexicographic rank: the objective, the other quantity, GPUs, enumeration order.
struct Rank {
  double primary, secondary;
  int gpus;
  long index;
  bool operator<(const Rank& o) const {
    return std::tie(primary, secondary, gpus, index) < std::tie(o.primary, o.secondary, o.gpus, o.index);
  }
};

// The best `k` seen so far, kept sorted (k is small).
class TopK {
 public:
  explicit TopK(int k) : k_(std::max(1, k)) {}
  void offer(const Rank& r, const LlmCandidate& c) {
    if (int(items_.size()) == k_ && !(r < items_.back().first)) return;
    auto at = std::upper_bound(items_.begin(), items_.end(), r,
                               [](const Rank& a, const std::pair<Rank, LlmCandidate>& b) { return a < b.first; });
    items_.insert(at, {r, c});
    if (int(items_.size()) > k_) items_.pop_back();
  }
  std::vector<LlmCandidate> take() const {
    std::vector<LlmCandidate> out;
    for (const auto& [r, c] : items_) out.push_back(c);
    return out;
  }

 private:
  int k_;
  std::vector<std::pair<Rank, LlmCandidate>> items_;
};

std::string hours(double s) { return fmt::format("{:.4g} h", s / 3600); }

// How the layers may split over pipeline stages: pp and its virtual stages,
// and the end stages' layers (0: the even share).
struct PipelineSplit {
  int pp = 1, virtual_stages = 1, first_stage_layers = 0, last_stage_layers = 0;
};

// Every split up to `max_pp` stages, by pp: the even ones (pp·vpp dividing
// the layers) by vpp, then, with `uneven_end_stages`, those that count the
// embedding and the loss as a layer each.
std::vector<PipelineSplit> pipeline_splits(int layers, int max_pp, bool uneven_end_stages) {
  std::vector<PipelineSplit> out;
  for (int pp = 1; pp <= std::min(max_pp, layers); ++pp) {
    if (layers % pp == 0)
      for (int vpp : divisors(layers / pp, pp > 1 ? layers : 1)) out.push_back({pp, vpp, 0, 0});
    if (!uneven_end_stages || pp == 1) continue;
    for (int vpp = 1; int64_t(pp) * vpp <= layers + 2; ++vpp)
      if (auto ends = structure::end_stage_layers_with_embedding_and_loss_counted(layers, pp, vpp))
        // Two stages without interleaving: the even split again. With
        // virtual stages the chunks differ (pp·vpp divides layers + 2, so
        // not the layers), whatever the stages hold.
        if (!(vpp == 1 && layers % pp == 0 && ends->first == layers / pp))
          out.push_back({pp, vpp, ends->first, ends->second});
  }
  return out;
}

}  // namespace

std::string describe(const ParallelLayout& l) {
  std::string s = fmt::format("tp {}", l.tp);
  if (l.cp > 1) s += fmt::format(", cp {}", l.cp);
  s += fmt::format(", pp {}", l.pp);
  if (l.virtual_stages > 1) s += fmt::format(", vpp {}", l.virtual_stages);
  if (l.uneven())
    s += fmt::format(", end stages {} and {} layers", l.first_stage_layers > 0 ? std::to_string(l.first_stage_layers) : "even",
                     l.last_stage_layers > 0 ? std::to_string(l.last_stage_layers) : "even");
  s += fmt::format(", dp {}, micro-batch {}, recompute {}", l.dp, l.micro_batch, structure::to_string(l.recompute));
  if (l.sequence_parallel) s += ", sequence parallel";
  if (l.distributed_optimizer) s += ", distributed optimizer";
  if (l.precision == structure::Precision::kFp8) s += ", fp8";
  if (l.overlap_grad_reduce || l.overlap_param_gather || l.tp_comm_overlap) s += ", communication overlapped";
  if (l.grad_reduce_in_bf16) s += ", bf16 gradients";
  return s;
}

LlmPlanResult plan_llm(const TransformerSpec& s, const models::LlmTimeModel& time, const models::LlmMemoryModel& memory,
                       const LlmPlanOptions& o) {
  if (!(o.tokens > 0) || !std::isfinite(o.tokens)) throw InputError("", 0, "tokens", "must be a finite number > 0");
  // Past this the planner's divisors of the batch take seconds each, and no
  // run has used a batch within three orders of magnitude of it.
  constexpr int kMostSequences = 1 << 20;
  if (o.global_batch < 1 || o.global_batch > kMostSequences)
    throw InputError("", 0, "global_batch", fmt::format("must be an integer from 1 to {}", kMostSequences));
  if (o.max_gpus < 1) throw InputError("", 0, "max_gpus", "must be an integer >= 1");
  if (o.min_gpus < 1 || o.min_gpus > o.max_gpus)
    throw InputError("", 0, "min_gpus", fmt::format("must be an integer from 1 to the most GPUs ({})", o.max_gpus));
  if (o.max_cp < 1) throw InputError("", 0, "max_cp", "must be an integer >= 1");
  if (o.gpus_per_node < 0) throw InputError("", 0, "gpus_per_node", "must be >= 0 (0: the hardware's)");
  if (o.top_k < 1) throw InputError("", 0, "top_k", "must be an integer >= 1");
  if (!(o.deadline_s >= 0) || !std::isfinite(o.deadline_s))
    throw InputError("", 0, "deadline_s", "must be a finite number of seconds >= 0 (0: none)");
  if (!(o.gpu_hour_budget >= 0) || !std::isfinite(o.gpu_hour_budget))
    throw InputError("", 0, "gpu_hour_budget", "must be a finite number of GPU-hours >= 0 (0: none)");
  const double gpu_memory_bytes = time.hardware().gpu.capacity_bytes();
  if (!(o.memory_reserve_bytes >= 0) || !(o.memory_reserve_bytes < gpu_memory_bytes))
    throw InputError("", 0, "memory_reserve_bytes",
                     fmt::format("must be at least 0 and less than the GPU's memory ({}, {:.2f} GiB planned on)",
                                 time.hardware().gpu.memory_text(), gpu_memory_bytes / (1024.0 * 1024 * 1024)));
  // An iteration count past this is no training anyone plans, and the
  // count must not overflow.
  const double iterations = std::ceil(o.tokens / (double(o.global_batch) * s.seq));
  if (iterations > 1e15)
    throw InputError("", 0, "tokens", fmt::format("{:g} tokens are {:g} iterations of {} x {} tokens: more than 1e15",
                                                  o.tokens, iterations, o.global_batch, s.seq));
  if (!(o.price_per_gpu_hour >= 0) || !(o.price_per_gpu_hour <= kMostPricePerGpuHour))
    throw InputError("", 0, "price_per_gpu_hour",
                     fmt::format("must be a price from 0 (none) to {:g}, got {:g}", kMostPricePerGpuHour, o.price_per_gpu_hour));
  if (!(o.cost_budget >= 0) || !(o.cost_budget <= kMostCostBudget))
    throw InputError("", 0, "cost_budget",
                     fmt::format("must be a cost from 0 (none) to {:g}, got {:g}", kMostCostBudget, o.cost_budget));
  if (o.cost_budget > 0 && !(o.price_per_gpu_hour > 0))
    throw InputError("", 0, "cost_budget", "needs a price per GPU-hour: what a GPU-hour costs turns the budget into GPU-hours");
  if (o.cost_budget > 0 && o.gpu_hour_budget > 0)
    throw InputError("", 0, "cost_budget", "give a cost budget or a GPU-hour budget, not both");
  // Combinations Megatron-LM refuses or ignores: a plan priced with them
  // would not be the run its launch line starts.
  {
    ParallelLayout settings;
    settings.precision = o.precision;
    settings.fp32_residual = o.fp32_residual;
    settings.grad_reduce_in_bf16 = o.grad_reduce_in_bf16;
    if (auto why = structure::precision_setting_problem(settings)) throw InputError("", 0, why->field, why->message);
  }
  // A cost budget is the GPU-hours it buys.
  const double gpu_hour_budget = o.cost_budget > 0 ? o.cost_budget / o.price_per_gpu_hour : o.gpu_hour_budget;
  int per_node = o.gpus_per_node > 0 ? o.gpus_per_node : std::max(1, time.hardware().node.gpus_per_node);
  // A launcher's node is one host (a GB200 NVL72's tray of 4, not its NVLink
  // domain of 72), and it starts as many ranks on every host.
  const int host_gpus = time.hardware().node.gpus_per_host;
  const int per_host = host_gpus > 0 ? std::min(per_node, host_gpus) : per_node;

  LlmPlanResult res;
  res.iterations = long(iterations);
  // Whole iterations: a budget not a multiple of one trains past it.
  if (const double trained = iterations * double(o.global_batch) * s.seq; trained > 1.01 * o.tokens)
    res.notes.push_back(fmt::format("{:g} tokens are {:g} iteration{} of {} x {} tokens: {:.4g} tokens are trained, "
                                    "{:.3g}x the budget",
                                    o.tokens, iterations, iterations == 1 ? "" : "s", o.global_batch, s.seq, trained,
                                    trained / o.tokens));
  const double gpu_bytes = gpu_memory_bytes;
  res.capacity_bytes = gpu_bytes - o.memory_reserve_bytes;
  if (auto why = structure::missing_precision_unit(time.hardware(), o.precision)) {
    res.failing = "precision", res.explanation = *why;
    return res;
  }
  auto no_fused_attention = structure::missing_fused_attention(time.hardware());
  if (!no_fused_attention) no_fused_attention = structure::fused_attention_precision_problem(o.precision);
  if (o.flash_attention && no_fused_attention) {
    res.failing = "attention", res.explanation = "--flash-attention: " + *no_fused_attention;
    return res;
  }
  bool by_time = gpu_hour_budget > 0;

  TopK top(o.top_k);
  std::optional<LlmCandidate> least_memory, fastest_fit, cheapest_in_deadline;
  CostTimeFrontier<LlmCandidate> frontier;  // with o.frontier

  ParallelLayout l;
  l.global_batch = o.global_batch;
  l.precision = o.precision;
  l.flash_attention = o.flash_attention;
  l.dropout = o.dropout;
  l.fp32_residual = o.fp32_residual;
  l.grad_reduce_in_bf16 = o.grad_reduce_in_bf16;
  long index = 0, next_progress = 1L << 16;
  // Context parallelism in powers of two up to max_cp, each splitting the
  // sequence into 2·cp chunks.
  // Megatron-Core runs context parallelism on fused attention kernels only
  // (Transformer Engine refuses the unfused one), so a cp > 1 layout is
  // priced and launched with them, and none is searched on a GPU without.
  std::vector<int> cps = {1};
  if (o.max_cp > 1 && no_fused_attention)
    res.notes.push_back("--max-cp: no context parallelism searched, as it runs on fused attention kernels only: " +
                        *no_fused_attention);
  else
    for (long cp = 2; cp <= o.max_cp && cp <= o.max_gpus; cp *= 2)  // long: 2^30 doubled overflows an int
      if (s.seq % (2 * cp) == 0) cps.push_back(int(cp));
  const auto splits = pipeline_splits(s.layers, o.max_gpus, o.uneven_end_stages);
  // Past one node whole nodes, past one host whole hosts: the most GPUs a layout may use, said where it is fewer.
  const auto whole = [&](long g) { return (g <= per_node || g % per_node == 0) && (g <= per_host || g % per_host == 0); };
  if (o.min_gpus < o.max_gpus && !whole(o.max_gpus)) {
    long most = o.max_gpus;
    while (most > 1 && !whole(most)) --most;
    res.notes.push_back(
        per_host < per_node
            ? fmt::format("up to {} GPUs: past one host a layout takes whole hosts of {} GPUs, and past one node whole "
                          "nodes of {} (a launcher starts as many ranks on every host), so {} at most; --gpus-per-node "
                          "sets the node",
                          o.max_gpus, per_host, per_node, most)
            : fmt::format("up to {} GPUs: past one node a layout takes whole nodes of {} GPUs (a launcher starts as "
                          "many ranks on every node), so {} at most; --gpus-per-node sets the node",
                          o.max_gpus, per_node, most));
  }
  // Each cp with its attention kernel: fused for cp > 1; for cp 1 the one
  // asked for, and, where cp > 1 is searched (so fused kernels are run),
  // fused too: else a cp 2 layout would win on the kernel alone, over a
  // cp 1 layout with the same kernel that the search never priced.
  std::vector<std::pair<int, bool>> attention;
  for (int cp : cps) {
    if (cp == 1 && !o.flash_attention && cps.size() > 1) attention.emplace_back(1, false);
    attention.emplace_back(cp, cp > 1 || o.flash_attention || cps.size() > 1);
  }
  for (int tp : divisors(s.heads, per_node)) {
    if (s.kv() % tp != 0 || s.ffn() % tp != 0) continue;
    for (const auto& [cp, fused] : attention) {
      if (long(tp) * cp > o.max_gpus) continue;
      l.cp = cp;
      l.flash_attention = fused;
      for (const PipelineSplit& split : splits) {
        const int pp = split.pp, vpp = split.virtual_stages;
        if (pp > o.max_gpus / (tp * cp)) break;
        l.first_stage_layers = split.first_stage_layers, l.last_stage_layers = split.last_stage_layers;
        for (int dp : divisors(o.global_batch, o.max_gpus / (tp * cp * pp))) {
          check_cancelled();  // a server request past its time limit stops here
          if (o.on_progress && index >= next_progress) o.on_progress(index), next_progress = index + (1L << 16);
          // Past one node, whole nodes: a launcher starts as many ranks on
          // every node, so 13 GPUs on 8-GPU nodes would run as 13 nodes of
          // one, not as the 8 + 5 that would be priced.
          const int gpus = tp * cp * pp * dp;
          if (gpus > per_node && gpus % per_node != 0) continue;
          if (gpus > per_host && gpus % per_host != 0) continue;
          if (gpus < o.min_gpus) continue;
          for (int mb : divisors(o.global_batch / dp, o.global_batch)) {
            int m = o.global_batch / (dp * mb);
            if (vpp > 1 && m % pp != 0) continue;
            for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
              for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
                // Megatron-Core scatters each cp rank's sequence over the tp ranks.
                if (sp && (s.seq / cp) % tp != 0) continue;
                // Megatron-Core shards the optimizer over the dp·cp ranks that hold one copy of the weights.
                for (int dist = 0; dist <= (dp * cp > 1 ? 1 : 0); ++dist) {
                  l.tp = tp, l.cp = cp, l.pp = pp, l.virtual_stages = vpp, l.dp = dp, l.micro_batch = mb;
                  l.recompute = rc, l.sequence_parallel = sp, l.distributed_optimizer = dist;
                  l.overlap_grad_reduce = o.overlap, l.overlap_param_gather = o.overlap && dist;
                  l.tp_comm_overlap = o.overlap && tp > 1 && sp;  // Megatron-LM overlaps them only with sp
                  ++index;
                  LlmCandidate c;
                  c.layout = l;
                  c.memory_bytes = memory.predict(s, l).total();
                  c.headroom_bytes = gpu_bytes - c.memory_bytes;
                  if (!least_memory || c.memory_bytes < least_memory->memory_bytes) least_memory = c;
                  if (c.memory_bytes > res.capacity_bytes) continue;
                  ++res.fit;
                  c.iteration_s = time.predict(s, l).iteration;
                  c.train_s = c.iteration_s * res.iterations;
                  c.gpu_hours = c.train_s * l.gpus() / 3600;
                  if (!fastest_fit || c.train_s < fastest_fit->train_s) fastest_fit = c;
                  if (o.frontier) frontier.offer(c);
                  if (o.deadline_s > 0 && c.train_s > o.deadline_s) continue;
                  if (!cheapest_in_deadline || c.gpu_hours < cheapest_in_deadline->gpu_hours) cheapest_in_deadline = c;
                  if (by_time && c.gpu_hours > gpu_hour_budget) continue;
                  ++res.qualified;
                  Rank r = by_time ? Rank{c.train_s, c.gpu_hours, l.gpus(), index}
                                   : Rank{c.gpu_hours, c.train_s, l.gpus(), index};
                  top.offer(r, c);
                }
              }
            }
          }
        }
      }
    }
  }
  res.enumerated = index;
  res.top = top.take();
  if (o.frontier) res.frontier = frontier.take();
  if (!res.top.empty() && res.top.front().layout.cp > 1)
    res.notes.push_back(
        "the choice runs context parallelism, priced without the ring's per-step host work (its small kernels and "
        "exchanges): published cp runs took 0.8-2.5 ms more per layer and micro-batch than such a price "
        "(docs/lab/LLM-CALIBRATION.md), so its lead may not hold; compare with --max-cp 1 --flash-attention");
  if (!res.top.empty()) return res;

  // Nothing qualifies: the first constraint in memory, deadline, budget order
  // that no configuration meets, measured on the configuration closest to it.
  if (res.enumerated == 0) {
    res.failing = "gpus";
    res.explanation = fmt::format(
        "no layout uses {} GPUs: tp·cp·pp·dp is built of divisors (tp of the heads, within a node; pp of the layers; dp "
        "of the global batch {}), and past one node a layout takes whole nodes of {}{}",
        o.min_gpus == o.max_gpus ? std::to_string(o.max_gpus) : fmt::format("from {} to {}", o.min_gpus, o.max_gpus),
        o.global_batch, per_node,
        per_host < per_node ? fmt::format(" (past one host, whole hosts of {})", per_host) : std::string());
    return res;
  }
  if (res.fit == 0) {
    // Timed as if it fitted, so that what it would cost is there beside what it needs.
    LlmCandidate c = *least_memory;
    c.iteration_s = time.predict(s, c.layout).iteration;
    c.train_s = c.iteration_s * res.iterations;
    c.gpu_hours = c.train_s * c.layout.gpus() / 3600;
    double over = c.memory_bytes - res.capacity_bytes;
    res.failing = "memory";
    res.closest = c;
    res.shortfall = LlmPlanResult::Shortfall{res.capacity_bytes / kGiB, c.memory_bytes / kGiB, "GiB"};
    res.explanation = fmt::format(
        "no configuration fits in memory: the smallest, {} ({}), needs {:.2f} GiB per GPU, {:.2f} GiB ({:.1f}%) over "
        "the {:.2f} GiB available ({} less a {:.2f} GiB reserve)",
        describe(c.layout), c.layout.gpus() == 1 ? "1 GPU" : fmt::format("{} GPUs", c.layout.gpus()),
        c.memory_bytes / kGiB, over / kGiB, 100 * over / res.capacity_bytes, res.capacity_bytes / kGiB,
        time.hardware().gpu.memory_text(), o.memory_reserve_bytes / kGiB);
    const double scores = c.layout.recompute == Recompute::kNone ? 0 : models::unfused_scores_bytes(s, c.layout);
    if (scores > 0.1 * c.memory_bytes)
      res.explanation += fmt::format(
          "; {:.2f} GiB of it are the unfused attention's scores of the layer being recomputed: --flash-attention "
          "(fused kernels keep none), or --max-cp above 1 (context parallelism runs fused), removes them",
          scores / kGiB);
  } else if (!cheapest_in_deadline) {
    const auto& c = *fastest_fit;
    double over = c.train_s - o.deadline_s;
    res.failing = "deadline";
    res.closest = c;
    res.shortfall = LlmPlanResult::Shortfall{o.deadline_s, c.train_s, "s"};
    res.explanation = fmt::format(
        "no configuration that fits meets the deadline of {}: the fastest, {} on {} GPUs, takes {}, {} ({:.1f}%) "
        "too long",
        hours(o.deadline_s), describe(c.layout), c.layout.gpus(), hours(c.train_s), hours(over),
        100 * over / o.deadline_s);
  } else {
    const auto& c = *cheapest_in_deadline;
    res.closest = c;
    const char* which = o.deadline_s > 0 ? " that fits and meets the deadline" : " that fits";
    if (o.cost_budget > 0) {
      const double cost = c.gpu_hours * o.price_per_gpu_hour, over = cost - o.cost_budget;
      res.failing = "cost_budget";
      res.shortfall = LlmPlanResult::Shortfall{o.cost_budget, cost, "cost"};
      res.explanation = fmt::format(
          "no configuration{} stays within a cost of {:.4g} ({:.4g} GPU-hours at {:g}): the cheapest, {} on {} GPUs, "
          "costs {:.4g}, {:.4g} ({:.1f}%) over",
          which, o.cost_budget, gpu_hour_budget, o.price_per_gpu_hour, describe(c.layout), c.layout.gpus(), cost, over,
          100 * over / o.cost_budget);
    } else {
      const double over = c.gpu_hours - gpu_hour_budget;
      res.failing = "gpu_budget";
      res.shortfall = LlmPlanResult::Shortfall{gpu_hour_budget, c.gpu_hours, "GPU-hours"};
      res.explanation = fmt::format(
          "no configuration{} stays within {:.4g} GPU-hours: the cheapest, {} on {} GPUs, needs {:.4g} GPU-hours, "
          "{:.4g} ({:.1f}%) over",
          which, gpu_hour_budget, describe(c.layout), c.layout.gpus(), c.gpu_hours, over, 100 * over / gpu_hour_budget);
    }
  }
  return res;
}

}  // namespace trainplan::plan
