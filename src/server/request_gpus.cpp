#include "server/request_gpus.h"

#include <fmt/format.h>

#include <cmath>

#include "core/price.h"
#include "server/request_fields.h"

namespace trainplan::server {

using nlohmann::json;

models::TrainingPrecision moved_training(const json& req, structure::HardwareProfile* from,
                                         std::vector<structure::HardwareProfile*> to) {
  const bool tf32 = get_bool(req, "tf32", false);
  from->gpu.fp32_matmul_tf32 = tf32;
  for (auto* h : to) h->gpu.fp32_matmul_tf32 = tf32;
  models::TrainingPrecision out;
  for (auto [field, p] : {std::pair{"precision", &out.profiled}, std::pair{"target_precision", &out.target}}) {
    const auto v = models::precision_named(get_string(req, field, "auto"));
    if (!v) throw RequestError(400, field, fmt::format("field '{}' must be one of: auto, fp32, mixed", field));
    *p = *v;
  }
  return out;
}

structure::HardwareProfile catalog_gpu(const std::string& name, const char* field) {
  auto hw = structure::find_builtin_hardware(name);
  if (!hw) throw RequestError(400, field, fmt::format("unknown GPU '{}' (GET /llm/models lists the catalog)", name));
  return *hw;
}

std::vector<structure::HardwareProfile> gpu_list(const json& gpus, size_t most) {
  if (!gpus.is_array() || gpus.empty() || gpus.size() > most)
    throw RequestError(400, "gpus", fmt::format("field 'gpus' must be an array of 1 to {} GPU names (GET /llm/models lists the catalog)", most));
  std::vector<structure::HardwareProfile> hws;
  for (const auto& g : gpus) {
    if (!g.is_string()) throw RequestError(400, "gpus", "field 'gpus' must hold GPU names (strings)");
    hws.push_back(catalog_gpu(g.get<std::string>(), "gpus"));
    for (size_t i = 0; i + 1 < hws.size(); ++i)
      if (hws[i].name == hws.back().name) throw RequestError(400, "gpus", fmt::format("{} is listed twice", hws[i].name));
  }
  return hws;
}

std::vector<double> gpu_prices(const json& req, const std::vector<structure::HardwareProfile>& hws) {
  std::vector<double> prices;
  const json* p = find(req, "prices");
  if (!p) return prices;
  if (!p->is_object()) throw RequestError(400, "prices", "field 'prices' must be an object of GPU name to price per GPU-hour");
  prices.assign(hws.size(), 0.0);
  for (const auto& [name, v] : p->items()) {
    auto hw = structure::find_builtin_hardware(name);
    size_t i = 0;
    while (i < hws.size() && !(hw && hw->name == hws[i].name)) ++i;
    if (i == hws.size()) throw RequestError(400, "prices", fmt::format("'{}' is not one of 'gpus'", name));
    if (!v.is_number() || !(v.get<double>() > 0) || !(v.get<double>() <= kMostPricePerGpuHour))
      throw RequestError(400, "prices",
                         fmt::format("the price of {} must be a number > 0 and at most {:g}", name, kMostPricePerGpuHour));
    if (prices[i] != 0) throw RequestError(400, "prices", fmt::format("{} is priced twice", hws[i].name));
    prices[i] = v.get<double>();
  }
  for (size_t i = 0; i < hws.size(); ++i)
    if (prices[i] == 0) throw RequestError(400, "prices", fmt::format("no price for {} (give one for every GPU, or none)", hws[i].name));
  return prices;
}

}  // namespace trainplan::server
