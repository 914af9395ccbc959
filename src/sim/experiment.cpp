#include "sim/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "core/whole_file.h"
#include "io/csv.h"
#include "io/gnuplot.h"
#include "sim/app_model.h"
#include "sim/workload.h"

namespace trainplan::sim {

Experiment::Experiment(std::vector<const AppModel*> apps, ExperimentOptions opts)
    : apps_(std::move(apps)), opts_(std::move(opts)) {}

const Estimator& Experiment::scheduler_estimator() {
  if (opts_.oracle) return oracle_;
  if (!fitted_tried_) {
    fitted_tried_ = true;
    std::string name = opts_.time_model.empty() ? std::string(kDefaultTimeModel) : opts_.time_model;
    if (name.empty()) {
      note_ = "no time model is registered: schedulers use the oracle";
    } else if (apps_.empty()) {
      // Rigid jobs (the Philly trace) have no application to fit: their durations are all there is.
    } else {
      fitted_ = std::make_unique<FittedEstimator>(apps_, name);
      note_ = "schedulers use time model '" + name + "' fitted on the paper plan's samples of each application";
    }
  }
  return fitted_ ? *fitted_ : static_cast<const Estimator&>(oracle_);
}

SimResult Experiment::run(const std::string& policy, const std::vector<JobSpec>& jobs) {
  PolicyOptions po = opts_.policy;
  if (opts_.gittins && policy == "tiresias") po.gittins_sizes = job_sizes(jobs);
  auto p = PolicyRegistry::instance().make(policy, po);
  // Only the model-driven policies need the (possibly fitted) estimator.
  const Estimator& est = p->uses_estimates() ? scheduler_estimator() : oracle_;
  return simulate(jobs, *p, est, oracle_, opts_.sim);
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string t = s.substr(i, j - i);
    while (!t.empty() && t.front() == ' ') t.erase(t.begin());
    while (!t.empty() && t.back() == ' ') t.pop_back();
    if (!t.empty()) out.push_back(t);
    i = j + 1;
  }
  return out;
}

void plot_jct_cdf(const std::string& path, const std::vector<SimResult>& runs, const std::string& title) {
  io::PlotPanel panel;
  panel.title = title;
  panel.xlabel = "job completion time (hours)";
  panel.ylabel = "fraction of jobs";
  panel.logx = true;
  panel.yrange = {{0.0, 1.0}};
  for (const auto& run : runs) {
    std::vector<double> jct;
    for (const auto& j : run.jobs) jct.push_back(std::max(j.jct, 1.0) / 3600.0);
    std::sort(jct.begin(), jct.end());
    io::PlotSeries s{run.policy, {}, "steps lw 2", ""};
    // The CDF rises from 0 at the first job: a workload of one job is a step, not nothing.
    if (!jct.empty()) s.points.push_back({jct.front(), 0.0});
    for (size_t i = 0; i < jct.size(); ++i) s.points.push_back({jct[i], double(i + 1) / double(jct.size())});
    panel.series.push_back(std::move(s));
  }
  io::render_plot(path, {panel});
}

void write_jobs_csv(const std::string& path, const std::vector<SimResult>& runs) {
  std::ostringstream out;
  // On several GPU types, each job's group too.
  const bool groups = std::any_of(runs.begin(), runs.end(), [](const SimResult& r) { return r.groups.size() > 1; });
  out << "policy,name,app,arrival,start,finish,jct,gpu_seconds,restarts,gpus,batch,met_deadline" << (groups ? ",gpu" : "")
      << "\n";
  for (const auto& r : runs)
    for (const auto& j : r.jobs) {
      // A job's name as the workload gave it, commas and quotes included.
      out << fmt::format("{},{},{},{:.1f},{:.1f},{:.1f},{:.1f},{:.1f},{},{},{},{}", r.policy, io::csv_field(j.name),
                         io::csv_field(j.app), j.arrival,
                         j.start, j.finish, j.jct, j.gpu_seconds, j.restarts, j.gpus, j.batch,
                         j.met_deadline ? (*j.met_deadline ? "1" : "0") : "");
      if (groups) out << "," << io::csv_field(size_t(j.group) < r.groups.size() ? r.groups[size_t(j.group)].gpu : "");
      out << "\n";
    }
  write_whole_file(path, out.str());
}

}  // namespace trainplan::sim
