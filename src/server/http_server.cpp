#include "server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <malloc.h>

#include <functional>
#include <unordered_map>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "io/csv.h"
#include "io/json_text.h"
#include "server/deadline_server.h"
#include "server/loopback_host.h"
#include "server/service.h"
#include "server/web_assets.h"

namespace trainplan::server {

namespace {

using Clock = std::chrono::steady_clock;

// An answer's text and its newline; an error message may quote bytes of the request that are not UTF-8.
std::string json_text(const nlohmann::json& j) { return io::json_text(j) + "\n"; }

std::string error_text(const std::string& message) { return json_text({{"error", message}}); }

// A Host header's name: "[::1]:8077" -> "::1", "localhost:8077" -> "localhost".
std::string host_name(const std::string& host) {
  if (!host.empty() && host.front() == '[') return host.substr(1, host.find(']') - 1);
  return host.substr(0, host.find(':'));
}

// A Host header's name that only this machine answers to, as written, never
// resolved (a DNS answer is what a rebinding site controls): localhost, an
// IPv4 address 127.x.x.x or ::1, not a name such as 127.example.com.
bool loopback_name(const std::string& lowercase_name) {
  const std::string& n = lowercase_name;
  in_addr v4{};
  return n == "localhost" || n == "::1" || (inet_pton(AF_INET, n.c_str(), &v4) == 1 && n.rfind("127.", 0) == 0);
}

// What a request freed goes back to the system, not to a malloc arena (a
// server that answered one large plan kept 1.3 GB resident, 84 MB of it in
// use): at most every 100 ms while requests come (a trim takes every arena's
// lock), and always after the last one in flight, so that an idle server
// holds no more than it uses.
void trim_now_and_then(bool last_in_flight) {
  static std::atomic<int64_t> last_ns{0};
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_ns.load();
  if (!last_in_flight && (now - last < 100'000'000 || !last_ns.compare_exchange_strong(last, now))) return;
  last_ns = now;
  malloc_trim(0);
}

// The Transfer-Encoding headers without spaces, in lower case, joined by
// commas as one list ("" when absent): its codings are case-insensitive (RFC
// 9112), httplib reads "Chunked", and a second header adds codings to the
// first (one that says chunked and another identity is not chunked alone).
std::string transfer_coding(const httplib::Request& req) {
  std::string te;
  for (size_t i = 0; i < req.get_header_value_count("Transfer-Encoding"); ++i)
    te += (i ? "," : "") + req.get_header_value("Transfer-Encoding", i);
  te.erase(std::remove_if(te.begin(), te.end(), [](unsigned char c) { return std::isspace(c); }), te.end());
  for (char& c : te) c = char(std::tolower(static_cast<unsigned char>(c)));
  return te;
}

bool chunked(const httplib::Request& req) { return transfer_coding(req).find("chunked") != std::string::npos; }

std::string too_large(uint64_t bytes, size_t limit) {
  return error_text(fmt::format("the request body is {} bytes, more than the server's limit of {} (trainplan serve "
                                "--max-body-bytes); send fewer samples, or fit them once with /fit and use the id",
                                bytes, limit));
}

}  // namespace

struct HttpServer::Impl {
  Service& service;
  std::function<void(const std::string&)> log;
  DeadlineServer http;
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> in_listen{false};
  socket_t listen_fd = INVALID_SOCKET;  // set by the socket-options hook, before bind
  // Bytes of request bodies held now, bounded by kBodiesHeld x max_body_bytes:
  // a body costs about five times its size until it is parsed (the text, the
  // JSON parser's buffer, the parsed string), so threads x max_body_bytes
  // would not bound memory.
  bool loopback_only = false;             // bound to a loopback address: Host headers are checked
  std::vector<std::string> allowed_hosts;  // Host names accepted besides the loopback ones
  std::atomic<uint64_t> bodies_held{0};
  // The bodies being read, by the order they began (next_body's tickets).
  std::mutex bodies_mu;
  std::set<uint64_t> bodies_reading;
  std::atomic<uint64_t> next_body{0};
  static constexpr uint64_t kBodiesHeld = 4;
  // Bytes of bodies each client holds now (DeadlineServer::client_key: an
  // IPv4 address, an IPv6 /64): at most max_body_bytes, so that one client's
  // stalled bodies cannot take the whole room from the others.
  std::mutex clients_mu;
  std::unordered_map<std::string, uint64_t> client_bodies;
  // A small body (a /predict on an id: at most a sixteenth of the largest,
  // and 64 KiB) is admitted over the room, by up to sixteen such: it does
  // not wait behind large ones, nor count against its client's share.
  static constexpr uint64_t kSmallBody = uint64_t(64) << 10;
  static constexpr uint64_t kSmallBodies = 16;
  // The longest the first body begun waits for room when it runs out: room
  // is held until a body is parsed and answered, which may take a request's
  // whole time limit.
  static constexpr double kFirstBodyWaitS = 3;

  Impl(Service& s, std::function<void(const std::string&)> l)
      : service(s), log(std::move(l)), http(s.limits().head_timeout_s, [this](ReadFailure f) { return failed(f); }) {}

  std::string failed(ReadFailure f) const {
    if (f == ReadFailure::kHeadTooLarge)
      return error_text(fmt::format("the request's line and headers are over {} bytes",
                                    DeadlineServer::kMaxHeadBytes));
    if (f == ReadFailure::kIdle)
      return error_text("the request stopped arriving (no byte for 5 s)");
    if (f == ReadFailure::kLineTooLong)
      return error_text(fmt::format("a line of the chunked body's framing (a chunk's size, an extension or a trailer) "
                                    "is over {} bytes",
                                    DeadlineServer::kMaxBodyLineBytes));
    if (f == ReadFailure::kOverShare)
      return error_text(fmt::format(
          "busy: this client's connections hold {} or more of the server's threads while other connections wait "
          "for one (trainplan serve --max-connections-per-client), and this one, new or waiting for the client's "
          "bytes, was let go; retry later",
          service.limits().max_connections_per_client));
    return error_text(fmt::format("the request's line and headers did not arrive whole within {} s of their first "
                                  "byte (trainplan serve --head-timeout)",
                                  service.limits().head_timeout_s));
  }

  void answer(const httplib::Request& req, httplib::Response& res, const Response& r, Clock::time_point t0) {
    res.status = r.status;
    res.set_content(json_text(r.body), "application/json");
    if (r.retry_after_s > 0) res.set_header("Retry-After", std::to_string(r.retry_after_s));
    if (!r.allow.empty()) res.set_header("Allow", r.allow);
    if (service.stopping()) res.set_header("Connection", "close");
    note(req, r.status, t0);
  }

  // Every answer goes through here: the client has head_timeout_s to take it.
  void note(const httplib::Request& req, int status, Clock::time_point t0) {
    DeadlineServer::set_write_deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                          std::chrono::duration<double>(http.head_timeout_s())));
    if (!log) return;
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    log(fmt::format("{} {} {} {:.1f} ms", req.method, req.path, status, ms));
  }

  // A refusal sent before the body was read whole: the connection cannot
  // carry another request.
  void refuse(const httplib::Request& req, httplib::Response& res, int status, std::string body, Clock::time_point t0) {
    res.status = status;
    res.set_content(std::move(body), "application/json");
    res.set_header("Connection", "close");
    DeadlineServer::close_after_answer();
    note(req, status, t0);
  }

  // Why a request is refused as foreign (HttpServer::bind), or nullopt.
  std::optional<std::string> foreign(const httplib::Request& req) const {
    const std::string host = req.get_header_value("Host");
    const std::string name = io::lowercase(host_name(host));
    if (loopback_only && !host.empty() && !loopback_name(name) &&
        std::find(allowed_hosts.begin(), allowed_hosts.end(), name) == allowed_hosts.end())
      return fmt::format("this server listens on a loopback address and answers requests for localhost or 127.0.0.1, "
                         "not for '{}' (trainplan serve --allow-host names others)",
                         host);
    if (req.has_header("Origin")) {
      const std::string origin = req.get_header_value("Origin");
      if (origin != "http://" + host && origin != "https://" + host)
        return fmt::format("a page of another origin ({}) may not use this server", origin);
    }
    return std::nullopt;
  }

  // Why a request's header cannot be trusted to say where it ends or whom it
  // is for, or nullopt. A space before a header's colon, or a line folded
  // onto the one before, hides the header from this server while a proxy in
  // front may read it (RFC 9112, section 5.1: a 400); two Hosts or Origins
  // would be checked by the first alone (RFC 9112, section 3.2).
  static std::optional<std::string> malformed_header(const httplib::Request& req) {
    for (const auto& [name, value] : req.headers)
      if (name.empty() || name.find_first_of(" \t") != std::string::npos)
        return fmt::format("header name '{}' holds white space (before its colon, or a line folded onto the one "
                           "before): refused, as RFC 9112 asks",
                           name.substr(0, 100));
    for (const char* once : {"Host", "Origin"})
      if (req.get_header_value_count(once) > 1) return fmt::format("more than one {} header", once);
    return std::nullopt;
  }

  void serve_get(const httplib::Request& req, httplib::Response& res) {
    auto t0 = Clock::now();
    if (const auto why = malformed_header(req)) return refuse(req, res, 400, error_text(*why), t0);
    // httplib leaves a GET's (or OPTIONS') body unread: the connection cannot
    // carry another request, whose start would be in that body.
    if (chunked(req) || req.get_header_value("Content-Length").find_first_not_of("0") != std::string::npos)
      DeadlineServer::close_after_answer();
    if (const auto why = foreign(req)) {
      res.status = 403;
      res.set_content(error_text(*why), "application/json");
      return note(req, 403, t0);
    }
    if (const WebAsset* a = req.method == "GET" || req.method == "HEAD" ? find_web_asset(req.path) : nullptr) {
      res.status = 200;
      res.set_content(std::string(a->body), a->content_type);
      res.set_header("Content-Security-Policy", kWebContentSecurityPolicy);
      res.set_header("X-Content-Type-Options", "nosniff");
      // The page changes with the binary; a browser asks again rather than keep an old one.
      res.set_header("Cache-Control", "no-cache");
      return note(req, 200, t0);
    }
    Response r = service.handle(req.method, req.path, "", t0);
    // The connections are this front's, not the service's: a monitor sees
    // the server shedding clients (deadline_server.h).
    if (req.path == "/health" && r.status == 200)
      r.body["connections"] = {{"threads", std::max(2, service.limits().threads)},
                               {"served", http.connections_served()},
                               {"waiting", http.connections_waiting()},
                               {"let_go_silent", http.silent_connections_let_go()},
                               {"let_go_over_share", http.connections_over_share()}};
    answer(req, res, r, t0);
  }

  // Reads the body with the service's limit, whatever the content type, and
  // hands it to the service. Past the limit the rest is read and dropped
  // (bounded by the request's time limit), so that the client, which may be
  // sending it all before it reads, gets the 413.
  void serve_body(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    const auto t0 = Clock::now();
    const size_t limit = service.limits().max_body_bytes;
    const auto drain_until =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(service.limits().request_timeout_s));
    auto draining = [&] { return Clock::now() < drain_until && !service.stopping(); };
    if (const auto why = malformed_header(req)) return refuse(req, res, 400, error_text(*why), t0);
    if (const auto why = foreign(req)) return refuse(req, res, 403, error_text(*why), t0);
    // A path or method the service does not route gets its 404 or 405 before
    // the checks below, which are about a request it would read.
    // Its body is not read (a compressed one would be inflated as it is read,
    // and its framing is not yet checked): the connection closes after the answer.
    if (auto refused = service.route_refusal(req.method, req.path)) {
      res.set_header("Connection", "close");
      DeadlineServer::close_after_answer();
      return answer(req, res, *refused, t0);
    }
    // Fields come in the JSON body alone: one in the query would be passed over in silence.
    if (req.target.find('?') != std::string::npos)
      return refuse(req, res, 400,
                    error_text("a query string is not read: give every field in the JSON body (" +
                               req.target.substr(0, 200) + ")"),
                    t0);
    // httplib would inflate a compressed body as it is read, before any limit
    // here could stop it (a megabyte of gzip is a gigabyte of JSON), so such
    // a body is refused unread, and its connection closed.
    if (const std::string coding = io::lowercase(req.get_header_value("Content-Encoding"));
        !coding.empty() && coding != "identity")
      return refuse(req, res, 415,
                    error_text("Content-Encoding '" + coding.substr(0, 100) +
                               "' is not read: send the JSON body uncompressed"),
                    t0);
    // The body, like the computation, must come within the request's time limit.
    DeadlineServer::begin_body(drain_until);
    // A length that is not a whole number of bytes (negative, too long for
    // 64 bits, text) cannot be read to: refused at once, not after a wait.
    // Two lengths leave where this request ends, and the next begins, to whichever one a proxy in
    // front believed: refused, and the connection closed (RFC 9112, section 6.3).
    if (req.get_header_value_count("Content-Length") > 1)
      return refuse(req, res, 400, error_text("more than one Content-Length header"), t0);
    if (req.has_header("Content-Length")) {
      const std::string v = req.get_header_value("Content-Length");
      if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
        return refuse(req, res, 400, error_text("Content-Length '" + v + "' is not a number of bytes"), t0);
    }
    // Both framings at once is the other way to smuggle a request past a
    // proxy (RFC 9112, section 6.3); a coding other than chunked alone is
    // one this server cannot read, and would wait for bytes that never end.
    if (req.has_header("Transfer-Encoding")) {
      if (req.has_header("Content-Length"))
        return refuse(req, res, 400, error_text("both Content-Length and Transfer-Encoding: give one"), t0);
      if (transfer_coding(req) != "chunked")
        return refuse(req, res, 501,
                      error_text("Transfer-Encoding '" + transfer_coding(req).substr(0, 100) +
                                 "' is not supported: chunked alone (and the body uncompressed)"),
                      t0);
    }
    // httplib reads past a chunk's data without its CRLF: what follows could be
    // read as a request of its own. A chunked request's connection ends with it.
    if (chunked(req)) {
      res.set_header("Connection", "close");
      DeadlineServer::close_after_answer();
    }
    if (req.is_multipart_form_data()) {
      reader([&](const httplib::MultipartFormData&) { return draining(); },
             [&](const char*, size_t) { return draining(); });
      return refuse(req, res, 415,
                    error_text("a multipart body is not read: send the request as one JSON object (with curl: "
                               "-H 'Content-Type: application/json' -d @request.json)"),
                    t0);
    }
    // A request with neither a length nor chunks has no body (RFC 9112 6.3);
    // httplib would wait for the connection to close.
    std::string body;
    // Shares per client (of the bodies' room, and of the compute pools) as the threads' are counted;
    // none with --max-connections-per-client 0 (behind a proxy every client has its address).
    const bool shares = service.limits().max_connections_per_client > 0;
    const std::string client = shares ? DeadlineServer::client_key() : "";
    uint64_t held = 0;         // of bodies_held, given back on return
    uint64_t held_client = 0;  // of it, counted against the client (not its small bodies)
    auto give_back_held = [&] {
      bodies_held -= held;
      held = 0;
      if (held_client == 0) return;
      std::lock_guard<std::mutex> lock(clients_mu);
      auto it = client_bodies.find(client);
      if (it != client_bodies.end() && (it->second -= std::min(it->second, held_client)) == 0) client_bodies.erase(it);
      held_client = 0;
    };
    struct GiveBack {
      std::function<void()> give_back;
      const Service& service;
      ~GiveBack() {
        give_back();
        trim_now_and_then(service.in_flight() == 0);
      }
    } give_back{give_back_held, service};
    const uint64_t budget = kBodiesHeld * limit;
    // Set when a hold failed for this client's share of the room (not the room of all bodies): what it held then.
    std::optional<uint64_t> client_had;
    // Compare-and-swap, so that a hold that would not fit never shows in
    // the total (an add taken back would fail another body's hold meanwhile).
    const uint64_t small_body = std::min<uint64_t>(kSmallBody, limit / 16);
    auto hold = [&](uint64_t n) {
      const bool small = held + n <= small_body;
      // A body past the small size counts against its client from its first byte on.
      const uint64_t against_client = shares && !small ? held + n - held_client : 0;
      if (against_client > 0) {
        std::lock_guard<std::mutex> lock(clients_mu);
        uint64_t& mine = client_bodies[client];
        if (mine + against_client > limit) {
          client_had = mine;
          if (mine == 0) client_bodies.erase(client);
          return false;
        }
        mine += against_client;
      }
      client_had.reset();
      auto unclaim = [&] {
        if (against_client == 0) return;
        std::lock_guard<std::mutex> lock(clients_mu);
        auto it = client_bodies.find(client);
        if ((it->second -= against_client) == 0) client_bodies.erase(it);
      };
      const uint64_t room = budget + (small ? kSmallBodies * small_body : 0);
      uint64_t now = bodies_held.load();
      do {
        if (now + n > room) {
          unclaim();
          return false;
        }
      } while (!bodies_held.compare_exchange_weak(now, now + n));
      held += n;
      held_client += against_client;
      return true;
    };
    if (req.has_header("Content-Length") || chunked(req)) {
      const uint64_t declared = req.has_header("Content-Length") ? req.get_header_value<uint64_t>("Content-Length") : 0;
      uint64_t received = 0;
      // A body holds room as its bytes come, not as declared: four clients
      // declaring 8 MB and sending a byte every few seconds held all the
      // room for the request's time limit. When the room runs out, the
      // body that began first waits for room (up to kFirstBodyWaitS) while
      // the others are refused and give theirs back at once, so that bodies
      // sent together are not all refused halfway.
      const uint64_t ticket = next_body.fetch_add(1);
      {
        std::lock_guard<std::mutex> lock(bodies_mu);
        bodies_reading.insert(ticket);
      }
      struct Done {
        Impl& impl;
        uint64_t ticket;
        ~Done() {
          std::lock_guard<std::mutex> lock(impl.bodies_mu);
          impl.bodies_reading.erase(ticket);
        }
      } done{*this, ticket};
      auto first_begun = [&] {
        std::lock_guard<std::mutex> lock(bodies_mu);
        return !bodies_reading.empty() && *bodies_reading.begin() == ticket;
      };
      const auto wait_until =
          std::min(drain_until, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(kFirstBodyWaitS)));
      auto hold_or_wait = [&](uint64_t n) {
        while (!hold(n)) {
          if (!first_begun() || Clock::now() >= wait_until || service.stopping()) return false;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return true;
      };
      // A refused body, drained while its client sends the rest, holds
      // neither room nor a place in line.
      bool released = false;
      auto let_go = [&] {
        if (released) return;
        released = true;
        give_back_held();
        std::lock_guard<std::mutex> lock(bodies_mu);
        bodies_reading.erase(ticket);
      };
      bool over = declared > limit, busy = false;
      if (over) let_go();
      // Address space only: pages are taken as the bytes are written.
      if (!over) body.reserve(static_cast<size_t>(declared));
      const bool whole = reader([&](const char* data, size_t n) {
        received += n;
        if (!over && !busy && body.size() + n > limit) over = true;
        if (!over && !busy && !hold_or_wait(n)) busy = true;
        if (over || busy) {
          std::string().swap(body);
          let_go();
          return draining();
        }
        body.append(data, n);
        return true;
      });
      if (over) return refuse(req, res, 413, too_large(std::max(declared, received), limit), t0);
      if (busy) {
        res.set_header("Retry-After", "1");
        return refuse(req, res, 503,
                      error_text(client_had
                                     ? fmt::format("busy: this client's request bodies being read and parsed now "
                                                   "hold {} bytes, and this one would take them past its share of "
                                                   "{} (trainplan serve --max-body-bytes); retry later",
                                                   *client_had, limit)
                                     : fmt::format("busy: the request bodies being read and parsed now hold {} bytes, "
                                                   "the server's limit (4 x trainplan serve --max-body-bytes); "
                                                   "retry later",
                                                   budget)),
                      t0);
      }
      if (!whole && DeadlineServer::read_failure() == ReadFailure::kOverShare) {
        res.set_header("Retry-After", "1");
        return refuse(req, res, 503, failed(ReadFailure::kOverShare), t0);
      }
      if (!whole && DeadlineServer::read_failure() == ReadFailure::kLineTooLong)
        return refuse(req, res, 400, failed(ReadFailure::kLineTooLong), t0);
      if (!whole && DeadlineServer::read_failure() == ReadFailure::kIdle)
        return refuse(req, res, 408,
                      error_text("the request body stopped arriving: no byte came for 5 s (a body must keep coming; "
                                 "the whole of it within trainplan serve --request-timeout)"),
                      t0);
      if (!whole && DeadlineServer::read_failure() != ReadFailure::kNone)
        return refuse(req, res, 408,
                      error_text(fmt::format("the request body did not arrive whole within the request's time limit "
                                             "of {} s (trainplan serve --request-timeout)",
                                             service.limits().request_timeout_s)),
                      t0);
      if (!whole)
        return refuse(req, res, 400,
                      error_text("the request body could not be read whole (the connection stalled, or its chunked "
                                 "encoding is broken)"),
                      t0);
    }
    const Service::ClientScope scope(client);  // the compute pools' shares are per client ("": none)
    answer(req, res, service.handle(req.method, req.path, std::move(body), t0, &DeadlineServer::client_gone), t0);
  }
};

HttpServer::HttpServer(Service& service, std::function<void(const std::string&)> log)
    : impl_(std::make_unique<Impl>(service, std::move(log))) {
  auto& http = impl_->http;
  Impl* impl = impl_.get();
  auto get = [impl](const httplib::Request& req, httplib::Response& res) { impl->serve_get(req, res); };
  auto with_body = [impl](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    impl->serve_body(req, res, reader);
  };
  // Every path and method goes to the service, which answers 404/405 itself.
  // Handlers with a ContentReader are called before the body is read.
  http.Get(".*", get);
  http.Options(".*", get);
  http.Post(".*", with_body);
  http.Put(".*", with_body);
  http.Delete(".*", with_body);
  http.Patch(".*", with_body);
  // The body's limit is the service's (serve_body); httplib's own would answer with an empty body.
  http.set_payload_max_length(std::numeric_limits<size_t>::max());
  // A client that asks first (`Expect: 100-continue`, as curl does for bodies
  // over 1 MB) is refused before it sends a body over the limit.
  http.set_expect_100_continue_handler([impl](const httplib::Request& req, httplib::Response& res) {
    const size_t limit = impl->service.limits().max_body_bytes;
    if (!req.has_header("Content-Length") || req.get_header_value<uint64_t>("Content-Length") <= limit) return 100;
    res.status = 413;
    res.set_content(too_large(req.get_header_value<uint64_t>("Content-Length"), limit), "application/json");
    res.set_header("Connection", "close");
    DeadlineServer::close_after_answer();
    // httplib sends this answer without the length it gives others.
    res.set_header("Content-Length", std::to_string(res.body.size()));
    impl->note(req, 413, Clock::now());
    return 413;
  });
  // Errors httplib answers itself (a malformed request line, a URI over 8 KB,
  // a method it does not route) get a JSON body too.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [impl](const httplib::Request&, httplib::Response& res) -> httplib::Server::HandlerResponse {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        // httplib's own refusals: a request it could not parse whole.
        res.set_header("Connection", "close");
        DeadlineServer::close_after_answer();
        if (const ReadFailure f = DeadlineServer::read_failure(); f != ReadFailure::kNone) {
          res.status = DeadlineServer::status_of(f);
          res.set_content(impl->failed(f), "application/json");
          if (res.status == 503) res.set_header("Retry-After", "1");
          return httplib::Server::HandlerResponse::Handled;
        }
        std::string what = res.status == 400   ? "malformed HTTP request"
                           : res.status == 404 ? "no such endpoint"
                           : res.status == 414 ? "the request line is too long"
                                               : fmt::format("HTTP error {}", res.status);
        res.set_content(error_text(what), "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }));
  // Threads serve connections; an idle keep-alive connection holds one for
  // up to its timeout (5 s), a slow client for at most its deadlines
  // (deadline_server.h), so there are many more than cores.
  const size_t threads = static_cast<size_t>(std::max(2, service.limits().threads));
  http.set_threads(threads);
  http.set_max_per_client(std::max(0, service.limits().max_connections_per_client));
  // A connection is closed after 5 requests (httplib's default), so that
  // when clients outnumber the threads the queued connections take turns
  // (measured with 96 clients on 64 threads: /health at worst 1.8 s, against
  // 6.5 s with connections kept for 100 requests).
  http.set_keep_alive_max_count(5);
  // Without it, the response headers and body go out in two segments and the
  // second waits for the client's delayed ACK: about 40 ms a request on Linux.
  http.set_tcp_nodelay(true);
  // httplib's default also sets SO_REUSEPORT, which lets a second server bind
  // the same port and take half of the requests (with other fitted ids).
  http.set_socket_options([impl](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<void*>(&yes), sizeof(yes));
    impl->listen_fd = sock;
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content(error_text("internal error"), "application/json");
  });
}

HttpServer::~HttpServer() { stop(); }

uint64_t HttpServer::body_bytes_held() const { return impl_->bodies_held.load(); }

uint64_t HttpServer::silent_connections_let_go() const { return impl_->http.silent_connections_let_go(); }

uint64_t HttpServer::connections_over_share() const { return impl_->http.connections_over_share(); }

int HttpServer::connections_waiting() const { return impl_->http.connections_waiting(); }

int HttpServer::connections_served() const { return impl_->http.connections_served(); }

int HttpServer::bind(const std::string& host, int port, const std::vector<std::string>& allowed_hosts) {
  auto& http = impl_->http;
  impl_->loopback_only = is_loopback_host(host);
  for (const auto& h : allowed_hosts) impl_->allowed_hosts.push_back(io::lowercase(h));
  int bound = port == 0 ? http.bind_to_any_port(host) : (http.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) throw std::runtime_error(fmt::format("cannot listen on {}:{}", host, port));
  // httplib listens with a backlog of 5: when more clients connect at once
  // than its accepting thread takes in, the kernel drops their SYNs and they
  // retry a second later. Listening again on the bound socket raises it.
  if (impl_->listen_fd != INVALID_SOCKET) ::listen(impl_->listen_fd, SOMAXCONN);
  return bound;
}

bool HttpServer::listen() {
  impl_->in_listen = true;
  if (impl_->stop_requested) {
    impl_->in_listen = false;
    return true;
  }
  bool ok = impl_->http.listen_after_bind();
  impl_->in_listen = false;
  return ok || impl_->stop_requested;
}

void HttpServer::stop() {
  impl_->stop_requested = true;
  impl_->service.stop();
  // httplib's stop() is a no-op until listen_after_bind() has started; wait for that.
  while (impl_->in_listen && !impl_->http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
}

}  // namespace trainplan::server
