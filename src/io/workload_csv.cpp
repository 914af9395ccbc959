#include "io/workload_csv.h"

#include <unordered_set>

#include "core/error.h"
#include "core/name_key.h"
#include "io/csv.h"

namespace trainplan::io {

std::vector<WorkloadJob> read_workload_csv(const std::string& path, const std::set<std::string>& known_apps) {
  CsvTable t = CsvTable::read(path);
  t.require_columns({"name", "time", "application", "num_replicas", "batch_size"});
  if (t.rows().empty()) throw InputError(path, 0, "", "workload has no jobs");
  bool has_deadline = t.has_column("deadline");
  std::vector<WorkloadJob> jobs;
  std::unordered_set<std::string> names;
  for (const auto& row : t.rows()) {
    WorkloadJob j;
    j.line = row.line;
    j.name = t.text(row, "name");
    if (j.name.empty()) t.fail(row, "name", "job name is empty");
    if (!names.insert(j.name).second) t.fail(row, "name", "duplicate job name '" + j.name + "'");
    j.arrival_s = t.number(row, "time");
    if (j.arrival_s < 0) t.fail(row, "time", "arrival time must be >= 0, got " + t.text(row, "time"));
    j.application = t.text(row, "application");
    if (j.application.empty()) t.fail(row, "application", "application is empty");
    // As trace folders pair by name elsewhere: in any case, with or without '-', '_' or spaces
    // ("CIFAR-10" is cifar10), where one application alone reads so; the job then names it as known.
    if (!known_apps.empty() && !known_apps.count(j.application)) {
      std::vector<std::string> alike;
      for (const auto& a : known_apps)
        if (name_key(a) == name_key(j.application)) alike.push_back(a);
      if (alike.size() == 1) j.application = alike.front();
    }
    if (!known_apps.empty() && !known_apps.count(j.application)) {
      std::string list;
      for (const auto& a : known_apps) list += (list.empty() ? "" : ", ") + a;
      t.fail(row, "application", "unknown application '" + j.application + "' (known: " + list + ")");
    }
    j.replicas = t.positive_int(row, "num_replicas");
    j.batch = t.positive_int(row, "batch_size");
    // A job without a deadline: an empty cell, or a spreadsheet's or R's NA, NaN, null, none or -.
    if (has_deadline && !says_missing(t.text(row, "deadline"))) {
      const double d = t.number(row, "deadline");
      if (d <= 0) t.fail(row, "deadline", "deadline must be > 0 seconds");
      j.deadline_s = d;
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace trainplan::io
