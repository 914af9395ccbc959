#include "io/sqlite_file.h"

#include <filesystem>
#include <fstream>
#include <string_view>

namespace trainplan::io {

bool is_sqlite_database(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  return in.gcount() == sizeof head && std::string_view(head, sizeof head) == std::string_view("SQLite format 3\0", 16);
}

}  // namespace trainplan::io
