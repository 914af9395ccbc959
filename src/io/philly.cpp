#include "io/philly.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "core/error.h"
#include "io/csv.h"

namespace trainplan::io {
namespace {

// "YYYY-MM-DD HH:MM:SS" as UTC seconds, or a plain number of seconds.
bool parse_timestamp(const std::string& s, double* out) {
  int Y, M, D, h, m, sec;
  char tail;
  // Field widths keep each number inside int: sscanf's %d past INT_MAX is
  // undefined, and a wrapped year made `Y - 1900` overflow.
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%c", &Y, &M, &D, &h, &m, &sec, &tail) == 6) {
    // The month's own days (timegm would carry 31 February into March).
    static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
    if (Y < 1 || M < 1 || M > 12 || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60) return false;
    if (D < 1 || D > kDays[M - 1] + (M == 2 && leap ? 1 : 0)) return false;
    std::tm tm{};
    tm.tm_year = Y - 1900, tm.tm_mon = M - 1, tm.tm_mday = D, tm.tm_hour = h, tm.tm_min = m, tm.tm_sec = sec;
    *out = static_cast<double>(timegm(&tm));
    return true;
  }
  // Seconds from some origin: none before it.
  if (auto v = parse_finite(s); v && *v >= 0) {
    *out = *v;
    return true;
  }
  return false;
}

}  // namespace

std::vector<PhillyJob> read_philly_csv(const std::string& path, long limit) {
  CsvTable t = CsvTable::read(path);
  t.require_columns({"timestamp", "duration", "num_gpus"});
  if (t.rows().empty()) throw InputError(path, 0, "", "trace has no jobs");
  bool has_cluster = t.has_column("cluster");
  std::vector<PhillyJob> jobs;
  jobs.reserve(t.rows().size());
  for (const auto& row : t.rows()) {
    PhillyJob j;
    j.line = row.line;
    if (!parse_timestamp(t.text(row, "timestamp"), &j.arrival_s))
      t.fail(row, "timestamp", "'" + t.text(row, "timestamp") + "' is not 'YYYY-MM-DD HH:MM:SS' (a day its month has) or seconds >= 0");
    j.duration_s = t.number(row, "duration");
    if (j.duration_s < 0) t.fail(row, "duration", "duration must be >= 0, got " + t.text(row, "duration"));
    j.gpus = t.positive_int(row, "num_gpus");
    if (has_cluster) j.cluster = t.text(row, "cluster");
    jobs.push_back(std::move(j));
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const PhillyJob& a, const PhillyJob& b) { return a.arrival_s < b.arrival_s; });
  if (limit > 0 && static_cast<long>(jobs.size()) > limit) jobs.resize(limit);
  double t0 = jobs.front().arrival_s;
  for (auto& j : jobs) j.arrival_s -= t0;
  return jobs;
}

}  // namespace trainplan::io
