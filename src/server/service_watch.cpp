// POST /watch of server/service.h: the forecast `trainplan watch` gives for
// a job's log of trial-protocol lines, read whole (log_text, or log_path on
// the server), with the chart `watch --plot` draws as data. The page asks
// again every few seconds to follow a running job.
#include "server/service.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include "app/live_watch.h"
#include "app/watch_chart.h"
#include "core/cancel.h"
#include "core/error.h"
#include "models/epoch_forecaster.h"
#include "profile/log_follower.h"
#include "server/request_fields.h"

namespace trainplan::server {

using nlohmann::json;

namespace {

// Warnings kept in an answer: a log of bad lines would otherwise answer each.
constexpr size_t kMostWarnings = 20;

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json panel_json(const io::PlotPanel& p) {
  json series = json::array();
  for (const auto& s : p.series) {
    json points = json::array();
    for (const auto& [x, y] : s.points) points.push_back({number_or_null(x), number_or_null(y)});
    // The drawing as the page needs it: points alone, or a line (a wide one
    // for an interval), from gnuplot's `with` style.
    const std::string kind = s.style.starts_with("points") ? "points" : s.style.find("lw 6") != std::string::npos ? "band"
                                                                                                                   : "line";
    series.push_back({{"title", s.title},
                      {"kind", kind},
                      {"dashed", s.style.find("dt ") != std::string::npos},
                      {"marks", s.style.starts_with("linespoints")},
                      {"color", s.color},
                      {"points", points}});
  }
  json j = {{"title", p.title}, {"xlabel", p.xlabel}, {"ylabel", p.ylabel}, {"series", series}};
  if (p.xrange) j["xrange"] = {p.xrange->first, p.xrange->second};
  if (p.yrange) j["yrange"] = {p.yrange->first, p.yrange->second};
  return j;
}

}  // namespace

json Service::watch_request(const json& req) {
  static const std::set<std::string> allowed = {"log_text", "log_path", "target",   "deadline_s",
                                                "method",   "coverage", "direction"};
  refuse_unknown_fields(req, allowed, "docs/SERVER.md lists them");
  const json* text_field = find(req, "log_text");
  const json* path_field = find(req, "log_path");
  if (text_field && path_field) throw RequestError(400, "log_text", "give log_text or log_path, not both");
  if (!text_field && !path_field)
    throw RequestError(400, "log_text", "missing field 'log_text' (the job's log lines) or 'log_path' (a log on the server)");
  if (path_field && !limits_.allow_paths)
    throw RequestError(403, "log_path",
                       "this server reads no files: send the log's text as log_text, or start it with trainplan serve "
                       "--allow-paths DIR");
  const char* field = text_field ? "log_text" : "log_path";
  if (!(text_field ? text_field : path_field)->is_string())
    throw RequestError(400, field, fmt::format("field '{}' must be a string", field));
  if (!find(req, "target")) throw RequestError(400, "target", "missing field 'target' (the metric the job should reach)");

  app::WatchOptions o;
  o.target = get_number(req, "target", std::nullopt);
  if (!std::isfinite(o.target)) throw RequestError(400, "target", "target must be a finite number");
  if (find(req, "deadline_s")) {
    const double d = get_duration(req, "deadline_s", std::nullopt);
    if (!(d > 0)) throw RequestError(400, "deadline_s", "deadline_s must be > 0");
    o.deadline_s = d;
  }
  const std::string method = get_string(req, "method", "ensemble");
  one_of(method, "method", {"naive", "optimus", "ensemble"});
  o.forecaster.method = *models::parse_forecast_method(method);
  o.forecaster.coverage = get_number(req, "coverage", o.forecaster.coverage);
  if (!(o.forecaster.coverage >= 0.01 && o.forecaster.coverage <= 0.99))
    throw RequestError(400, "coverage", "coverage must be in 0.01..0.99");
  if (find(req, "direction")) {
    const std::string d = get_string(req, "direction", "");
    one_of(d, "direction", {"max", "min"});
    o.direction = parse_direction(d);
  }

  if (text_field) {
    o.source = "log_text";
    WatchState own;
    return watch_answer(own, o, text_field->get_ref<const std::string&>(), false, false, std::nullopt);
  }
  const std::string label = path_field->get<std::string>();
  if (label.empty()) throw RequestError(400, field, "field 'log_path' is empty: give a log file on the server");
  ServerFile file;
  open_server_file(label, field, "log", "give the job's log file", file);
  // A kept watch names the file as opened, whatever name a later request gives it.
  o.source = file.opened;
  // A file that says it is over the limit is refused before it is read
  // (files under /proc say 0 and are read up to it).
  if (file.size > limits_.max_body_bytes) refuse_too_large(label, field, ": log the trial lines to a file of their own");
  const std::string options_key =
      json{{"target", o.target}, {"deadline_s", o.deadline_s ? json(*o.deadline_s) : json()}, {"method", method},
           {"coverage", o.forecaster.coverage}, {"direction", find(req, "direction") ? *find(req, "direction") : json()}}
          .dump();
  // The watch kept from the last request on this file with these options is
  // fed only the bytes added since, unless the file was rewritten or
  // replaced: another inode, fewer bytes, other first bytes, or other bytes
  // just before where the reading stopped (a run restarted into the file
  // and already past the old end, as `watch` tells it).
  const auto kept = followed_log(file.opened + "\n" + options_key);
  // One request on a log at a time; another is told to come back rather
  // than wait, so that it holds no server thread meanwhile.
  if (!kept->mu.try_lock())
    throw RequestError(503, field, "another request on this log is being answered: retry in a second", 1);
  std::lock_guard<std::mutex> held(kept->mu, std::adopt_lock);
  WatchState& st = kept->state;
  const auto bytes_at = [&](size_t from, size_t n) {
    std::string b(n, '\0');
    const ssize_t got = n ? ::pread(file.fd, b.data(), n, off_t(from)) : 0;
    b.resize(got > 0 ? size_t(got) : 0);
    return b;
  };
  const bool same = st.live && st.device == file.device && st.inode == file.inode &&
                    file.size >= st.offset && bytes_at(0, st.head.size()) == st.head &&
                    bytes_at(st.offset - st.tail.size(), st.tail.size()) == st.tail;
  const bool restarted = st.live && !same;
  if (!same) {
    st = WatchState{};
    st.device = file.device, st.inode = file.inode;
  }
  // Read from where the last request stopped, the byte limit on the whole file.
  if (::lseek(file.fd, off_t(st.offset), SEEK_SET) < 0)
    throw InputError(label, 0, "", fmt::format("cannot read the log ({})", std::strerror(errno)));
  std::string added;
  read_server_file(file, st.offset, label, field, "the log", added);
  const json a = watch_answer(st, o, added, true, restarted, file.quiet_s);
  // What the next request compares: the file's first bytes and the last ones fed.
  st.head = bytes_at(0, std::min(st.offset, kHeadBytes));
  st.tail = bytes_at(st.offset - std::min(st.offset, kTailBytes), std::min(st.offset, kTailBytes));
  return a;
}

std::shared_ptr<Service::FollowedLog> Service::followed_log(const std::string& key) {
  std::lock_guard<std::mutex> lock(followed_mu_);
  auto& kept = followed_[key];
  if (!kept) kept = std::make_shared<FollowedLog>();
  kept->last_use = ++followed_clock_;
  const auto keep = kept;
  // Past the most kept, the one asked for least recently goes (a request
  // using it holds it until it ends).
  while (followed_.size() > kMostFollowedLogs) {
    auto oldest = followed_.begin();
    for (auto it = followed_.begin(); it != followed_.end(); ++it)
      if (it->second->last_use < oldest->second->last_use) oldest = it;
    followed_.erase(oldest);
  }
  return keep;
}

json Service::watch_answer(WatchState& st, const app::WatchOptions& o, std::string_view text, bool from_file,
                           bool restarted, std::optional<double> quiet_s) {
  // Forecasting refits the curves after each epoch: it computes like a fit.
  auto slot = take_slot();
  if (!st.live) st.live = std::make_unique<app::LiveWatch>(o);
  app::LiveWatch& live = *st.live;
  const size_t read_from = st.offset;
  bool partial_line = false;
  // The newline of a last line fed whole before it came is that line's end, not a line.
  if (st.fed_unterminated) {
    const size_t eol = text.starts_with("\r\n") ? 2 : text.starts_with("\n") ? 1 : 0;
    text.remove_prefix(eol);
    st.offset += eol;
    if (eol || !text.empty()) st.fed_unterminated = false;
  }
  while (!text.empty() && !live.done()) {
    const size_t nl = text.find('\n');
    std::string line(text.substr(0, nl));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A file's last line without its newline is being written: read next
    // time, unless it is a whole JSON object already, as a job's last line
    // often is.
    if (nl == std::string_view::npos && from_file) {
      if (!json::accept(line)) {
        partial_line = true;
        break;
      }
      st.fed_unterminated = true;
    }
    const size_t taken = nl == std::string_view::npos ? text.size() : nl + 1;
    text.remove_prefix(taken);
    // As `watch` reads a log: a line past the longest kept is not parsed.
    if (line.size() > profile::LogFollower::kMostLineBytes) line = profile::LogFollower::kLongLineText;
    check_cancelled();
    std::optional<json> u;
    try {
      u = live.feed(line, long(st.lines + 1));
    } catch (...) {
      // A line cut short inside the watch (at the request's time limit) may
      // have left it half changed: the next request starts afresh.
      st = WatchState{};
      throw;
    }
    ++st.lines;
    st.offset += taken;
    if (!u) continue;
    st.last_event = u->value("event", "");
    if (st.last_event == "warning" && st.warnings_total++ < kMostWarnings) st.warnings.push_back((*u)["message"]);
    // The run's result once it is done; a profiling run's next trial starts afresh.
    if (st.last_event == "done") st.final_update = *u;
    if (st.last_event == "forecast" || st.last_event == "trial") st.final_update.reset();
  }
  json panels = json::array();
  for (const auto& p : app::watch_chart(live, st.final_update ? &*st.final_update : nullptr))
    panels.push_back(panel_json(p));
  const std::optional<json>& shown = st.final_update ? st.final_update : live.last();
  json a = {{"source", o.source},
            {"lines", st.lines},
            {"epochs_seen", live.forecaster() ? live.forecaster()->epochs_seen() : 0},
            {"metric_name", live.metric_name()},
            {"done", live.done()},
            {"last_event", st.last_event},
            {"forecast", shown ? *shown : json(nullptr)},
            {"text", shown ? app::LiveWatch::text(*shown, 0) : std::string()},
            {"warnings", st.warnings},
            {"warnings_total", st.warnings_total},
            {"trial", live.trial()},
            {"partial_line", partial_line},
            {"panels", panels}};
  if (from_file) {
    a["quiet_s"] = quiet_s.value_or(0);
    a["bytes_read"] = st.offset - read_from;
    a["restarted"] = restarted;
  }
  return a;
}

}  // namespace trainplan::server
