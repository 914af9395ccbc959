#include "app/plan_on_gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "app/shortfall_json.h"
#include "app/transfer_samples.h"
#include "core/error.h"
#include "plan/merged_frontier.h"

namespace trainplan::app {

namespace {
// A deadline every run meets (a century), for the frontier of a GPU where
// the deadline asked for has no plan.
constexpr double kNoDeadline = 100 * 365.25 * 86400;
}  // namespace

double GpuPlan::gpu_hours() const {
  if (!outcome) return 0;
  return outcome->result.best.cost / 3600.0;  // the planned side: what the plan promises at most
}

GpuComparison plan_on_gpus(const SampleSet& samples, const structure::HardwareProfile& from,
                           const std::vector<structure::HardwareProfile>& gpus, const std::vector<double>& prices,
                           const PlanQuery& q, const models::ModelParams& params,
                           const std::map<std::string, SampleSet>& trials, models::TrainingPrecision precision) {
  if (!prices.empty() && prices.size() != gpus.size())
    throw std::logic_error("plan_on_gpus: one price per GPU, or none");
  for (const auto& [gpu_name, set] : trials) {
    // clang before 16 cannot capture a structured binding, so the lambda gets a plain copy.
    const std::string name = gpu_name;
    const bool listed = std::any_of(gpus.begin(), gpus.end(), [&](const auto& g) { return g.name == name; });
    if (!listed) throw InputError(set.source, 0, "--trials", fmt::format("{} is not one of the GPUs planned on", name));
    if (name == from.name)
      throw InputError(set.source, 0, "--trials",
                       fmt::format("{} measured the samples: nothing is moved there, add its trials to the samples", name));
  }
  GpuComparison c;
  c.from = from.name;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const auto& hw = gpus[i];
    GpuPlan g;
    g.gpu = hw.name;
    g.price_per_gpu_hour = prices.empty() ? 0 : prices[i];
    g.measured = hw.name == from.name;
    std::vector<models::StepSample> timed;
    if (auto t = trials.find(hw.name); t != trials.end()) {
      timed = trial_steps(t->second, samples.dataset_size, hw.name, hw.node.gpus_per_node);
    }
    g.trials = timed.size();
    std::optional<SamplesTransfer> moved;
    if (!g.measured) {
      moved = transfer_samples(samples, from, hw, std::move(timed), nullptr, precision);
    } else if (precision.target != models::Precision::kAuto) {
      // Trained in another precision than profiled: the measured GPU is
      // moved too, to itself, so that every GPU is planned in the precision
      // asked; where that is the one the samples ran in, they stay measured.
      moved = transfer_samples(samples, from, hw, {}, nullptr, precision);
      if (moved->ratios.value("precision", "") == moved->ratios.value("target_precision", "")) {
        moved.reset();
      } else {
        g.measured = false;
        moved->notes.insert(moved->notes.begin(),
                            fmt::format("measured here in {}, moved to {} on the same GPU",
                                        moved->ratios.value("precision", "?"), moved->ratios.value("target_precision", "?")));
      }
    }
    if (moved) {
      g.times_log_sd = moved->moved.times_predicted_log_sd;
      g.notes = std::move(moved->notes);
    }
    models::ModelParams p = params;
    p.hardware = std::make_shared<structure::HardwareSpec>(structure::interconnect_spec(hw));
    ModelSource src(moved ? std::move(moved->moved) : samples, p);
    try {
      g.outcome = make_plan(src, q);
      g.frontier = g.outcome->frontier;
    } catch (const InfeasibleError& e) {
      g.infeasible = e.what();
      g.shortfall = e.shortfall();
      if (q.frontier) {
        // The frontier ignores the deadline: planned without one, its points
        // say what a longer deadline would cost on this GPU.
        PlanQuery open = q;
        open.deadline = kNoDeadline;
        try {
          g.frontier = make_plan(src, open).frontier;
        } catch (const InfeasibleError&) {
          // no run reaches the target within the epochs at all: no frontier
        }
      }
    }
    c.plans.push_back(std::move(g));
  }
  auto best_by = [&](auto value) {
    std::optional<size_t> best;
    for (size_t i = 0; i < c.plans.size(); ++i)
      if (c.plans[i].outcome && (!best || value(c.plans[i]) < value(c.plans[*best]))) best = i;
    return best;
  };
  // GPU-hours of different GPUs cost differently: only prices name a cheapest.
  if (!prices.empty()) c.cheapest = best_by([](const GpuPlan& g) { return g.cost(); });
  c.fastest = best_by([](const GpuPlan& g) { return g.outcome->result.best.total_time_s; });
  if (q.frontier) c.frontier = merge_frontiers(c.plans);
  return c;
}

std::vector<GpuFrontierPoint> merge_frontiers(const std::vector<GpuPlan>& plans) {
  std::vector<std::vector<std::pair<double, double>>> fronts;
  for (const auto& g : plans) {
    if (!(g.price_per_gpu_hour > 0)) return {};
    fronts.emplace_back();
    for (const auto& run : g.frontier) fronts.back().push_back({run.total_time_s, run.cost / 3600.0 * g.price_per_gpu_hour});
  }
  std::vector<GpuFrontierPoint> out;
  for (const auto& m : plan::merge_frontiers(fronts))
    out.push_back({m.option, plans[m.option].frontier[m.point], fronts[m.option][m.point].second});
  return out;
}

nlohmann::json to_json(const GpuComparison& c, const std::string& samples) {
  nlohmann::json j = {{"from_gpu", c.from}, {"samples", samples}, {"gpus", nlohmann::json::array()}};
  for (const auto& g : c.plans) {
    nlohmann::json e = {{"gpu", g.gpu}, {"measured", g.measured}};
    if (g.price_per_gpu_hour > 0) e["price_per_gpu_hour"] = g.price_per_gpu_hour;
    if (g.times_log_sd) e["times_predicted_log_sd"] = *g.times_log_sd;
    if (!g.measured) e["trials"] = g.trials, e["notes"] = g.notes;
    if (!g.frontier.empty() || (g.outcome && g.outcome->query.frontier)) {
      e["frontier"] = nlohmann::json::array();
      for (const auto& run : g.frontier) {
        auto point = to_json(run);
        point["gpu_hours"] = run.cost / 3600.0;
        if (g.price_per_gpu_hour > 0) point["cost"] = run.cost / 3600.0 * g.price_per_gpu_hour;
        e["frontier"].push_back(std::move(point));
      }
    }
    if (g.outcome) {
      e["plan"] = to_json(*g.outcome, samples);
      e["gpu_hours"] = g.gpu_hours();
      if (g.price_per_gpu_hour > 0) e["cost"] = g.cost();
    } else {
      e["infeasible"] = g.infeasible;
      e.update(to_json(g.shortfall));
    }
    j["gpus"].push_back(std::move(e));
  }
  if (c.cheapest) j["cheapest"] = c.plans[*c.cheapest].gpu;
  if (c.fastest) j["fastest"] = c.plans[*c.fastest].gpu;
  if (!c.frontier.empty()) {
    j["frontier"] = nlohmann::json::array();
    for (const auto& p : c.frontier) {
      auto point = to_json(p.run);
      point["gpu"] = c.plans[p.plan].gpu;
      point["gpu_hours"] = p.run.cost / 3600.0;
      point["cost"] = p.cost;
      j["frontier"].push_back(std::move(point));
    }
  }
  return j;
}

}  // namespace trainplan::app
