// Target for a user's network as JSON (io/layer_graph_json.h): the reader,
// then the totals every structure model takes from the graph.
#include <cmath>

#include "../fuzz_target.h"
#include "io/layer_graph_json.h"

namespace trainplan::fuzz {
namespace {

bool run_graph(std::string_view input, const std::string& scratch) {
  const std::string path = scratch + "/net.json";
  write_file(path, input);
  return expect_value_or_input_error(path, [&] {
    const structure::LayerGraph g = io::read_layer_graph_json(path);
    // The figures the structure models divide and multiply: a graph the
    // reader accepts has no negative cost.
    for (const auto& l : g.layers)
      if (l.flops < 0 || l.bytes < 0 || l.params < 0 || std::isnan(l.flops + l.bytes + l.params))
        throw ContractBreach("accepted a layer with a negative or NaN cost: " + l.name);
  });
}

TargetRegistrar reg({"layer_graph",
                     "io::read_layer_graph_json, and the accepted graph's costs",
                     {"fuzz/corpus/layer_graph"},
                     {"\"name\"", "\"description\"", "\"input\"", "\"image\"", "\"sequence\"", "\"layers\"",
                      "\"type\"", "\"conv\"", "\"out\"", "\"kernel\"", "\"stride\"", "\"padding\"", "\"bias\"",
                      "\"batch_norm\"", "\"relu\"", "\"pool\"", "\"global_pool\"", "\"flatten\"", "\"linear\"",
                      "\"layer_norm\"", "\"gelu\"", "\"attention\"", "\"heads\"", "\"lstm\"", "\"gru\"", "\"hidden\"",
                      "\"bidirectional\"", "\"embedding\"", "\"rows\"", "\"dim\"", "\"per_example\"", "\"add\"",
                      "\"upsample\"", "\"factor\"", "\"set_channels\"", "\"channels\"", "1000000000"},
                     run_graph});

}  // namespace
}  // namespace trainplan::fuzz
