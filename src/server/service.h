// The JSON API of `trainplan serve`, without HTTP: maps (method, path, body)
// to (status, JSON) over the library calls the CLI uses (app/queries.h).
// server/http_server.h puts it behind cpp-httplib; tests can call it directly.
//
//   GET  /health   {"status": "ok", "version": ...}
//   GET  /models   registered models and their parts
//   GET  /fits     the fitted sample sets held, by id
//   POST /fit      samples (+ model) -> id, chosen models, in-sample MRE
//   POST /predict  id or samples + configuration -> as `trainplan predict --json`
//   POST /plan     id or samples + constraints   -> as `trainplan plan --json`
//
// Errors: {"error": what, "file", "line", "field" (when known)} with 400 (bad
// JSON, a missing or mistyped field, InputError), 404 (unknown id or path),
// 405 (wrong method), 422 (InfeasibleError), 500 (anything else). handle()
// never throws. Thread-safe: requests on one id run one at a time (its models
// are fitted lazily and cached); requests on different ids run in parallel.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "app/plan_request.h"
#include "app/predict.h"

namespace trainplan::server {

// The version /health reports (the CMake project version).
const char* version();

struct Response {
  int status = 200;
  nlohmann::json body;
};

class Service {
 public:
  // `default_model`: the model ("auto" or a registered name) used when a request names none;
  // `params`: what every model is made with (the cluster's communication profile).
  explicit Service(std::string default_model = "auto", models::ModelParams params = {})
      : default_model_(std::move(default_model)), model_params_(std::move(params)) {}

  Response handle(const std::string& method, const std::string& path, const std::string& body);

  // Fits `samples` and holds them under a new id; returns the /fit response.
  // `label` stands for the samples in responses (a path, or "samples_csv").
  // Throws InputError as the library does.
  nlohmann::json fit(SampleSet samples, const std::string& label, const std::string& model,
                     const std::string& time_model = "", const std::string& metric_model = "");

 private:
  struct Entry {
    Entry(SampleSet s, const models::ModelParams& p) : src(std::move(s), p) {}
    std::mutex mu;  // held while a request uses `src`
    app::ModelSource src;
    std::string id, label;
    std::string model, time_model, metric_model;  // as given to /fit: the defaults of later requests
    std::string chosen_time, chosen_metric;
  };
  nlohmann::json health() const;
  nlohmann::json models() const;
  nlohmann::json fits() const;
  nlohmann::json fit_request(const nlohmann::json& req);
  nlohmann::json predict_request(const nlohmann::json& req);
  nlohmann::json plan_request(const nlohmann::json& req);
  // The entry a request names ("id"), or a fresh one from its inline samples.
  std::shared_ptr<Entry> entry_for(const nlohmann::json& req);

  std::string default_model_;
  models::ModelParams model_params_;
  mutable std::mutex mu_;  // guards entries_ and next_id_
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  long next_id_ = 1;
};

}  // namespace trainplan::server
