// Reader for the layer-timing CSV that trainplan-layer-bench writes: one timed
// layer per row (forward + backward seconds at a batch), the training data of
// Justus et al.'s per-layer model (models/layer_time_model.h).
//   kind,batch,in_channels,out_channels,kernel,stride,padding,height,width,in_features,out_features,time_s
// kind: conv, linear, pool (max, k x k), relu or batchnorm; unused fields are 0.
#pragma once
#include <string>
#include <vector>

namespace trainplan::io {

struct LayerTiming {
  std::string kind;
  int batch = 0;
  int in_channels = 0, out_channels = 0, kernel = 0, stride = 1, padding = 0, height = 0, width = 0;
  int in_features = 0, out_features = 0;
  double time_s = 0;
  long line = 0;  // in the file, for messages
};

// Throws InputError (file, line, column) on a missing column, an unknown kind,
// a non-number, a time <= 0, or a shape the kind cannot have.
std::vector<LayerTiming> read_layer_timings(const std::string& path);

}  // namespace trainplan::io
