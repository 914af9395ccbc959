// Targets for the inputs of `trainplan llm predict` (io/llm_config_csv.h,
// with the models it feeds) and of `trainplan watch` (a log's lines through
// app/live_watch.h, the forecaster included).
#include <cmath>
#include <sstream>

#include "../fuzz_target.h"
#include "app/live_watch.h"
#include "io/llm_config_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "structure/gpu_catalog.h"
#include "uncertainty/llm_cross_validation.h"

namespace trainplan::fuzz {
namespace {

// A configuration the reader accepted gets a finite, positive iteration time
// and memory, datasheet and (with measured times) calibrated.
bool run_llm_configs(std::string_view input, const std::string& scratch) {
  const std::string path = scratch + "/configs.csv";
  write_file(path, input);
  io::LlmConfigTable t;
  const bool with_time = input.find("iteration_time_s") != std::string_view::npos;
  if (!expect_value_or_input_error(path, [&] { t = io::read_llm_configs(path, with_time); })) return false;
  models::LlmTimeModel tm(*structure::find_builtin_hardware("a100-80gb"));
  models::LlmMemoryModel mm;
  if (with_time && !t.rows.empty() && t.rows.size() <= 16) {
    std::vector<models::LlmTimeSample> ts;
    std::vector<models::LlmMemorySample> ms;
    for (const auto& r : t.rows) {
      ts.push_back({r.spec, r.layout, *r.iteration_time_s});
      if (r.memory_gib) ms.push_back({r.spec, r.layout, *r.memory_gib * 1073741824.0});
    }
    // Cross-validation (a fit per fold) and the intervals from it: finite,
    // one error per row, every interval around its prediction.
    if (t.rows.size() <= 8) {
      const auto cv = uncertainty::cross_validate_llm(t, tm, mm);
      if (cv.folds > 0 && cv.time_errors.size() != t.rows.size())
        throw ContractBreach("cross-validation gave " + std::to_string(cv.time_errors.size()) + " errors for " +
                             std::to_string(t.rows.size()) + " rows");
      for (double e : cv.time_errors)
        if (!std::isfinite(e) || e <= -1) throw ContractBreach("a cross-validated error of " + std::to_string(e));
      for (const auto& r : t.rows) {
        const double p = tm.predict(r.spec, r.layout).iteration;
        if (auto iv = uncertainty::conformal_interval(p, cv.time_errors, 0.8))
          if (!(iv->lo <= p && p <= iv->hi && std::isfinite(iv->hi)))
            throw ContractBreach("an interval [" + std::to_string(iv->lo) + ", " + std::to_string(iv->hi) +
                                 "] that does not hold its prediction " + std::to_string(p));
      }
    }
    expect_value_or_input_error(path, [&] { tm.fit(ts); });
    if (!ms.empty()) expect_value_or_input_error(path, [&] { mm.fit(ms); });
  }
  for (const auto& r : t.rows) {
    const double it = tm.predict(r.spec, r.layout).iteration;
    const double mem = mm.predict(r.spec, r.layout).total();
    if (!(std::isfinite(it) && it > 0) || !(std::isfinite(mem) && mem >= 0)) {
      std::ostringstream m;
      m << "line " << r.line << ": iteration " << it << " s, memory " << mem << " bytes";
      throw ContractBreach(m.str());
    }
  }
  return true;
}

TargetRegistrar llm_reg({"llm_config_csv",
                         "io::read_llm_configs, then the time and memory models on every row (fitted and "
                         "cross-validated when timed)",
                         {"fuzz/corpus/llm_config_csv"},
                         {"gpus", "global_batch", "micro_batch", "hidden", "heads", "layers", "seq", "tp", "dp", "pp",
                          "vocab", "ffn_hidden", "kv_groups", "gated_mlp", "virtual_stages", "recompute", "selective",
                          "full", "sequence_parallel", "distributed_optimizer", "flash_attention", "precision", "bf16",
                          "fp32", "amp-fp32-master", "iteration_time_s", "memory_gib", "true", "false"},
                         run_llm_configs});

// Every line gives an update or none, never an exception: a bad line is a
// warning naming its line; every update serialises.
bool run_watch_log(std::string_view input, const std::string&) {
  app::WatchOptions o;
  o.target = 0.9;
  o.deadline_s = 3600;
  app::LiveWatch live(o);
  std::istringstream in{std::string(input)};
  std::string line;
  long n = 0;
  bool warned = false;
  while (std::getline(in, line) && !live.done()) {
    auto u = live.feed(line, ++n);
    if (!u) continue;
    const std::string text = app::LiveWatch::text(*u, 20);
    (void)u->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if ((*u)["event"] == "warning") {
      warned = true;
      if (!(*u).contains("line") || (*u)["line"] != n) throw ContractBreach("a warning without its line number: " + text);
    }
  }
  return !warned;
}

TargetRegistrar watch_reg({"watch_log",
                           "app::LiveWatch fed a log's lines (trial protocol and a profile's live log)",
                           {"fuzz/corpus/watch_log"},
                           {"{\"event\":\"epoch\",", "\"epoch\":", "\"metric\":", "\"epoch_time_s\":", "\"metric_name\":",
                            "\"loss\"", "{\"event\":\"done\"}", "{\"event\":\"trial_start\",\"batch\":32,\"workers\":2,"
                            "\"epochs\":4}", "{\"event\":\"trial_end\",\"status\":\"ok\"}",
                            "{\"event\":\"profile_done\"}", "1e308", "-0", "null", "\n"},
                           run_watch_log});

}  // namespace
}  // namespace trainplan::fuzz
