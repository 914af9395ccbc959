#include "core/median.h"
#include "scoring/transfer_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/whole_file.h"
#include "io/csv.h"
#include "io/pollux_trace.h"
#include "models/transfer_split.h"
#include "replay/replay_oracle.h"
#include "structure/network_zoo.h"

namespace fs = std::filesystem;

namespace trainplan::scoring {

namespace {

// Network name -> trace folder, for one side.
std::map<std::string, std::string> traces_of(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& d : io::list_pollux_traces(root)) {
    out[io::pollux_trace_name(d)] = d;
  }
  return out;
}

// The model's parts (with its fitted factors), averaged over `rows`.
MeanParts mean_parts(const models::SplitTransferModel& m, const std::vector<models::StepSample>& rows) {
  MeanParts s;
  if (rows.empty()) return s;
  for (const auto& r : rows) {
    auto p = m.target_parts(r);
    s.host += p.host, s.gpu_fixed += p.gpu_fixed, s.compute += p.compute, s.memory += p.memory;
    s.exposed_comm += p.exposed_comm, s.total += p.total;
  }
  double n = static_cast<double>(rows.size());
  s.host /= n, s.gpu_fixed /= n, s.compute /= n, s.memory /= n, s.exposed_comm /= n, s.total /= n;
  return s;
}

nlohmann::json parts_json(const MeanParts& p) {
  auto share = [&](double v) { return p.total > 0 ? v / p.total : 0.0; };
  return {{"host_s", p.host},
          {"gpu_fixed_s", p.gpu_fixed},
          {"compute_s", p.compute},
          {"memory_s", p.memory},
          {"exposed_comm_s", p.exposed_comm},
          {"step_s", p.total},
          {"shares_of_step",
           {{"host", share(p.host)},
            {"gpu", share(p.gpu_fixed + p.compute + p.memory)},
            {"exposed_comm", share(p.exposed_comm)}}}};
}

nlohmann::json source_json(const models::SplitSourceFit& s) {
  return {{"host_s", s.host_s},
          {"host_seen", s.host_seen},
          {"host_contention_per_gpu", s.contention},
          {"gpu_step_s", s.gpu_step_s},
          {"gpu_example_s", s.gpu_example_s},
          {"host_gpu_overlap_p", s.host_overlap},
          {"intra_latency_s", s.intra_latency_s},
          {"intra_per_ring_s", s.intra_s},
          {"inter_latency_s", s.inter_latency_s},
          {"inter_per_ring_s", s.inter_s},
          {"inter_per_gpu_on_node", s.inter_per_gpu},
          {"comm_overlap_g", s.comm_overlap},
          {"intra_measured", s.intra_measured},
          {"inter_measured", s.inter_measured},
          {"in_sample_mre", s.in_sample_mre},
          {"rms_log_residual", s.rms_log_residual},
          {"batch_quirk_weight", s.batch_quirk_weight},
          {"host_preferred", s.host_preferred},
          {"rows", s.rows}};
}


// The part whose mean over the predicted rows the trials moved most (in
// seconds), when any moved by more than 2% of the step: "host", "gpu_step",
// "gpu_example" or "comm" (the exposed all-reduce), with after / before.
std::pair<std::string, double> largest_correction(const MeanParts& before, const MeanParts& after) {
  std::pair<std::string, double> best{"none", 1};
  double most = 0.02 * before.total;
  const std::pair<std::string, std::pair<double, double>> parts[] = {
      {"host", {before.host, after.host}},
      {"gpu_step", {before.gpu_fixed, after.gpu_fixed}},
      {"gpu_example", {before.compute + before.memory, after.compute + after.memory}},
      {"comm", {before.exposed_comm, after.exposed_comm}}};
  for (const auto& [name, v] : parts)
    if (std::abs(v.second - v.first) > most)
      most = std::abs(v.second - v.first), best = {name, v.first > 0 ? v.second / v.first : INFINITY};
  return best;
}

std::string pct(double v) { return std::isfinite(v) ? fmt::format("{:.1f}%", 100 * v) : "-"; }

}  // namespace

nlohmann::json ratios_json(const models::SplitRatios& r) {
  return {{"per_example_gpu", r.per_example},
          {"per_step_gpu", r.per_step},
          {"per_step_streaming_share", r.step_streaming_share},
          {"matrix_peak", r.compute},
          {"memory_bandwidth", r.memory},
          {"intra_node_link", r.intra_link},
          {"inter_node_link", r.inter_link},
          {"inter_node_link_assumed", r.inter_link_assumed},
          // The source's all-reduce as a share of its links' bandwidth (null: no layer graph), and
          // whether the target's is held at what its own links allow (SplitTransferParams::least_link_efficiency).
          {"source_intra_node_link_efficiency",
           r.source_intra_efficiency > 0 ? nlohmann::json(r.source_intra_efficiency) : nlohmann::json(nullptr)},
          {"source_inter_node_link_efficiency",
           r.source_inter_efficiency > 0 ? nlohmann::json(r.source_inter_efficiency) : nlohmann::json(nullptr)},
          {"intra_node_link_held", r.intra_link_held},
          {"inter_node_link_held", r.inter_link_held},
          {"compute_bound_share_source", r.compute_share_source},
          {"compute_bound_share_target", r.compute_share_target},
          {"precision", models::to_string(r.precision)},
          {"target_precision", models::to_string(r.target_precision)},
          {"precision_reason", r.precision_reason}};
}

std::vector<size_t> trial_order(size_t rows, uint64_t seed) {
  std::vector<size_t> idx(rows);
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  return idx;
}

std::vector<models::StepSample> trace_samples(const std::string& dir, bool with_scalability) {
  // Step times alone: the learning curves are not read, and a trace that did not time the
  // synchronisation is taken without it (the transfer fits such rows as profiling samples).
  io::PolluxTrace tr = io::read_pollux_trace(dir, {.curves = false, .sync_optional = true});
  std::vector<models::StepSample> out;
  for (const auto& r : tr.placements)
    out.push_back(models::step_sample(r.placement, r.local_bsz, r.step_time,
                                      r.sync_known ? std::optional<double>(r.sync_time) : std::nullopt));
  if (with_scalability)
    for (const auto& r : tr.scalability) {
      if (r.num_replicas < r.num_nodes) continue;  // a node without a GPU is no placement
      std::string p = replay::ReplayOracle::placement_for(r.num_replicas, r.num_nodes);
      models::StepSample s;
      for (char c : p) s.gpus_per_node.push_back(c - '0');
      // placement_for writes digits; a node of more than 9 GPUs is spread evenly by hand.
      if (s.gpus() != r.num_replicas) {
        s.gpus_per_node.assign(r.num_nodes, r.num_replicas / r.num_nodes);
        for (int i = 0; i < r.num_replicas % r.num_nodes; ++i) s.gpus_per_node[i]++;
      }
      s.batch = r.local_bsz, s.step_s = r.step_time;
      if (r.sync_known) s.sync_s = r.sync_time;
      out.push_back(s);
    }
  return out;
}

TransferReport evaluate_transfer(const TransferEvalOptions& opts) {
  TransferReport rep;
  rep.options = opts;
  auto& reg = models::TransferRegistry::instance();
  if (opts.methods.empty())
    for (const auto* e : reg.all()) rep.methods.push_back(e->name);
  else
    for (const auto& m : opts.methods) rep.methods.push_back(reg.get(m).name);
  if (opts.target_trials < 0) throw InputError("", 0, "--target-trials", "must be >= 0");
  if (opts.seeds.empty()) throw InputError("", 0, "--seeds", "no seed given");
  // The baselines that need trials (models/transfer_baselines.h) are the datasheet ratio without them.
  auto has = [&](const char* m) { return std::find(rep.methods.begin(), rep.methods.end(), m) != rep.methods.end(); };
  if (opts.target_trials < 1 && has("scale-through-trials"))
    rep.warnings.push_back("scale-through-trials needs a target trial: with none it is datasheet-ratio");
  if (opts.target_trials < 2 && has("line-through-trials"))
    rep.warnings.push_back(fmt::format("line-through-trials needs 2 target trials: with {} it is datasheet-ratio",
                                       opts.target_trials));

  // Pair the networks: by folder name, or the two folders themselves.
  std::vector<std::pair<std::string, std::string>> pairs;  // (from, to)
  // The folder under `root` of the network `name` names (any case, '-', '_' or spaces), or "".
  auto folder_named = [](const std::string& root, const std::string& name) {
    std::error_code ec;
    const std::string key = structure::network_name_key(name);
    for (const auto& entry : fs::directory_iterator(root, ec))
      if (entry.is_directory() && structure::network_name_key(entry.path().filename().string()) == key)
        return entry.path().string();
    return std::string();
  };
  bool from_one = fs::exists(fs::path(opts.from) / "placements.csv");
  bool to_one = fs::exists(fs::path(opts.to) / "placements.csv");
  if (from_one || to_one) {
    // One network's trace on one side and a folder of them on the other: that network's folder there.
    std::string from = opts.from, to = opts.to;
    if (!from_one) from = folder_named(opts.from, io::pollux_trace_name(opts.to));
    if (!to_one) to = folder_named(opts.to, io::pollux_trace_name(opts.from));
    if (from.empty())
      throw InputError((fs::path(opts.from) / "placements.csv").string(), 0, "",
                       "missing: --to is " + io::pollux_trace_name(opts.to) +
                           "'s trace, and --from is neither a trace (placements.csv) "
                           "nor a folder holding one of that network's name");
    if (to.empty())
      throw InputError((fs::path(opts.to) / "placements.csv").string(), 0, "",
                       "missing: --from is " + io::pollux_trace_name(opts.from) +
                           "'s trace, and --to is neither a trace (placements.csv) "
                           "nor a folder holding one of that network's name");
    pairs.push_back({from, to});
    // The folders' names are the pairing's only evidence; two different networks of the zoo are likely a mistake.
    const std::string a = io::pollux_trace_name(from), b = io::pollux_trace_name(to);
    const auto* na = structure::find_network(a);
    const auto* nb = structure::find_network(b);
    if (na && nb && na != nb)  // two names of one network (an alias) are no mistake
      rep.warnings.push_back(fmt::format("--from is {}'s trace and --to {}'s: a step time moves between GPUs for one "
                                         "network, not between networks",
                                         a, b));
  } else {
    if (!opts.network.empty())
      throw InputError("", 0, "--network", "names one network's graph: give --from and --to as one network's trace folders");
    // Paired by the folders' names in any case, with or without '-', '_' or spaces: "CIFAR-10" on one side
    // and "cifar10" on the other are one network's traces.
    auto by_key = [](const std::string& root) {
      std::map<std::string, std::string> keyed;  // key -> folder
      std::map<std::string, std::string> named;  // key -> the folder's name
      for (const auto& [name, dir] : traces_of(root)) {
        const std::string key = structure::network_name_key(name);
        if (named.count(key))
          throw InputError(dir, 0, "", "this folder and " + named[key] + " beside it name one network: keep one");
        keyed[key] = dir, named[key] = name;
      }
      return std::pair{keyed, named};
    };
    auto [a, a_names] = by_key(opts.from);
    auto [b, b_names] = by_key(opts.to);
    // A network's folder on the other side that is no trace (no placements.csv) is a broken
    // copy, not a network left out: paired, so that reading it names what is missing, and then
    // skipped as unreadable while the others are scored.
    for (const auto& [key, dir] : a)
      if (b.count(key)) pairs.push_back({dir, b[key]});
      else if (auto broken = folder_named(opts.to, a_names[key]); !broken.empty()) pairs.push_back({dir, broken});
      else rep.skipped.push_back(a_names[key] + ": only under " + opts.from);
    for (const auto& [key, dir] : b)
      if (a.count(key)) continue;
      else if (auto broken = folder_named(opts.from, b_names[key]); !broken.empty()) pairs.push_back({broken, dir});
      else rep.skipped.push_back(b_names[key] + ": only under " + opts.to);
    if (pairs.empty())
      throw InputError(opts.to, 0, "", "no network's trace folder is under both " + opts.from + " and " + opts.to);
  }

  // A pair whose two folders are one (--from a folder of networks and --to
  // one of them, or a link to it): every --to row would also be fitted on.
  for (const auto& [from_dir, to_dir] : pairs)
    if (std::error_code same; fs::equivalent(from_dir, to_dir, same) && !same)
      throw InputError("", 0, "--to",
                       fmt::format("{} is the --from trace {}: a transfer is scored on another GPU's traces", to_dir,
                                   from_dir));
  // Written whole at the end (write_whole_file), so a failed run leaves no half file.
  std::ostringstream rows_out;
  const bool keep_rows = !opts.rows_out.empty();
  if (keep_rows) rows_out << "network,method,seed,placement,local_bsz,step_time,predicted\n";
  std::optional<InputError> too_short;  // the first trace with no row left past the trials
  size_t pair_index = 0;
  for (const auto& [from_dir, to_dir] : pairs) {
    NetworkTransfer nt;
    nt.network = io::pollux_trace_name(to_dir);
    if (opts.progress) opts.progress(fmt::format("network {}/{} {}", ++pair_index, pairs.size(), nt.network));
    nt.from_dir = from_dir, nt.to_dir = to_dir;
    // A network whose trace cannot be read is named and left out; the others are scored.
    std::vector<models::StepSample> source, target;
    try {
      source = trace_samples(from_dir, true);
      target = trace_samples(to_dir, false);
    } catch (const InputError& e) {
      rep.unreadable.push_back(e);
      rep.skipped.push_back(nt.network + ": " + e.what());
      continue;
    }
    nt.source_rows = source.size(), nt.target_rows = target.size();
    for (const auto& w : {models::node_size_warning(source, opts.from_hw, from_dir, "--from-gpu"),
                          models::node_size_warning(target, opts.to_hw, to_dir, "--to-gpu")})
      if (!w.empty()) rep.warnings.push_back(w);
    if (static_cast<size_t>(opts.target_trials) >= target.size()) {
      // One short trace does not sink the others' scores: it is skipped, saying why, unless it is all there is.
      const std::string why = fmt::format("{} trials leave no row of {} to predict (it has {})", opts.target_trials,
                                          nt.network, target.size());
      if (!too_short) too_short = InputError(to_dir, 0, "--target-trials", why);
      rep.skipped.push_back(nt.network + ": " + why);
      continue;
    }
    const structure::LayerGraph* graph = structure::find_network(fs::path(from_dir).filename().string());
    if (!graph) graph = structure::find_network(nt.network);
    if (!opts.network.empty()) {
      graph = structure::find_network(opts.network);
      if (!graph)
        throw InputError("", 0, "--network", "'" + opts.network + "' is not a network trainplan knows (trainplan network)");
    } else if (!graph) {
      rep.warnings.push_back(fmt::format(
          "{}: no layer graph goes by the folders' names, so the step's compute- and memory-bound shares come from "
          "the trace alone; if it is a network trainplan knows (trainplan network), --network NAME gives its graph",
          nt.network));
    }

    // split-transfer without trials, for the parts before trials (its fit
    // does not depend on the seed).
    const models::TransferProblem untried{source, opts.from_hw, opts.to_hw, {}, graph, opts.precision};
    std::optional<models::SplitTransferModel> prior;
    if (std::find(rep.methods.begin(), rep.methods.end(), "split-transfer") != rep.methods.end()) {
      prior.emplace();
      prior->fit(untried);
    }
    for (uint64_t seed : opts.seeds) {
      const std::vector<size_t> idx = trial_order(target.size(), seed);
      models::TransferProblem prob = untried;
      std::vector<models::StepSample> predicted;
      for (size_t i = 0; i < idx.size(); ++i)
        (i < static_cast<size_t>(opts.target_trials) ? prob.target_trials : predicted).push_back(target[idx[i]]);
      nt.predicted_rows = predicted.size();
      for (const auto& method : rep.methods) {
        auto m = reg.get(method).make();
        m->fit(prob);
        const bool first_seed = seed == opts.seeds.front();
        double num = 0, den = 0;
        size_t inside = 0, with_sd = 0;
        std::vector<double> factors;
        for (const auto& r : predicted) {
          double y = m->predict(r);
          num += std::abs(y - r.step_s), den += r.step_s;
          if (auto sd = m->log_sd(r)) {
            ++with_sd;
            inside += std::abs(std::log(r.step_s / y)) <= kZ80 * *sd;
            factors.push_back(std::exp(kZ80 * *sd));
          }
          if (first_seed) nt.first_seed_points[method].push_back({r.step_s, y});
          if (keep_rows && first_seed)
            rows_out << fmt::format("{},{},{},{},{},{},{}\n", io::csv_field(nt.network), io::csv_field(method), seed,
                                    io::csv_field(r.placement()), r.batch, r.step_s, y);
        }
        if (first_seed && method == opts.headline)
          for (const auto& r : prob.target_trials) nt.first_seed_trials.push_back({r.step_s, m->predict(r)});
        nt.mre[method].push_back(den > 0 ? num / den : NAN);
        if (with_sd > 0) {
          nt.holds80[method].push_back(static_cast<double>(inside) / with_sd);
          nt.factor80[method].push_back(median(factors));
        }
        if (auto* split = dynamic_cast<models::SplitTransferModel*>(m.get())) {
          MeanParts before = mean_parts(*prior, predicted);
          if (!nt.has_split) {
            nt.has_split = true;
            nt.split_source = source_json(split->source_fit());
            nt.split_ratios = ratios_json(split->ratios());
            nt.describe = split->describe();
            nt.prior_parts = before;
          }
          SplitSeedDetail d;
          d.seed = seed;
          const auto& f = split->factors();
          d.host = f.host, d.gpu_step = f.gpu_step, d.gpu_example = f.gpu_example, d.comm = f.comm;
          d.host_base_s = f.host_base_s, d.comm_fitted = f.comm_fitted;
          d.fitted_parts = mean_parts(*split, predicted);
          std::tie(d.corrected, d.correction) = largest_correction(before, d.fitted_parts);
          d.mre = nt.mre[method].back();
          nt.split_seeds.push_back(d);
        }
      }
    }
    rep.networks.push_back(std::move(nt));
  }
  if (rep.networks.empty() && !rep.unreadable.empty()) {
    const InputError& first = rep.unreadable.front();
    if (rep.unreadable.size() == 1) throw first;
    std::vector<std::string> others;
    for (size_t i = 1; i < rep.unreadable.size(); ++i) others.push_back(rep.unreadable[i].what());
    throw InputError(first.file(), first.line(), first.field(),
                     fmt::format("{}; no network is left: also {}", first.message(), fmt::join(others, "; ")));
  }
  if (rep.networks.empty() && too_short) throw *too_short;
  if (keep_rows) write_whole_file(opts.rows_out, rows_out.str());
  return rep;
}

double seed_median(const NetworkTransfer& n, const std::string& method) {
  auto it = n.mre.find(method);
  return it == n.mre.end() ? NAN : median(it->second);
}

double network_median(const TransferReport& r, const std::string& method) {
  std::vector<double> v;
  for (const auto& n : r.networks) v.push_back(seed_median(n, method));
  return median(v);
}

nlohmann::json transfer_json(const TransferReport& r) {
  const auto& o = r.options;
  nlohmann::json j;
  j["from"] = o.from, j["to"] = o.to;
  j["from_gpu"] = o.from_hw.name, j["to_gpu"] = o.to_hw.name;
  j["target_trials"] = o.target_trials;
  j["seeds"] = o.seeds;
  j["method"] = o.headline;
  j["mre_definition"] = "equation 12, sum|pred - true| / sum true over the predicted rows; with several networks, "
                        "\"mre\" is the median over networks (of each network's median over seeds)";
  size_t rows = 0;
  for (const auto& n : r.networks) rows += n.predicted_rows;
  j["mre"] = network_median(r, o.headline);
  j["rows"] = rows;
  nlohmann::json med;
  for (const auto& m : r.methods) med[m] = network_median(r, m);
  j["median_by_method"] = med;
  nlohmann::json nets = nlohmann::json::array();
  for (const auto& n : r.networks) {
    nlohmann::json nj{{"network", n.network},
                      {"from", n.from_dir},
                      {"to", n.to_dir},
                      {"source_rows", n.source_rows},
                      {"target_rows", n.target_rows},
                      {"trials", o.target_trials},
                      {"rows", n.predicted_rows},
                      {"mre", seed_median(n, o.headline)}};
    nlohmann::json ms;
    for (const auto& m : r.methods) {
      const auto& v = n.mre.at(m);
      ms[m] = {{"mre", median(v)},
               {"min", *std::min_element(v.begin(), v.end())},
               {"max", *std::max_element(v.begin(), v.end())},
               {"by_seed", v}};
      if (auto h = n.holds80.find(m); h != n.holds80.end())
        ms[m]["interval_80"] = {{"holds", median(h->second)},
                                {"holds_by_seed", h->second},
                                {"median_factor", median(n.factor80.at(m))},
                                {"definition",
                                 "share of the predicted rows whose measured step lies within the prediction "
                                 "times and divided by exp(1.2816 sd), median over seeds; median_factor is that "
                                 "factor at the median row"}};
    }
    nj["methods"] = ms;
    if (n.has_split) {
      nlohmann::json seeds = nlohmann::json::array();
      for (const auto& d : n.split_seeds)
        seeds.push_back({{"seed", d.seed},
                         {"mre", d.mre},
                         {"factors",
                          {{"host", d.host}, {"gpu_step", d.gpu_step}, {"gpu_example", d.gpu_example}, {"comm", d.comm}}},
                         {"host_base_s", d.host_base_s},
                         {"comm_fitted", d.comm_fitted},
                         {"corrected", d.corrected},
                         {"correction", d.correction},
                         {"parts_after_trials", parts_json(d.fitted_parts)}});
      nj["parts"] = {{"source_fit", n.split_source},
                     {"ratios", n.split_ratios},
                     {"before_trials", parts_json(n.prior_parts)},
                     {"trials_by_seed", seeds}};
    }
    nets.push_back(nj);
  }
  j["networks"] = nets;
  j["skipped"] = r.skipped;
  j["warnings"] = r.warnings;
  return j;
}

std::string format_transfer(const TransferReport& r) {
  const auto& o = r.options;
  std::string out = fmt::format("transfer {} ({}) -> {} ({}), {} target trial(s), seed{} {}\n", o.from, o.from_hw.name,
                                o.to, o.to_hw.name, o.target_trials, o.seeds.size() > 1 ? "s" : "",
                                fmt::join(o.seeds, ","));
  out += "MRE (equation 12) over the target rows not used as trials";
  out += o.seeds.size() > 1 ? "; median over seeds (min-max)\n\n" : "\n\n";
  auto cell = [&](const NetworkTransfer& n, const std::string& m) {
    const auto& v = n.mre.at(m);
    std::string s = pct(median(v));
    if (v.size() > 1)
      s += fmt::format(" ({:.1f}-{:.1f})", 100 * *std::min_element(v.begin(), v.end()),
                       100 * *std::max_element(v.begin(), v.end()));
    return s;
  };
  size_t w = o.seeds.size() > 1 ? 22 : 10;
  for (const auto& m : r.methods) w = std::max(w, m.size());
  out += fmt::format("{:<13}{:>6}", "network", "rows");
  for (const auto& m : r.methods) out += fmt::format("  {:>{}}", m, w);
  bool split = std::find(r.methods.begin(), r.methods.end(), "split-transfer") != r.methods.end();
  if (split) out += "  split-transfer: host/GPU/exposed comm, % of the step before trials (host and GPU overlap) -> trial factors";
  out += "\n";
  for (const auto& n : r.networks) {
    out += fmt::format("{:<13}{:>6}", n.network, n.predicted_rows);
    for (const auto& m : r.methods) out += fmt::format("  {:>{}}", cell(n, m), w);
    if (n.has_split) {
      const auto& p = n.prior_parts;
      auto sh = [&](double v) { return p.total > 0 ? 100 * v / p.total : 0; };
      out += fmt::format("  {:.0f}/{:.0f}/{:.0f}%", sh(p.host), sh(p.gpu_fixed + p.compute + p.memory), sh(p.exposed_comm));
      if (o.target_trials > 0 && !n.split_seeds.empty()) {
        const auto& d = n.split_seeds.front();
        out += fmt::format(" -> host x{:.2f}, GPU step x{:.2f}, example x{:.2f}, comm x{:.2f}; {}", d.host, d.gpu_step,
                           d.gpu_example, d.comm,
                           d.corrected == "none" ? "no part moved by 2% of the step"
                                                 : fmt::format("most: {} x{:.2f}", d.corrected, d.correction));
      }
    }
    out += "\n";
  }
  if (r.networks.size() > 1) {
    out += fmt::format("{:<13}{:>6}", "median", "");
    for (const auto& m : r.methods) out += fmt::format("  {:>{}}", pct(network_median(r, m)), w);
    out += "\n";
  }
  if (split && o.target_trials > 0 && o.seeds.size() > 1)
    out += "(the corrections shown are the first seed's; --json has every seed's)\n";
  for (const auto& m : r.methods) {
    std::vector<std::string> cells;
    std::vector<double> all;
    for (const auto& n : r.networks)
      if (auto h = n.holds80.find(m); h != n.holds80.end()) {
        cells.push_back(fmt::format("{} {:.0f}% (x/{:.2f})", n.network, 100 * median(h->second),
                                    median(n.factor80.at(m))));
        all.push_back(median(h->second));
      }
    if (!cells.empty())
      out += fmt::format("{}'s 80% intervals hold{}: {}{}\n", m, o.seeds.size() > 1 ? " (median over seeds)" : "",
                         fmt::join(cells, ", "),
                         all.size() > 1 ? fmt::format("; median {:.0f}%", 100 * median(all)) : "");
  }
  for (const auto& s : r.skipped) out += "skipped: " + s + "\n";
  for (const auto& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace trainplan::scoring
