#include "server/load_bench.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "core/error.h"

namespace trainplan::server {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The data lines of a sample CSV and its header (comments and the metric line kept).
struct CsvParts {
  std::string head;  // everything up to and including the header line
  std::vector<std::string> rows;
};

CsvParts split_csv(const std::string& csv) {
  CsvParts p;
  bool header_seen = false;
  size_t from = 0;
  while (from < csv.size()) {
    size_t end = csv.find('\n', from);
    if (end == std::string::npos) end = csv.size();
    std::string line = csv.substr(from, end - from);
    from = end + 1;
    if (!header_seen) {
      p.head += line + "\n";
      if (!line.empty() && line[0] != '#') header_seen = true;
    } else if (!line.empty()) {
      p.rows.push_back(line);
    }
  }
  return p;
}

// What one exchange came back with.
struct Answer {
  int status = 0;  // 0: no answer
  std::string body;
  int retry_after_s = 0;
};

// A POST with neither a length nor a body, which httplib::Client does not send.
// `method path` without a body on a connection of its own, which closes
// after the answer; from the local address `from` when it is not empty.
Answer bodiless_request(const std::string& host, int port, const std::string& method, const std::string& path,
                        const std::string& from = "") {
  Answer a;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (!from.empty()) {
    sockaddr_in src{};
    src.sin_family = AF_INET;
    if (inet_pton(AF_INET, from.c_str(), &src.sin_addr) != 1 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
      ::close(fd);
      return a;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return a;
  }
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string in;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const size_t end = in.find("\r\n\r\n");
  if (in.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return a;
  a.status = std::atoi(in.c_str() + 9);
  a.body = in.substr(end + 4);
  const std::string head = in.substr(0, end + 2);
  if (const size_t at = head.find("\r\nRetry-After: "); at != std::string::npos)
    a.retry_after_s = std::max(1, std::atoi(head.c_str() + at + 15));
  return a;
}

// A request to send: how, and what must come back.
struct Request {
  std::string method = "POST", path, body, content_type = "application/json";
  bool no_body = false;  // a POST without Content-Length (bodiless_request)
};

struct Kind {
  std::string name;
  int weight;
  bool valid;
  int expect;
  std::string field;  // the field a malformed request's error must name ("": none checked)
  std::function<Request(std::mt19937_64&)> make;
};

// Whether `a` is the answer a kind expects.
bool as_expected(const Kind& k, const Answer& a, std::string& why) {
  if (a.status == 0) return why = "no answer", false;
  json j;
  try {
    j = json::parse(a.body);
  } catch (const std::exception&) {
    return why = fmt::format("{} with a body that is not JSON: {:.80}", a.status, a.body), false;
  }
  if (a.status != k.expect)
    return why = fmt::format("{} (expected {}): {:.160}", a.status, k.expect, j.dump()), false;
  if (k.valid) {
    if (!j.is_object() || j.contains("error")) return why = "200 with an error: " + j.dump().substr(0, 160), false;
    return true;
  }
  if (!j.is_object() || !j.contains("error") || !j["error"].is_string())
    return why = fmt::format("{} without an error message: {:.160}", a.status, j.dump()), false;
  if (!k.field.empty() && j.value("field", std::string()) != k.field)
    return why = fmt::format("{} naming field '{}', not '{}'", a.status, j.value("field", std::string()), k.field),
           false;
  return true;
}

// The request kinds of the mix, over the samples and the id fitted from them.
std::vector<Kind> make_kinds(const LoadOptions& o, const std::string& id, const std::vector<json>& plans) {
  const CsvParts csv = split_csv(o.samples_csv);
  // (batch, workers) pairs the samples ran: the predictions asked for.
  std::vector<std::pair<double, int>> cells;
  for (const auto& row : csv.rows) {
    const size_t c1 = row.find(','), c2 = row.find(',', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    cells.push_back({std::atof(row.substr(0, c1).c_str()), std::atoi(row.substr(c1 + 1, c2 - c1 - 1).c_str())});
  }
  if (cells.empty()) throw std::runtime_error("the samples have no rows");
  auto cell = [cells](std::mt19937_64& g) { return cells[std::uniform_int_distribution<size_t>(0, cells.size() - 1)(g)]; };
  auto epochs = [](std::mt19937_64& g) { return std::uniform_int_distribution<int>(1, 8)(g); };
  auto predict_by_id = [=](std::mt19937_64& g) {
    auto [b, r] = cell(g);
    return json{{"id", id}, {"batch", b}, {"workers", r}, {"epochs", epochs(g)}};
  };
  auto post = [](std::string path, const json& body, std::string type = "application/json") {
    Request q;
    q.path = std::move(path);
    q.body = body.dump();
    q.content_type = std::move(type);
    return q;
  };
  const std::string samples = o.samples_csv;
  // One row over the limit, made of the samples' rows.
  std::string over_rows = csv.head;
  for (size_t i = 0; i <= o.max_rows; ++i) over_rows += csv.rows[i % csv.rows.size()] + "\n";
  const std::string over_rows_body = json{{"samples_csv", over_rows}, {"model", "isotonic-mi"}}.dump();
  // One byte over the body limit: a JSON object padded with spaces.
  std::string too_large = "{\"id\": \"" + id + "\"}";
  too_large.resize(o.max_body_bytes + 1, ' ');

  std::vector<Kind> k;
  // Valid requests.
  k.push_back({"predict-id", 30, true, 200, "", [=](auto& g) { return post("/predict", predict_by_id(g)); }});
  k.push_back({"predict-id-form", 5, true, 200, "",  // as `curl -d` sends it
               [=](auto& g) { return post("/predict", predict_by_id(g), "application/x-www-form-urlencoded"); }});
  k.push_back({"plan-id", 20, true, 200, "", [=](auto& g) {
                 json p = plans[std::uniform_int_distribution<size_t>(0, plans.size() - 1)(g)];
                 p["id"] = id;
                 p["seed"] = std::uniform_int_distribution<int>(1, 1000)(g);
                 return post("/plan", p);
               }});
  k.push_back({"predict-samples", 8, true, 200, "", [=](auto& g) {
                 auto [b, r] = cell(g);
                 return post("/predict", json{{"samples_csv", samples}, {"batch", b}, {"workers", r},
                                              {"epochs", epochs(g)}, {"time_model", "isotonic-mi"},
                                              {"metric_model", "global-batch"}});
               }});
  k.push_back({"fit", 4, true, 200, "", [=](auto&) {
                 return post("/fit", json{{"samples_csv", samples}, {"time_model", "isotonic-mi"},
                                          {"metric_model", "global-batch"}});
               }});
  k.push_back({"fit-auto", 1, true, 200, "",
               [=](auto&) { return post("/fit", json{{"samples_csv", samples}, {"model", "auto"}}); }});
  // Malformed requests, each with the answer it must get.
  k.push_back({"bad-json", 3, false, 400, "", [=](auto&) {
                 Request q = post("/predict", json::object());
                 q.body = "{\"id\": \"" + id + "\", \"batch\": 32,";
                 return q;
               }});
  k.push_back({"unknown-field", 3, false, 400, "max-workers", [=](auto& g) {
                 json p = predict_by_id(g);
                 p["max-workers"] = 4;
                 return post("/predict", p);
               }});
  k.push_back({"wrong-type", 3, false, 400, "target", [=](auto&) {
                 return post("/plan", json{{"id", id}, {"target", "high"}, {"deadline", 600}});
               }});
  k.push_back({"bad-value", 3, false, 400, "deadline", [=](auto&) {
                 return post("/plan", json{{"id", id}, {"target", 0.9}, {"deadline", -1}});
               }});
  k.push_back({"unknown-id", 3, false, 404, "id", [=](auto&) {
                 return post("/predict", json{{"id", "fit-999999"}, {"batch", 32}, {"workers", 2}});
               }});
  k.push_back({"infeasible", 2, false, 422, "", [=](auto&) {
                 return post("/plan", json{{"id", id}, {"target", 0.9999}, {"deadline", 1}, {"max_workers", 4}});
               }});
  k.push_back({"empty-post", 2, false, 400, "samples_csv", [](auto&) {
                 Request q;
                 q.path = "/fit";
                 q.no_body = true;
                 return q;
               }});
  k.push_back({"wrong-method", 2, false, 405, "", [](auto&) {
                 Request q;
                 q.method = "GET";
                 q.path = "/plan";
                 return q;
               }});
  k.push_back({"unknown-path", 2, false, 404, "", [=](auto&) { return post("/nowhere", json::object()); }});
  k.push_back({"too-many-rows", 1, false, 422, "samples_csv", [=](auto&) {
                 Request q = post("/fit", json::object());
                 q.body = over_rows_body;
                 return q;
               }});
  k.push_back({"too-large", 1, false, 413, "", [=](auto&) {
                 Request q = post("/predict", json::object());
                 q.body = too_large;
                 return q;
               }});
  return k;
}

Answer send(httplib::Client& c, const std::string& host, int port, const Request& q) {
  if (q.no_body) return bodiless_request(host, port, "POST", q.path);
  httplib::Result r = q.method == "GET" ? c.Get(q.path.c_str())
                                        : c.Post(q.path.c_str(), q.body, q.content_type.c_str());
  Answer a;
  if (!r) return a;
  a.status = r->status;
  a.body = r->body;
  if (r->has_header("Retry-After")) a.retry_after_s = std::max(1, std::atoi(r->get_header_value("Retry-After").c_str()));
  return a;
}

}  // namespace

long LoadResult::requests() const {
  long n = 0;
  for (const auto& k : kinds) n += k.sent;
  return n;
}

long LoadResult::valid_failed() const {
  long n = 0;
  for (const auto& k : kinds) n += k.valid ? k.unexpected : 0;
  return n;
}

long LoadResult::malformed_wrong() const {
  long n = 0;
  for (const auto& k : kinds) n += k.valid ? 0 : k.unexpected;
  return n;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * double(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

LoadResult run_load(const std::string& host, int port, const LoadOptions& o) {
  LoadResult res;
  res.options = o;
  // Setup: the id the by-id requests use, and the plans that are feasible on it.
  httplib::Client setup(host, port);
  setup.set_read_timeout(600, 0);
  const auto t_setup = Clock::now();
  auto fit = setup.Post("/fit", json{{"samples_csv", o.samples_csv}, {"model", o.setup_model}}.dump(), "application/json");
  // A refusal is of the samples given (exit 2); anything else is the server's failure.
  if (fit && fit->status >= 400 && fit->status < 500)
    throw InputError("", 0, "--samples", fmt::format("the server refused the samples: {}", fit->body));
  if (!fit || fit->status != 200)
    throw std::runtime_error(fmt::format("the setup /fit failed: {}", fit ? fit->body : "no answer"));
  res.id = json::parse(fit->body)["id"].get<std::string>();
  res.setup_s = ms_since(t_setup) / 1000;
  std::vector<json> plans;
  for (double target : {0.9, 0.93, 0.95})
    for (double deadline : {300, 600, 1200}) {
      const json p = {{"target", target}, {"deadline", deadline}, {"max_workers", 4}};
      json with_id = p;
      with_id["id"] = res.id;
      auto r = setup.Post("/plan", with_id.dump(), "application/json");
      if (r && r->status == 200) plans.push_back(p);
    }
  if (plans.empty()) throw std::runtime_error("no /plan of the setup is feasible on these samples");

  const std::vector<Kind> kinds = make_kinds(o, res.id, plans);
  res.kinds.resize(kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    std::mt19937_64 g(0);
    const Request q = kinds[i].make(g);
    res.kinds[i].kind = kinds[i].name;
    res.kinds[i].endpoint = q.method + " " + q.path;
    res.kinds[i].valid = kinds[i].valid;
    res.kinds[i].expect = kinds[i].expect;
  }
  std::vector<double> weights;
  for (const auto& k : kinds) weights.push_back(k.weight);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());

  std::mutex mu;  // guards res
  std::atomic<long> next{0};
  std::atomic<bool> done{false};
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));

  // The prober is another client beside the load: on loopback, from
  // another address of it (the server shares its threads per address).
  const std::string prober_from = host == "127.0.0.1" ? "127.0.0.2" : "";
  std::thread prober([&] {
    while (!done) {
      const auto t = Clock::now();
      const Answer r = bodiless_request(host, port, "GET", "/health", prober_from);
      const double ms = ms_since(t);
      {
        std::lock_guard<std::mutex> lock(mu);
        if (r.status == 200) res.health_ms.push_back(ms);
        else ++res.health_failed;
      }
      std::this_thread::sleep_until(t + std::chrono::milliseconds(50));
    }
  });

  std::vector<std::thread> clients;
  for (int ci = 0; ci < o.clients; ++ci)
    clients.emplace_back([&, ci] {
      std::mt19937_64 g(o.seed * 1000003 + static_cast<uint64_t>(ci));
      auto my_pick = pick;
      httplib::Client c(host, port);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);  // else every POST waits ~40 ms for a delayed ACK between its header and body
      c.set_read_timeout(600, 0);
      while (Clock::now() < end && next++ < o.requests) {
        const size_t ki = my_pick(g);
        const Kind& k = kinds[ki];
        const Request q = k.make(g);
        long retried = 0;
        Answer a;
        double ms = 0;
        for (;;) {
          const auto t = Clock::now();
          a = send(c, host, port, q);
          ms = ms_since(t);
          // Busy: the server says when to come back. Retried while the load runs, and a little past it.
          if (a.status == 503 && a.retry_after_s > 0 &&
              Clock::now() + std::chrono::seconds(a.retry_after_s) < end + std::chrono::seconds(30)) {
            ++retried;
            std::this_thread::sleep_for(std::chrono::seconds(a.retry_after_s));
            continue;
          }
          break;
        }
        std::string why;
        const bool ok = as_expected(k, a, why);
        std::lock_guard<std::mutex> lock(mu);
        KindStats& s = res.kinds[ki];
        ++s.sent;
        s.retried += retried;
        s.ms.push_back(ms);
        if (!ok) {
          ++s.unexpected;
          if (res.failures.size() < 10) res.failures.push_back(k.name + ": " + why);
        }
      }
    });
  for (auto& t : clients) t.join();
  res.wall_s = ms_since(t0) / 1000;
  done = true;
  prober.join();
  return res;
}

json to_json(const LoadResult& r) {
  json kinds = json::array();
  for (const auto& k : r.kinds) {
    if (k.sent == 0) continue;
    kinds.push_back({{"kind", k.kind},
                     {"request", k.endpoint},
                     {"valid", k.valid},
                     {"expect", k.expect},
                     {"sent", k.sent},
                     {"unexpected", k.unexpected},
                     {"retried_after_503", k.retried},
                     {"latency_ms", {{"p50", percentile(k.ms, 0.5)}, {"p99", percentile(k.ms, 0.99)},
                                     {"max", percentile(k.ms, 1.0)}}}});
  }
  long valid = 0, malformed = 0;
  for (const auto& k : r.kinds) (k.valid ? valid : malformed) += k.sent;
  std::vector<double> all;
  for (const auto& k : r.kinds) all.insert(all.end(), k.ms.begin(), k.ms.end());
  return {{"clients", r.options.clients},
          {"requests_asked", r.options.requests},
          {"duration_limit_s", r.options.duration_s},
          {"seed", r.options.seed},
          {"setup_fit", {{"model", r.options.setup_model}, {"seconds", r.setup_s}}},
          {"wall_s", r.wall_s},
          {"requests", r.requests()},
          {"throughput_rps", r.wall_s > 0 ? double(r.requests()) / r.wall_s : 0.0},
          {"latency_ms", {{"p50", percentile(all, 0.5)}, {"p99", percentile(all, 0.99)}, {"max", percentile(all, 1.0)}}},
          {"valid", {{"sent", valid}, {"failed", r.valid_failed()}}},
          {"malformed", {{"sent", malformed}, {"wrong_answer", r.malformed_wrong()}}},
          {"health", {{"probes", r.health_ms.size() + static_cast<size_t>(r.health_failed)},
                      {"failed", r.health_failed},
                      {"latency_ms", {{"p50", percentile(r.health_ms, 0.5)}, {"p99", percentile(r.health_ms, 0.99)},
                                      {"max", percentile(r.health_ms, 1.0)}}}}},
          {"kinds", kinds},
          {"failures", r.failures}};
}

std::string format_load(const LoadResult& r) {
  const json j = to_json(r);
  std::string out = fmt::format(
      "{} clients, {} requests in {:.1f} s: {:.1f} requests/s; latency p50 {:.1f} ms, p99 {:.1f} ms\n"
      "valid: {} sent, {} failed; malformed: {} sent, {} answered otherwise than expected\n"
      "/health beside the load: {} probes, {} failed, p50 {:.1f} ms, p99 {:.1f} ms, max {:.1f} ms\n\n",
      r.options.clients, r.requests(), r.wall_s, j["throughput_rps"].get<double>(), j["latency_ms"]["p50"].get<double>(),
      j["latency_ms"]["p99"].get<double>(), j["valid"]["sent"].get<long>(), r.valid_failed(),
      j["malformed"]["sent"].get<long>(), r.malformed_wrong(), j["health"]["probes"].get<long>(), r.health_failed,
      j["health"]["latency_ms"]["p50"].get<double>(), j["health"]["latency_ms"]["p99"].get<double>(),
      j["health"]["latency_ms"]["max"].get<double>());
  out += fmt::format("{:<16} {:<14} {:>5} {:>6} {:>9} {:>9} {:>9} {:>10} {:>7}\n", "kind", "request", "want", "sent",
                     "p50 ms", "p99 ms", "max ms", "unexpected", "retried");
  for (const auto& k : j["kinds"])
    out += fmt::format("{:<16} {:<14} {:>5} {:>6} {:>9.1f} {:>9.1f} {:>9.1f} {:>10} {:>7}\n",
                       k["kind"].get<std::string>(), k["request"].get<std::string>(), k["expect"].get<int>(),
                       k["sent"].get<long>(), k["latency_ms"]["p50"].get<double>(),
                       k["latency_ms"]["p99"].get<double>(), k["latency_ms"]["max"].get<double>(),
                       k["unexpected"].get<long>(), k["retried_after_503"].get<long>());
  for (const auto& f : r.failures) out += "  unexpected: " + f + "\n";
  return out;
}

}  // namespace trainplan::server
