#include "structure/layer_graph.h"

#include <fmt/format.h>

#include <limits>

#include "core/error.h"

namespace trainplan::structure {

const char* to_string(LayerKind k) {
  switch (k) {
    case LayerKind::kConv: return "conv";
    case LayerKind::kLinear: return "linear";
    case LayerKind::kNorm: return "norm";
    case LayerKind::kActivation: return "activation";
    case LayerKind::kPool: return "pool";
    case LayerKind::kEmbedding: return "embedding";
    case LayerKind::kRecurrent: return "recurrent";
    case LayerKind::kAttention: return "attention";
    case LayerKind::kOther: return "other";
  }
  return "other";
}

double LayerGraph::flops() const {
  double s = 0;
  for (const auto& l : layers) s += l.flops;
  return s;
}

double LayerGraph::bytes() const {
  double s = 0;
  for (const auto& l : layers) s += l.bytes;
  return s;
}

double LayerGraph::params() const {
  double s = 0;
  for (const auto& l : layers) s += l.params;
  return s;
}

int LayerGraph::count(LayerKind k) const {
  int n = 0;
  for (const auto& l : layers) n += l.kind == k;
  return n;
}

namespace {
constexpr double kBytesPerElement = 4;  // fp32 activations

// A shape size computed wider than int, as an int: sizes come from users'
// files, and an int product or sum past INT_MAX would be undefined behaviour.
// A double, so that a product of three sizes cannot overflow either.
int dimension(double v, const std::string& network, const char* layer) {
  if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min())
    throw InputError(fmt::format("network '{}': {} makes a dimension of {:.0f}, past {}", network, layer, v,
                                 std::numeric_limits<int>::max()));
  return static_cast<int>(v);
}
}  // namespace

double GraphBuilder::activations() const {
  return tokens_ > 0 ? double(tokens_) * features_ : double(c_) * h_ * w_;
}

// Records a layer: its flops and params, and as bytes the input it read and
// the output (the builder's current shape, already updated) it wrote.
void GraphBuilder::push(LayerKind kind, const std::string& what, double flops, double in_elems, double params) {
  if (!(in_elems > 0) || !(activations() > 0))
    throw InputError(fmt::format("network '{}': layer {} ({}) has an empty input or output shape", g_.name,
                                 g_.layers.size() + 1, what));
  g_.layers.push_back(Layer{fmt::format("{}{}", what, g_.layers.size() + 1), kind, flops,
                            (in_elems + activations()) * kBytesPerElement, params});
}

GraphBuilder& GraphBuilder::image(int c, int h, int w) {
  c_ = c, h_ = h, w_ = w, tokens_ = 0, features_ = 0;
  return *this;
}

GraphBuilder& GraphBuilder::sequence(int tokens, int features) {
  tokens_ = tokens, features_ = features;
  return *this;
}

GraphBuilder& GraphBuilder::set_channels(int c) {
  if (tokens_ > 0) features_ = c;
  else c_ = c;
  return *this;
}

GraphBuilder& GraphBuilder::conv(int out, int kh, int kw, int sh, int sw, int ph, int pw, bool bias) {
  need_image("conv");
  const double in = activations();
  const int cin = c_;
  // Checked before dividing: integer division truncates toward zero, so a kernel past the
  // padded input by less than a stride would come out as one position.
  const bool fits = h_ + 2LL * ph >= kh && w_ + 2LL * pw >= kw;
  const int ho = fits ? dimension((h_ + 2LL * ph - kh) / sh + 1, g_.name, "conv") : 0,
            wo = fits ? dimension((w_ + 2LL * pw - kw) / sw + 1, g_.name, "conv") : 0;
  if (ho <= 0 || wo <= 0)
    throw InputError(fmt::format("network '{}': conv {}x{} stride {}x{} on {}x{} leaves no output", g_.name, kh, kw,
                                 sh, sw, h_, w_));
  c_ = out, h_ = ho, w_ = wo;
  const double macs = double(kh) * kw * cin * out * ho * wo;
  push(LayerKind::kConv, "conv", 2 * macs, in, double(kh) * kw * cin * out + (bias ? out : 0));
  return *this;
}

GraphBuilder& GraphBuilder::batch_norm() {
  const double in = activations();
  push(LayerKind::kNorm, "bn", 4 * in, in, 2.0 * (tokens_ > 0 ? features_ : c_));  // scale and shift per channel
  return *this;
}

GraphBuilder& GraphBuilder::relu() {
  const double in = activations();
  push(LayerKind::kActivation, "relu", in, in, 0);
  return *this;
}

GraphBuilder& GraphBuilder::pool(int k, int stride, int pad) {
  need_image("pool");
  const double in = activations();
  if (h_ + 2LL * pad < k || w_ + 2LL * pad < k)
    throw InputError(fmt::format("network '{}': pool {}x{} with padding {} on {}x{} leaves no output", g_.name, k, k,
                                 pad, h_, w_));
  h_ = dimension((h_ + 2LL * pad - k) / stride + 1, g_.name, "pool");
  w_ = dimension((w_ + 2LL * pad - k) / stride + 1, g_.name, "pool");
  push(LayerKind::kPool, "pool", double(k) * k * c_ * h_ * w_, in, 0);
  return *this;
}

GraphBuilder& GraphBuilder::global_pool() {
  need_image("global_pool");
  const double in = activations();
  h_ = 1, w_ = 1;
  push(LayerKind::kPool, "gpool", in, in, 0);
  return *this;
}

GraphBuilder& GraphBuilder::upsample(int factor) {
  need_image("upsample");
  const double in = activations();
  h_ = dimension(double(h_) * factor, g_.name, "upsample"), w_ = dimension(double(w_) * factor, g_.name, "upsample");
  push(LayerKind::kOther, "upsample", 0, in, 0);
  return *this;
}

void GraphBuilder::need_image(const char* layer) const {
  if (tokens_ > 0)
    throw InputError(fmt::format("network '{}': {} needs an image (channels x height x width), and its input is a "
                                 "sequence of {} x {} (after flatten, linear or a sequence input)",
                                 g_.name, layer, tokens_, features_));
}

GraphBuilder& GraphBuilder::flatten() {
  if (tokens_ == 0) sequence(1, dimension(double(c_) * h_ * w_, g_.name, "flatten"));
  // A sequence becomes one token of all its features, as an image becomes one of all its pixels.
  else if (tokens_ > 1) sequence(1, dimension(double(tokens_) * features_, g_.name, "flatten"));
  return *this;
}

GraphBuilder& GraphBuilder::linear(int out, bool bias) {
  if (tokens_ == 0) flatten();
  const double in = activations();
  const int fin = features_;
  features_ = out;
  push(LayerKind::kLinear, "linear", 2.0 * tokens_ * fin * out, in, double(fin) * out + (bias ? out : 0));
  return *this;
}

GraphBuilder& GraphBuilder::layer_norm() {
  const double in = activations();
  push(LayerKind::kNorm, "ln", 8 * in, in, 2.0 * features_);
  return *this;
}

GraphBuilder& GraphBuilder::gelu() {
  const double in = activations();
  push(LayerKind::kActivation, "gelu", 8 * in, in, 0);
  return *this;
}

GraphBuilder& GraphBuilder::embedding(double rows, int dim, int per_example) {
  const int t = tokens_, f = features_;
  sequence(per_example, dim);
  // Reads `per_example` indices, writes the rows looked up.
  push(LayerKind::kEmbedding, "embed", 0, per_example, rows * dim);
  if (t > 0) sequence(t, f);  // the caller sets the merged shape
  return *this;
}

GraphBuilder& GraphBuilder::recurrent(int hidden, int gates, bool bidirectional) {
  if (tokens_ == 0) throw InputError(fmt::format("network '{}': a recurrent layer needs a sequence", g_.name));
  const double in = activations();
  const int fin = features_, dirs = bidirectional ? 2 : 1;
  const double per_token = double(gates) * hidden * (fin + hidden);
  features_ = dimension(double(hidden) * dirs, g_.name, gates == 4 ? "lstm" : "gru");
  // Gate matrix products (2 flops per multiply-add) plus ~10 elementwise ops per gate unit.
  push(LayerKind::kRecurrent, gates == 4 ? "lstm" : "gru",
       dirs * tokens_ * (2 * per_token + 10.0 * gates * hidden), in, dirs * (per_token + 2.0 * gates * hidden));
  return *this;
}

GraphBuilder& GraphBuilder::attention(int heads) {
  if (tokens_ == 0) throw InputError(fmt::format("network '{}': attention needs a sequence", g_.name));
  // Input: Q, K, V (3 x tokens x features); scores tokens^2 per head; output tokens x features.
  const double in = 3.0 * activations();
  const double L = tokens_, d = features_;
  const double flops = 2 * L * L * d + 5 * heads * L * L + 2 * L * L * d;
  push(LayerKind::kAttention, "attn", flops, in + heads * L * L, 0);
  return *this;
}

GraphBuilder& GraphBuilder::add() {
  const double in = 2 * activations();
  push(LayerKind::kOther, "add", activations(), in, 0);
  return *this;
}

}  // namespace trainplan::structure
