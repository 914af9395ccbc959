#include "scoring/evaluate.h"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/cancel.h"
#include "scoring/mre.h"

namespace trainplan::scoring {

SampleSet distinct_time_configs(const SampleSet& s) {
  SampleSet out = subset(s, {});
  // First sample of each configuration, in order; its epoch time becomes the
  // epochs-weighted mean over the configuration's samples.
  std::map<std::tuple<double, int, int>, std::pair<size_t, double>> at;  // -> (index in out, sum of epochs)
  for (const auto& x : s.samples) {
    const double w = x.epochs > 0 ? x.epochs : 1.0;
    auto [it, fresh] = at.try_emplace({x.batch, x.workers, x.nodes}, out.samples.size(), w);
    if (fresh) {
      out.samples.push_back(x);
      continue;
    }
    auto& [index, weight] = it->second;
    Sample& kept = out.samples[index];
    if (x.epoch_time_s != kept.epoch_time_s)  // equal times stay bit-exact
      kept.epoch_time_s = (kept.epoch_time_s * weight + x.epoch_time_s * w) / (weight + w);
    weight += w;
  }
  return out;
}

namespace {

// What one fit-and-predict reports besides predictions (for the full fit only).
struct FitInfo {
  std::string describe;
  double fit_ms = 0;
};
// Fits a fresh model on `train` and predicts each sample of `test`.
using FitPredict = std::function<std::vector<double>(const SampleSet& train, const SampleSet& test, FitInfo* info)>;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
using Truth = std::function<double(const Sample&)>;

std::vector<double> truths(const SampleSet& s, const Truth& truth) {
  std::vector<double> t;
  for (const auto& x : s.samples) t.push_back(truth(x));
  return t;
}

// Runs `f`, turning a throw into a note that starts with `what`.
template <class F>
std::optional<double> guarded(PartScore& p, const std::string& what, F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    p.notes.push_back(what + ": " + e.what());
    return std::nullopt;
  }
}

void score_part(PartScore& p, const FitPredict& fp, const Truth& truth, const SampleSet& data,
                const std::optional<SampleSet>& workers_pool, const std::optional<SampleSet>& trials,
                const std::optional<SampleSet>& trials_1pn, const EvalOptions& opts) {
  p.n_samples = data.size();
  if (!opts.cv_only) p.in_sample_mre = guarded(p, "in-sample", [&] {
    FitInfo info;
    auto pred = fp(data, data, &info);
    p.fit_ms = info.fit_ms;
    p.describe = info.describe;
    return mre(pred, truths(data, truth));
  });

  int k = opts.cv_folds;
  if (data.size() < static_cast<size_t>(k)) {
    p.notes.push_back(fmt::format("cv: {} samples are fewer than {} folds", data.size(), k));
  } else {
    p.cv_mre = guarded(p, "cv", [&] {
      std::vector<double> pred, truth_all;
      for (const auto& fold : kfold(data.size(), k, opts.seed)) {
        check_cancelled();
        std::set<size_t> held(fold.begin(), fold.end());
        std::vector<size_t> train;
        for (size_t i = 0; i < data.size(); ++i)
          if (!held.count(i)) train.push_back(i);
        SampleSet test = subset(data, fold);
        auto pr = fp(subset(data, train), test, nullptr);
        pred.insert(pred.end(), pr.begin(), pr.end());
        auto tr = truths(test, truth);
        truth_all.insert(truth_all.end(), tr.begin(), tr.end());
      }
      double score = mre(pred, truth_all);
      for (size_t i = 0; i < pred.size(); ++i) p.cv_points.push_back({truth_all[i], pred[i]});
      return score;
    });
  }

  if (opts.cv_only) return;
  // Extrapolation in workers: multi-node samples at distinct node counts
  // (from `trials` when given), on full nodes and on one GPU per node.
  WorkersSplitRule rule = opts.workers_rule;
  auto workers_score = [&](const char* what, const std::vector<size_t>& train_idx, const SampleSet* extra) {
    SampleSet train = subset(data, train_idx);
    if (extra) train.samples.insert(train.samples.end(), extra->samples.begin(), extra->samples.end());
    SampleSet test = workers_pool ? subset(*workers_pool, workers_test(*workers_pool, {}, rule))
                                  : subset(data, workers_test(data, train_idx, rule));
    std::optional<double> out;
    if (train.empty() || test.empty())
      p.notes.push_back(fmt::format("{}: {} training samples (workers <= {}), {} test samples ({}..{} workers)", what,
                                    train.size(), rule.max_train_workers, test.size(), rule.test_min_workers,
                                    rule.test_max_workers));
    else
      out = guarded(p, what, [&] { return mre(fp(train, test, nullptr), truths(test, truth)); });
    return out;
  };
  rule.trial_shape = TrialShape::kFullNodes;
  if (trials)
    p.workers_mre = workers_score("workers extrapolation", single_node_train(data, rule), &*trials);
  else
    p.workers_mre = workers_score("workers extrapolation", workers_train(data, rule), nullptr);
  rule.trial_shape = TrialShape::kOnePerNode;
  if (trials_1pn)
    p.workers_1pn_mre = workers_score("workers extrapolation (one GPU per node)", single_node_train(data, rule), &*trials_1pn);
  else
    p.workers_1pn_mre = workers_score("workers extrapolation (one GPU per node)", workers_train(data, rule), nullptr);
  // Extrapolation in batch.
  {
    Split sp = batch_split(data);
    if (sp.train.empty() || sp.test.empty())
      p.notes.push_back("batch extrapolation: fewer than two distinct batches");
    else
      p.batch_mre = guarded(p, "batch extrapolation", [&] {
        SampleSet test = subset(data, sp.test);
        return mre(fp(subset(data, sp.train), test, nullptr), truths(test, truth));
      });
  }
}

SampleSet metric_samples(const SampleSet& s) {
  SampleSet out = subset(s, {});
  out.samples = s.with_metric();
  return out;
}

}  // namespace

ModelScore evaluate_model(const models::ModelEntry& entry, const EvalData& data, const EvalOptions& opts) {
  ModelScore r;
  r.model = entry.name;

  r.time.has_part = static_cast<bool>(entry.make_time);
  if (!r.time.has_part) {
    r.time.notes.push_back("model has no epoch-time part");
  } else {
    SampleSet d = distinct_time_configs(data.samples);
    r.time.has_data = !d.empty();
    std::optional<SampleSet> pool;
    if (data.workers_pool) pool = distinct_time_configs(*data.workers_pool);
    FitPredict fp = [&](const SampleSet& train, const SampleSet& test, FitInfo* info) {
      auto m = entry.make_time(data.model_params);
      auto t0 = std::chrono::steady_clock::now();
      m->fit(train);
      if (info) info->fit_ms = ms_since(t0), info->describe = m->describe();
      std::vector<double> out;
      for (const auto& x : test.samples) out.push_back(m->predict(x.batch, x.workers, x.nodes));
      return out;
    };
    if (r.time.has_data)
      score_part(r.time, fp, [](const Sample& x) { return x.epoch_time_s; }, d, pool, data.multi_node_trials,
                 data.multi_node_trials_one_per_node, opts);
    else
      r.time.notes.push_back("no samples");
  }

  r.metric.has_part = static_cast<bool>(entry.make_metric);
  if (!r.metric.has_part) {
    r.metric.notes.push_back("model has no metric part");
  } else {
    SampleSet d = metric_samples(data.samples);
    r.metric.has_data = !d.empty();
    std::optional<SampleSet> pool;
    if (data.workers_pool) pool = metric_samples(*data.workers_pool);
    FitPredict fp = [&](const SampleSet& train, const SampleSet& test, FitInfo* info) {
      auto m = entry.make_metric(data.model_params);
      auto t0 = std::chrono::steady_clock::now();
      m->fit(train);
      if (info) info->fit_ms = ms_since(t0), info->describe = m->describe();
      std::vector<double> out;
      for (const auto& x : test.samples) out.push_back(m->predict(x.batch, x.workers, x.epochs));
      return out;
    };
    if (r.metric.has_data)
      score_part(r.metric, fp, [](const Sample& x) { return *x.metric; }, d, pool, std::nullopt, std::nullopt, opts);
    else
      r.metric.notes.push_back("no data: no sample carries a metric");
  }
  return r;
}

std::optional<double> part_cv_mre(const std::string& name, ModelPart part, const SampleSet& samples,
                                  EvalOptions opts, const models::ModelParams& params) {
  models::ModelEntry e = models::ModelRegistry::instance().get(name);
  if (part == ModelPart::kTime) e.make_metric = nullptr;
  else e.make_time = nullptr;
  opts.cv_only = true;
  EvalData data;
  data.name = name;
  data.samples = samples;
  data.model_params = params;
  auto sc = evaluate_model(e, data, opts);
  return part == ModelPart::kTime ? sc.time.cv_mre : sc.metric.cv_mre;
}

}  // namespace trainplan::scoring
