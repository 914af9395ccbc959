#include "core/whole_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.h"
#include "core/signals_held.h"

namespace trainplan {

namespace {

// The file `path` names, through symbolic links (each relative target read
// against its link's folder), whether or not that file exists yet; `path`
// itself when it is no link, or after 40 links (a loop).
std::string link_target(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) break;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  return fs::is_symlink(p, ec) ? path : p.string();
}

// Writes all of `content` to `fd`; false with errno set on failure.
bool write_all(int fd, const std::string& content) {
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// The descriptor a path names that stands for one of this process's open
// files (/dev/stdout, /dev/fd/N, /proc/self/fd/N), else -1: written to
// through that descriptor, where the shell's redirection put it (opened
// afresh, a redirected file would be written from its start).
int open_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (path.rfind(prefix, 0) == 0) {
      const std::string n = path.substr(std::strlen(prefix));
      if (!n.empty() && n.size() < 9 && n.find_first_not_of("0123456789") == std::string::npos) return std::stoi(n);
    }
  return -1;
}

}  // namespace

void write_whole_file(const std::string& path, const std::string& content) {
  if (const int fd = open_descriptor(path); fd >= 0) {
    std::fflush(nullptr);  // what this process printed there before comes first
    if (!write_all(fd, content))
      throw InputError(path, 0, "", std::string("write failed (") + std::strerror(errno) + ")");
    return;
  }
  // A device or a pipe (/dev/null, a FIFO a reader waits on) is written into
  // as it is: renamed over, it would become a plain file (and /dev/null so
  // for every program on the machine, when run as root).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "", "cannot write file: it is a folder");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw InputError(path, 0, "", std::string("cannot write file (") + std::strerror(errno) + ")");
    const bool written = write_all(fd, content);
    const int write_errno = errno;
    const bool closed = ::close(fd) == 0;
    if (!written || !closed)
      throw InputError(path, 0, "", std::string("write failed (") + std::strerror(written ? errno : write_errno) + ")");
    return;
  }
  // A link is written through, to the file it names: renamed over, the link itself would become a
  // file and the one it named keep its old content.
  const std::string target = link_target(path);
  // A Ctrl-C between the temporary file's creation and its rename would leave it behind.
  const TerminationSignalsHeld held;
  // A name of its own beside the target, created exclusively (no file of the user's called PATH.tmp
  // is written over, and two writers never share one), with the mode a new file gets (the umask's).
  std::mt19937_64 random(std::random_device{}());
  std::string tmp_path;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp_path = target + "." + std::to_string(random() % 1000000000) + ".tmp";
    fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw InputError(path, 0, "", std::string("cannot write file (") + std::strerror(errno) + ")");
  // A write the machine could not take (a full disk, a quota) is a failure
  // of the machine, not bad input: exit 1, as a store that cannot be written.
  auto fail = [&](const std::string& why) {
    ::close(fd);
    std::remove(tmp_path.c_str());
    throw ExternalError(path + ": " + why);
  };
  // Synced before the rename, so that the name never comes to hold a file
  // whose bytes a power loss could still take.
  if (!write_all(fd, content) || ::fsync(fd) != 0)
    fail(std::string("write failed (") + std::strerror(errno) + "; is the disk full?); the file was left as it was");
  // A file written again keeps its mode.
  struct stat old {};
  if (::stat(target.c_str(), &old) == 0) ::fchmod(fd, old.st_mode & 07777);
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_path.c_str());
    throw ExternalError(path + ": write failed (" + why + "; is the disk full?); the file was left as it was");
  }
  if (std::rename(tmp_path.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_path.c_str());
    throw InputError(path, 0, "", "cannot move the written file into place (" + why + ")");
  }
}

}  // namespace trainplan
