#include "io/layer_timing_csv.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "io/csv.h"

namespace trainplan::io {

std::vector<LayerTiming> read_layer_timings(const std::string& path) {
  auto t = CsvTable::read(path);
  t.require_columns({"kind", "batch", "in_channels", "out_channels", "kernel", "stride", "padding", "height", "width",
                     "in_features", "out_features", "time_s"});
  std::vector<LayerTiming> out;
  for (const auto& row : t.rows()) {
    LayerTiming l;
    l.line = row.line;
    l.kind = t.text(row, "kind");
    auto count = [&](const char* col) {
      const double v = t.number(row, col);
      // Compared before the conversion: an int cannot hold every double, and converting one it cannot is undefined.
      if (v < 0 || v != std::floor(v) || v > std::numeric_limits<int>::max())
        t.fail(row, col, "must be a whole number from 0 to " + std::to_string(std::numeric_limits<int>::max()));
      return static_cast<int>(v);
    };
    l.batch = t.positive_int(row, "batch");
    l.in_channels = count("in_channels"), l.out_channels = count("out_channels"), l.kernel = count("kernel");
    l.stride = count("stride"), l.padding = count("padding"), l.height = count("height"), l.width = count("width");
    l.in_features = count("in_features"), l.out_features = count("out_features");
    l.time_s = t.positive(row, "time_s");
    if (l.kind == "linear") {
      if (l.in_features < 1) t.fail(row, "in_features", "a linear layer needs in_features >= 1");
      if (l.out_features < 1) t.fail(row, "out_features", "a linear layer needs out_features >= 1");
    } else if (l.kind == "conv" || l.kind == "pool" || l.kind == "relu" || l.kind == "batchnorm") {
      if (l.in_channels < 1) t.fail(row, "in_channels", "an image layer needs in_channels >= 1");
      if (l.height < 1 || l.width < 1) t.fail(row, "height", "an image layer needs height and width >= 1");
      if ((l.kind == "conv" || l.kind == "pool") && (l.kernel < 1 || l.stride < 1))
        t.fail(row, "kernel", "conv and pool need kernel and stride >= 1");
      if (l.kind == "conv" && l.out_channels < 1) t.fail(row, "out_channels", "a conv layer needs out_channels >= 1");
      if ((l.kind == "conv" || l.kind == "pool") && l.height + 2LL * l.padding < l.kernel)
        t.fail(row, "kernel", "larger than the padded input");
    } else {
      t.fail(row, "kind", "unknown layer kind '" + l.kind + "' (conv, linear, pool, relu, batchnorm)");
    }
    out.push_back(l);
  }
  if (out.empty()) throw InputError(path, 0, "", "no layer timings");
  return out;
}

}  // namespace trainplan::io
