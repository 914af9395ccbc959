#include "app/llm_plan_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/llm_memory.h"
#include "models/llm_time.h"

namespace trainplan::app {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}

bool LlmPlanOutcome::minimises_time() const { return options.gpu_hour_budget > 0 || options.cost_budget > 0; }

const char* LlmPlanOutcome::objective() const { return minimises_time() ? "least time" : "fewest GPU-hours"; }

LlmPlanOutcome make_llm_plan(const structure::TransformerSpec& spec, const structure::HardwareProfile& catalog_hw,
                             const plan::LlmPlanOptions& options, const LlmPlanMeasured* measured) {
  // Nodes of another size (--gpus-per-node) are priced as such: the node's
  // links are per GPU, so its network grows or shrinks with its GPUs.
  structure::HardwareProfile hw = catalog_hw;
  if (options.gpus_per_node > 0 && options.gpus_per_node != hw.node.gpus_per_node) {
    const int had = std::max(1, hw.node.gpus_per_node);
    hw.node.inter_node_gbps *= double(options.gpus_per_node) / had;
    hw.node.gpus_per_node = options.gpus_per_node;
  }
  LlmPlanOutcome o{spec, hw, options, {}, std::nullopt, 0, {}};
  models::LlmTimeModel time(hw, llm_time_params_for_fit(measured ? measured->fit : "auto"));
  models::LlmMemoryModel memory;
  if (measured) {
    const bool moved = measured->hardware && measured->hardware->name != hw.name;
    o.calibration = calibrate_llm_models_on(measured->table, measured->source, measured->fit,
                                            moved ? *measured->hardware : hw, time, memory);
    o.interval = moved ? 0 : measured->interval;
  }
  o.result = plan::plan_llm(spec, time, memory, options);
  o.time_params = time.params();
  return o;
}

std::optional<uncertainty::LlmInterval> LlmPlanOutcome::train_time_interval(const plan::LlmCandidate& c) const {
  if (!calibration || interval <= 0) return std::nullopt;
  return uncertainty::conformal_interval(c.train_s, calibration->cv.time_errors_by_configuration, interval);
}

ModelFlopUtilisation model_flop_utilisation(const LlmPlanOutcome& o, const plan::LlmCandidate& c) {
  ModelFlopUtilisation u;
  if (!(c.iteration_s > 0) || c.layout.gpus() < 1) return u;
  u.tflops_per_gpu = models::llm_model_flops(o.spec, c.layout) / c.layout.gpus() / c.iteration_s / 1e12;
  u.peak_tflops = o.hardware.gpu.dense_peak_tflops(c.layout.precision);
  u.mfu = u.peak_tflops > 0 ? u.tflops_per_gpu / u.peak_tflops : 0;
  return u;
}

nlohmann::json to_json(const plan::LlmCandidate& c) {
  const auto& l = c.layout;
  return {{"gpus", l.gpus()}, {"tp", l.tp}, {"cp", l.cp}, {"pp", l.pp}, {"virtual_stages", l.virtual_stages},
          {"first_stage_layers", l.first_stage_layers}, {"last_stage_layers", l.last_stage_layers}, {"dp", l.dp},
          {"micro_batch", l.micro_batch}, {"global_batch", l.global_batch},
          {"recompute", structure::to_string(l.recompute)}, {"sequence_parallel", l.sequence_parallel},
          {"distributed_optimizer", l.distributed_optimizer}, {"precision", structure::to_string(l.precision)},
          {"flash_attention", l.flash_attention}, {"dropout", l.dropout}, {"fp32_residual", l.fp32_residual},
          {"overlap_grad_reduce", l.overlap_grad_reduce}, {"overlap_param_gather", l.overlap_param_gather},
          {"tp_comm_overlap", l.tp_comm_overlap}, {"grad_reduce_in_bf16", l.grad_reduce_in_bf16},
          {"iteration_time_s", c.iteration_s},
          {"train_time_s", c.train_s}, {"gpu_hours", c.gpu_hours}, {"memory_gib", c.memory_bytes / kGiB},
          {"headroom_gib", c.headroom_bytes / kGiB}};
}

std::optional<std::string> reserve_note(const LlmPlanOutcome& outcome, bool compared) {
  const structure::HardwareProfile& hw = outcome.hardware;
  const plan::LlmPlanResult& r = outcome.result;
  if (r.top.empty()) return std::nullopt;
  const auto& c = r.top.front();
  const bool by_time = outcome.minimises_time();
  auto objective_of = [&](const plan::LlmCandidate& x) { return by_time ? x.train_s : x.gpu_hours; };
  const bool at_the_edge = c.headroom_bytes < 0.1 * hw.gpu.capacity_bytes();
  double ahead_headroom = c.headroom_bytes;  // the most any configuration ranked above `alt` keeps free
  for (size_t i = 1; at_the_edge && i < r.top.size(); ++i) {
    const auto& alt = r.top[i];
    const double behind = objective_of(alt) / objective_of(c) - 1;
    if (behind > 0.01) break;
    // The least reserve that rules out every configuration ranked above it, so that it is chosen.
    const double reserve_gib = std::ceil(ahead_headroom / kGiB + 0.01);
    if (alt.headroom_bytes >= 2 * c.headroom_bytes && alt.headroom_bytes - c.headroom_bytes >= 5 * kGiB &&
        reserve_gib * kGiB <= alt.headroom_bytes)
      return fmt::format("rank {} is {:.1f}% behind and keeps {:.1f} GiB free against {:.1f} GiB; the memory "
                         "model misses measured peaks by about 10% (docs/LLM.md): --reserve-gib {:g} chooses it{}",
                         i + 1, 100 * behind, alt.headroom_bytes / kGiB, c.headroom_bytes / kGiB, reserve_gib,
                         compared ? " (and reserves as much on every GPU compared)" : "");
    ahead_headroom = std::max(ahead_headroom, alt.headroom_bytes);
  }
  return std::nullopt;
}

nlohmann::json to_json(const LlmPlanOutcome& o, bool compared) {
  const auto& r = o.result;
  nlohmann::json top = nlohmann::json::array();
  const double price = o.options.price_per_gpu_hour;
  auto candidate_json = [&](const plan::LlmCandidate& c) {
    nlohmann::json j = to_json(c);
    const auto u = model_flop_utilisation(o, c);
    j["model_tflops_per_gpu"] = u.tflops_per_gpu, j["mfu"] = u.mfu;
    if (price > 0) j["cost"] = c.gpu_hours * price;
    if (auto iv = o.train_time_interval(c)) j["train_time_interval_s"] = {iv->lo, iv->hi};
    return j;
  };
  for (const auto& c : r.top) top.push_back(candidate_json(c));
  // The node the plan priced (--gpus-per-node resizes it and its network), so
  // that llm predict can be given the same in a hardware file.
  const auto& node = o.hardware.node;
  nlohmann::json j = {{"model", o.spec.name}, {"params", o.spec.total_params()}, {"gpu", o.hardware.name},
                      {"node", {{"gpus_per_node", node.gpus_per_node},
                                {"intra_node_bw_GBps", node.intra_node_gbps},
                                {"inter_node_bw_GBps", node.inter_node_gbps}}},
                      {"precision", structure::to_string(o.options.precision)},
                      {"objective", o.objective()}, {"iterations", r.iterations}, {"enumerated", r.enumerated},
                      {"fit_memory", r.fit}, {"qualified", r.qualified},
                      {"memory_available_gib", r.capacity_bytes / kGiB},
                      {"reserve_gib", o.options.memory_reserve_bytes / kGiB}, {"top", top}};
  if (price > 0) j["price_per_gpu_hour"] = price;
  if (o.options.cost_budget > 0) j["cost_budget"] = o.options.cost_budget;
  if (!r.top.empty()) j["chosen"] = top.front();
  if (!r.failing.empty()) {
    j["failing"] = r.failing;
    j["explanation"] = r.explanation;
    if (const auto& f = r.shortfall)
      j["shortfall"] = {{"limit", f->limit}, {"closest", f->value}, {"unit", f->unit},
                        {"over", f->value - f->limit}, {"over_fraction", f->limit > 0 ? f->value / f->limit - 1 : 0.0}};
    if (r.closest) j["closest"] = candidate_json(*r.closest);
  }
  if (o.options.frontier) {
    j["frontier"] = nlohmann::json::array();
    for (const auto& c : r.frontier) j["frontier"].push_back(candidate_json(c));
  }
  j["notes"] = r.notes;
  if (const auto note = reserve_note(o, compared)) j["notes"].push_back(*note);
  if (o.calibration) j["calibration"] = to_json(*o.calibration);
  if (o.calibration && !o.calibration->cv.time_errors_by_configuration.empty() && o.interval > 0) j["interval_coverage"] = o.interval;
  return j;
}

}  // namespace trainplan::app
