#include "scoring/cross_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "io/json_text.h"
#include "scoring/mre.h"
#include "io/pollux_trace.h"
#include "numerics/boosted_trees.h"
#include "structure/network_zoo.h"
#include "models/step_time_paleo.h"

namespace trainplan::scoring {

namespace {

struct Trace {
  std::string name;
  const structure::LayerGraph* graph;
  std::vector<models::PaleoObservation> rows;
};

// Horus's graph features plus the resources: one row per observation.
Eigen::MatrixXd horus_features(const std::vector<models::PaleoObservation>& obs) {
  Eigen::MatrixXd X(static_cast<Eigen::Index>(obs.size()), 10);
  for (size_t i = 0; i < obs.size(); ++i) {
    const auto& g = *obs[i].graph;
    X.row(static_cast<Eigen::Index>(i)) << std::log10(g.flops()), std::log10(g.bytes()), std::log10(g.params()),
        g.count(structure::LayerKind::kConv), g.count(structure::LayerKind::kLinear),
        g.count(structure::LayerKind::kRecurrent), g.count(structure::LayerKind::kAttention), std::log2(obs[i].batch),
        obs[i].workers, obs[i].nodes;
  }
  return X;
}

std::vector<double> truth_of(const std::vector<models::PaleoObservation>& obs) {
  std::vector<double> y;
  for (const auto& o : obs) y.push_back(o.step_s);
  return y;
}

}  // namespace

CrossModelReport evaluate_cross_model(const std::string& data, const CrossModelOptions& opts) {
  CrossModelReport rep;
  rep.methods = {"paleo", "paleo-transfer", "horus-xgb", "horus-xgb-residual", "paleo-fit (own rows, cv)"};
  const models::PaleoHardware hw;
  std::vector<Trace> traces;
  for (const auto& dir : io::find_pollux_traces(data)) {
    auto t = io::read_pollux_trace(dir);
    const auto* g = structure::find_network(t.name);
    if (!g) {
      rep.skipped.push_back(fmt::format("{}: no layer graph for '{}'", dir, t.name));
      continue;
    }
    Trace tr{t.name, g, {}};
    for (const auto& p : t.placements) tr.rows.push_back({g, p.local_bsz, p.gpus, p.nodes, p.step_time});
    traces.push_back(std::move(tr));
  }
  if (traces.size() < 2)
    throw InputError(data, 0, "", "cross-model evaluation needs at least two traces of known networks");

  for (size_t k = 0; k < traces.size(); ++k) {
    const Trace& held = traces[k];
    std::vector<models::PaleoObservation> others;
    for (size_t j = 0; j < traces.size(); ++j)
      if (j != k) others.insert(others.end(), traces[j].rows.begin(), traces[j].rows.end());
    const auto truth = truth_of(held.rows);
    CrossModelRow row{held.name, held.graph->name, static_cast<int>(held.rows.size()), {}};

    std::vector<double> analytic, transfer;
    const auto factors = models::fit_paleo_factors(others, hw);
    for (const auto& o : held.rows) {
      analytic.push_back(models::PaleoFactors{}.step(*o.graph, o.batch, o.workers, o.nodes, hw));
      transfer.push_back(factors.step(*o.graph, o.batch, o.workers, o.nodes, hw));
    }
    row.mre["paleo"] = mre(analytic, truth);
    row.mre["paleo-transfer"] = mre(transfer, truth);

    // Trees on log step time, and on the log ratio to the transferred PALEO.
    Eigen::VectorXd y(static_cast<Eigen::Index>(others.size())), yr(y.size());
    for (size_t i = 0; i < others.size(); ++i) {
      y(static_cast<Eigen::Index>(i)) = std::log(others[i].step_s);
      const double base = factors.step(*others[i].graph, others[i].batch, others[i].workers, others[i].nodes, hw);
      yr(static_cast<Eigen::Index>(i)) = std::log(others[i].step_s / base);
    }
    numerics::BoostedTreesParams bp;
    bp.seed = opts.seed;
    const Eigen::MatrixXd X = horus_features(others), Xh = horus_features(held.rows);
    numerics::BoostedTrees direct(bp), residual(bp);
    direct.fit(X, y);
    residual.fit(X, yr);
    const Eigen::VectorXd pd = direct.predict(Xh), pr = residual.predict(Xh);
    std::vector<double> horus, horus_r;
    for (size_t i = 0; i < held.rows.size(); ++i) {
      horus.push_back(std::exp(pd(static_cast<Eigen::Index>(i))));
      horus_r.push_back(transfer[i] * std::exp(pr(static_cast<Eigen::Index>(i))));
    }
    row.mre["horus-xgb"] = mre(horus, truth);
    row.mre["horus-xgb-residual"] = mre(horus_r, truth);

    // The bar: factors fitted on this network's own rows, out of fold.
    std::vector<size_t> idx(held.rows.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::mt19937_64 rng(opts.seed);
    std::shuffle(idx.begin(), idx.end(), rng);
    std::vector<double> own(held.rows.size());
    const int folds = std::max(2, std::min<int>(opts.folds, static_cast<int>(idx.size())));
    for (int f = 0; f < folds; ++f) {
      std::vector<models::PaleoObservation> train;
      for (size_t i = 0; i < idx.size(); ++i)
        if (static_cast<int>(i % folds) != f) train.push_back(held.rows[idx[i]]);
      const auto ff = models::fit_paleo_factors(train, hw);
      for (size_t i = 0; i < idx.size(); ++i)
        if (static_cast<int>(i % folds) == f) {
          const auto& o = held.rows[idx[i]];
          own[idx[i]] = ff.step(*o.graph, o.batch, o.workers, o.nodes, hw);
        }
    }
    row.mre["paleo-fit (own rows, cv)"] = mre(own, truth);
    rep.traces.push_back(std::move(row));
  }
  return rep;
}

std::string format_cross_model(const CrossModelReport& r) {
  std::string s = "step time of a network never profiled: trained on the other traces' placements.csv, scored on "
                  "this one's (MRE)\n";
  s += fmt::format("{:<12} {:<16} {:>5}", "trace", "network", "rows");
  for (const auto& m : r.methods) s += fmt::format(" {:>{}}", m, std::max<size_t>(9, m.size()));
  s += "\n";
  for (const auto& t : r.traces) {
    s += fmt::format("{:<12} {:<16} {:>5}", t.trace, t.network, t.rows);
    for (const auto& m : r.methods) s += fmt::format(" {:>{}.1f}%", 100 * t.mre.at(m), std::max<size_t>(9, m.size()) - 1);
    s += "\n";
  }
  for (const auto& k : r.skipped) s += "skipped: " + k + "\n";
  s += "paleo-fit (own rows, cv) needs the network profiled; the others have never seen it.\n";
  return s;
}

std::string cross_model_json(const CrossModelReport& r) {
  nlohmann::json j;
  j["methods"] = r.methods;
  j["skipped"] = r.skipped;
  for (const auto& t : r.traces) {
    nlohmann::json m;
    for (const auto& [k, v] : t.mre) m[k] = v;
    j["traces"][t.trace] = {{"network", t.network}, {"rows", t.rows}, {"mre", m}};
  }
  return io::json_text(j);
}

}  // namespace trainplan::scoring
