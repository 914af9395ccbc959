#include "io/output_path.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "core/error.h"
#include "io/pollux_trace.h"
#include "io/sqlite_file.h"

namespace trainplan::io {

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty() || path == "-") return;
  // A sample store, or one of the files SQLite keeps beside it, is never an
  // output's target: replacing a store's -wal loses the trials committed to it.
  if (is_sqlite_database(path))
    throw InputError("", 0, option,
                     "cannot write '" + path + "': it is an SQLite database (a sample store?); give another path");
  for (const char* beside : {"-wal", "-shm", "-journal"}) {
    const std::string suffix = beside;
    if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        is_sqlite_database(path.substr(0, path.size() - suffix.size())))
      throw InputError("", 0, option,
                       "cannot write '" + path + "': it is the " + suffix.substr(1) + " file SQLite keeps beside '" +
                           path.substr(0, path.size() - suffix.size()) +
                           "' (a sample store's, holding its latest trials); give another path");
  }
  const std::filesystem::path file(path);
  const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError("", 0, option, "cannot write '" + path + "': no folder '" + folder.string() + "'");
  if (std::filesystem::is_directory(file, ec)) throw InputError("", 0, option, "cannot write '" + path + "': it is a folder");
  // A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written into
  // (write_whole_file), not replaced: its own permission is the one that counts.
  const bool there = std::filesystem::exists(file, ec);
  const bool replaced = !there || std::filesystem::is_regular_file(file, ec);
  if ((replaced && ::access(folder.c_str(), W_OK) != 0) || (there && ::access(file.c_str(), W_OK) != 0))
    throw InputError("", 0, option,
                     "cannot write '" + path + "': " +
                         (errno == EROFS ? std::string("read-only file system") : std::string("permission denied")));
}

namespace {

// `p` made absolute and its links and dots resolved as far as it exists (a
// bare "validation-7.csv" stays relative under weakly_canonical alone).
std::filesystem::path absolute_path(const std::string& p) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(p, ec);
  if (ec) return p;
  auto resolved = std::filesystem::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : resolved;
}

}  // namespace

void check_output_path(const std::string& path, const std::string& option,
                       const std::vector<std::pair<std::string, std::string>>& inputs) {
  check_output_path(path, option);
  if (path.empty() || path == "-") return;
  std::error_code ec;
  namespace fs = std::filesystem;
  for (const auto& [input, input_option] : inputs) {
    if (input.empty() || input == "-") continue;
    // The same file under another name, or (neither there yet: a store's
    // live log) the same path however spelt.
    const bool same_file = fs::equivalent(path, input, ec) && !ec;
    const bool same_path = !same_file && absolute_path(path) == absolute_path(input);
    if (same_file || same_path)
      throw InputError("", 0, option,
                       "'" + path + "' is the " + input_option + " file: writing it would replace it; give another path");
    // A folder the verb reads (trace folders): a file already in it, at any
    // depth, may be one it reads, and is not replaced; a new one is refused
    // where a trace's reader would take it for one of the trace's files next
    // time (a validation-7.csv beside a placements.csv).
    if (!fs::is_directory(input, ec)) continue;
    const fs::path folder = fs::canonical(input, ec);
    if (ec) continue;
    const bool there = fs::exists(path, ec);
    const fs::path file = there ? fs::canonical(path, ec) : absolute_path(path);
    if (ec) continue;
    const auto [f, o] = std::mismatch(folder.begin(), folder.end(), file.begin(), file.end());
    if (f != folder.end()) continue;
    if (there)
      throw InputError("", 0, option,
                       "'" + path + "' is a file in the " + input_option + " folder '" + input +
                           "': writing it would replace what this may read; give another path");
    if (fs::exists(file.parent_path() / "placements.csv", ec) && is_pollux_trace_file_name(file.filename().string()))
      throw InputError("", 0, option,
                       "'" + path + "' would be read as one of the files of the trace in '" +
                           file.parent_path().string() + "' (under the " + input_option +
                           " folder) the next time; give another path");
  }
}

}  // namespace trainplan::io
