// The load benchmark of `trainplan serve` (`trainplan bench serve`): many
// concurrent clients on one server, mixing valid /fit, /predict and /plan
// requests with malformed ones, bounded in count and in time, while a prober
// (another client: on loopback, from 127.0.0.2) asks /health every 50 ms.
//
// Any request answered 503 with Retry-After (the server's slots and line are
// full, or its client holds its share of the threads) is sent again after
// it, as a client should, and counted as retried. Then a valid request must
// end 200, and a malformed one get its expected status with a JSON error
// (and the field at fault, where there is one). Anything else is counted as
// unexpected and the first few are kept.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainplan::server {

struct LoadOptions {
  int clients = 16;
  long requests = 2000;     // in all; no client starts one past it
  double duration_s = 60;   // no client starts a request after it
  uint64_t seed = 1;
  std::string samples_csv;  // the samples the valid requests fit (CSV text, with a metric)
  std::string setup_model = "auto";  // the model of the /fit that makes the id of the by-id requests
  // The server's limits, so that the requests over them are one row and one byte over.
  size_t max_rows = 10000;
  size_t max_body_bytes = size_t(8) << 20;
};

// One kind of request: what it sends and what it must get back.
struct KindStats {
  std::string kind, endpoint;
  bool valid = true;
  int expect = 200;
  long sent = 0;        // requests (a retry is the same request)
  long unexpected = 0;  // ended with another answer, or none
  long retried = 0;     // 503 answers with Retry-After that were sent again
  std::vector<double> ms;  // the latency of each request's last exchange
};

struct LoadResult {
  LoadOptions options;
  std::string id;         // the id the by-id requests use (a /fit before the load)
  double setup_s = 0;     // that /fit
  double wall_s = 0;      // the load
  std::vector<KindStats> kinds;
  std::vector<double> health_ms;
  long health_failed = 0;
  std::vector<std::string> failures;  // the first unexpected answers, with their request kind

  long requests() const;
  long valid_failed() const;
  long malformed_wrong() const;
};

// Runs the load on host:port. Throws std::runtime_error when the server does
// not answer the setup (/fit of the samples and a feasible /plan).
LoadResult run_load(const std::string& host, int port, const LoadOptions& o);

// Percentile (nearest rank, 0 < q <= 1) of `v`; 0 when empty.
double percentile(std::vector<double> v, double q);

nlohmann::json to_json(const LoadResult& r);
std::string format_load(const LoadResult& r);

}  // namespace trainplan::server
