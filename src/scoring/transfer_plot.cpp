#include "scoring/transfer_plot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "scoring/scatter_panel.h"

namespace trainplan::scoring {
namespace {

std::string gpu_name(const structure::HardwareProfile& hw) { return hw.name.empty() ? "?" : hw.name; }

}  // namespace

std::vector<io::PlotPanel> transfer_panels(const TransferReport& r) {
  const auto& o = r.options;
  const uint64_t seed = o.seeds.empty() ? 0 : o.seeds.front();
  std::vector<io::PlotPanel> out;
  for (const auto& n : r.networks) {
    struct Ranked {
      std::string method;
      double mre;
    };
    std::vector<Ranked> ranked;
    for (const auto& [method, points] : n.first_seed_points) {
      auto it = n.mre.find(method);
      if (it != n.mre.end() && !it->second.empty()) ranked.push_back({method, it->second.front()});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      return a.mre != b.mre ? a.mre < b.mre : a.method < b.method;
    });
    std::vector<io::PlotSeries> series;
    const auto& palette = io::plot_palette();
    for (size_t k = ranked.size(); k-- > 0;) {
      // One colour and mark per method in every panel, by the report's order.
      const size_t m = static_cast<size_t>(
          std::find(r.methods.begin(), r.methods.end(), ranked[k].method) - r.methods.begin());
      series.push_back({fmt::format("{} (MRE {:.1f}%)", ranked[k].method, 100 * ranked[k].mre),
                        n.first_seed_points.at(ranked[k].method),
                        fmt::format("points pt {} ps 0.8", kScatterPointTypes[m % std::size(kScatterPointTypes)]),
                        palette[m % palette.size()]});
    }
    if (!n.first_seed_trials.empty())
      series.push_back({fmt::format("{} target trial{} ({})", n.first_seed_trials.size(),
                                    n.first_seed_trials.size() == 1 ? "" : "s", o.headline),
                        n.first_seed_trials, "points pt 6 ps 1.6 lw 1.5", "#000000"});
    auto scatter = measured_predicted_panel(std::move(series), true);
    if (!scatter) continue;
    io::PlotPanel p = std::move(scatter->panel);
    p.xlabel = fmt::format("measured seconds per step on {}", gpu_name(o.to_hw));
    p.ylabel = "predicted seconds per step";
    // Below the frame: the methods scatter on both sides of the diagonal, so no corner is free.
    p.key = "below invert";
    std::vector<std::string> also;
    also.push_back(fmt::format("{} rows predicted", n.predicted_rows));
    if (o.seeds.size() > 1) also.push_back(fmt::format("seed {}, the first of {}", seed, o.seeds.size()));
    if (scatter->off_frame) also.push_back(fmt::format("{} predictions off the frame", scatter->off_frame));
    p.title = fmt::format("{}: {} -> {}, {} target trial{}\n({})", n.network, gpu_name(o.from_hw), gpu_name(o.to_hw),
                          o.target_trials, o.target_trials == 1 ? "" : "s", fmt::join(also, "; "));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace trainplan::scoring
