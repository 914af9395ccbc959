#include "experiments/plan_benchmark_seeds.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/median.h"

namespace trainplan::experiments {

using json = nlohmann::json;

namespace {

uint64_t parse_seed(const std::string& text, const std::string& whole) {
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  // 0 is a seed like any other, as every --seed option takes it.
  if (text.empty() || used != text.size() || text[0] == '-' || text[0] == '+')
    throw InputError(fmt::format("--seeds: '{}' in '{}' is not a seed (a whole number >= 0)", text, whole));
  return v;
}

}  // namespace

std::vector<uint64_t> parse_seed_list(const std::string& text) {
  constexpr size_t kMaxSeeds = 1000;
  std::vector<uint64_t> out;
  std::set<uint64_t> seen;
  auto add = [&](uint64_t s) {
    if (seen.insert(s).second) out.push_back(s);
    if (out.size() > kMaxSeeds) throw InputError(fmt::format("--seeds: more than {} seeds in '{}'", kMaxSeeds, text));
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(start, comma - start);
    const size_t dash = part.find('-', 1);
    if (dash == std::string::npos) {
      add(parse_seed(part, text));
    } else {
      const uint64_t lo = parse_seed(part.substr(0, dash), text), hi = parse_seed(part.substr(dash + 1), text);
      if (hi < lo) throw InputError(fmt::format("--seeds: the range '{}' in '{}' runs backwards", part, text));
      if (hi - lo >= kMaxSeeds)
        throw InputError(fmt::format("--seeds: more than {} seeds in '{}'", kMaxSeeds, text));
      for (uint64_t s = lo; s <= hi; ++s) add(s);
    }
    start = comma + 1;
  }
  return out;
}

json run_plan_benchmark_seeds(const std::vector<std::string>& trace_dirs, PlanBenchmarkOptions o,
                              const std::vector<uint64_t>& seeds,
                              const std::function<void(const std::string&)>& progress) {
  if (seeds.empty()) throw InputError("--seeds: no seed given");
  json doc;
  doc["seeds"] = seeds;
  doc["runs"] = json::array();
  doc["misses"] = json::array();
  // spec -> method -> every seed's runnable regrets, pooled
  std::map<std::string, std::map<std::string, std::vector<double>>> pooled;
  for (size_t i = 0; i < seeds.size(); ++i) {
    o.seed = seeds[i];
    const std::string tag = fmt::format("[seed {} ({}/{})] ", seeds[i], i + 1, seeds.size());
    json run = run_plan_benchmark(trace_dirs, o, [&](const std::string& line) {
      if (progress) progress(tag + line);
    });
    for (const auto& tn : run.at("trace_names")) {
      const json& trace = run.at("traces").at(tn.get<std::string>());
      const auto& scenarios = trace.at("scenarios");
      for (size_t si = 0; si < scenarios.size(); ++si) {
        const json& sc = scenarios[si];
        for (const auto& [spec, by_method] : sc.at("results").items())
          for (const auto& [method, r] : by_method.items()) {
            if (!r.value("runnable", false)) continue;
            pooled[spec][method].push_back(r.at("regret").get<double>());
            if (r.at("target_ok").get<bool>() && r.at("deadline_ok").get<bool>()) continue;
            doc["misses"].push_back({{"seed", seeds[i]}, {"model", spec}, {"method", method},
                                     {"trace", tn}, {"scenario", si}, {"direction", trace.at("direction")},
                                     {"batch", r.at("batch")}, {"workers", r.at("workers")},
                                     {"epochs", r.at("epochs")}, {"true_metric", r.at("true_metric")},
                                     {"target", sc.at("target")}, {"target_ok", r.at("target_ok")},
                                     {"true_total_time_s", r.at("true_total_time_s")},
                                     {"deadline_s", sc.at("deadline_s")}, {"deadline_ok", r.at("deadline_ok")}});
          }
      }
    }
    doc["runs"].push_back(std::move(run));
  }
  const json& first = doc["runs"][0];
  for (const auto& spec : first.at("models")) {
    for (const auto& method : first.at("methods")) {
      json a = {{"median_regret", json::array()}, {"misses", json::array()}, {"no_plan", json::array()},
                {"ok", json::array()}, {"runs", json::array()}, {"runnable", json::array()}};
      double worst = NAN;
      int misses = 0, runnable_total = 0;
      for (const auto& run : doc["runs"]) {
        const json& s = run.at("summary").at(spec.get<std::string>()).at(method.get<std::string>());
        a["median_regret"].push_back(s.at("median_regret"));
        a["no_plan"].push_back(s.at("no_plan").get<int>() + s.at("unrunnable").get<int>());
        a["ok"].push_back(s.at("ok"));
        a["runs"].push_back(s.at("runs"));
        const int runnable = s.at("runs").get<int>() - s.at("no_plan").get<int>() - s.at("unrunnable").get<int>();
        const int missed = runnable - s.at("ok").get<int>();  // plans that miss the target, the deadline or both
        a["runnable"].push_back(runnable);
        a["misses"].push_back(missed);
        misses += missed;
        runnable_total += runnable;
        if (s.at("median_regret").is_number())
          worst = std::isnan(worst) ? s["median_regret"].get<double>() : std::max(worst, s["median_regret"].get<double>());
      }
      a["worst_median_regret"] = std::isnan(worst) ? json(nullptr) : json(worst);
      a["misses_total"] = misses;
      a["runnable_total"] = runnable_total;
      const auto& all = pooled[spec.get<std::string>()][method.get<std::string>()];
      a["pooled_median_regret"] = all.empty() ? json(nullptr) : json(median(all));
      doc["across_seeds"][spec.get<std::string>()][method.get<std::string>()] = a;
    }
  }
  return doc;
}

std::string format_plan_benchmark_seeds(const json& doc, double regret_limit) {
  const auto seeds = doc.at("seeds").get<std::vector<uint64_t>>();
  const json& first = doc.at("runs").at(0);
  std::string out = fmt::format(
      "co-configuration benchmark across {} seeds ({}); each seed draws its own trials, folds, tabu and baseline "
      "seeds\n",
      seeds.size(), fmt::join(seeds, ", "));
  out += first.at("confidence").is_number()
             ? fmt::format("every method plans at confidence {:g} ({} bounds){}\n", first["confidence"].get<double>(),
                           first.at("bounds").get<std::string>(),
                           first.at("early_stop").get<bool>() ? "; runs stop at the target" : "")
             : fmt::format("every method plans on the point predictions{}{}\n",
                           first.value("measured_bounds", false) ? ", held to the sampled trials" : "",
                           first.at("early_stop").get<bool>() ? "; runs stop at the target" : "");
  if (!first.value("curves", false)) out += "only each trial's final metric recorded (--no-curves: the paper's samples)\n";
  if (first.value("pin_runs", false)) out += "metric models pinned to each sampled run's own trials (--pin-runs)\n";
  if (first.at("confidence").is_number() && first.value("measured_bounds", false) &&
      !first.value("misfit_shift", false))
    out += "the pessimistic side is not shifted by the point model's misfit at later trials (--no-misfit-shift)\n";
  out += "per seed: median regret (true cost / true optimal cost - 1, over the runnable plans) and, after '/', the "
         "plans that miss a true constraint (target or deadline)\n";
  for (const auto& spec : first.at("models")) {
    out += fmt::format("\nmodel: {}\n  {:<20}", spec.get<std::string>(), "method");
    for (uint64_t s : seeds) out += fmt::format(" {:>12}", fmt::format("seed {}", s));
    out += fmt::format(" {:>8} {:>7} {:>8} {:>7}\n", "worst", "misses", "pooled", "no-plan");
    for (const auto& method : first.at("methods")) {
      const json& a = doc.at("across_seeds").at(spec.get<std::string>()).at(method.get<std::string>());
      out += fmt::format("  {:<20}", method.get<std::string>());
      int no_plan = 0;
      for (size_t i = 0; i < seeds.size(); ++i) {
        out += fmt::format(" {:>12}", fmt::format("{} / {}", format_regret(a["median_regret"][i]), a["misses"][i].get<int>()));
        no_plan += a["no_plan"][i].get<int>();
      }
      out += fmt::format(" {:>8} {:>7} {:>8} {:>7}\n", format_regret(a["worst_median_regret"]), a["misses_total"].get<int>(),
                         format_regret(a["pooled_median_regret"]), no_plan);
    }
    // The planner's own methods: on how many seeds they meet both the regret limit and every constraint.
    for (const auto& method : first.at("methods")) {
      const std::string m = method.get<std::string>();
      if (m.rfind("coconfig-", 0) != 0) continue;
      const json& a = doc.at("across_seeds").at(spec.get<std::string>()).at(m);
      std::vector<std::string> over;
      for (size_t i = 0; i < seeds.size(); ++i) {
        const json& med = a["median_regret"][i];
        const bool fails = !med.is_number() || med.get<double>() > regret_limit || a["misses"][i].get<int>() > 0;
        if (fails) over.push_back(std::to_string(seeds[i]));
      }
      out += fmt::format("  {}: median <= {:.1f}% with no miss on {} of {} seeds{}", m, 100 * regret_limit,
                         seeds.size() - over.size(), seeds.size(),
                         over.empty() ? std::string() : fmt::format(" (not on {})", fmt::join(over, ", ")));
      // The rate per plan says more than the count of seeds: when plans miss
      // independently at that rate, a seed of n plans is free of misses with probability (1 - rate)^n.
      const int runnable = a.at("runnable_total").get<int>(), missed = a.at("misses_total").get<int>();
      if (runnable > 0)
        out += fmt::format("; {} of {} runnable plans miss ({:.2f}%)", missed, runnable, 100.0 * missed / runnable);
      out += "\n";
    }
  }
  int shown = 0;
  std::string list;
  for (const auto& x : doc.at("misses")) {
    if (x.at("method").get<std::string>().rfind("coconfig-", 0) != 0) continue;
    ++shown;
    const bool max = x.at("direction").get<std::string>() == "max";
    list += fmt::format("  seed {} {} s{} {} {}: batch {} x {} workers, {} epochs", x["seed"].get<uint64_t>(),
                        x["trace"].get<std::string>(), x["scenario"].get<int>(), x["model"].get<std::string>(),
                        x["method"].get<std::string>(), x["batch"].get<double>(), x["workers"].get<int>(),
                        x["epochs"].get<int>());
    if (!x["target_ok"].get<bool>())
      list += fmt::format("; metric {:.4f} against a target of {} {:.4f}", x["true_metric"].get<double>(),
                          max ? ">=" : "<=", x["target"].get<double>());
    if (!x["deadline_ok"].get<bool>())
      list += fmt::format("; {:.0f} s against a deadline of {:.0f} s", x["true_total_time_s"].get<double>(),
                          x["deadline_s"].get<double>());
    list += "\n";
  }
  out += fmt::format("\nplans of the coconfig methods that miss a true constraint: {}\n", shown);
  out += list;
  const int others = static_cast<int>(doc.at("misses").size()) - shown;
  if (others > 0) out += fmt::format("(and {} plans of the baselines; --json lists every one)\n", others);
  return out;
}

}  // namespace trainplan::experiments
