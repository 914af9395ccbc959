#include "server/deadline_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <limits>
#include <thread>

#include <fmt/format.h>

namespace trainplan::server {

namespace {

using Clock = DeadlineServer::Clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Waits up to `ms` for `events` on `sock`: > 0 ready, 0 timed out, < 0
// failed. A signal does not restart the wait's whole length.
int poll_one(socket_t sock, short events, int ms) {
  pollfd p{sock, events, 0};
  const auto until = Clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const int r = ::poll(&p, 1, ms);
    if (r >= 0 || errno != EINTR) return r;
    ms = static_cast<int>(std::max<long>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count()));
  }
}

// Milliseconds to wait: until `deadline`, and at most `cap_s`.
int wait_ms(Clock::time_point deadline, double cap_s) {
  const double left = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp(std::ceil(std::min(left, cap_s * 1000)), 0.0, 1e9));
}

void address_of(socket_t sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if ((peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len)
            : ::getsockname(sock, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
    return;
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

// Whom a connection's share of the threads is counted against: its peer's
// IPv4 address (an IPv4-mapped IPv6 one included), or the /64 prefix of an
// IPv6 one, since one host may take any address of its /64.
std::string client_of(socket_t sock) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&a)->sin_addr, text, sizeof text);
    return text;
  }
  if (a.ss_family != AF_INET6) return "";
  in6_addr v6 = reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {
    ::inet_ntop(AF_INET, &v6.s6_addr[12], text, sizeof text);
    return text;
  }
  std::memset(&v6.s6_addr[8], 0, 8);
  ::inet_ntop(AF_INET6, &v6, text, sizeof text);
  return std::string(text) + "/64";
}

// One connection's stream: reads through a buffer (httplib reads a head one
// byte at a time), kept from one request to the next so that pipelined bytes
// are not lost. Past its deadline a read or write fails unless it can go on
// without waiting.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(socket_t sock, double read_timeout_s, double write_timeout_s)
      : sock_(sock), read_timeout_s_(read_timeout_s), write_timeout_s_(write_timeout_s) {}

  void begin_request(Clock::time_point read_deadline, Clock::time_point write_deadline) {
    phase_start_ = Clock::now();
    read_deadline_ = read_deadline;
    write_deadline_ = write_deadline;
    head_bytes_left_ = DeadlineServer::kMaxHeadBytes;
    failure_ = ReadFailure::kNone;
    close_after_ = false;
    written_ = 0;
  }
  void begin_body(Clock::time_point read_deadline) {
    phase_start_ = Clock::now();
    read_deadline_ = read_deadline;
    head_bytes_left_ = std::numeric_limits<size_t>::max();
    line_run_ = 0;
  }
  void close_after() { close_after_ = true; }
  bool closing() const { return close_after_ || failure_ != ReadFailure::kNone; }
  void set_write_deadline(Clock::time_point t) { write_deadline_ = t; }
  ReadFailure failure() const { return failure_; }
  size_t written() const { return written_; }
  bool buffered() const { return off_ < size_; }

  // Whether the client has closed its side with nothing unread: an end of
  // stream (or an error) where the next request would be. A client that
  // pipelines has bytes waiting and is not taken to have gone.
  bool peer_closed() const {
    if (buffered()) return false;
    pollfd p{sock_, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLERR | POLLHUP)) return true;
    char c;
    const ssize_t got = ::recv(sock_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }

  // Asked, while a read has waited kSlowReadUnderLoad or more, whether to
  // give the thread up (the read then fails with kOverShare).
  void set_give_up(std::function<bool()> give_up) { give_up_ = std::move(give_up); }

  bool is_readable() const override {
    if (buffered()) return true;
    if (!give_up_) return poll_one(sock_, POLLIN, wait_ms(read_deadline_, read_timeout_s_)) > 0;
    // In slices, so that a client over its share is noticed while it waits.
    const auto until = std::min(read_deadline_, Clock::now() + seconds(read_timeout_s_));
    for (;;) {
      const int r = poll_one(sock_, POLLIN, wait_ms(until, kGiveUpCheckS));
      if (r != 0) return r > 0;
      const auto now = Clock::now();
      if (now >= until) return false;
      if (now - phase_start_ >= DeadlineServer::kSlowReadUnderLoad && give_up_()) {
        gave_up_ = true;
        return false;
      }
    }
  }
  bool is_writable() const override {
    return poll_one(sock_, POLLOUT, wait_ms(write_deadline_, write_timeout_s_)) > 0;
  }

  ssize_t read(char* ptr, size_t n) override {
    if (head_bytes_left_ == 0) {
      failure_ = ReadFailure::kHeadTooLarge;
      return -1;
    }
    if (!buffered()) {
      if (!is_readable()) {
        failure_ = gave_up_                        ? ReadFailure::kOverShare
                   : Clock::now() >= read_deadline_ ? ReadFailure::kDeadline
                                                    : ReadFailure::kIdle;
        return -1;
      }
      ssize_t got;
      do got = ::recv(sock_, buf_, sizeof buf_, 0);
      while (got < 0 && errno == EINTR);
      if (got <= 0) return got;
      off_ = 0;
      size_ = static_cast<size_t>(got);
    }
    const size_t k = std::min({n, size_ - off_, head_bytes_left_});
    std::memcpy(ptr, buf_ + off_, k);
    off_ += k;
    if (head_bytes_left_ != std::numeric_limits<size_t>::max()) {
      head_bytes_left_ -= k;
    } else if (n == 1) {
      // In a body only httplib's line reader reads a byte at a time: a chunked body's framing.
      line_run_ = *ptr == '\n' ? 0 : line_run_ + 1;
      if (line_run_ > DeadlineServer::kMaxBodyLineBytes) {
        failure_ = ReadFailure::kLineTooLong;
        return -1;
      }
    } else {
      line_run_ = 0;
    }
    return static_cast<ssize_t>(k);
  }

  ssize_t write(const char* ptr, size_t n) override {
    if (!is_writable()) return -1;
    ssize_t sent;
    do sent = ::send(sock_, ptr, n, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent > 0) written_ += static_cast<size_t>(sent);
    return sent;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  socket_t sock_;
  double read_timeout_s_, write_timeout_s_;
  Clock::time_point read_deadline_{}, write_deadline_{};
  size_t head_bytes_left_ = 0;
  size_t line_run_ = 0;  // bytes read one at a time in a body since its last newline
  ReadFailure failure_ = ReadFailure::kNone;
  bool close_after_ = false;
  size_t written_ = 0;
  char buf_[4096];
  size_t off_ = 0, size_ = 0;
  Clock::time_point phase_start_{};  // of the head or the body being read
  std::function<bool()> give_up_;
  mutable bool gave_up_ = false;
  static constexpr double kGiveUpCheckS = 0.05;
};

// The stream of the connection this thread is serving, for the handlers.
thread_local DeadlineStream* current_stream = nullptr;

}  // namespace

void DeadlineServer::begin_body(Clock::time_point read_deadline) {
  if (current_stream) current_stream->begin_body(read_deadline);
}

void DeadlineServer::set_write_deadline(Clock::time_point t) {
  if (current_stream) current_stream->set_write_deadline(t);
}

std::string DeadlineServer::client_key() { return current_stream ? client_of(current_stream->socket()) : ""; }

bool DeadlineServer::client_gone() { return current_stream && current_stream->peer_closed(); }

ReadFailure DeadlineServer::read_failure() { return current_stream ? current_stream->failure() : ReadFailure::kNone; }

void DeadlineServer::close_after_answer() {
  if (current_stream) current_stream->close_after();
}

DeadlineServer::DeadlineServer(double head_timeout_s, std::function<std::string(ReadFailure)> failure_body)
    : head_timeout_s_(std::clamp(head_timeout_s, 1e-3, kLongestTimeoutS)), failure_body_(std::move(failure_body)) {}

namespace {

// httplib's pool, counting the connections waiting for a thread and those
// a thread serves.
class CountingPool : public httplib::ThreadPool {
 public:
  CountingPool(size_t threads, std::atomic<int>& waiting, std::atomic<int>& busy)
      : httplib::ThreadPool(threads), waiting_(waiting), busy_(busy) {}
  void enqueue(std::function<void()> fn) override {
    ++waiting_;
    try {
      httplib::ThreadPool::enqueue([fn = std::move(fn), &waiting = waiting_, &busy = busy_] {
        // Taken off the line before it counts as busy: never both at once,
        // which would read as saturated on a server with a thread to spare.
        --waiting;
        ++busy;
        struct Done {
          std::atomic<int>& busy;
          ~Done() { --busy; }
        } done{busy};
        fn();
      });
    } catch (...) {
      --waiting_;
      throw;
    }
  }

 private:
  std::atomic<int>& waiting_;
  std::atomic<int>& busy_;
};

}  // namespace

void DeadlineServer::set_threads(size_t threads) {
  load_.threads = static_cast<int>(threads);
  new_task_queue = [threads, &load = load_] { return new CountingPool(threads, load.waiting, load.busy); };
}

bool DeadlineServer::saturated() const {
  return load_.threads > 0 && load_.waiting > 0 && load_.busy >= load_.threads;
}

// One thread short of all of them at most: whatever n, no one client can
// hold every thread while another waits. A quarter or so would cut a
// browser's six connections to a small server whose waiting line it fills
// itself (the line cannot tell whose connections wait).
int DeadlineServer::share() const {
  return load_.threads > 1 ? std::min(max_per_client_, load_.threads - 1) : max_per_client_;
}

bool DeadlineServer::take_share(const std::string& client) {
  std::lock_guard lock(clients_mu_);
  auto [at, added] = held_.try_emplace(client, 0);
  if (at->second >= share() && saturated()) {
    if (added) held_.erase(at);
    return false;
  }
  ++at->second;
  return true;
}

bool DeadlineServer::give_share_up(const std::string& client) {
  std::lock_guard lock(clients_mu_);
  auto at = held_.find(client);
  if (at == held_.end() || at->second <= share() || !saturated()) return false;
  --at->second;
  return true;
}

void DeadlineServer::release_share(const std::string& client) {
  std::lock_guard lock(clients_mu_);
  auto at = held_.find(client);
  if (at != held_.end() && --at->second <= 0) held_.erase(at);
}

bool DeadlineServer::wait_for_request(socket_t sock, bool first) const {
  const auto start = Clock::now();
  const auto until = start + std::chrono::seconds(keep_alive_timeout_sec_);
  // In slices, so that a stop (svr_sock_ closed) ends the wait promptly.
  while (svr_sock_ != INVALID_SOCKET) {
    const int r = poll_one(sock, POLLIN, 10);
    if (r != 0) return r > 0;
    const auto now = Clock::now();
    if (now >= until) return false;
    // A client sends its request as soon as it connects; one that has not,
    // while others wait for a thread, holds that thread for nothing. Later
    // requests keep the keep-alive wait: a connection closed between them
    // could meet the client's next request on its way (the answer before
    // said Connection: close instead, when saturated).
    if (first && saturated() && now - start >= kFirstByteGraceUnderLoad) {
      ++let_go_;
      return false;
    }
  }
  return false;
}

namespace {

// An answer written without httplib: to a request that could not be read,
// or to a connection refused before it was.
void write_failure(DeadlineStream& strm, ReadFailure f, const std::string& body, double timeout_s) {
  const int status = DeadlineServer::status_of(f);
  const char* reason = status == 431   ? "Request Header Fields Too Large"
                       : status == 503 ? "Service Unavailable"
                       : status == 400 ? "Bad Request"
                                       : "Request Timeout";
  const std::string text = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n{}",
      status, reason, body.size(), status == 503 ? "Retry-After: 1\r\n" : "", body);
  strm.set_write_deadline(Clock::now() + seconds(timeout_s));
  for (size_t at = 0; at < text.size();) {
    const ssize_t n = strm.write(text.data() + at, text.size() - at);
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
}

}  // namespace

bool DeadlineServer::process_and_close_socket(socket_t sock) {
  DeadlineStream strm(sock, static_cast<double>(read_timeout_sec_) + read_timeout_usec_ * 1e-6,
                      static_cast<double>(write_timeout_sec_) + write_timeout_usec_ * 1e-6);
  current_stream = &strm;
  bool ret = false;
  // The client's share of the threads: refused at once when it holds it
  // already while others wait; else held until this connection ends or a
  // slow read gives it up.
  std::string client;
  bool holds_share = false;
  if (max_per_client_ > 0) {
    client = client_of(sock);
    holds_share = take_share(client);
    if (!holds_share) {
      ++over_share_;
      write_failure(strm, ReadFailure::kOverShare, failure_body(ReadFailure::kOverShare), head_timeout_s_);
      // The request already sent is read, so that closing does not reset the
      // answer away; no more is waited for: a client that keeps the
      // connection open would hold the thread its share was refused.
      ::shutdown(sock, SHUT_WR);
      char sink[4096];
      while (::recv(sock, sink, sizeof sink, MSG_DONTWAIT) > 0) {
      }
      current_stream = nullptr;
      ::close(sock);
      return false;
    }
    strm.set_give_up([this, &client, &holds_share] {
      if (!holds_share) return true;  // given up already: the read fails again
      if (!give_share_up(client)) return false;
      holds_share = false;
      ++over_share_;
      return true;
    });
  }
  for (size_t count = keep_alive_max_count_; svr_sock_ != INVALID_SOCKET && count > 0; --count) {
    if (!strm.buffered() && !wait_for_request(sock, count == keep_alive_max_count_)) break;
    const auto head_until = Clock::now() + seconds(head_timeout_s_);
    strm.begin_request(head_until, head_until + seconds(head_timeout_s_));
    bool connection_closed = false;
    // Saturated, the answer closes the connection: its client, idle until its
    // next request, would hold the thread others wait for.
    ret = process_request(strm, count == 1 || saturated(), connection_closed, nullptr);
    // httplib answers nothing when the request line itself did not come.
    if (!ret && strm.failure() != ReadFailure::kNone && strm.written() == 0)
      write_failure(strm, strm.failure(), failure_body(strm.failure()), head_timeout_s_);
    // A request cut at its deadline, or one that could not be parsed, leaves
    // the connection where the next request's start cannot be told.
    if (!ret || connection_closed || strm.closing()) break;
  }
  current_stream = nullptr;
  if (holds_share) release_share(client);
  // A client still sending (a refused body, an oversized head) would get a
  // reset, and may lose the answer, if its bytes were left unread at close.
  if (strm.closing()) {
    ::shutdown(sock, SHUT_WR);
    char sink[4096];
    const auto until = Clock::now() + std::chrono::milliseconds(500);
    while (Clock::now() < until && poll_one(sock, POLLIN, wait_ms(until, 0.5)) > 0 &&
           ::recv(sock, sink, sizeof sink, 0) > 0) {
    }
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace trainplan::server
