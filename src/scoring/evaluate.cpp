#include "scoring/evaluate.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "core/cancel.h"
#include "models/time_config_key.h"
#include "scoring/mre.h"

namespace trainplan::scoring {

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

// Held-out (truth, prediction) pairs of each fit-and-predict in `fps` over
// the configuration folds of `data` (config_kfold), in fold order. The folds
// and each fold's training and test sets are made once for all of them. The
// (fold, fit) pairs are independent fits of fresh models, so they run on the
// machine's cores; each result lands in its own slot and is read in fold
// order, so the outcome does not depend on the schedule. An entry whose fit
// or prediction throws keeps the message of its first failing fold instead
// of points.
struct CvOutcome {
  std::vector<std::pair<double, double>> points;
  std::optional<std::string> error;
};
std::vector<CvOutcome> cross_validate(const std::vector<FitPredict>& fps, const Truth& truth, const SampleSet& data,
                                      int k, uint64_t seed) {
  const std::vector<std::vector<size_t>> folds = config_kfold(data, k, seed);
  std::vector<SampleSet> train_sets, tests;
  std::vector<std::vector<double>> t;
  std::vector<char> held(data.size());
  for (const auto& fold : folds) {
    std::fill(held.begin(), held.end(), 0);
    for (size_t i : fold) held[i] = 1;
    std::vector<size_t> train;
    for (size_t i = 0; i < data.size(); ++i)
      if (!held[i]) train.push_back(i);
    train_sets.push_back(subset(data, train));
    tests.push_back(subset(data, fold));
    t.push_back(truths(tests.back(), truth));
  }
  struct Slot {
    std::vector<double> pred;
    std::optional<std::string> error;
  };
  const size_t nf = folds.size(), tasks = nf * fps.size();
  std::vector<Slot> slots(tasks);  // task = model * nf + fold
  std::atomic<size_t> next{0};
  // The caller's cancellation reaches every worker: each opens a scope with
  // the caller's deadline and stop flag, and the first Cancelled stops them
  // all and is rethrown here once they have joined.
  const CancelScope* caller = CancelScope::current();
  std::atomic<bool> cancelled{false};
  std::optional<Cancelled> why;
  std::mutex why_mutex;
  auto work = [&] {
    std::optional<CancelScope> scope;
    if (caller) scope.emplace(caller->deadline(), caller->stop(), caller->abandoned());
    for (size_t task; !cancelled && (task = next++) < tasks;) {
      const size_t m = task / nf, f = task % nf;
      try {
        check_cancelled();
        slots[task].pred = fps[m](train_sets[f], tests[f], nullptr);
      } catch (const std::exception& e) {
        slots[task].error = e.what();
      } catch (const Cancelled& c) {
        std::lock_guard<std::mutex> lock(why_mutex);
        if (!why) why = c;
        cancelled = true;
      }
    }
  };
  const size_t n_threads = std::min<size_t>(tasks, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < n_threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (why) throw *why;

  std::vector<CvOutcome> out(fps.size());
  for (size_t m = 0; m < fps.size(); ++m)
    for (size_t f = 0; f < nf && !out[m].error; ++f) {
      const Slot& s = slots[m * nf + f];
      if (s.error) {
        out[m].error = s.error;
        out[m].points.clear();
        break;
      }
      for (size_t i = 0; i < s.pred.size(); ++i) out[m].points.push_back({t[f][i], s.pred[i]});
    }
  return out;
}

double points_mre(const std::vector<std::pair<double, double>>& pts) {
  std::vector<double> pred, truth;
  for (const auto& [t, p] : pts) truth.push_back(t), pred.push_back(p);
  return mre(pred, truth);
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
  if (const size_t m = distinct_configs(data); m < static_cast<size_t>(k)) {
    p.notes.push_back(fmt::format("cv: {} configurations are fewer than {} folds", m, k));
  } else {
    CvOutcome cv = std::move(cross_validate({fp}, truth, data, k, opts.seed).front());
    if (cv.error) {
      p.notes.push_back("cv: " + *cv.error);
    } else {
      p.cv_mre = guarded(p, "cv", [&] { return points_mre(cv.points); });
      if (p.cv_mre) p.cv_points = std::move(cv.points);
    }
  }

  if (opts.cv_only) return;
  // Extrapolation in workers: multi-node samples at distinct node counts
  // (from `trials` when given), on full nodes and on one GPU per node.
  WorkersSplitRule rule = opts.workers_rule;
  auto workers_score = [&](const char* what, const char* column, const std::vector<size_t>& train_idx,
                           const SampleSet* extra) {
    SampleSet train = subset(data, train_idx);
    if (extra) train.samples.insert(train.samples.end(), extra->samples.begin(), extra->samples.end());
    SampleSet test = workers_pool ? subset(*workers_pool, workers_test(*workers_pool, {}, rule))
                                  : subset(data, workers_test(data, train_idx, rule));
    // The trials fitted on are configurations of the same pool: not scored as held out.
    if (extra) {
      std::set<models::TimeConfigKey> fitted;
      for (const auto& x : extra->samples) fitted.insert(models::time_config_key(x));
      std::erase_if(test.samples, [&](const Sample& x) { return fitted.count(models::time_config_key(x)) > 0; });
    }
    std::optional<double> out;
    if (test.empty())
      p.not_applicable[column] = fmt::format("no sample has {}..{} workers to test on{}", rule.test_min_workers,
                                             rule.test_max_workers,
                                             extra && !extra->empty() ? " but the trials fitted on" : "");
    else if (train.empty())
      p.notes.push_back(fmt::format("{}: {} training samples (workers <= {}), {} test samples ({}..{} workers)", what,
                                    train.size(), rule.max_train_workers, test.size(), rule.test_min_workers,
                                    rule.test_max_workers));
    else
      out = guarded(p, what, [&] { return mre(fp(train, test, nullptr), truths(test, truth)); });
    return out;
  };
  rule.trial_shape = TrialShape::kFullNodes;
  if (trials)
    p.workers_mre = workers_score("workers extrapolation", "x-workers", single_node_train(data, rule), &*trials);
  else
    p.workers_mre = workers_score("workers extrapolation", "x-workers", workers_train(data, rule), nullptr);
  rule.trial_shape = TrialShape::kOnePerNode;
  if (trials_1pn)
    p.workers_1pn_mre =
        workers_score("workers extrapolation (one GPU per node)", "x-w-1pn", single_node_train(data, rule), &*trials_1pn);
  else
    p.workers_1pn_mre =
        workers_score("workers extrapolation (one GPU per node)", "x-w-1pn", workers_train(data, rule), nullptr);
  // Extrapolation in batch.
  {
    Split sp = batch_split(data);
    if (sp.train.empty() || sp.test.empty())
      p.not_applicable["x-batch"] = "fewer than two distinct batches";
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

std::vector<std::optional<double>> parts_cv_mre(const std::vector<std::string>& names, ModelPart part,
                                                const SampleSet& samples, EvalOptions opts,
                                                const models::ModelParams& params) {
  std::vector<std::optional<double>> out(names.size());
  std::vector<FitPredict> fps;
  std::vector<size_t> which;  // the names with the part, in order
  for (size_t n = 0; n < names.size(); ++n) {
    const models::ModelEntry& e = models::ModelRegistry::instance().get(names[n]);
    if (part == ModelPart::kTime && e.make_time) {
      fps.push_back([make = e.make_time, &params](const SampleSet& train, const SampleSet& test, FitInfo*) {
        auto m = make(params);
        m->fit(train);
        std::vector<double> pr;
        for (const auto& x : test.samples) pr.push_back(m->predict(x.batch, x.workers, x.nodes));
        return pr;
      });
      which.push_back(n);
    } else if (part == ModelPart::kMetric && e.make_metric) {
      fps.push_back([make = e.make_metric, &params](const SampleSet& train, const SampleSet& test, FitInfo*) {
        auto m = make(params);
        m->fit(train);
        std::vector<double> pr;
        for (const auto& x : test.samples) pr.push_back(m->predict(x.batch, x.workers, x.epochs));
        return pr;
      });
      which.push_back(n);
    }
  }
  if (fps.empty()) return out;
  const SampleSet d = part == ModelPart::kTime ? distinct_time_configs(samples) : metric_samples(samples);
  opts.cv_folds = cv_folds_for(distinct_configs(d), opts.cv_folds);
  if (d.empty() || opts.cv_folds < 2 || distinct_configs(d) < static_cast<size_t>(opts.cv_folds)) return out;
  const Truth truth = part == ModelPart::kTime ? Truth([](const Sample& x) { return x.epoch_time_s; })
                                               : Truth([](const Sample& x) { return *x.metric; });
  const std::vector<CvOutcome> cv = cross_validate(fps, truth, d, opts.cv_folds, opts.seed);
  for (size_t m = 0; m < cv.size(); ++m) {
    if (cv[m].error) continue;
    try {
      out[which[m]] = points_mre(cv[m].points);
    } catch (const std::exception&) {
    }
  }
  return out;
}

size_t part_configs(ModelPart part, const SampleSet& samples) {
  return distinct_configs(part == ModelPart::kTime ? distinct_time_configs(samples) : metric_samples(samples));
}

std::string cv_name(int folds, int requested) {
  if (folds < 2) return fmt::format("none: {} configuration{}", folds, folds == 1 ? "" : "s");
  return requested == kFoldsAuto && folds != 5 ? fmt::format("leave-one-out over {} configurations", folds)
                                               : fmt::format("{}-fold", folds);
}

int cv_folds_for(size_t configs, int requested) {
  if (requested != kFoldsAuto) return requested;
  return configs < kLeaveOneOutBelow ? static_cast<int>(configs) : 5;
}

std::optional<double> part_cv_mre(const std::string& name, ModelPart part, const SampleSet& samples,
                                  EvalOptions opts, const models::ModelParams& params) {
  return parts_cv_mre({name}, part, samples, opts, params).front();
}

}  // namespace trainplan::scoring
