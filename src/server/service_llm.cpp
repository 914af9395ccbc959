// GET /llm/models and POST /llm/plan of server/service.h.
#include "server/service.h"

#include <fmt/format.h>

#include <set>

#include "app/llm_plan_on_gpus.h"
#include "app/llm_plan_request.h"
#include "io/llm_config_csv.h"
#include "server/request_fields.h"
#include "server/request_gpus.h"
#include "structure/gpu_catalog.h"
#include "structure/transformer.h"

namespace trainplan::server {

using nlohmann::json;

json Service::llm_models() const {
  return {{"models", structure::transformer_names()}, {"gpus", structure::builtin_hardware_names()}};
}

Response Service::llm_plan_request(const json& req) {
  static const std::set<std::string> allowed = {"model", "gpu", "max_gpus", "min_gpus", "max_cp", "gpus_per_node", "tokens", "global_batch",
                                                "deadline", "gpu_budget", "top", "precision", "reserve_gib",
                                                "flash_attention", "dropout", "fp32_residual", "overlap", "uneven_end_stages", "grad_reduce_in_bf16",
                                                "price_per_gpu_hour", "cost_budget", "calibrate", "calibrate_gpu", "frontier", "gpus", "prices"};
  refuse_unknown_fields(req, allowed, "GET /llm/models lists the models and GPUs");
  const json* gpus = find(req, "gpus");
  for (const char* f : {"model", "gpu"})
    if (!find(req, f) && !(gpus && std::string(f) == "gpu"))
      throw RequestError(400, f, fmt::format("missing field '{}' (GET /llm/models lists them)", f));
  const std::string model = get_string(req, "model", "");
  auto spec = structure::find_transformer(model);
  if (!spec) throw RequestError(400, "model", fmt::format("unknown model '{}' (GET /llm/models lists them)", model));
  if (gpus) {
    if (find(req, "gpu")) throw RequestError(400, "gpu", "give 'gpu' (one GPU) or 'gpus' (several), not both");
    if (find(req, "calibrate") && !find(req, "calibrate_gpu"))
      throw RequestError(400, "calibrate",
                         "with 'gpus', give 'calibrate_gpu': the GPU the measured rows ran on, whose fitted fractions "
                         "and overheads then price each");
    if (find(req, "price_per_gpu_hour"))
      throw RequestError(400, "price_per_gpu_hour", "with 'gpus', give 'prices' ({\"a100-80gb\": 1.8, ...})");
  } else if (find(req, "prices")) {
    throw RequestError(400, "prices", "'prices' prices the GPUs of 'gpus': give 'price_per_gpu_hour' for one 'gpu'");
  }
  // One GPU's hardware; with "gpus" each is resolved there (and calibrate needs calibrate_gpu, above).
  std::optional<structure::HardwareProfile> one;
  if (!gpus) one = catalog_gpu(get_string(req, "gpu", ""), "gpu");
  plan::LlmPlanOptions o;
  o.max_gpus = get_int(req, "max_gpus", o.max_gpus);
  if (o.max_gpus < 1) throw RequestError(400, "max_gpus", "max_gpus must be >= 1");
  o.min_gpus = get_int(req, "min_gpus", o.min_gpus);
  if (o.min_gpus < 1 || o.min_gpus > o.max_gpus)
    throw RequestError(400, "min_gpus", "min_gpus must be between 1 and max_gpus");
  o.max_cp = get_int(req, "max_cp", o.max_cp);
  if (o.max_cp < 1 || o.max_cp > o.max_gpus) throw RequestError(400, "max_cp", "max_cp must be between 1 and max_gpus");
  o.gpus_per_node = get_int(req, "gpus_per_node", o.gpus_per_node);
  o.tokens = get_number(req, "tokens", std::nullopt);
  o.global_batch = get_int(req, "global_batch", std::nullopt);
  o.deadline_s = get_duration(req, "deadline", 0.0);
  if (o.deadline_s < 0) throw RequestError(400, "deadline", "deadline must be >= 0 seconds (0: none)");
  o.gpu_hour_budget = get_number(req, "gpu_budget", 0.0);
  o.price_per_gpu_hour = get_number(req, "price_per_gpu_hour", 0.0);
  o.cost_budget = get_number(req, "cost_budget", 0.0);
  o.top_k = get_int(req, "top", o.top_k);
  if (o.top_k < 1 || o.top_k > 100) throw RequestError(400, "top", "top must be in 1..100");
  if (o.gpus_per_node < 0) throw RequestError(400, "gpus_per_node", "gpus_per_node must be >= 0 (0: the GPU's node)");
  if (find(req, "precision")) {  // null is absent, as for every field
    auto pr = structure::parse_precision(get_string(req, "precision", ""));
    if (!pr) throw RequestError(400, "precision", "precision must be fp16, bf16, fp32, amp-fp32-master or fp8");
    o.precision = *pr;
  } else {
    // As the CLI's: fp16 where bf16 has no tensor cores (with "gpus", set for each GPU).
    if (one) o.precision = structure::default_training_precision(*one);
  }
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const double reserve_gib = get_number(req, "reserve_gib", plan::LlmPlanOptions{}.memory_reserve_bytes / kGiB);
  if (!(reserve_gib >= 0)) throw RequestError(400, "reserve_gib", "reserve_gib must be >= 0");
  o.memory_reserve_bytes = reserve_gib * kGiB;
  o.flash_attention = get_bool(req, "flash_attention", false);
  o.dropout = get_bool(req, "dropout", true);
  o.overlap = get_bool(req, "overlap", false);
  o.uneven_end_stages = get_bool(req, "uneven_end_stages", false);
  o.grad_reduce_in_bf16 = get_bool(req, "grad_reduce_in_bf16", false);
  o.fp32_residual = get_bool(req, "fp32_residual", false);
  o.frontier = get_bool(req, "frontier", false);
  // Measured iterations as CSV text, not a path: a path would be a read of the server's files. Its errors name
  // "calibrate" with the line and column, as the CLI names the file.
  std::optional<app::LlmPlanMeasured> measured;
  if (find(req, "calibrate")) {
    const std::string text = get_string(req, "calibrate", "");
    check_csv_rows(text, "calibrate", "calibrate", limits_.max_rows);
    // The GPU the rows ran on, when not 'gpu' (as --calibrate-gpu): a catalog name, as 'gpu' is.
    std::optional<structure::HardwareProfile> there;
    if (find(req, "calibrate_gpu")) there = catalog_gpu(get_string(req, "calibrate_gpu", ""), "calibrate_gpu");
    auto rows = io::parse_llm_configs(text, "calibrate", /*require_time=*/true);
    io::require_hardware_support(rows, there ? *there : *one);  // a row this GPU cannot run is no measurement of it
    measured = app::LlmPlanMeasured{std::move(rows), "calibrate"};
    measured->hardware = there;
  } else if (find(req, "calibrate_gpu")) {
    throw RequestError(400, "calibrate_gpu", "goes with 'calibrate': the GPU its measured rows ran on");
  }
  const bool precision_given = find(req, "precision") != nullptr;
  auto plan_on = [&](const structure::HardwareProfile& gpu, plan::LlmPlanOptions opts) {
    try {
      return app::make_llm_plan(*spec, gpu, opts, measured ? &*measured : nullptr);
    } catch (const InputError& e) {
      if (!e.file().empty() || e.field().empty()) throw;
      // The planner names its options; the request's fields are named otherwise in places.
      static const std::map<std::string, std::string> renamed = {{"memory_reserve_bytes", "reserve_gib"},
                                                                 {"deadline_s", "deadline"},
                                                                 {"gpu_hour_budget", "gpu_budget"},
                                                                 {"top_k", "top"}};
      const auto r = renamed.find(e.field());
      const std::string field = r != renamed.end() ? r->second : e.field();
      throw RequestError(400, field, field + " " + e.message());
    }
  };
  // The planner's sentences name the CLI's options; an answer names fields.
  auto worded = [&](json j) {
    for (auto& n : j["notes"]) n = api_wording(n.get<std::string>());
    if (j.contains("explanation")) j["explanation"] = api_wording(j["explanation"].get<std::string>());
    return j;
  };
  if (gpus) return llm_plan_on_gpus(*gpus, req, o, precision_given, plan_on, worded);
  // A plan over a large space computes for a second or more: it takes a slot, as a fit does.
  auto slot = take_slot();
  const app::LlmPlanOutcome out = plan_on(*one, o);
  json j = worded(app::to_json(out));
  // Nothing qualifies: 422 as the plan's own, with the search's answer (the closest configuration) beside the reason.
  if (out.result.top.empty())
    return {422, {{"error", api_wording(out.result.failing + ": " + out.result.explanation)}, {"plan", j}}};
  return {200, j};
}

// POST /llm/plan with "gpus": the same job on each GPU, as `llm plan --gpu A,B` plans it; "prices" (one
// for every GPU) cost each plan and, with "frontier", merge the GPUs' frontiers. No GPU with a plan: 422.
Response Service::llm_plan_on_gpus(const json& gpus, const json& req, const plan::LlmPlanOptions& o, bool precision_given,
                                   const std::function<app::LlmPlanOutcome(const structure::HardwareProfile&,
                                                                           plan::LlmPlanOptions)>& plan_on,
                                   const std::function<json(json)>& worded) {
  // Each GPU is a whole search: a few GPUs, not the catalog.
  constexpr size_t kMostGpus = 8;
  const auto hws = gpu_list(gpus, kMostGpus);
  std::vector<double> prices = gpu_prices(req, hws);
  if (o.cost_budget > 0 && prices.empty())
    throw RequestError(400, "prices", "a cost_budget needs what a GPU-hour costs on each GPU: give 'prices'");
  auto slot = take_slot();
  std::vector<app::LlmPlanOutcome> planned;
  for (size_t i = 0; i < hws.size(); ++i) {
    plan::LlmPlanOptions each = o;
    if (!precision_given) each.precision = structure::default_training_precision(hws[i]);
    each.price_per_gpu_hour = prices.empty() ? 0 : prices[i];
    planned.push_back(plan_on(hws[i], each));
  }
  const auto c = app::compare_llm_plans(std::move(planned), std::move(prices));
  json j = app::to_json(c);
  for (auto& g : j["gpus"]) g = worded(g);
  if (!c.any()) return {422, {{"error", "no GPU in 'gpus' has a configuration that qualifies (each GPU's reason is in 'plan')"}, {"plan", j}}};
  return {200, j};
}

}  // namespace trainplan::server
