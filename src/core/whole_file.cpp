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

// Writes `content` into the existing file `target` as it is, not through a
// temporary file: for a file that cannot be replaced.
void write_through(const std::string& path, const std::string& target, const std::string& content) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, 0, "", std::string("cannot write file (") + std::strerror(errno) + ")");
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw InputError(path, 0, "", "write failed (" + why + ")");
    }
    done += size_t(n);
  }
  if (::close(fd) != 0) throw InputError(path, 0, "", std::string("write failed (") + std::strerror(errno) + ")");
}

}  // namespace

void write_whole_file(const std::string& path, const std::string& content) {
  // A link is written through, to the file it names: renamed over, the link itself would become a
  // file and the one it named keep its old content.
  const std::string target = link_target(path);
  // A device or a pipe (/dev/null, /dev/stdout, a FIFO a reader waits on) is
  // written to as it is: renamed over, it would become a plain file (and
  // /dev/null so for every program on the machine, when run as root).
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "", "cannot write file: it is a folder");
    write_through(path, target, content);
    return;
  }
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
  auto fail = [&](const std::string& why) {
    ::close(fd);
    std::remove(tmp_path.c_str());
    throw InputError(path, 0, "", why);
  };
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::string("write failed (") + std::strerror(errno) + "; is the disk full?); the file was left as it was");
    done += size_t(n);
  }
  // A file written again keeps its mode.
  struct stat old {};
  if (::stat(target.c_str(), &old) == 0) ::fchmod(fd, old.st_mode & 07777);
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_path.c_str());
    throw InputError(path, 0, "", "write failed (" + why + "; is the disk full?); the file was left as it was");
  }
  if (std::rename(tmp_path.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_path.c_str());
    throw InputError(path, 0, "", "cannot move the written file into place (" + why + ")");
  }
}

}  // namespace trainplan
