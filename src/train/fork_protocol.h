// The wire format between `trainplan-forkrun` and `trainplan-train
// --fork-server` (docs/TRAINER.md, "The fork server"), over a Unix stream
// socket, one connection per run:
//
//   client -> server  a 4-byte length N, then N bytes: NUL-terminated
//                     strings cwd, argc, argv[0..argc), envc, env[0..envc);
//                     the first write carries the client's stdin, stdout and
//                     stderr as SCM_RIGHTS.
//   server -> client  a 4-byte exit status (the code, or 128 + signal) when
//                     the run ends. The connection closing earlier means the
//                     server died.
//
// The run's process watches the connection: when the client goes away (it was
// killed, or its trial timed out), the run exits too. Header-only and free of
// libtorch: the client must start in milliseconds.
#pragma once
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace trainplan::train::fork_protocol {

// Largest request accepted (argv and the environment): 4 MiB.
constexpr uint32_t kMaxRequestBytes = 4u << 20;

// Repeats `op` (::read or ::write) until `n` bytes have moved; false at the
// end of the file or on an error.
template <class Op, class Ptr>
bool move_all(Op op, int fd, Ptr p, size_t n) {
  while (n > 0) {
    ssize_t k = op(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k, n -= size_t(k);
  }
  return true;
}
inline bool write_all(int fd, const void* data, size_t n) {
  return move_all(::write, fd, static_cast<const char*>(data), n);
}
inline bool read_all(int fd, void* data, size_t n) { return move_all(::read, fd, static_cast<char*>(data), n); }

inline void append(std::string& out, const std::string& s) {
  out += s;
  out.push_back('\0');
}

// The request's payload for `args` (argv) and `env`, run in `cwd`.
inline std::string encode(const std::string& cwd, const std::vector<std::string>& args,
                          const std::vector<std::string>& env) {
  std::string out;
  append(out, cwd);
  append(out, std::to_string(args.size()));
  for (const auto& a : args) append(out, a);
  append(out, std::to_string(env.size()));
  for (const auto& e : env) append(out, e);
  return out;
}

struct Request {
  std::string cwd;
  std::vector<std::string> args, env;
};

// False on a malformed payload.
inline bool decode(const std::string& payload, Request& r) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < payload.size()) {
    size_t end = payload.find('\0', start);
    if (end == std::string::npos) return false;
    parts.push_back(payload.substr(start, end - start));
    start = end + 1;
  }
  size_t k = 0;
  auto count = [&](size_t& n) {
    if (k >= parts.size()) return false;
    char* endp = nullptr;
    unsigned long v = std::strtoul(parts[k].c_str(), &endp, 10);
    if (parts[k].empty() || *endp != '\0') return false;
    n = v, ++k;
    return true;
  };
  if (parts.empty()) return false;
  r.cwd = parts[k++];
  size_t argc = 0, envc = 0;
  if (!count(argc) || argc == 0 || k + argc > parts.size()) return false;
  r.args.assign(parts.begin() + long(k), parts.begin() + long(k + argc));
  k += argc;
  if (!count(envc) || k + envc != parts.size()) return false;
  r.env.assign(parts.begin() + long(k), parts.end());
  return true;
}

// A message of the 4-byte length `n` with room for three descriptors.
struct LengthMessage {
  uint32_t n = 0;
  char control[CMSG_SPACE(3 * sizeof(int))] = {};
  iovec iov{&n, sizeof n};
  msghdr msg{};
  LengthMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  LengthMessage(const LengthMessage&) = delete;
  LengthMessage& operator=(const LengthMessage&) = delete;
};

// Sends the length and `payload`, with fds 0, 1 and 2 attached to the first byte.
inline bool send_request(int sock, const std::string& payload) {
  LengthMessage m;
  m.n = uint32_t(payload.size());
  int fds[3] = {0, 1, 2};
  msghdr& msg = m.msg;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t w;
  do w = ::sendmsg(sock, &msg, 0);
  while (w < 0 && errno == EINTR);
  if (w != ssize_t(sizeof m.n)) return false;
  return write_all(sock, payload.data(), payload.size());
}

// Receives a request: its payload and the three descriptors. False (with
// any received descriptors closed) on a short read, a missing or partial
// set of descriptors, or an oversized request.
inline bool receive_request(int sock, std::string& payload, int fds[3]) {
  LengthMessage m;
  msghdr& msg = m.msg;
  const uint32_t& n = m.n;
  ssize_t r;
  do r = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  int got = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int k = int((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < k; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (got < 3) fds[got++] = fd;
      else ::close(fd);
    }
  }
  auto fail = [&] {
    for (int i = 0; i < got; ++i) ::close(fds[i]);
    return false;
  };
  if (r != ssize_t(sizeof n) || got != 3 || n > kMaxRequestBytes) return fail();
  payload.assign(n, '\0');
  if (!read_all(sock, payload.data(), n)) return fail();
  return true;
}

}  // namespace trainplan::train::fork_protocol
