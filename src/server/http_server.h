// `trainplan serve`'s HTTP front: cpp-httplib in front of a Service
// (server/service.h). A GET of the page or one of its files
// (server/web_assets.h) is answered from the binary; every other request goes
// to Service::handle(), and every other answer, errors of the HTTP layer
// included, is JSON.
//
// Bodies are read here, not by httplib: httplib 0.11 caps a body sent as a
// form (`application/x-www-form-urlencoded`, what `curl -d` sends) at 8,192
// bytes and answers 413 with an empty body, in its compiled library where no
// macro reaches. POSTs are routed to a handler that reads the body itself,
// which that cap does not touch, so a JSON body is taken whatever its content
// type says. Limits::max_body_bytes bounds it: a larger body is refused with
// 413 before it is sent (`Expect: 100-continue`) or read and dropped without
// being kept; a multipart body is refused with 415, and so is a compressed
// one (Content-Encoding), unread: httplib would inflate it as it is read.
// Before any body is read a request is refused with 400, and its connection
// closed, where its headers could hide where it ends or whom it is for
// (white space in a header's name, two Hosts or Origins) or where it carries
// a query string (fields come in the body); a path or method the service
// does not route gets its 404 or 405 first.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace trainplan::server {

class Service;

class HttpServer {
 public:
  // `log`: called with one line per request (method, path, status, ms); may be empty.
  // Serves with service.limits().threads threads.
  explicit HttpServer(Service& service, std::function<void(const std::string&)> log = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens on host:port; port 0 takes any free port. Returns the
  // port. Throws std::runtime_error when it cannot bind.
  //
  // Requests a browser sends for a page of another site are refused (403):
  // one whose Origin header is not http(s)://HOST for its own Host header.
  // Bound to a loopback address, the server also refuses (403) a Host header
  // other than localhost, 127.x.x.x, [::1] or one of `allowed_hosts` (names,
  // without a port), so that a site whose name a DNS answer turns to
  // 127.0.0.1 cannot read its answers. Programs (curl, scripts) send no
  // Origin and are not affected.
  int bind(const std::string& host, int port, const std::vector<std::string>& allowed_hosts = {});
  // Serves until stop(); call after bind(). False when serving failed.
  bool listen();
  // Stops the service (Service::stop(): computations in flight are abandoned)
  // and makes listen() return once the connections in flight are done; safe
  // from any thread, before or during listen(), and more than once.
  void stop();
  // Bytes of request bodies held now: announced by requests being read, or
  // read and not yet answered (at most 4 x Limits::max_body_bytes).
  uint64_t body_bytes_held() const;
  // Connections closed before their first byte because others waited for a
  // thread (DeadlineServer::kFirstByteGraceUnderLoad).
  uint64_t silent_connections_let_go() const;
  // Connections let go (503) because their client held its share of the
  // threads while others waited (Limits::max_connections_per_client).
  uint64_t connections_over_share() const;
  // Connections waiting for a thread, and those the threads serve now.
  int connections_waiting() const;
  int connections_served() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainplan::server
