#include "profile/trainer_fork_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "profile/builtin_workload.h"
#include "profile/interrupt.h"
#include "profile/process_group.h"

namespace trainplan::profile {

namespace fs = std::filesystem;

TrainerForkServer::TrainerForkServer(const std::string& trainer)
    : trainer_(trainer.empty() ? find_trainer() : trainer) {
  if (const char* env = std::getenv("TRAINPLAN_FORK_SERVER"); env && std::string(env) == "0") {
    why_not_ = "TRAINPLAN_FORK_SERVER=0";
    return;
  }
  std::error_code ec;
  forkrun_ = (fs::path(trainer_).parent_path() / "trainplan-forkrun").string();
  if (trainer_.empty() || access(forkrun_.c_str(), X_OK) != 0) {
    why_not_ = "no trainplan-forkrun beside " + trainer_;
    return;
  }
  std::string tmpl = (fs::temp_directory_path(ec) / "trainplan-fork-XXXXXX").string();
  if (ec || !mkdtemp(tmpl.data())) {
    why_not_ = "cannot make a temporary directory";
    return;
  }
  dir_ = tmpl;
  socket_ = dir_ + "/socket";
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    why_not_ = "pipe failed";
    return;
  }
  // Its own process group, as the ranks have theirs: a Ctrl-C at the
  // terminal reaches the profiler, which cancels the running trial and then
  // stops the server, rather than the server dying under the trial. It dies
  // with the profiler; its stdout says when it is ready.
  pid_t pid = start_process(shell_quote(trainer_) + " --fork-server " + shell_quote(socket_), out[1]);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    why_not_ = "fork failed";
    return;
  }
  pid_ = pid;
  spare_from_second_signal(pid);  // it cleans up after itself when this process dies
  std::string said;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (said.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[64];
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    said.append(buf, size_t(n));
  }
  close(out[0]);
  if (said.rfind("ready\n", 0) != 0) {
    why_not_ = "the fork server did not start";
    stop();
  }
}

TrainerForkServer::~TrainerForkServer() { stop(); }

void TrainerForkServer::stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    // It ends its runs, removes its folder and exits at once; SIGKILL if it
    // has not within 5 s. Spared until then: a second Ctrl-C meanwhile would
    // kill it before it removed its folder.
    for (int i = 0; i < 50; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      usleep(100000);
    }
    spare_from_second_signal(0);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    dir_.clear();
  }
}

CommandWrap TrainerForkServer::wrap() const {
  if (!active()) return {};
  return {shell_quote(trainer_), shell_quote(forkrun_) + " " + shell_quote(socket_)};
}

}  // namespace trainplan::profile
