#include "scoring/datasets.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/error.h"
#include "scoring/mre.h"
#include "scoring/oracle_trials.h"
#include "scoring/splits.h"
#include "io/pollux_trace.h"
#include "profile/samples_file.h"
#include "replay/comm_calibration.h"
#include "replay/replay_oracle.h"
#include "replay/sampler.h"

namespace trainplan::scoring {
namespace {

std::string time_configs_note(const SampleSet& s) {
  return fmt::format("{} samples ({} distinct time configurations, {} with a metric)", s.size(),
                     distinct_time_configs(s).size(), s.with_metric().size());
}

std::string trials_note(const SampleSet& trials) {
  std::string out;
  for (const auto& t : trials.samples)
    out += fmt::format("{}{} at b={:g}", out.empty() ? "" : ", ", replay::ReplayOracle::placement_for(t.workers, t.nodes),
                       t.batch);
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<EvalData> datasets_from_sample_files(const std::vector<std::string>& paths,
                                                std::vector<std::string>& descriptions) {
  std::vector<EvalData> out;
  for (const auto& path : paths) {
    EvalData d;
    d.samples = profile::read_samples(path);
    d.samples.check_declared_metric_range("metric_range");  // a range its own samples contradict is a mistake
    require_scoreable_metric(d.samples);  // an all-zero metric: no relative error to score, said as fit says it
    d.name = std::filesystem::path(path).stem().string();
    for (const auto& prev : out)
      if (prev.name == d.name) d.name = path;  // two files with one stem: use the path
    descriptions.push_back(time_configs_note(d.samples) + " from " + path);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<EvalData> datasets_from_traces(const std::string& dir, const TraceDatasetOptions& a,
                                           std::vector<std::string>& descriptions) {
  std::vector<replay::ReplayOracle> oracles;
  for (const auto& trace_dir : io::list_pollux_traces(dir)) oracles.push_back(replay::ReplayOracle::from_dir(trace_dir));
  std::shared_ptr<const structure::CommProfile> file_profile;
  if (a.comm_profile != "auto" && a.comm_profile != "none")
    file_profile = std::make_shared<structure::CommProfile>(structure::CommProfile::load(a.comm_profile));

  std::vector<EvalData> out;
  for (const auto& oracle : oracles) {
    EvalData d;
    d.name = oracle.name();
    d.samples = replay::draw_samples(oracle, replay::named_plan(a.plan, a.seed)).samples;
    SampleSet wide = replay::draw_samples(oracle, replay::named_plan("wide", a.seed)).samples;
    SampleSet pool = subset(wide, {});
    for (const auto& s : wide.samples)
      if (s.workers >= 8 && s.workers <= 16) pool.samples.push_back(s);
    SampleSet train_grid = subset(d.samples, single_node_train(d.samples));
    WorkersSplitRule one_per_node;
    one_per_node.trial_shape = TrialShape::kOnePerNode;
    d.multi_node_trials = oracle_multi_node_trials(oracle, train_grid, pool);
    d.multi_node_trials_one_per_node = oracle_multi_node_trials(oracle, train_grid, pool, one_per_node);

    std::string profile_note = "none";
    if (file_profile) {
      d.model_params.comm_profile = file_profile;
      profile_note = a.comm_profile;
    } else if (a.comm_profile == "auto") {
      std::vector<const replay::ReplayOracle*> others;
      for (const auto& o : oracles)
        if (o.name() != oracle.name()) others.push_back(&o);
      try {
        if (!others.empty()) {
          auto p = std::make_shared<structure::CommProfile>(replay::comm_profile_from(others));
          profile_note = "leave-one-out, " + p->source;
          d.model_params.comm_profile = std::move(p);
        } else {
          profile_note = "none (no other trace under --data to measure one on)";
        }
      } catch (const InputError& e) {
        profile_note = std::string("none (") + e.message() + ")";
      }
    }
    descriptions.push_back(fmt::format("{} drawn with plan '{}' (seed {}); workers-split test: {} samples with 8..16 workers "
                                       "from plan 'wide'; workers-split multi-node trials: {} (one GPU per node: {}); "
                                       "communication profile: {}",
                                       time_configs_note(d.samples), a.plan, a.seed, pool.size(),
                                       trials_note(*d.multi_node_trials), trials_note(*d.multi_node_trials_one_per_node),
                                       profile_note));
    d.workers_pool = std::move(pool);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace trainplan::scoring
