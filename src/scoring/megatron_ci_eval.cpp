#include "scoring/megatron_ci_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/error.h"
#include "core/median.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "structure/gpu_catalog.h"
#include "uncertainty/llm_cross_validation.h"

namespace trainplan::scoring {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

structure::HardwareProfile hardware(const std::string& gpu) { return *structure::find_builtin_hardware(gpu); }

double last_stage_bytes(const models::LlmMemoryModel& m, const io::MegatronCiRun& r) {
  return m.predict_stage(r.spec, r.layout, r.layout.pp - 1).total();
}

// What the planner chooses between (plan/llm_planner.h): the parallel
// layout, micro-batch, recomputation, sequence parallelism, distributed optimizer.
std::string describe_choice(const structure::ParallelLayout& l) {
  return fmt::format("tp {} pp {} vpp {} dp {} mb {} {}{}{}", l.tp, l.pp, l.virtual_stages, l.dp, l.micro_batch,
                     structure::to_string(l.recompute), l.sequence_parallel ? " sp" : "",
                     l.distributed_optimizer ? " dist-opt" : "");
}

// The choice and what the user sets for every configuration (fused attention).
std::string describe(const structure::ParallelLayout& l) {
  return describe_choice(l) + (l.flash_attention ? " fused-attn" : "");
}

double ape(double predicted, double measured) { return std::abs(predicted / measured - 1); }

}  // namespace

bool CiRankingGroup::within() const { return chosen_s <= (1 + tolerance) * fastest_s; }

CiEvaluation evaluate_megatron_ci(const std::vector<io::MegatronCiRun>& runs, double tolerance) {
  if (runs.empty()) throw InputError("", 0, "", "no Megatron CI runs to evaluate");
  CiEvaluation e;
  std::set<std::string> models, gpus;
  for (const auto& r : runs) models.insert(r.model), gpus.insert(r.gpu);
  std::map<std::string, models::LlmTimeModel> datasheet;
  for (const auto& g : gpus) datasheet.emplace(g, models::LlmTimeModel(hardware(g)));
  models::LlmMemoryModel bare;

  e.rows.resize(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    e.rows[i].run = &runs[i];
    e.rows[i].time_datasheet = datasheet.at(runs[i].gpu).predict(runs[i].spec, runs[i].layout).iteration;
    e.rows[i].peak_datasheet = last_stage_bytes(bare, runs[i]) / kGiB;
  }
  // Leave one model out.
  for (const auto& held : models) {
    std::vector<double> gaps;
    for (const auto& r : runs)
      if (r.model != held) gaps.push_back(r.peak_gib * kGiB - last_stage_bytes(bare, r));
    models::LlmMemoryModel mm({gaps.empty() ? 0.0 : std::max(0.0, median(gaps))});
    for (const auto& g : gpus) {
      std::vector<models::LlmTimeSample> train;
      for (const auto& r : runs)
        if (r.model != held && r.gpu == g) train.push_back({r.spec, r.layout, r.iteration_s});
      models::LlmTimeParams tp;
      tp.fit_overheads = true;
      models::LlmTimeModel tm(hardware(g), tp);
      if (!train.empty()) tm.fit(train);
      for (size_t i = 0; i < runs.size(); ++i) {
        if (runs[i].model != held || runs[i].gpu != g) continue;
        e.rows[i].time_calibrated = tm.predict(runs[i].spec, runs[i].layout).iteration;
        e.rows[i].peak_calibrated = last_stage_bytes(mm, runs[i]) / kGiB;
      }
    }
  }
  std::map<std::string, CiEvaluation::PerModel> per;
  for (const auto& x : e.rows) {
    const auto& r = *x.run;
    double a = ape(x.time_datasheet, r.iteration_s), b = ape(x.time_calibrated, r.iteration_s);
    double c = ape(x.peak_datasheet, r.peak_gib), d = ape(x.peak_calibrated, r.peak_gib);
    e.time_datasheet_mape += a, e.time_calibrated_mape += b, e.peak_datasheet_mape += c, e.peak_calibrated_mape += d;
    auto& p = per[r.model];
    p.model = r.model, ++p.rows;
    p.time_datasheet += a, p.time_calibrated += b, p.peak_datasheet += c, p.peak_calibrated += d;
  }
  double n = double(e.rows.size());
  e.time_datasheet_mape /= n, e.time_calibrated_mape /= n, e.peak_datasheet_mape /= n, e.peak_calibrated_mape /= n;
  for (auto& [k, p] : per) {
    p.time_datasheet /= p.rows, p.time_calibrated /= p.rows, p.peak_datasheet /= p.rows, p.peak_calibrated /= p.rows;
    e.per_model.push_back(p);
  }

  // Repeatability: each row of a configuration measured more than once,
  // predicted by the median of the configuration's other rows.
  std::map<std::string, std::vector<const CiRowPrediction*>> same;
  for (const auto& x : e.rows) {
    const auto& r = *x.run;
    same[fmt::format("{} on {}, global batch {}: {}", r.model, r.gpu, r.layout.global_batch, describe(r.layout))]
        .push_back(&x);
  }
  for (const auto& [key, xs] : same) {
    if (xs.size() < 2) continue;
    for (const auto* x : xs) {
      std::vector<double> others;
      for (const auto* y : xs)
        if (y != x) others.push_back(y->run->iteration_s);
      e.time_repeat_mape += ape(median(others), x->run->iteration_s);
      e.time_calibrated_on_repeated_mape += ape(x->time_calibrated, x->run->iteration_s);
      ++e.repeated_rows;
    }
  }
  if (e.repeated_rows > 0) {
    e.time_repeat_mape /= e.repeated_rows;
    e.time_calibrated_on_repeated_mape /= e.repeated_rows;
  }

  // Ranking: one entry per distinct choice of the planner (its fastest measurement), within
  // groups that share what the user sets for every configuration (fused attention: the planner
  // prices it as told, it does not choose it).
  struct Entry {
    double measured = 1e300, predicted = 0;
  };
  std::map<std::string, std::map<std::string, Entry>> groups;
  for (const auto& x : e.rows) {
    const auto& r = *x.run;
    std::string key = fmt::format("{} on {} x{}, global batch {}{}", r.model, r.gpu, r.layout.gpus(),
                                  r.layout.global_batch, r.layout.flash_attention ? ", fused attention" : "");
    auto& en = groups[key][describe_choice(r.layout)];
    if (r.iteration_s < en.measured) en.measured = r.iteration_s, en.predicted = x.time_datasheet;  // the fastest run's
  }
  for (const auto& [key, configs] : groups) {
    if (configs.size() < 2) continue;
    CiRankingGroup g;
    g.key = key, g.tolerance = tolerance, g.configurations = int(configs.size());
    double best_pred = 1e300;
    g.fastest_s = 1e300;
    for (const auto& [name, en] : configs) {
      if (en.measured < g.fastest_s) g.fastest_s = en.measured, g.fastest = name;
      if (en.predicted < best_pred) best_pred = en.predicted, g.chosen_s = en.measured, g.chosen = name;
    }
    e.ranking.push_back(g);
  }
  return e;
}

std::vector<CiCalibratedOnK> evaluate_megatron_ci_calibrated_on(const std::vector<io::MegatronCiRun>& runs,
                                                                const std::vector<models::LlmTimeParams>& params,
                                                                int k, int draws) {
  std::map<std::string, std::vector<const io::MegatronCiRun*>> by_gpu;
  for (const auto& r : runs) by_gpu[r.gpu].push_back(&r);
  std::vector<CiCalibratedOnK> out;
  models::LlmMemoryModel bare;
  for (const auto& [gpu, rs] : by_gpu) {
    if (int(rs.size()) <= k) continue;
    CiCalibratedOnK c;
    c.gpu = gpu, c.k = k, c.draws = draws;
    for (int d = 0; d < draws; ++d) {
      std::mt19937_64 rng(uint64_t(d) + 1);
      std::vector<size_t> order(rs.size());
      std::iota(order.begin(), order.end(), size_t(0));
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<models::LlmTimeSample> fit_on;
      std::vector<double> gaps;
      io::LlmConfigTable measured;
      for (int j = 0; j < k; ++j) {
        const auto& r = *rs[order[size_t(j)]];
        fit_on.push_back({r.spec, r.layout, r.iteration_s});
        measured.rows.push_back(io::measured_config_row(r.line, r.spec, r.layout, r.iteration_s));
        gaps.push_back(r.peak_gib * kGiB - last_stage_bytes(bare, r));
      }
      const size_t chosen =
          params.size() > 1 ? uncertainty::select_by_cross_validation(measured, hardware(gpu), params) : 0;
      models::LlmTimeModel tm(hardware(gpu), params[chosen]);
      tm.fit(fit_on);
      models::LlmMemoryModel mm({std::max(0.0, median(gaps))});
      for (size_t j = size_t(k); j < order.size(); ++j) {
        const auto& r = *rs[order[j]];
        const double te = ape(tm.predict(r.spec, r.layout).iteration, r.iteration_s);
        c.time_mape += te, c.time_worst = std::max(c.time_worst, te);
        c.peak_mape += ape(last_stage_bytes(mm, r) / kGiB, r.peak_gib);
        ++c.predictions;
      }
    }
    c.time_mape /= double(c.predictions), c.peak_mape /= double(c.predictions);
    out.push_back(c);
  }
  return out;
}

}  // namespace trainplan::scoring
