// ThreadSanitizer check of DeadlineServer's per-client share (scripts/dev/tsan/run.sh):
// slow clients from 127.0.0.1 fill the threads while clients from 127.0.0.2 and 127.0.0.1 ask.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "server/deadline_server.h"

using namespace std::chrono_literals;

int connect_from(int port, const char* from) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, from, &src.sin_addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) { ::close(fd); return -1; }
  timeval tv{3, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

int status_of(int fd) {
  char buf[256] = {};
  ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
  return n > 9 ? std::atoi(buf + 9) : 0;
}

int main() {
  trainplan::server::DeadlineServer s(30, [](trainplan::server::ReadFailure) { return std::string("{}"); });
  s.set_threads(4);
  s.set_max_per_client(2);
  s.set_keep_alive_max_count(5);
  s.Get("/h", [](const httplib::Request&, httplib::Response& r) { r.set_content("ok", "text/plain"); });
  int port = s.bind_to_any_port("127.0.0.1");
  std::thread srv([&] { s.listen_after_bind(); });
  std::this_thread::sleep_for(100ms);
  std::atomic<bool> stop{false};
  std::atomic<int> slow503{0}, ok{0}, busy{0}, other{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 12; ++i)
    ts.emplace_back([&] {
      while (!stop) {
        int fd = connect_from(port, "127.0.0.1");
        if (fd < 0) continue;
        std::string p = "GET /h HTTP/1.1\r\nX-Slow: ";
        ::send(fd, p.data(), p.size(), MSG_NOSIGNAL);
        for (int k = 0; k < 20 && !stop; ++k) {
          std::this_thread::sleep_for(100ms);
          char c;
          if (::recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) >= 0) break;
          ::send(fd, "a", 1, MSG_NOSIGNAL);
        }
        if (status_of(fd) == 503) ++slow503;
        ::close(fd);
      }
    });
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&, i] {
      const char* from = i % 2 ? "127.0.0.2" : "127.0.0.1";
      while (!stop) {
        int fd = connect_from(port, from);
        if (fd < 0) continue;
        std::string q = "GET /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        ::send(fd, q.data(), q.size(), MSG_NOSIGNAL);
        int st = status_of(fd);
        if (st == 200) ++(i % 2 ? other : ok);
        else if (st == 503) ++busy;
        ::close(fd);
        std::this_thread::sleep_for(20ms);
      }
    });
  std::this_thread::sleep_for(8s);
  stop = true;
  for (auto& t : ts) t.join();
  s.stop();
  srv.join();
  std::printf("slow 503: %d, 127.0.0.1 ok: %d, 127.0.0.2 ok: %d, quick 503: %d, over share: %llu, silent: %llu\n",
              slow503.load(), ok.load(), other.load(), busy.load(), (unsigned long long)s.connections_over_share(),
              (unsigned long long)s.silent_connections_let_go());
  // The other client is served beside the slow ones.
  return other.load() > 0 ? 0 : 1;
}
