// The GPU fields of an API request: names from the built-in catalog only (a
// hardware file would be a read of the server's files), their prices, and
// the training precision of samples moved to another GPU. Each check throws
// RequestError (server/request_fields.h) naming the field.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/transfer.h"
#include "structure/gpu_catalog.h"

namespace trainplan::server {

// The built-in GPU `name` names, for `field`; 400 when it names none.
structure::HardwareProfile catalog_gpu(const std::string& name, const char* field);

// "gpus": 1 to `most` catalog names, none twice (each is a whole plan, so a
// few GPUs, not the catalog).
std::vector<structure::HardwareProfile> gpu_list(const nlohmann::json& gpus, size_t most);

// "prices": {"t4": 0.53, ...}, a price > 0 for every GPU of `hws`, or none
// (empty).
std::vector<double> gpu_prices(const nlohmann::json& req, const std::vector<structure::HardwareProfile>& hws);

// What a request that moves samples to another GPU says the training ran in:
// 'precision' (auto, fp32 or mixed; transfer's --precision),
// 'target_precision' (--target-precision: what it will run in there) and
// 'tf32' (--tf32: fp32 dense layers on TF32 tensor cores), set on `from` and
// on each of `to`.
models::TrainingPrecision moved_training(const nlohmann::json& req, structure::HardwareProfile* from,
                                         std::vector<structure::HardwareProfile*> to);

}  // namespace trainplan::server
