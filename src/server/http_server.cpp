#include "server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "server/service.h"

namespace trainplan::server {

struct HttpServer::Impl {
  Service& service;
  std::function<void(const std::string&)> log;
  httplib::Server http;
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> in_listen{false};

  Impl(Service& s, std::function<void(const std::string&)> l) : service(s), log(std::move(l)) {}

  void serve(const httplib::Request& req, httplib::Response& res) {
    auto t0 = std::chrono::steady_clock::now();
    Response r = service.handle(req.method, req.path, req.body);
    res.status = r.status;
    // replace: an error message may quote bytes of the request that are not UTF-8.
    res.set_content(r.body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
    if (log) {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      log(fmt::format("{} {} {} {:.1f} ms", req.method, req.path, r.status, ms));
    }
  }
};

HttpServer::HttpServer(Service& service, std::function<void(const std::string&)> log)
    : impl_(std::make_unique<Impl>(service, std::move(log))) {
  auto& http = impl_->http;
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { impl_->serve(req, res); };
  // Every path and method goes to the service, which answers 404/405 itself.
  http.Get(".*", handler);
  http.Post(".*", handler);
  http.Put(".*", handler);
  http.Delete(".*", handler);
  http.Patch(".*", handler);
  http.set_payload_max_length(size_t(256) << 20);  // sample CSVs are small; refuse absurd bodies
  // Without it, the response headers and body go out in two segments and the
  // second waits for the client's delayed ACK: about 40 ms a request on Linux.
  http.set_tcp_nodelay(true);
  // httplib's default also sets SO_REUSEPORT, which lets a second server bind
  // the same port and take half of the requests (with other fitted ids).
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<void*>(&yes), sizeof(yes));
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content("{\"error\": \"internal error\"}\n", "application/json");
  });
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind(const std::string& host, int port) {
  auto& http = impl_->http;
  int bound = port == 0 ? http.bind_to_any_port(host) : (http.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) throw std::runtime_error(fmt::format("cannot listen on {}:{}", host, port));
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
  // httplib's stop() is a no-op until listen_after_bind() has started; wait for that.
  while (impl_->in_listen && !impl_->http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
}

}  // namespace trainplan::server
