// Helpers of the server tests: sample fixtures, a server on a free port of
// 127.0.0.1 serving from a thread, and a raw HTTP exchange for requests that
// httplib::Client would not send.
#pragma once
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"
#include "server/service.h"
#include "test_util.h"

namespace tpserver {

using nlohmann::json;

// The 48 samples of tptest::synthetic_samples_csv (test_util.h).
inline std::string fixture_csv() { return tptest::synthetic_samples_csv(); }

// `rows` samples of the same surfaces, epochs 1..40 on the 16 (batch, workers)
// cells.
inline std::string many_rows_csv(int rows) {
  std::string csv = "# trainplan: metric=max dataset_size=50000\nbatch,workers,epochs,epoch_time_s,metric,nodes\n";
  const int bs[] = {16, 32, 64, 128}, rs[] = {1, 2, 4, 8};
  for (int i = 0; i < rows; ++i) {
    int b = bs[i % 4], r = rs[(i / 4) % 4], e = 1 + (i / 16) % 40;
    double t = 50000.0 / (b * r) * (0.01 + 0.0005 * b) * (1 + 0.001 * (i % 7));
    double x = e * 528.0 / (400 + b * r);
    csv += std::to_string(b) + "," + std::to_string(r) + "," + std::to_string(e) + "," + std::to_string(t) + "," +
           std::to_string(0.95 - 0.6 / (1 + x / 4) + 0.0005 * (i % 5)) + "," + std::to_string((r + 3) / 4) + "\n";
  }
  return csv;
}

// `rows` samples over up to 100 batches x 32 worker counts, epochs 1..40
// (rows past 3,200 bring new epoch counts). At 10,000 rows an `auto` /fit
// computes for about 50 s on 2 cores (1.3 s at 3,000): a request that holds
// its slot until the test stops the server, on any machine the tests run on.
inline std::string spread_rows_csv(int rows) {
  std::string csv = "# trainplan: metric=max dataset_size=50000\nbatch,workers,epochs,epoch_time_s,metric,nodes\n";
  for (int i = 0; i < rows; ++i) {
    const int b = 8 + (i % 100) * 4, r = 1 + (i / 100) % 32, e = 1 + (i / 3200) % 40;
    const double t = 50000.0 / (b * r) * (0.01 + 0.0005 * b) * (1 + 0.001 * (i % 7));
    const double x = e * 528.0 / (400 + b * r);
    csv += std::to_string(b) + "," + std::to_string(r) + "," + std::to_string(e) + "," + std::to_string(t) + "," +
           std::to_string(0.95 - 0.6 / (1 + x / 4) + 0.0005 * (i % 5)) + "," + std::to_string((r + 3) / 4) + "\n";
  }
  return csv;
}

// Limits that let requests read files (samples_path), as `trainplan serve --allow-paths`.
inline trainplan::server::Limits with_paths(trainplan::server::Limits l = {}) {
  l.allow_paths = true;
  return l;
}

// A server on a free port of 127.0.0.1, serving from a thread.
// Polls `done` every 5 ms until it is true or `timeout_s` has passed; its last value.
template <class Pred>
bool wait_until(Pred done, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

struct Running {
  trainplan::server::Service service;
  trainplan::server::HttpServer http{service};
  int port = 0;
  std::thread thread;
  explicit Running(trainplan::server::Limits limits = {}) : service("auto", {}, limits) {
    port = http.bind("127.0.0.1", 0);
    thread = std::thread([this] { http.listen(); });
  }
  ~Running() {
    http.stop();
    thread.join();
  }
  json post(const std::string& path, const std::string& body, int* status,
            const std::string& content_type = "application/json") {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    auto r = c.Post(path.c_str(), body, content_type.c_str());
    if (!r) throw std::runtime_error("no response from " + path);
    *status = r->status;
    return json::parse(r->body);
  }
  json post(const std::string& path, const json& body, int* status) { return post(path, body.dump(), status); }
  json get(const std::string& path, int* status) {
    httplib::Client c("127.0.0.1", port);
    auto r = c.Get(path.c_str());
    if (!r) throw std::runtime_error("no response from " + path);
    *status = r->status;
    return json::parse(r->body);
  }
  // Waits (up to 30 s) until `n` requests wait in line for a slot.
  bool wait_waiting(int n) {
    return wait_until([&] { return service.waiting() >= n; }, 30);
  }
  // Waits (up to 10 s) until `n` POSTs are in the service.
  bool wait_in_flight(int n) {
    return wait_until([&] { return service.in_flight() >= n; }, 10);
  }
};

// One raw exchange: sends `request` to 127.0.0.1:port and reads until the
// server closes the connection, a whole response (by its Content-Length) has
// come, or `timeout_s` passes.
struct RawAnswer {
  int status = 0;
  std::string head, body;
  bool closed = false;  // the server closed the connection
};

// A connection to 127.0.0.1:port (-1 when refused), from the loopback
// address `from`: another 127.x.y.z is another client to the server.
inline int connect_local(int port, const char* from = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (from) {
    sockaddr_in src{};
    src.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &src.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline RawAnswer raw_exchange(int port, const std::string& request, double timeout_s = 10,
                              const char* from = nullptr) {
  RawAnswer a;
  int fd = connect_local(port, from);
  if (fd < 0) return a;
  timeval tv{static_cast<time_t>(timeout_s), static_cast<suseconds_t>((timeout_s - static_cast<time_t>(timeout_s)) * 1e6)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (size_t sent = 0; sent < request.size();) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer (and stop reading) before the body is sent
    sent += static_cast<size_t>(n);
  }
  std::string in;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) a.closed = true;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
    const size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    const size_t at = in.find("Content-Length: ");
    if (at != std::string::npos && at < end &&
        in.size() >= end + 4 + std::stoul(in.substr(at + 16, in.find("\r\n", at) - at - 16)))
      break;
  }
  ::close(fd);
  const size_t end = in.find("\r\n\r\n");
  if (in.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return a;
  a.status = std::atoi(in.c_str() + 9);
  a.head = in.substr(0, end);
  a.body = in.substr(end + 4);
  return a;
}

// A slow client, as a slow-loris attack is: sends `prefix`, then one byte of
// `drip` every 200 ms for up to `for_s` seconds, until the server answers or
// closes; then reads the answer until the server closes (or 2 s pass).
// `seconds`: from the connection to the end of the answer.
struct TrickleAnswer {
  RawAnswer answer;
  double seconds = 0;
};

inline TrickleAnswer trickle(int port, const std::string& prefix, char drip, double for_s,
                             const char* from = nullptr) {
  TrickleAnswer t;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int fd = connect_local(port, from);
  if (fd < 0) return t;
  ::send(fd, prefix.data(), prefix.size(), MSG_NOSIGNAL);
  std::string in;
  char buf[4096];
  bool closed = false;
  while (elapsed() < for_s && !closed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) in.append(buf, static_cast<size_t>(n));
    if (n == 0 || !in.empty()) break;
    if (::send(fd, &drip, 1, MSG_NOSIGNAL) != 1) closed = true;
  }
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) t.answer.closed = true;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  t.seconds = elapsed();
  const size_t end = in.find("\r\n\r\n");
  if (in.rfind("HTTP/1.1 ", 0) == 0 && end != std::string::npos) {
    t.answer.status = std::atoi(in.c_str() + 9);
    t.answer.head = in.substr(0, end);
    t.answer.body = in.substr(end + 4);
  }
  return t;
}

// `trainplan serve --port 0 --quiet ARGS...` as a child process, its stderr
// in a file; port 0 when it printed no address within 5 s.
struct ServeProcess {
  pid_t pid = -1;
  int port = 0;
  std::string err_path;
  std::string err() const { return tptest::read_file(err_path); }
};

inline ServeProcess spawn_serve(const std::vector<std::string>& args = {}) {
  ServeProcess p;
  p.err_path = (tptest::temp_dir("serve_cli") / "err").string();
  std::vector<std::string> argv = {"trainplan", "serve", "--port", "0", "--quiet"};
  argv.insert(argv.end(), args.begin(), args.end());
  p.pid = fork();
  if (p.pid == 0) {
    if (!freopen(p.err_path.c_str(), "w", stderr)) _exit(126);
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    execv(TRAINPLAN_CLI_PATH, c.data());
    _exit(127);
  }
  const std::string mark = "listening on http://127.0.0.1:";
  for (int i = 0; i < 200 && p.pid > 0 && !p.port; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    const std::string text = p.err();
    const auto at = text.find(mark);
    if (at != std::string::npos) p.port = std::atoi(text.c_str() + at + mark.size());
  }
  return p;
}

// Waits up to `timeout_s` for the child to exit; its wait status, or -1 when it has not.
inline int wait_exit(pid_t pid, double timeout_s) {
  int status = 0;
  return wait_until([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout_s) ? status : -1;
}

}  // namespace tpserver
