#include "cli/llm_time_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

namespace trainplan::cli {

nlohmann::json llm_time_json(const models::LlmTimeBreakdown& t, double peak_tflops) {
  const double achieved = t.flops_per_gpu / t.iteration / 1e12;
  // What the named parts leave: the host overheads, the embedding and the loss's
  // memory-bound kernels, so that the parts add up to the iteration. A
  // remainder within rounding of the sum (a billionth of the iteration) is
  // none: 5.7e-14 s would read as something the iteration spends.
  const double named = t.compute + t.memory_bound + t.tp_comm + t.pp_comm + t.bubble + t.dp_comm + t.optimizer;
  double other = std::max(0.0, t.iteration - named);
  if (other <= 1e-9 * t.iteration) other = 0;
  return {{"iteration_time_s", t.iteration}, {"stage_step_s", t.stage_step}, {"compute_s", t.compute},
          {"memory_bound_s", t.memory_bound}, {"tp_comm_s", t.tp_comm}, {"pp_comm_s", t.pp_comm},
          {"bubble_s", t.bubble}, {"dp_comm_s", t.dp_comm}, {"optimizer_s", t.optimizer}, {"other_s", other},
          {"model_tflops_per_gpu", achieved}, {"mfu", peak_tflops > 0 ? achieved / peak_tflops : 0.0}};
}

void print_llm_time_breakdown(const nlohmann::json& rows, const std::string& key) {
  // The slowest stage's parts over all micro-batches, then what the schedule and the replicas add.
  std::cout << fmt::format("\nwhere the time goes, seconds per iteration:\n{:>6} {:>10} {:>10} {:>10} {:>10} {:>10} "
                           "{:>10} {:>10} {:>10}\n",
                           key, "compute", "mem-bound", "TP/CP comm", "PP comm", "bubble", "DP comm", "optimizer", "other");
  for (const auto& j : rows) {
    const double parts[] = {j["compute_s"], j["memory_bound_s"], j["tp_comm_s"], j["pp_comm_s"],
                            j["bubble_s"],  j["dp_comm_s"],      j["optimizer_s"], j["other_s"]};
    std::string line = fmt::format("{:>6}", j[key].get<long>());
    for (double x : parts) line += fmt::format(" {:>10.4g}", x);
    std::cout << line << "\n";
  }
}

}  // namespace trainplan::cli
