// trainplan network: the layer graphs trainplan knows (structure/network_zoo.h)
// and PALEO's breakdown of one training step by layer kind (Fathom's point:
// a few kinds of operation take most of the time).
#include <fmt/format.h>

#include <cmath>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/json_text.h"
#include "io/layer_graph_json.h"
#include "structure/network_zoo.h"
#include "models/step_time_paleo.h"

namespace trainplan::cli {
namespace {

struct NetworkArgs {
  std::string name;
  std::string graph;  // a JSON network file instead of a known name
  double batch = 32;
  int workers = 1;
  int nodes = 0;
  bool layers = false;
  bool json = false;
  models::PaleoHardware hw;  // datasheet figures, overridable
};

void list_networks(bool json) {
  nlohmann::json j = nlohmann::json::array();
  std::string text = fmt::format("{:<20} {:>8} {:>12} {:>14}  workloads\n", "network", "layers", "params (M)",
                                 "GFLOP/example");
  for (const auto& n : structure::network_names()) {
    const auto* g = structure::find_network(n);
    std::vector<std::string> workloads;
    for (const auto& [w, a] : structure::network_aliases())
      if (a == n) workloads.push_back(w);
    j.push_back({{"network", n}, {"layers", g->layers.size()}, {"params", g->params()}, {"flops", g->flops()},
                 {"workloads", workloads}, {"description", g->description}});
    text += fmt::format("{:<20} {:>8} {:>12.4g} {:>14.4g}  {}\n", n, g->layers.size(), g->params() / 1e6,
                        g->flops() / 1e9, fmt::join(workloads, ", "));
  }
  std::cout << (json ? io::json_text(j) + "\n" : text + "Details: trainplan network NAME [--batch B --workers R --nodes N]\n");
}

void run_network(const NetworkArgs& a) {
  if (!a.graph.empty() && !a.name.empty()) throw InputError("give a network NAME or --graph FILE, not both");
  if (a.name.empty() && a.graph.empty()) return list_networks(a.json);
  structure::LayerGraph from_file;
  if (!a.graph.empty()) from_file = io::read_layer_graph_json(a.graph);
  const auto* g = a.graph.empty() ? structure::find_network(a.name) : &from_file;
  if (!g) {
    std::string known;
    for (const auto& n : structure::network_names()) known += (known.empty() ? "" : ", ") + n;
    throw InputError(fmt::format("no layer graph for '{}' (known: {}; or a workload name such as cifar10)", a.name, known));
  }
  if (!(a.batch >= 1 && a.batch <= 1e9) || a.batch != std::floor(a.batch))
    throw InputError("", 0, "--batch", fmt::format("must be a whole number from 1 to 1e9, got {:g}", a.batch));
  // Past a million GPUs no cluster exists, and node counts of more overflow.
  if (a.workers < 1 || a.workers > 1000000) throw InputError("", 0, "--workers", "must be from 1 to 1000000");
  if (a.nodes < 0 || a.nodes > a.workers) throw InputError("", 0, "--nodes", "must be within 0..workers");
  const models::PaleoHardware& hw = a.hw;
  // The bounds hardware files hold their figures to: past them a figure is in
  // the wrong unit, and a step of 0 s (or infinity) would follow.
  if (!(hw.peak_flops > 0 && hw.peak_flops <= 1e6 * 1e12))
    throw InputError("", 0, "--peak-tflops", "must be > 0 and at most 1e6 (TFLOP/s)");
  if (!(hw.memory_bytes_per_s > 0 && hw.memory_bytes_per_s <= 1e6 * 1e9))
    throw InputError("", 0, "--memory-gbps", "must be > 0 and at most 1e6 (GB/s)");
  if (!(hw.efficiency > 0 && hw.efficiency <= 1)) throw InputError("", 0, "--efficiency", "must lie in (0, 1]");
  if (!(hw.links.intra_node_bytes_per_s > 0 && hw.links.intra_node_bytes_per_s <= 1e6 * 1e9))
    throw InputError("", 0, "--intra-gbps", "must be > 0 and at most 1e6 (GB/s)");
  if (!(hw.links.inter_node_bytes_per_s > 0 && hw.links.inter_node_bytes_per_s <= 8e6 * 1e9 / 8))
    throw InputError("", 0, "--inter-gbits", "must be > 0 and at most 8e6 (Gb/s)");
  const models::PaleoHardware t4;
  const bool datasheet = hw.peak_flops == t4.peak_flops && hw.memory_bytes_per_s == t4.memory_bytes_per_s &&
                         hw.links.intra_node_bytes_per_s == t4.links.intra_node_bytes_per_s &&
                         hw.links.inter_node_bytes_per_s == t4.links.inter_node_bytes_per_s;
  const std::string hw_text =
      datasheet ? hw.name
                : fmt::format("{:g} TFLOP/s peak, {:g} GB/s memory, {:g} GB/s within a node, {:g} Gb/s across nodes",
                              hw.peak_flops / 1e12, hw.memory_bytes_per_s / 1e9,
                              hw.links.intra_node_bytes_per_s / 1e9, hw.links.inter_node_bytes_per_s * 8 / 1e9);
  const int nodes = a.nodes > 0 ? a.nodes : (a.workers + 3) / 4;
  const auto t = models::paleo_step_terms(*g, a.batch, a.workers, nodes, hw);
  std::map<std::string, std::pair<double, int>> by_kind;  // seconds, layers
  for (const auto& l : g->layers) {
    auto& k = by_kind[structure::to_string(l.kind)];
    k.first += models::paleo_layer_seconds(l, a.batch, hw), ++k.second;
  }
  by_kind["weights update"] = {models::paleo_update_seconds(*g, hw), 0};
  if (t.sync_intra + t.sync_inter > 0) by_kind["all-reduce"] = {t.sync_intra + t.sync_inter, 0};
  const double total = t.total();
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(by_kind.begin(), by_kind.end());
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.second.first > y.second.first; });

  if (a.json) {
    nlohmann::json j = {{"network", g->name},
                        {"description", g->description},
                        {"params", g->params()},
                        {"flops_per_example", g->flops()},
                        {"activation_bytes_per_example", g->bytes()},
                        {"batch", a.batch},
                        {"workers", a.workers},
                        {"nodes", nodes},
                        {"hardware", hw_text},
                        {"efficiency", hw.efficiency},
                        {"step_s", total},
                        {"terms", {{"compute", t.compute}, {"memory", t.memory}, {"sync_intra", t.sync_intra},
                                   {"sync_inter", t.sync_inter}}}};
    for (const auto& [k, v] : rows) j["by_kind"][k] = {{"seconds", v.first}, {"layers", v.second}};
    if (a.layers)
      for (const auto& l : g->layers)
        j["layers"].push_back({{"name", l.name}, {"kind", structure::to_string(l.kind)}, {"flops", l.flops},
                               {"bytes", l.bytes}, {"params", l.params},
                               {"seconds", models::paleo_layer_seconds(l, a.batch, hw)}});
    std::cout << io::json_text(j) << "\n";
    return;
  }
  std::cout << fmt::format("{}: {}\n", g->name, g->description);
  std::cout << fmt::format("  {} layers, {:.4g} M parameters, {:.4g} GFLOP and {:.4g} MB of activations per example "
                           "(forward)\n",
                           g->layers.size(), g->params() / 1e6, g->flops() / 1e9, g->bytes() / 1e6);
  std::cout << fmt::format("PALEO step at batch {:g} per worker, {} worker(s) on {} node(s): {:.4g} s "
                           "({:.4g} examples/s in all)\n",
                           a.batch, a.workers, nodes, total, a.batch * a.workers / total);
  std::cout << fmt::format("  hardware: {}, efficiency {:g}; backward = 2 x forward; no overlap\n", hw_text,
                           hw.efficiency);
  std::cout << fmt::format("  {:<16} {:>7} {:>12} {:>7}\n", "kind", "layers", "seconds", "share");
  for (const auto& [k, v] : rows)
    std::cout << fmt::format("  {:<16} {:>7} {:>12.4g} {:>6.1f}%\n", k, v.second ? std::to_string(v.second) : "",
                             v.first, 100 * v.first / total);
  if (a.layers) {
    std::cout << fmt::format("\n  {:<14} {:<10} {:>12} {:>12} {:>12} {:>11}\n", "layer", "kind", "MFLOP/ex",
                             "KB/ex", "params", "seconds");
    for (const auto& l : g->layers)
      std::cout << fmt::format("  {:<14} {:<10} {:>12.4g} {:>12.4g} {:>12.0f} {:>11.4g}\n", l.name,
                               structure::to_string(l.kind), l.flops / 1e6, l.bytes / 1e3, l.params,
                               models::paleo_layer_seconds(l, a.batch, hw));
  }
  std::cout << "These are datasheet figures (`paleo`); `trainplan fit --model paleo-fit` calibrates them to "
               "measured samples.\n";
}

void setup(CLI::App& root) {
  auto args = std::make_shared<NetworkArgs>();
  auto* cmd = root.add_subcommand(
      "network",
      "The layer graphs trainplan knows, and PALEO's cost of one training step by layer kind (no NAME: list them)");
  cmd->add_option("name", args->name, "Network or workload name (e.g. resnet50, cifar10)");
  cmd->add_option("--batch", args->batch, "Per-worker batch")->capture_default_str()->type_name("INT");
  cmd->add_option("--workers", args->workers, "Data-parallel workers")->capture_default_str();
  cmd->add_option("--nodes", args->nodes, "Nodes the workers span (default: packed, 4 GPUs per node)");
  cmd->add_option("--graph", args->graph,
                  "Your own network as JSON (layers as in docs/FORMATS.md, e.g. conv, batch_norm, relu, pool, "
                  "linear, attention, lstm) instead of a NAME")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--layers", args->layers, "Also list every layer");
  // The datasheet: a T4 by default; another accelerator by its own figures.
  auto scaled = [](double& target, double unit) {
    return [&target, unit](const double& v) { target = v * unit; };
  };
  auto& hw = args->hw;
  cmd->add_option_function<double>("--peak-tflops", scaled(hw.peak_flops, 1e12),
                                        "Peak FLOP/s of one GPU, in TFLOP/s (default 8.1: a T4 in fp32)")
      ->check(positive_number());
  cmd->add_option_function<double>("--memory-gbps", scaled(hw.memory_bytes_per_s, 1e9),
                                        "Device memory bandwidth, GB/s (default 320)")
      ->check(positive_number());
  cmd->add_option("--efficiency", hw.efficiency, "Fraction of peak a layer reaches (PALEO's platform percent)")
      ->capture_default_str();
  cmd->add_option_function<double>("--intra-gbps", scaled(hw.links.intra_node_bytes_per_s, 1e9),
                                        "All-reduce bandwidth within a node, GB/s (default 10: what an all-reduce sustains on PCIe 3.0 x16, whose nominal rate is 16)")
      ->check(positive_number());
  cmd->add_option_function<double>("--inter-gbits", scaled(hw.links.inter_node_bytes_per_s, 1e9 / 8),
                                        "Network bandwidth across nodes, Gb/s (default 25: a common network, the prior the "
                                        "data-parallel models assume; the Pollux cluster's T4 nodes, catalog entry `t4`, had 50)")
      ->check(positive_number());
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->footer("Examples:\n  trainplan network resnet50 --batch 64 --workers 8\n"
              "  trainplan network bert --batch 8 --workers 16 --peak-tflops 19.5 --memory-gbps 1555 --inter-gbits 100");
  cmd->callback([args] { run_network(*args); });
}

CommandRegistrar reg(43, setup);

}  // namespace
}  // namespace trainplan::cli
