// `trainplan serve`'s HTTP front: cpp-httplib in front of a Service
// (server/service.h). The only translation unit of src/ that includes
// httplib.h. Every request goes to Service::handle(); bodies are JSON.
#pragma once
#include <functional>
#include <memory>
#include <string>

namespace trainplan::server {

class Service;

class HttpServer {
 public:
  // `log`: called with one line per request (method, path, status, ms); may be empty.
  explicit HttpServer(Service& service, std::function<void(const std::string&)> log = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens on host:port; port 0 takes any free port. Returns the
  // port. Throws std::runtime_error when it cannot bind.
  int bind(const std::string& host, int port);
  // Serves until stop(); call after bind(). False when serving failed.
  bool listen();
  // Makes listen() return; safe from any thread, before or during listen(), and more than once.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainplan::server
