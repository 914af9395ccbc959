// An httplib::Server whose connections have deadlines over whole phases, not
// only over each read: httplib 0.11 times out a read that waits 5 s for a byte,
// so a client that sends its request one byte every 4 s holds a thread for as
// long as it likes, and `threads` such clients stop the server answering.
//
// Here, per connection:
//   - waiting for the next request: at most the keep-alive timeout (5 s);
//     for the first request of a connection, while every thread serves one
//     and others wait, at most kFirstByteGraceUnderLoad from when a thread
//     took it: a client that opens a connection and sends nothing gives its
//     thread up to them (400 silent connections from one client held every
//     thread for 5 s at a time); and while so saturated an answer closes its
//     connection, so that a client idle between requests cannot hold one;
//   - a request's head (request line and headers), from its first byte: at
//     most `head_timeout_s` and kMaxHeadBytes; past either the read fails,
//     the answer is 408 or 431 and the connection closes;
//   - a body: until the deadline the handler gives (begin_body);
//   - writing an answer: until the deadline the handler sets
//     (set_write_deadline), or twice `head_timeout_s` after the head's
//     first byte when no handler ran.
// Per client (an IPv4 address, or an IPv6 address's /64 prefix), with
// set_max_per_client(n), n > 0, its share s = min(n, threads - 1):
// while every thread serves a connection and others wait, a client's
// connection that a thread takes when the client already holds s threads is
// answered 503 at once, and one of its connections whose request head or
// body has been arriving for kSlowReadUnderLoad or more gives its thread up
// (503) at its next pause of 50 ms while the client holds more than s: one
// client's slow connections cannot keep another client's request waiting
// for their deadlines. A client that sends its requests whole seldom waits
// for its own bytes, so it keeps what it holds. The connections waiting
// count whoever opened them: a client that alone opens more connections
// than there are threads has those past its share answered 503 rather than
// queued.
// A connection whose request could not be read whole, or was refused before
// its body was read (close_after_answer), is closed after the answer; the
// client's unread bytes are drained for a moment first, so that it gets the
// answer rather than a reset.
// Past its deadline a read or write fails unless it can go on at once. Each
// still waits at most httplib's own timeouts (5 s) for one byte. The
// connection loop is httplib's (keep-alive count, the stop check), rewritten
// because httplib keeps the stream it reads through private.
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace trainplan::server {

// kIdle: no byte within httplib's per-read timeout (5 s), before the deadline.
// kOverShare: the client held more than its share of threads while others
// waited (DeadlineServer::set_max_per_client).
// kLineTooLong: a line of a body's chunked framing (a chunk's size, an
// extension, a trailer) past DeadlineServer::kMaxBodyLineBytes.
enum class ReadFailure { kNone, kDeadline, kIdle, kHeadTooLarge, kOverShare, kLineTooLong };

class DeadlineServer : public httplib::Server {
 public:
  using Clock = std::chrono::steady_clock;
  // A request's line and headers together.
  static constexpr size_t kMaxHeadBytes = size_t(64) << 10;
  // A line of a chunked body's framing: httplib reads it a byte at a time
  // into a string with no bound, so one chunk-size line of gigabytes would
  // be held whole.
  static constexpr size_t kMaxBodyLineBytes = size_t(8) << 10;

  // `failure_body`: the JSON body of the answer to a read that failed (408 or 431).
  // REQUIRES: 0 < head_timeout_s <= kLongestTimeoutS.
  DeadlineServer(double head_timeout_s, std::function<std::string(ReadFailure)> failure_body);

  // For a handler, on its thread (no effect elsewhere): the body is read
  // from here on, until `read_deadline`, without the head's byte limit.
  static void begin_body(Clock::time_point read_deadline);
  // For a handler: the client must have taken the answer by `t`.
  static void set_write_deadline(Clock::time_point t);
  // For a handler: whether the client of the request being answered has
  // closed its connection (an end of stream where its next request would
  // be), so that no one waits for the answer. False off a handler's thread.
  static bool client_gone();
  // How a read of the request being answered failed, on the handler's thread.
  static ReadFailure read_failure();
  // Closes the connection once the answer is sent (after a request that
  // could not be parsed).
  static void close_after_answer();
  // 408 for a deadline, 431 for a head over kMaxHeadBytes, 400 for a body's
  // framing line over kMaxBodyLineBytes, 503 for a client over its share
  // (answered with Retry-After: 1).
  static int status_of(ReadFailure f) {
    return f == ReadFailure::kHeadTooLarge  ? 431
           : f == ReadFailure::kLineTooLong ? 400
           : f == ReadFailure::kOverShare   ? 503
                                            : 408;
  }
  // For a handler: whom the connection it answers counts against, as the
  // threads' shares count it (an IPv4 address, an IPv6 address's /64
  // prefix); empty off a handler's thread.
  static std::string client_key();
  // The longest timeout a deadline takes (a year): longer ones would overflow the clock.
  static constexpr double kLongestTimeoutS = 365 * 86400.0;
  // How long a new connection may stay silent while others wait for a thread.
  static constexpr auto kFirstByteGraceUnderLoad = std::chrono::milliseconds(500);

  // Serves connections on `threads` threads (instead of new_task_queue),
  // counting those accepted and waiting for one.
  void set_threads(size_t threads);
  // Connections closed for staying silent while others waited.
  uint64_t silent_connections_let_go() const { return let_go_.load(); }
  // Threads one client address may hold while others wait (above), at most
  // all threads but one; 0, the default: no limit. Call before listening.
  void set_max_per_client(int n) { max_per_client_ = n; }
  // How long a request's head or body of a client over its share may take
  // to arrive before the connection gives its thread up.
  static constexpr auto kSlowReadUnderLoad = std::chrono::milliseconds(500);
  // Connections let go (refused, or their read given up) because their
  // client held its share.
  uint64_t connections_over_share() const { return over_share_.load(); }
  // Connections accepted and waiting for a thread, and those threads serve.
  int connections_waiting() const { return load_.waiting.load(); }
  int connections_served() const { return load_.busy.load(); }

  double head_timeout_s() const { return head_timeout_s_; }
  std::string failure_body(ReadFailure f) const { return failure_body_(f); }

 private:
  bool process_and_close_socket(socket_t sock) override;
  // Waits until the client sends (true), or the keep-alive timeout passes,
  // the connection closes, the server stops, or (first request only) it
  // stays silent past kFirstByteGraceUnderLoad while saturated (false).
  // `first`: the connection's first request (no byte has come yet).
  bool wait_for_request(socket_t sock, bool first) const;

  // Whether every thread serves a connection and more connections wait.
  bool saturated() const;
  // The pool's counts (the pool lives inside listen(), this server longer).
  struct Load {
    std::atomic<int> waiting{0};  // accepted, not yet taken by a thread
    std::atomic<int> busy{0};     // taken by a thread
    int threads = 0;              // 0 until set_threads
  };
  Load load_;
  mutable std::atomic<uint64_t> let_go_{0};  // counted by the const wait

  // The threads each client address holds (only while set_max_per_client).
  // take_share: false, and nothing taken, when the client holds its share
  // and the server is saturated. give_share_up: true, and one given up, when
  // it holds more than its share and the server is saturated.
  bool take_share(const std::string& client);
  int share() const;
  bool give_share_up(const std::string& client);
  void release_share(const std::string& client);
  int max_per_client_ = 0;
  std::mutex clients_mu_;
  std::unordered_map<std::string, int> held_;
  std::atomic<uint64_t> over_share_{0};
  double head_timeout_s_;
  std::function<std::string(ReadFailure)> failure_body_;
};

}  // namespace trainplan::server
