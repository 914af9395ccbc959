// A network as a sequence of layers with their per-example costs: the first
// stage of PALEO's layering (graph -> layers -> cost backends -> parallel
// simulation) and the source of Horus-style graph features.
//
// Costs are per training example of the forward pass:
//   flops:  floating-point operations (a multiply-add counts 2);
//   bytes:  activations read and written (fp32), the memory-bound part;
// and per step: params (weights, whose gradients data parallelism all-reduces).
// The backward pass is taken as twice the forward (PALEO's rule: one
// gradient with respect to the input, one with respect to the weights).
#pragma once
#include <string>
#include <vector>

namespace trainplan::structure {

enum class LayerKind { kConv, kLinear, kNorm, kActivation, kPool, kEmbedding, kRecurrent, kAttention, kOther };

const char* to_string(LayerKind k);

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::kOther;
  double flops = 0;   // forward, per example
  double bytes = 0;   // forward activation traffic, per example
  double params = 0;  // weights
};

struct LayerGraph {
  std::string name;         // e.g. "resnet50"
  std::string description;  // architecture and input, for describe()
  std::vector<Layer> layers;

  double flops() const;   // forward flops per example, summed over layers
  double bytes() const;   // forward activation bytes per example
  double params() const;  // weights
  int count(LayerKind k) const;
};

// Builds a graph while tracking the activation shape (channels x height x
// width, or tokens x features for sequence models), so that each layer's
// cost follows from its arguments as in the architecture's paper.
class GraphBuilder {
 public:
  GraphBuilder(std::string name, std::string description) { g_.name = std::move(name), g_.description = std::move(description); }

  // Image shape: c x h x w.
  GraphBuilder& image(int c, int h, int w);
  // Sequence shape: `tokens` x `features`.
  GraphBuilder& sequence(int tokens, int features);

  // Conv k x k (kh x kw), stride, padding; optional bias. Updates the image shape.
  // conv, pool, global_pool and upsample take an image: InputError on a
  // sequence (after flatten, linear or sequence()).
  GraphBuilder& conv(int out_channels, int kh, int kw, int stride_h, int stride_w, int pad_h, int pad_w, bool bias);
  GraphBuilder& conv(int out_channels, int kh, int kw, int stride, int pad, bool bias = false) {
    return conv(out_channels, kh, kw, stride, stride, pad, pad, bias);
  }
  GraphBuilder& conv(int out_channels, int k, int stride, int pad, bool bias = false) {
    return conv(out_channels, k, k, stride, pad, bias);
  }
  GraphBuilder& batch_norm();  // per channel (image) or per feature (sequence)
  GraphBuilder& relu();
  // Pooling k x k with stride and padding (max or average: same cost here).
  GraphBuilder& pool(int k, int stride, int pad = 0);
  GraphBuilder& global_pool();  // to c x 1 x 1
  // Upsample the image by `factor` (nearest neighbour).
  GraphBuilder& upsample(int factor);
  // Dense layer on every token (or on the flattened image: tokens = 1).
  GraphBuilder& linear(int out_features, bool bias = true);
  GraphBuilder& flatten();
  GraphBuilder& layer_norm();
  GraphBuilder& gelu();
  // Lookup of `per_example` rows of width `dim` from a table of `rows`.
  GraphBuilder& embedding(double rows, int dim, int per_example);
  // Recurrent layer over the sequence: LSTM (4 gates) or GRU (3), one or two directions.
  GraphBuilder& recurrent(int hidden, int gates, bool bidirectional);
  // Multi-head self-attention scores and weighted sum over the sequence
  // (the Q, K, V and output projections are separate linear layers).
  GraphBuilder& attention(int heads);
  // Elementwise residual addition of the current activation.
  GraphBuilder& add();
  // Set the shape directly (after a branch merges, a concat, a residual).
  GraphBuilder& set_image(int c, int h, int w) { return image(c, h, w); }
  GraphBuilder& set_channels(int c);

  int channels() const { return c_; }
  int height() const { return h_; }
  int width() const { return w_; }
  int tokens() const { return tokens_; }
  int features() const { return features_; }

  LayerGraph build() const { return g_; }

 private:
  double activations() const;  // elements of the current activation, per example
  void push(LayerKind kind, const std::string& what, double flops, double in_elems, double params);
  // InputError when the current activation is a sequence: `layer` works on images.
  void need_image(const char* layer) const;

  LayerGraph g_;
  int c_ = 0, h_ = 0, w_ = 0;           // image shape
  int tokens_ = 0, features_ = 0;       // sequence shape (tokens_ > 0: sequence mode)
};

}  // namespace trainplan::structure
