#include "train/fork_server.h"

#include <dlfcn.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <thread>

#include "train/fork_protocol.h"

namespace trainplan::train {
namespace {

namespace fp = fork_protocol;

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

void set_handler(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);  // no SA_RESTART: poll returns on a stop signal
}

// The profiler makes a directory of its own for the socket (mkdtemp,
// "trainplan-fork-XXXXXX"); it goes with the socket when it is empty. A
// directory of any other name was the user's, and stays.
void remove_own_directory(const std::string& socket_path) {
  const std::string::size_type slash = socket_path.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  const std::string dir = socket_path.substr(0, slash);
  if (dir.find("trainplan-fork-", dir.rfind('/') + 1) != dir.rfind('/') + 1) return;
  rmdir(dir.c_str());  // fails, harmlessly, where anything else is in it
}

int exit_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

// OpenBLAS sizes its thread pool when it is loaded, from the environment or
// else the CPUs it may run on: in the server, unpinned. A child pinned to one
// CPU must use what a process launched there would (a pool of two on one CPU
// splits each product differently: other sums, other accuracies).
void size_blas_threads() {
  using SetThreads = void (*)(int);
  auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (!set) return;
  int n = 0;
  for (const char* var : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"})
    if (const char* v = std::getenv(var); v && std::atoi(v) > 0) {
      n = std::atoi(v);
      break;
    }
  cpu_set_t cpus;
  if (n == 0 && sched_getaffinity(0, sizeof cpus, &cpus) == 0) n = CPU_COUNT(&cpus);
  if (n > 0) set(n);
}

// In the child: become the client's trainer process and run `run`. Never returns.
[[noreturn]] void become_run(int listen_fd, const std::map<pid_t, int>& others, int conn, pid_t server,
                             const fp::Request& req, int fds[3], TrainerMain run) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != server) _exit(137);
  for (int sig : {SIGTERM, SIGINT, SIGPIPE, SIGCHLD}) set_handler(sig, SIG_DFL);
  close(listen_fd);
  for (const auto& [pid, fd] : others) close(fd);
  for (int i = 0; i < 3; ++i) {
    if (fds[i] != i) dup2(fds[i], i);
  }
  for (int i = 0; i < 3; ++i)
    if (fds[i] > 2) close(fds[i]);
  if (chdir(req.cwd.c_str()) != 0) {
    std::fprintf(stderr, "trainplan-train: fork server: cannot enter %s: %s\n", req.cwd.c_str(), std::strerror(errno));
    _exit(1);
  }
  clearenv();
  for (const auto& e : req.env) putenv(strdup(e.c_str()));
  // The client was pinned by the profiler; the run takes its CPUs.
  ucred peer{};
  socklen_t len = sizeof peer;
  cpu_set_t cpus;
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && sched_getaffinity(peer.pid, sizeof cpus, &cpus) == 0)
    sched_setaffinity(0, sizeof cpus, &cpus);
  size_blas_threads();
  // The client going away (killed with its trial) ends the run.
  std::thread([conn] {
    char c;
    for (;;) {
      ssize_t n = recv(conn, &c, 1, 0);
      if (n > 0 || (n < 0 && errno == EINTR)) continue;
      _exit(143);
    }
  }).detach();
  std::vector<char*> argv;
  for (const auto& a : req.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int code = run(int(req.args.size()), argv.data());
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  _exit(code);
}

// Reads one request from `conn` and forks its run, which `runs` then holds
// with the connection; a malformed or silent request is dropped.
void start_run(int lfd, int conn, std::map<pid_t, int>& runs, TrainerMain run) {
  timeval tv{5, 0};  // a client that connects and says nothing is dropped
  setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string payload;
  int fds[3];
  fp::Request req;
  if (!fp::receive_request(conn, payload, fds)) {
    close(conn);
    return;
  }
  if (!fp::decode(payload, req)) {
    for (int fd : fds) close(fd);
    close(conn);
    return;
  }
  timeval none{0, 0};
  setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  std::cout.flush();
  pid_t server = getpid();
  pid_t pid = fork();
  if (pid == 0) become_run(lfd, runs, conn, server, req, fds, run);
  for (int fd : fds) close(fd);
  if (pid < 0) {
    int code = 1;
    fp::write_all(conn, &code, sizeof code);
    close(conn);
    return;
  }
  runs[pid] = conn;
}

// Sends each finished run's status to its client and forgets the run.
void report_finished(std::map<pid_t, int>& runs) {
  for (auto it = runs.begin(); it != runs.end();) {
    int status = 0;
    if (waitpid(it->first, &status, WNOHANG) != it->first) {
      ++it;
      continue;
    }
    int code = exit_status(status);
    fp::write_all(it->second, &code, sizeof code);  // the client may be gone: EPIPE, ignored
    close(it->second);
    it = runs.erase(it);
  }
}

}  // namespace

int serve_forks(const std::string& socket_path, TrainerMain run) {
  sockaddr_un addr{};
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path) {
    std::cerr << "trainplan-train: --fork-server: the socket path must have 1 to " << sizeof addr.sun_path - 1
              << " characters\n";
    return 1;
  }
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, socket_path.c_str());
  struct stat st {};
  if (lstat(socket_path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(socket_path.c_str());
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0 || bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(lfd, 64) != 0) {
    std::cerr << "trainplan-train: --fork-server " << socket_path << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  set_handler(SIGTERM, on_stop);
  set_handler(SIGINT, on_stop);
  set_handler(SIGPIPE, SIG_IGN);  // a client gone before its status is written
  // The profiler starts this server with a SIGKILL at its death, which would
  // leave the socket and its directory behind when the profiler itself is
  // killed: a SIGTERM instead ends the loop below, which cleans up.
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) g_stop = 1;  // the parent died before prctl
  std::cout << "ready" << std::endl;
  std::map<pid_t, int> runs;  // child -> its client's connection
  while (!g_stop) {
    pollfd p{lfd, POLLIN, 0};
    if (poll(&p, 1, 50) > 0 && (p.revents & POLLIN)) {
      int conn = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn >= 0) start_run(lfd, conn, runs, run);
    }
    report_finished(runs);
  }
  for (const auto& [pid, conn] : runs) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(conn);
  }
  close(lfd);
  unlink(socket_path.c_str());
  remove_own_directory(socket_path);
  return 0;
}

}  // namespace trainplan::train
