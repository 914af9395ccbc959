// trainplan-forkrun SOCKET TRAINER [ARGS...]: runs `TRAINER ARGS` through the
// fork server listening on SOCKET (`trainplan-train --fork-server SOCKET`,
// train/fork_server.h), which has libtorch loaded already, and exits with the
// run's status. Its stdin, stdout, stderr, working directory, environment and
// CPU affinity are the run's. When the server cannot be reached it execs
// TRAINER itself, so a command line that names it always runs.
// Links no libtorch: it starts in milliseconds.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "train/fork_protocol.h"

extern char** environ;

int main(int argc, char** argv) {
  namespace fp = trainplan::train::fork_protocol;
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: trainplan-forkrun SOCKET TRAINER [ARGS...]\n"
                "Runs TRAINER ARGS in a child of the fork server listening on SOCKET (trainplan-train --fork-server\n"
                "SOCKET), which has libtorch loaded already; without a server there, runs TRAINER directly.\n"
                "docs/TRAINER.md, \"The fork server\".\n");
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: trainplan-forkrun SOCKET TRAINER [ARGS...]\n");
    return 2;
  }
  auto run_directly = [&]() -> int {
    execv(argv[2], argv + 2);
    std::fprintf(stderr, "trainplan-forkrun: cannot run %s: %s\n", argv[2], std::strerror(errno));
    return 127;
  };
  sockaddr_un addr{};
  if (std::strlen(argv[1]) >= sizeof addr.sun_path) return run_directly();
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, argv[1]);
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (sock >= 0) close(sock);
    return run_directly();
  }
  std::vector<std::string> args(argv + 2, argv + argc), env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) {
    std::fprintf(stderr, "trainplan-forkrun: getcwd: %s\n", std::strerror(errno));
    return 1;
  }
  if (!fp::send_request(sock, fp::encode(cwd, args, env))) {
    close(sock);
    return run_directly();
  }
  int code = 0;
  if (!fp::read_all(sock, &code, sizeof code)) {
    std::fprintf(stderr, "trainplan-forkrun: the fork server at %s went away during the run\n", argv[1]);
    return 1;
  }
  return code;
}
