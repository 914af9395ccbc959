#include "scoring/layer_time_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "io/json_text.h"
#include "scoring/mre.h"
#include "profile/samples_file.h"
#include "models/layer_time_model.h"
#include "models/step_time_paleo.h"

namespace trainplan::scoring {

namespace {

const models::LayerLearner kLearners[] = {models::LayerLearner::kMlp, models::LayerLearner::kBoostedTrees};

LayerCvScore cross_validate(const std::vector<io::LayerTiming>& t, models::LayerLearner learner, int folds,
                            uint64_t seed) {
  std::vector<size_t> idx(t.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  std::vector<double> pred(t.size()), truth(t.size());
  for (int f = 0; f < folds; ++f) {
    std::vector<io::LayerTiming> train;
    for (size_t i = 0; i < idx.size(); ++i)
      if (static_cast<int>(i % folds) != f) train.push_back(t[idx[i]]);
    models::LayerTimeModel m(learner, seed);
    m.fit(train);
    std::vector<size_t> held;
    std::vector<io::LayerTiming> test;
    for (size_t i = 0; i < idx.size(); ++i)
      if (static_cast<int>(i % folds) == f) held.push_back(idx[i]), test.push_back(t[idx[i]]);
    const Eigen::VectorXd p = m.predict(test);
    for (size_t j = 0; j < held.size(); ++j) pred[held[j]] = p(static_cast<Eigen::Index>(j)), truth[held[j]] = test[j].time_s;
  }
  double ape = 0;
  std::vector<std::pair<double, double>> points;
  for (size_t i = 0; i < t.size(); ++i) {
    ape += std::abs(pred[i] - truth[i]) / truth[i];
    points.push_back({truth[i], pred[i]});
  }
  std::sort(points.begin(), points.end());
  return {models::to_string(learner), ape / double(t.size()), mre(pred, truth), points};
}

}  // namespace

LayerTimeReport evaluate_layer_times(const std::vector<io::LayerTiming>& timings,
                                     const std::vector<std::string>& sample_files, int folds, uint64_t seed) {
  if (timings.size() < 2 * static_cast<size_t>(folds))
    throw InputError(fmt::format("the per-layer evaluation needs at least {} layer timings, got {}", 2 * folds,
                                 timings.size()));
  // The sample files are read and checked first, so that a bad one fails before the fits.
  std::vector<std::pair<SampleSet, const structure::LayerGraph*>> sets;
  for (const auto& file : sample_files) {
    SampleSet s = profile::read_samples(file);
    const auto* g = &models::network_for(s, "");
    if (!s.dataset_size) throw InputError(file, 0, "dataset_size", "the samples need the dataset size for step times");
    sets.push_back({std::move(s), g});
  }
  LayerTimeReport rep;
  rep.layers = static_cast<int>(timings.size());
  rep.folds = folds;
  for (auto l : kLearners) rep.cv.push_back(cross_validate(timings, l, folds, seed));

  models::LayerTimeModel mlp(models::LayerLearner::kMlp, seed), trees(models::LayerLearner::kBoostedTrees, seed);
  mlp.fit(timings);
  trees.fit(timings);
  for (size_t k = 0; k < sets.size(); ++k) {
    const auto& [s, gp] = sets[k];
    const auto& file = sample_files[k];
    const structure::LayerGraph& g = *gp;
    NetworkStepScore score{file, g.name, {}, 0, 0, {}};
    int untimed = 0;
    for (const auto& l : g.layers) untimed += !models::timed_kind(l.kind);
    if (untimed)
      score.notes.push_back(fmt::format("{} of {} layers are of kinds no timed layer had; their times are "
                                        "extrapolated", untimed, g.layers.size()));
    std::map<double, std::vector<double>> steps;  // batch -> single-worker step times
    for (const auto& x : s.samples)
      if (x.workers == 1) steps[x.batch].push_back(x.epoch_time_s * x.batch / double(*s.dataset_size));
    if (steps.empty()) score.notes.push_back("no single-worker sample: nothing to compare");
    std::vector<double> truth, pm, pt;
    for (auto& [b, v] : steps) {
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      NetworkStepRow row{b, static_cast<int>(v.size()), v[v.size() / 2], mlp.step_time(g, b), trees.step_time(g, b)};
      truth.push_back(row.measured_s), pm.push_back(row.mlp_s), pt.push_back(row.trees_s);
      score.rows.push_back(row);
    }
    if (!truth.empty()) score.mlp_mre = mre(pm, truth), score.trees_mre = mre(pt, truth);
    rep.networks.push_back(std::move(score));
  }
  return rep;
}

std::string format_layer_times(const LayerTimeReport& r) {
  std::string s = fmt::format("per-layer model (Justus et al.): {} timed layers, {}-fold CV of forward + backward time\n",
                              r.layers, r.folds);
  for (const auto& c : r.cv)
    s += fmt::format("  {:<14} MAPE {:5.1f}%   MRE {:5.1f}%\n", c.learner, 100 * c.mape, 100 * c.mre);
  for (const auto& n : r.networks) {
    s += fmt::format("network {} ({}): step time = sum of its layers' predicted times, against single-worker samples\n",
                     n.network, n.source);
    s += fmt::format("  {:>7} {:>7} {:>12} {:>12} {:>14}\n", "batch", "samples", "measured s", "mlp s", "trees s");
    for (const auto& row : n.rows)
      s += fmt::format("  {:>7g} {:>7} {:>12.4g} {:>12.4g} {:>14.4g}\n", row.batch, row.samples, row.measured_s,
                       row.mlp_s, row.trees_s);
    if (!n.rows.empty()) s += fmt::format("  MRE: mlp {:.1f}%, trees {:.1f}%\n", 100 * n.mlp_mre, 100 * n.trees_mre);
    for (const auto& note : n.notes) s += "  note: " + note + "\n";
  }
  if (!r.networks.empty())
    s += "The sum covers the layers only: the measured step also holds the loss, the optimiser's update and data "
         "loading.\n";
  return s;
}

std::vector<io::PlotPanel> layer_time_panels(const LayerTimeReport& r) {
  const auto& colors = io::plot_palette();
  std::vector<io::PlotPanel> panels;
  io::PlotPanel layers{fmt::format("{} timed layers, out of fold ({}-fold CV)", r.layers, r.folds),
                       "measured forward + backward (s)", "predicted (s)", true, true, "top left", {}, {}, 0, {}};
  double lo = 1e300, hi = 0;
  for (size_t k = 0; k < r.cv.size(); ++k) {
    const auto& c = r.cv[k];
    layers.series.push_back({fmt::format("{} (MAPE {:.1f}%)", c.learner, 100 * c.mape), c.points, "points",
                             colors[k % colors.size()]});
    for (auto [x, y] : c.points) lo = std::min({lo, x, y}), hi = std::max({hi, x, y});
  }
  if (hi > 0) layers.series.push_back({"y = x", {{lo, lo}, {hi, hi}}, "lines", "#000000"});
  panels.push_back(layers);
  for (const auto& n : r.networks) {
    if (n.rows.empty()) continue;
    io::PlotPanel p{fmt::format("{}: step = sum of its layers", n.network), "per-worker batch", "step time (s)",
                    true, true, "top left", {}, {}, 0, {}};
    io::PlotSeries measured{"measured (median of single-worker samples)", {}, "points", "#000000"};
    io::PlotSeries mlp{fmt::format("mlp (MRE {:.1f}%)", 100 * n.mlp_mre), {}, "linespoints", colors[0]};
    io::PlotSeries trees{fmt::format("boosted-trees (MRE {:.1f}%)", 100 * n.trees_mre), {}, "linespoints", colors[1]};
    for (const auto& row : n.rows) {
      measured.points.push_back({row.batch, row.measured_s});
      mlp.points.push_back({row.batch, row.mlp_s});
      trees.points.push_back({row.batch, row.trees_s});
    }
    p.series = {measured, mlp, trees};
    panels.push_back(p);
  }
  return panels;
}

std::string layer_times_json(const LayerTimeReport& r) {
  nlohmann::json j = {{"layers", r.layers}, {"folds", r.folds}};
  for (const auto& c : r.cv) j["cv"][c.learner] = {{"mape", c.mape}, {"mre", c.mre}};
  j["networks"] = nlohmann::json::array();
  for (const auto& n : r.networks) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : n.rows)
      rows.push_back({{"batch", row.batch}, {"samples", row.samples}, {"measured_s", row.measured_s},
                      {"mlp_s", row.mlp_s}, {"trees_s", row.trees_s}});
    j["networks"].push_back({{"source", n.source}, {"network", n.network}, {"rows", rows},
                             {"mre", {{"mlp", n.mlp_mre}, {"boosted-trees", n.trees_mre}}}, {"notes", n.notes}});
  }
  return io::json_text(j);
}

}  // namespace trainplan::scoring
