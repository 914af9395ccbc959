#include "core/whole_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.h"

namespace trainplan {

void write_whole_file(const std::string& path, const std::string& content) {
  // A link is written through, to the file it names: renamed over, the link itself would become a
  // file and the one it named keep its old content.
  std::error_code ec;
  std::string target = path;
  if (std::filesystem::is_symlink(path, ec)) {
    const auto resolved = std::filesystem::weakly_canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  // A name of its own beside the target (mkstemp), so that no file of the user's called PATH.tmp is
  // written over, and two writers never share one.
  std::vector<char> tmp(target.begin(), target.end());
  for (char c : std::string(".XXXXXX")) tmp.push_back(c);
  tmp.push_back('\0');
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw InputError(path, 0, "", std::string("cannot write file (") + std::strerror(errno) + ")");
  const std::string tmp_path(tmp.data());
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
  // The mode a new file gets (mkstemp makes it 0600): the umask's, or the old file's where there is one.
  struct stat old {};
  if (::stat(target.c_str(), &old) == 0) {
    ::fchmod(fd, old.st_mode & 07777);
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
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
