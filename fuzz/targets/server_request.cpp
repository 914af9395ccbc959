// Target for the server's request handling (server/service.h), without HTTP.
// An input is "PATH\nBODY": the first line is the endpoint ("/fit",
// "/predict", "/plan", "/transfer", "/llm/plan"), the rest the JSON body, handed to Service::handle as
// the HTTP front would. One service serves every input of a run, so ids from
// /fit stay valid for later /predict and /plan bodies that name them.
//
// The contract of handle(): it returns, never throws, answers a refusal with
// a 4xx or 503 and an "error" message, and never 500 (an internal error is a
// bug a request could reach).
#include <set>

#include "../fuzz_target.h"
#include "server/service.h"

namespace trainplan::fuzz {
namespace {

server::Service& service() {
  server::Limits limits;
  // Short, so that an input whose fit is merely slow costs little; a loop
  // that ignores the time limit still hangs past the driver's --timeout.
  limits.request_timeout_s = 5;
  limits.max_fits = 1 << 20;
  limits.max_rows = 2000;
  static server::Service s("auto", {}, limits);
  return s;
}

bool run_request(std::string_view input, const std::string&) {
  const size_t nl = input.find('\n');
  const std::string path(input.substr(0, nl));
  std::string body(nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1));
  static const std::set<std::string> kPosts = {"/fit", "/predict", "/plan", "/transfer", "/llm/plan"};
  const std::string method = kPosts.count(path) ? "POST" : "GET";
  server::Response r;
  try {
    r = service().handle(method, path, std::move(body));
  } catch (const std::exception& e) {
    throw ContractBreach(std::string("Service::handle threw: ") + e.what());
  }
  const std::string text = r.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (r.status == 500) throw ContractBreach("500 (internal error): " + text);
  static const std::set<int> kKnown = {200, 400, 404, 405, 413, 422, 503};
  if (!kKnown.count(r.status)) throw ContractBreach("status " + std::to_string(r.status) + ": " + text);
  if (!r.body.is_object()) throw ContractBreach("the answer is not a JSON object: " + text);
  if (r.status != 200 && !(r.body.contains("error") && r.body["error"].is_string()))
    throw ContractBreach("a refusal without an error message: " + text);
  return r.status == 200;
}

TargetRegistrar reg({"server_request",
                     "server::Service::handle on a path and a JSON body (no HTTP)",
                     {"fuzz/corpus/server_request"},
                     {"\"samples_csv\"", "\"samples_path\"", "\"uneven_end_stages\"", "\"grad_reduce_in_bf16\"", "\"max_cp\"",
                      "\"llama3.1-405b\"", "\"b200\"", "\"gb200\"", "\"fp8\"", "\"max_gpus\"", "\"tokens\"",
                      "\"global_batch\"", "\"overlap\"", "\"id\"", "\"fit-1\"", "\"model\"", "\"time_model\"",
                      "\"metric_model\"", "\"from_gpu\"", "\"to_gpu\"", "\"trials_csv\"", "\"t4\"",
                      "\"a100-40gb\"", "\"dataset_size\"", "\"network\"", "\"batch\"", "\"workers\"", "\"nodes\"", "\"epochs\"", "\"confidence\"",
                      "\"folds\"", "\"seed\"", "\"target\"", "\"max_epochs\"", "\"deadline\"", "\"max_workers\"",
                      "\"search\"", "\"method\"", "\"batches\"", "\"gpus_per_node\"", "\"alternatives\"",
                      "\"emit\"", "\"train_cmd\"", "\"no_gpus\"", "\"job_name\"", "\"image\"", "\"bounds\"",
                      "\"early_stop\"", "\"early_stop_budget\"", "\"conformal\"", "\"frontier\"",
                      "\"tabu_iterations\"", "\"tabu_tenure\"", "\"manual_tries\"", "\"auto\"", "\"tabu\"",
                      "\"exhaustive\"", "\"torchrun\"", "\"slurm\"", "\"k8s\"", "\"one-sided\"", "\\n", "/fit\n",
                      "/predict\n", "/plan\n", "/llm/plan\n"},
                     run_request});

}  // namespace
}  // namespace trainplan::fuzz
