#include "scoring/transformer_runs_eval.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/median.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"

namespace trainplan::scoring {

RunsEvaluation evaluate_transformer_runs(const std::vector<io::TransformerRun>& runs,
                                         const structure::HardwareProfile& hw) {
  if (runs.size() < 2) throw InputError("", 0, "", "at least two runs are needed to leave one out");
  RunsEvaluation e;
  models::LlmTimeModel sheet(hw);
  models::LlmMemoryModel bare;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& x = runs[i];
    RunPrediction p;
    p.run = &x;
    p.time_datasheet = sheet.predict(x.spec, x.layout).iteration;
    p.peak_datasheet = bare.predict(x.spec, x.layout).total();
    std::vector<models::LlmTimeSample> ts;
    std::vector<double> gaps;
    for (size_t j = 0; j < runs.size(); ++j) {
      if (j == i) continue;
      ts.push_back({runs[j].spec, runs[j].layout, runs[j].iteration_s});
      gaps.push_back(runs[j].peak_bytes - bare.predict(runs[j].spec, runs[j].layout).total());
    }
    models::LlmTimeModel tm(hw);
    tm.fit(ts);
    p.time_calibrated = tm.predict(x.spec, x.layout).iteration;
    p.peak_calibrated = models::LlmMemoryModel({std::max(0.0, median(gaps))}).predict(x.spec, x.layout).total();
    double n = double(runs.size());
    e.time_datasheet_mape += std::abs(p.time_datasheet / x.iteration_s - 1) / n;
    e.time_calibrated_mape += std::abs(p.time_calibrated / x.iteration_s - 1) / n;
    e.peak_datasheet_mape += std::abs(p.peak_datasheet / x.peak_bytes - 1) / n;
    e.peak_calibrated_mape += std::abs(p.peak_calibrated / x.peak_bytes - 1) / n;
    e.time_datasheet_bias += (p.time_datasheet / x.iteration_s - 1) / n;
    e.peak_datasheet_bias += (p.peak_datasheet / x.peak_bytes - 1) / n;
    e.rows.push_back(p);
  }
  return e;
}

}  // namespace trainplan::scoring
