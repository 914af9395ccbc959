#include "core/whole_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace trainplan {

void write_whole_file(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path, 0, "", std::string("cannot write file (") + std::strerror(errno) + ")");
  out << content;
  out.close();
  if (!out) {
    std::remove(tmp.c_str());
    throw InputError(path, 0, "", "write failed (is the disk full?); the file was left as it was");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw InputError(path, 0, "", "cannot move the written file into place (" + why + ")");
  }
}

}  // namespace trainplan
