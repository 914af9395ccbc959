#include "io/output_path.h"

#include <unistd.h>

#include <filesystem>

#include "core/error.h"

namespace trainplan::io {

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty() || path == "-") return;
  const std::filesystem::path file(path);
  const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError("", 0, option, "cannot write '" + path + "': no folder '" + folder.string() + "'");
  if (std::filesystem::is_directory(file, ec)) throw InputError("", 0, option, "cannot write '" + path + "': it is a folder");
  if (::access(folder.c_str(), W_OK) != 0 || (std::filesystem::exists(file, ec) && ::access(file.c_str(), W_OK) != 0))
    throw InputError("", 0, option, "cannot write '" + path + "': permission denied");
}

}  // namespace trainplan::io
