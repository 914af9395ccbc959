#include "io/pollux_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <filesystem>

#include "core/error.h"
#include "io/csv.h"

namespace fs = std::filesystem;

namespace trainplan::io {
namespace {

// Bounds past any real trace, so that a typo cannot ask for 2^31 GPUs (the
// placements built from it would not fit in memory) or carry 1e300 s into
// the fits, where it comes out as infinities.
constexpr int kMostReplicas = 100000;
constexpr double kLongestStep = 1e6;  // seconds, 11.6 days
// A training step launches kernels and synchronises: none takes under a
// microsecond (the traces' fastest, ncf's, take 7 ms). Below it a figure is
// in other units or garbled, and rates from it overflow.
constexpr double kShortestStep = 1e-6;

// The step's time in its synchronisation: part of the step, so at most the
// step. Timers that round the two apart may leave it a hair over (up to 1%),
// which is read as the whole step; more is a broken row.
double sync_within_step(const CsvTable& t, const CsvRow& row, double step_time) {
  const double sync = t.number(row, "sync_time");
  if (sync < 0) t.fail(row, "sync_time", "must be >= 0");
  if (sync > 1.01 * step_time)
    t.fail(row, "sync_time", fmt::format("{} s is longer than the step it is part of (step_time {} s)", t.text(row, "sync_time"),
                                         t.text(row, "step_time")));
  return std::min(sync, step_time);
}

// The row's step_time: from kShortestStep to kLongestStep.
double step_time_of(const CsvTable& t, const CsvRow& row) {
  const double step = t.positive(row, "step_time");
  if (step < kShortestStep)
    t.fail(row, "step_time", fmt::format("{:g} s is less than {:g} s, shorter than any training step (seconds?)", step,
                                         kShortestStep));
  if (step > kLongestStep) t.fail(row, "step_time", fmt::format("{:g} s is more than {:g} s a step", step, kLongestStep));
  return step;
}

// The row's sync_time within its step; nullopt where `optional` allows its
// column or its cell to be absent and it is.
std::optional<double> sync_of(const CsvTable& t, const CsvRow& row, double step_time, bool optional) {
  if (optional && (!t.has_column("sync_time") || says_missing(t.text(row, "sync_time")))) return std::nullopt;
  return sync_within_step(t, row, step_time);
}

}  // namespace

bool is_pollux_trace_file_name(const std::string& name) {
  return name == "placements.csv" || name == "scalability.csv" ||
         (name.rfind("validation-", 0) == 0 && fs::path(name).extension() == ".csv");
}

std::string pollux_trace_name(const std::string& dir) {
  auto folder = fs::path(dir).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  return folder.filename().string();
}

PolluxTrace read_pollux_trace(const std::string& dir, const PolluxTraceOptions& options) {
  PolluxTrace tr;
  tr.dir = dir;
  tr.name = pollux_trace_name(dir);
  if (!fs::is_directory(dir)) throw InputError(dir, 0, "", "not a directory (expected a Pollux trace directory)");
  fs::path pl = fs::path(dir) / "placements.csv";
  if (!fs::exists(pl)) throw InputError(pl.string(), 0, "", "missing: a trace directory needs placements.csv");

  CsvTable t = CsvTable::read(pl.string());
  t.require_columns({"placement", "local_bsz", "step_time"});
  if (!options.sync_optional) t.require_columns({"sync_time"});
  for (const auto& row : t.rows()) {
    PlacementRow r;
    r.placement = t.text(row, "placement");
    // pandas writes a column of integers that had a gap as floats ("1111.0").
    if (r.placement.size() > 2 && r.placement.ends_with(".0")) r.placement.resize(r.placement.size() - 2);
    if (r.placement.empty()) t.fail(row, "placement", "value is empty");
    for (char c : r.placement) {
      if (c < '1' || c > '9') t.fail(row, "placement", "must be digits 1-9 (GPUs per node), got '" + r.placement + "'");
      r.gpus += c - '0';
    }
    r.nodes = static_cast<int>(r.placement.size());
    r.local_bsz = t.positive_int(row, "local_bsz");  // a whole number of examples ("64.0" is 64)
    r.step_time = step_time_of(t, row);
    const auto sync = sync_of(t, row, r.step_time, options.sync_optional);
    r.sync_known = sync.has_value(), r.sync_time = sync.value_or(0);
    tr.placements.push_back(r);
  }
  if (tr.placements.empty()) throw InputError(pl.string(), 0, "", "no rows");

  fs::path sc = fs::path(dir) / "scalability.csv";
  if (fs::exists(sc)) {
    CsvTable s = CsvTable::read(sc.string());
    s.require_columns({"num_nodes", "num_replicas", "local_bsz", "step_time"});
    if (!options.sync_optional) s.require_columns({"sync_time"});
    for (const auto& row : s.rows()) {
      ScalabilityRow r;
      r.num_nodes = s.positive_int(row, "num_nodes");
      r.num_replicas = s.positive_int(row, "num_replicas");
      if (r.num_replicas > kMostReplicas)
        s.fail(row, "num_replicas", fmt::format("{} replicas is more than any cluster holds ({} at most)",
                                                r.num_replicas, kMostReplicas));
      if (r.num_nodes > r.num_replicas)
        s.fail(row, "num_nodes", fmt::format("{} nodes cannot hold {} replica(s): each node runs at least one",
                                             r.num_nodes, r.num_replicas));
      r.local_bsz = s.positive_int(row, "local_bsz");
      r.step_time = step_time_of(s, row);
      const auto sync = sync_of(s, row, r.step_time, options.sync_optional);
      r.sync_known = sync.has_value(), r.sync_time = sync.value_or(0);
      tr.scalability.push_back(r);
    }
  }

  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!options.curves) break;
    std::string fname = entry.path().filename().string();
    if (fname.rfind("validation-", 0) != 0 || entry.path().extension() != ".csv") continue;
    std::string bs = fname.substr(11, fname.size() - 11 - 4);
    auto b = parse_finite(bs);
    // Bounded before the conversion to long, which is undefined past 2^63.
    if (!b || *b < 1 || *b != std::floor(*b) || *b > 9007199254740992.0)
      throw InputError(entry.path().string(), 0, "", "file name must be validation-<global batch>.csv");
    ValidationCurve c;
    c.global_batch = static_cast<long>(*b);
    c.path = entry.path().string();
    CsvTable v = CsvTable::read(c.path);
    v.require_columns({"progress", "iteration", "metric"});
    double prev_iter = -1, prev_progress = 0;
    for (const auto& row : v.rows()) {
      ValidationRow r;
      // The work done by each row, in steps of the first batch: the simulator
      // runs a job until it has done the last, so a progress past any run
      // would never end.
      r.progress = v.positive(row, "progress");
      if (r.progress <= prev_progress) v.fail(row, "progress", "must increase from row to row");
      if (r.progress > kMostValidationProgress)
        v.fail(row, "progress", fmt::format("{:g} is past any run ({:g})", r.progress, kMostValidationProgress));
      prev_progress = r.progress;
      r.iteration = v.positive(row, "iteration");
      if (r.iteration <= prev_iter) v.fail(row, "iteration", "must increase from row to row");
      prev_iter = r.iteration;
      r.metric = v.number(row, "metric");
      if (v.has_column("grad_sqr")) r.grad_sqr = v.optional_number(row, "grad_sqr");
      if (v.has_column("grad_var")) r.grad_var = v.optional_number(row, "grad_var");
      c.rows.push_back(r);
    }
    if (c.rows.empty()) throw InputError(c.path, 0, "", "validation file has no rows");
    tr.curves.push_back(std::move(c));
  }
  std::sort(tr.curves.begin(), tr.curves.end(), [](const ValidationCurve& a, const ValidationCurve& b) {
    return a.global_batch != b.global_batch ? a.global_batch < b.global_batch : a.path < b.path;
  });
  for (size_t i = 1; i < tr.curves.size(); ++i)
    if (tr.curves[i].global_batch == tr.curves[i - 1].global_batch)
      throw InputError(tr.curves[i].path, 0, "",
                       fmt::format("the global batch {} has a curve already, {}: keep one", tr.curves[i].global_batch,
                                   tr.curves[i - 1].path));
  return tr;
}

std::vector<std::string> list_pollux_traces(const std::string& root) {
  std::vector<std::string> out;
  if (fs::exists(fs::path(root) / "placements.csv")) return {root};
  if (!fs::is_directory(root)) throw InputError(root, 0, "", "not a directory");
  std::vector<std::string> folders;  // every folder under root, for saying why none is a trace
  for (const auto& e : fs::directory_iterator(root)) {
    if (!e.is_directory()) continue;
    folders.push_back(e.path().filename().string());
    if (fs::exists(e.path() / "placements.csv")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    // A lone network folder missing its placements.csv is named, not only the folder above it.
    if (folders.size() == 1)
      throw InputError((fs::path(root) / folders.front() / "placements.csv").string(), 0, "",
                       "missing: a trace directory needs placements.csv");
    throw InputError(root, 0, "",
                     folders.empty() ? "no trace directories (with placements.csv) found here"
                                     : fmt::format("no trace directories found here: none of its {} folders has a "
                                                   "placements.csv",
                                                   folders.size()));
  }
  return out;
}

std::vector<std::string> find_pollux_traces(const std::string& data) {
  fs::path under = fs::path(data) / "pollux-t4";
  return list_pollux_traces(fs::exists(under) ? under.string() : data);
}

}  // namespace trainplan::io
