// The samples a request brings (samples_csv, or samples_path read within the
// server's limits and allowed folder): the part of server/service.h that reads
// a request's samples.
#include "server/service.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string_view>

#include "core/cancel.h"
#include "core/error.h"
#include "io/sample_csv.h"
#include "profile/samples_file.h"
#include "server/request_fields.h"

namespace trainplan::server {

using nlohmann::json;

namespace {

// Whether absolute `path` lies in folder `root` (both without links or
// `..`), as written: the folder itself counts as in it.
bool path_within(const std::filesystem::path& root, const std::filesystem::path& path) {
  auto r = root.begin(), t = path.begin();
  for (; r != root.end() && !r->empty(); ++r, ++t)
    if (t == path.end() || *r != *t) return false;
  return true;
}

// The path of the file open as `fd`, its links resolved (Linux's
// /proc/self/fd); empty where the system does not say.
std::string opened_file_path(int fd) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  return ec || !p.is_absolute() ? std::string() : p.string();
}

}  // namespace

// Whether `path`, its symbolic links followed, lies in Limits::allowed_root:
// the answer before anything is opened (request_samples checks again what
// it opened). A name that does not resolve yet is judged by the folder it
// would be in. (The folder itself counts as in it: the check that follows
// refuses a folder as no sample file.) A path that cannot be resolved (a
// folder on the way the server may not list) is judged as written, `..`
// removed, and the open that follows says what is wrong with it.
bool Service::within_allowed_root(const std::string& path) const {
  std::error_code ec;
  auto target = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) {
    ec.clear();
    target = std::filesystem::absolute(path, ec).lexically_normal();
    if (ec) return false;
  }
  return path_within(limits_.allowed_root, target);
}

Service::ServerFile::~ServerFile() {
  if (fd >= 0) ::close(fd);
}

void Service::open_server_file(const std::string& label, const char* field, const std::string& noun,
                               const std::string& not_regular_hint, ServerFile& out) const {
  if (!limits_.allowed_root.empty() && !within_allowed_root(label))
    throw RequestError(403, field,
                       fmt::format("'{}' is outside the folder this server reads {}s from (trainplan serve "
                                   "--allow-paths {})",
                                   quoted_prefix(label), noun, limits_.allowed_root));
  // Only a regular file, refused before it is opened: opening a device can
  // act on it (a watchdog, a tape), a pipe waits for a writer past any time
  // limit, and neither is what a request names.
  const std::string not_regular =
      fmt::format("'{}' is not a regular file (a directory, a pipe or a device): {}", quoted_prefix(label), not_regular_hint);
  struct stat before {};
  if (::stat(label.c_str(), &before) != 0)
    throw InputError(label, 0, "",
                     errno == ENOENT ? fmt::format("cannot open {} (no such file)", noun)
                                     : fmt::format("cannot open {} ({})", noun, std::strerror(errno)));
  if (!S_ISREG(before.st_mode)) throw RequestError(400, field, not_regular);
  // Then opened once, every later check made on what was opened, so that a
  // link swapped in between cannot send the read elsewhere: the file opened
  // must be the one checked (O_NONBLOCK: a pipe put there since does not
  // wait for a writer).
  out.fd = ::open(label.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (out.fd < 0) throw InputError(label, 0, "", fmt::format("cannot open {} ({})", noun, std::strerror(errno)));
  struct stat st {};
  if (::fstat(out.fd, &st) != 0 || !S_ISREG(st.st_mode)) throw RequestError(400, field, not_regular);
  if (st.st_dev != before.st_dev || st.st_ino != before.st_ino)
    throw RequestError(409, field, fmt::format("'{}' changed while it was being opened: send the request again",
                                               quoted_prefix(label)));
  out.size = static_cast<uint64_t>(st.st_size);
  out.device = static_cast<uint64_t>(st.st_dev), out.inode = static_cast<uint64_t>(st.st_ino);
  {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    out.quiet_s = std::max(0.0, double(now.tv_sec - st.st_mtim.tv_sec) + 1e-9 * double(now.tv_nsec - st.st_mtim.tv_nsec));
  }
  out.opened = label;
  if (!limits_.allowed_root.empty()) {
    // Where the system cannot say which file is open (no /proc), the
    // folder cannot be vouched for: refused, not read unchecked.
    const std::string real = opened_file_path(out.fd);
    if (real.empty() || !path_within(limits_.allowed_root, real))
      throw RequestError(403, field,
                         real.empty() ? fmt::format("'{}' cannot be checked against the folder this server reads "
                                                    "{}s from (the system does not say where an open file "
                                                    "lies: /proc is missing)",
                                                    quoted_prefix(label), noun)
                                      : fmt::format("'{}' is outside the folder this server reads {}s "
                                                    "from (trainplan serve --allow-paths {})",
                                                    quoted_prefix(label), noun, limits_.allowed_root));
    out.opened = real;
  }
}

void Service::refuse_too_large(const std::string& label, const char* field, const std::string& advice) const {
  throw RequestError(413, field,
                     fmt::format("the file {} is larger than {} bytes, the server's limit (trainplan serve "
                                 "--max-body-bytes){}",
                                 label, limits_.max_body_bytes, advice));
}

void Service::read_server_file(const ServerFile& file, size_t already, const std::string& label, const char* field,
                               const std::string& noun, std::string& out,
                               const std::function<bool(std::string_view)>& piece) const {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(file.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(label, 0, "", fmt::format("cannot read {} ({})", noun, std::strerror(errno)));
    if (n == 0) return;
    const std::string_view read(buf, static_cast<size_t>(n));
    if (already + out.size() + read.size() > limits_.max_body_bytes) refuse_too_large(label, field);
    if (piece && !piece(read)) return;
    out.append(read);
    check_cancelled();
  }
}

std::optional<std::pair<SampleSet, std::string>> Service::request_samples(const json& req,
                                                                         std::unique_ptr<Slot>& slot) {
  const json* csv = find(req, "samples_csv");
  const json* path = find(req, "samples_path");
  if (csv && path) throw RequestError(400, "samples_csv", "give samples_csv or samples_path, not both");
  if (!csv && !path) return std::nullopt;
  const char* field = csv ? "samples_csv" : "samples_path";
  if (path && !limits_.allow_paths)
    throw RequestError(403, "samples_path",
                       "this server reads no files: send the samples as samples_csv (CSV text), or start it with "
                       "trainplan serve --allow-paths DIR");
  if (!(csv ? csv : path)->is_string())
    throw RequestError(400, field, fmt::format("field '{}' must be a string ({})", field, csv ? "CSV text" : "a file on the server"));
  std::string text, label;
  RowCounter rows;
  if (csv) {
    label = "samples_csv";
    rows.feed(csv->get_ref<const std::string&>());
  } else {
    label = path->get<std::string>();
    if (label.empty()) throw RequestError(400, field, "field 'samples_path' is empty: give a file on the server");
    ServerFile file;
    open_server_file(label, field, "sample file", "give a samples CSV or a profile store", file);
    const int fd = file.fd;
    // A profile store is read by the name of what was opened (SQLite opens by name).
    const std::string& opened = file.opened;
    char magic[16] = {};
    const bool store = ::pread(fd, magic, sizeof magic, 0) == ssize_t(sizeof magic) &&
                       std::string_view(magic, sizeof magic) == std::string_view("SQLite format 3\0", 16);
    // A profile store (`trainplan profile --store`) is read as the CLI reads
    // it, within the same limits: its size against the byte limit first, its
    // trials against the row limit once read.
    if (store) {
      if (file.size > limits_.max_body_bytes) refuse_too_large(label, field);
      slot = take_slot();
      SampleSet set = profile::read_samples(opened);
      if (set.samples.size() + set.curve.size() > limits_.max_rows)
        throw RequestError(422, field,
                           fmt::format("{} holds more than {} rows of samples, the server's limit (trainplan serve "
                                       "--max-rows); send fewer rows",
                                       field, limits_.max_rows));
      return std::make_pair(std::move(set), label);
    }
    // Rows counted on the way: past the row limit the reading stops.
    read_server_file(file, 0, label, field, "sample file", text, [&](std::string_view piece) {
      rows.feed(piece);
      return rows.rows() <= limits_.max_rows;
    });
  }
  if (rows.rows() > limits_.max_rows)
    throw RequestError(422, field,
                       fmt::format("{} holds more than {} rows of samples, the server's limit (trainplan serve "
                                   "--max-rows); send fewer rows",
                                   field, limits_.max_rows));
  // Counted and within the limits: parsing and fitting wait for a slot.
  slot = take_slot();
  if (csv) return std::make_pair(io::parse_samples_csv(csv->get_ref<const std::string&>(), label), label);
  return std::make_pair(io::parse_samples_csv(text, label), label);
}

}  // namespace trainplan::server
