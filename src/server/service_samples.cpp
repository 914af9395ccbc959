// The samples a request brings (samples_csv, or samples_path read within the
// server's limits and allowed folder): the part of server/service.h that reads
// a request's samples.
#include "server/service.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string_view>

#include "core/cancel.h"
#include "core/error.h"
#include "io/sample_csv.h"
#include "profile/samples_file.h"
#include "server/request_fields.h"

namespace trainplan::server {

using nlohmann::json;

// Whether `path`, its symbolic links followed, lies in Limits::allowed_root.
// A name that does not resolve yet is judged by the folder it would be in.
// (The folder itself counts as in it: the check that follows refuses a
// folder as no sample file.) A path that cannot be resolved (a folder on
// the way the server may not list) is judged as written, `..` removed, and
// the open that follows says what is wrong with it.
bool Service::within_allowed_root(const std::string& path) const {
  std::error_code ec;
  const std::filesystem::path root(limits_.allowed_root);
  auto target = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) {
    ec.clear();
    target = std::filesystem::absolute(path, ec).lexically_normal();
    if (ec) return false;
  }
  auto r = root.begin(), t = target.begin();
  for (; r != root.end() && !r->empty(); ++r, ++t)
    if (t == target.end() || *r != *t) return false;
  return true;
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
                       "trainplan serve --allow-paths");
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
    if (!limits_.allowed_root.empty() && !within_allowed_root(label))
      throw RequestError(403, field,
                         fmt::format("'{}' is outside the folder this server reads sample files from (trainplan serve "
                                     "--allow-paths {})",
                                     quoted_prefix(label), limits_.allowed_root));
    // Only a regular file: opening a pipe blocks until someone writes to it,
    // past any time limit, and a device or a directory is no sample set.
    std::error_code ec;
    const auto st = std::filesystem::status(label, ec);
    if (ec || !std::filesystem::exists(st)) throw InputError(label, 0, "", "cannot open sample file (no such file)");
    if (!std::filesystem::is_regular_file(st))
      throw RequestError(400, field,
                         fmt::format("'{}' is not a regular file (a directory, a pipe or a device): give a samples CSV "
                                     "or a profile store",
                                     quoted_prefix(label)));
    // A profile store (`trainplan profile --store`) is read as the CLI reads
    // it, within the same limits: its size against the byte limit first, its
    // trials against the row limit once read.
    if (profile::is_profile_store(label)) {
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(label, ec);
      if (!ec && bytes > limits_.max_body_bytes)
        throw RequestError(413, field,
                           fmt::format("the file {} is larger than {} bytes, the server's limit (trainplan serve "
                                       "--max-body-bytes)",
                                       label, limits_.max_body_bytes));
      slot = take_slot();
      SampleSet set = profile::read_samples(label);
      if (set.samples.size() + set.curve.size() > limits_.max_rows)
        throw RequestError(422, field,
                           fmt::format("{} holds more than {} rows of samples, the server's limit (trainplan serve "
                                       "--max-rows); send fewer rows",
                                       field, limits_.max_rows));
      return std::make_pair(std::move(set), label);
    }
    // Read in pieces up to the byte limit, counting rows on the way, so that
    // neither a huge file nor a device ("/dev/zero") is read whole.
    std::ifstream in(label, std::ios::binary);
    if (!in) throw InputError(label, 0, "", "cannot open sample file");
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      const std::string_view piece(buf, static_cast<size_t>(in.gcount()));
      if (text.size() + piece.size() > limits_.max_body_bytes)
        throw RequestError(413, field,
                           fmt::format("the file {} is larger than {} bytes, the server's limit (trainplan serve "
                                       "--max-body-bytes)",
                                       label, limits_.max_body_bytes));
      rows.feed(piece);
      if (rows.rows() > limits_.max_rows) break;
      text.append(piece);
      check_cancelled();
    }
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
