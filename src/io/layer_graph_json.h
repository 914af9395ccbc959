// A user's own network as JSON, for the structure models (`trainplan network
// --graph FILE`). The layers mirror structure::GraphBuilder, in order:
//   {"name": "my-cnn", "description": "...",
//    "input": {"image": [3, 32, 32]}            or {"sequence": [tokens, features]},
//    "layers": [{"type": "conv", "out": 64, "kernel": 3, "stride": 1, "padding": 1, "bias": false},
//               {"type": "batch_norm"}, {"type": "relu"}, {"type": "pool", "kernel": 2, "stride": 2},
//               {"type": "global_pool"}, {"type": "flatten"}, {"type": "linear", "out": 10},
//               {"type": "layer_norm"}, {"type": "gelu"}, {"type": "attention", "heads": 12},
//               {"type": "lstm" | "gru", "hidden": 1024, "bidirectional": true},
//               {"type": "embedding", "rows": 30522, "dim": 768, "per_example": 384},
//               {"type": "add"}, {"type": "upsample", "factor": 2}, {"type": "set_channels", "channels": 768}]}
// Optional fields take the defaults shown in docs/FORMATS.md.
#pragma once
#include <string>

#include "structure/layer_graph.h"

namespace trainplan::io {

// Throws InputError naming the file and the field (e.g. "layers[3].out") on
// bad JSON, an unknown type, a missing or non-positive size, or a shape the
// layer cannot take.
structure::LayerGraph read_layer_graph_json(const std::string& path);

}  // namespace trainplan::io
