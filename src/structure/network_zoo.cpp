#include "structure/network_zoo.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace trainplan::structure {

namespace {

// conv -> batch norm -> ReLU (leaky or not: the same cost here).
void conv_bn_relu(GraphBuilder& g, int out, int k, int stride, int pad) {
  g.conv(out, k, stride, pad).batch_norm().relu();
}

// Closes a ResNet block whose input was cin x h x w: a 1x1 projection of the
// input when the shape changed, then the residual addition and ReLU.
void close_residual(GraphBuilder& g, int cin, int h, int w, int stride) {
  const int out = g.channels(), ho = g.height(), wo = g.width();
  if (stride != 1 || cin != out) {
    g.set_image(cin, h, w).conv(out, 1, stride, 0).batch_norm();
    g.set_image(out, ho, wo);
  }
  g.add().relu();
}

// ResNet basic block (two 3x3 convs).
void basic_block(GraphBuilder& g, int out, int stride) {
  const int cin = g.channels(), h = g.height(), w = g.width();
  conv_bn_relu(g, out, 3, stride, 1);
  g.conv(out, 3, 1, 1).batch_norm();
  close_residual(g, cin, h, w, stride);
}

// ResNet bottleneck (1x1, 3x3 with the stride, 1x1 to 4x width).
void bottleneck(GraphBuilder& g, int width, int stride) {
  const int cin = g.channels(), h = g.height(), w = g.width();
  conv_bn_relu(g, width, 1, 1, 0);
  conv_bn_relu(g, width, 3, stride, 1);
  g.conv(4 * width, 1, 1, 0).batch_norm();
  close_residual(g, cin, h, w, stride);
}

// Darknet residual unit: 1x1 to half the channels, 3x3 back, add.
void darknet_residual(GraphBuilder& g) {
  const int c = g.channels();
  conv_bn_relu(g, c / 2, 1, 1, 0);
  conv_bn_relu(g, c, 3, 1, 1);
  g.add();
}

// YOLOv3 detection head: five alternating 1x1/3x3 convs (returns after the
// fifth, the branch point), then a 3x3 and the 1x1 output conv with bias.
void yolo_head(GraphBuilder& g, int width, int outputs, int* branch_c, int* branch_h, int* branch_w) {
  for (int i = 0; i < 5; ++i) conv_bn_relu(g, i % 2 ? 2 * width : width, i % 2 ? 3 : 1, 1, i % 2 ? 1 : 0);
  *branch_c = g.channels(), *branch_h = g.height(), *branch_w = g.width();
  conv_bn_relu(g, 2 * width, 3, 1, 1);
  g.conv(outputs, 1, 1, 0, /*bias=*/true);
}

}  // namespace

LayerGraph lenet5() {
  GraphBuilder g("lenet5", "LeNet-5 as trained by trainplan-train (ReLU, max-pooling), 1x28x28 MNIST");
  g.image(1, 28, 28).conv(6, 5, 1, 2, true).relu().pool(2, 2);
  g.conv(16, 5, 1, 0, true).relu().pool(2, 2);
  g.flatten().linear(120).relu().linear(84).relu().linear(10);
  return g.build();
}

LayerGraph mlp_fashion() {
  GraphBuilder g("mlp-784-256-128-10", "784-256-128-10 ReLU MLP as trained by trainplan-train, Fashion-MNIST");
  g.image(1, 28, 28).flatten().linear(256).relu().linear(128).relu().linear(10);
  return g.build();
}

LayerGraph resnet18_cifar(int classes) {
  GraphBuilder g("resnet18-cifar", "ResNet-18 for 3x32x32 CIFAR (3x3 stem, no max-pool), as in Pollux's cifar10");
  g.image(3, 32, 32);
  conv_bn_relu(g, 64, 3, 1, 1);
  const int widths[] = {64, 128, 256, 512};
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < 2; ++b) basic_block(g, widths[s], s > 0 && b == 0 ? 2 : 1);
  g.global_pool().flatten().linear(classes);
  return g.build();
}

LayerGraph resnet50(int classes, int image) {
  GraphBuilder g("resnet50", "ResNet-50 (torchvision, stride on the 3x3 conv), 3x224x224 ImageNet");
  g.image(3, image, image);
  conv_bn_relu(g, 64, 7, 2, 3);
  g.pool(3, 2, 1);
  const int blocks[] = {3, 4, 6, 3}, widths[] = {64, 128, 256, 512};
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < blocks[s]; ++b) bottleneck(g, widths[s], s > 0 && b == 0 ? 2 : 1);
  g.global_pool().flatten().linear(classes);
  return g.build();
}

LayerGraph bert_base(int sequence) {
  GraphBuilder g("bert-base-squad",
                 "BERT-base (12 layers, 768 wide, 12 heads) with the SQuAD span head, sequences of 384 tokens");
  const int d = 768, ffn = 3072, heads = 12;
  g.sequence(sequence, d);
  g.embedding(30522, d, sequence).embedding(512, d, sequence).embedding(2, d, sequence).add().layer_norm();
  for (int l = 0; l < 12; ++l) {
    g.linear(3 * d);  // Q, K, V projections
    g.set_channels(d).attention(heads);
    g.linear(d).add().layer_norm();
    g.linear(ffn).gelu().linear(d).add().layer_norm();
  }
  g.linear(2);  // start and end logits
  return g.build();
}

LayerGraph yolov3(int classes, int image) {
  GraphBuilder g("yolov3", "YOLOv3 (Darknet-53 and three heads), 3x416x416, 20 VOC classes as in Pollux's yolov3");
  g.image(3, image, image);
  conv_bn_relu(g, 32, 3, 1, 1);
  const int stages[] = {1, 2, 8, 8, 4};
  int route_c[5];  // channels at the end of each stage (the concat partners)
  for (int s = 0; s < 5; ++s) {
    conv_bn_relu(g, 64 << s, 3, 2, 1);
    for (int b = 0; b < stages[s]; ++b) darknet_residual(g);
    route_c[s] = g.channels();
  }
  const int outputs = 3 * (5 + classes);
  int bc, bh, bw;
  yolo_head(g, 512, outputs, &bc, &bh, &bw);
  // Up to the 26x26 scale: 1x1 to 256, upsample, concat with the stage-4 route.
  g.set_image(bc, bh, bw);
  conv_bn_relu(g, 256, 1, 1, 0);
  g.upsample(2).set_channels(256 + route_c[3]);
  yolo_head(g, 256, outputs, &bc, &bh, &bw);
  g.set_image(bc, bh, bw);
  conv_bn_relu(g, 128, 1, 1, 0);
  g.upsample(2).set_channels(128 + route_c[2]);
  yolo_head(g, 128, outputs, &bc, &bh, &bw);
  return g.build();
}

LayerGraph deepspeech2(int frames, int freq_bins) {
  GraphBuilder g("deepspeech2",
                 "DeepSpeech2 (deepspeech.pytorch: two convs, five bidirectional LSTM layers of 1024 summed over "
                 "directions, 29 characters); a typical utterance of 500 frames x 161 frequency bins");
  g.image(1, freq_bins, frames);
  g.conv(32, 41, 11, 2, 2, 20, 5, false).batch_norm().relu();
  g.conv(32, 21, 11, 2, 1, 10, 5, false).batch_norm().relu();
  const int h = g.height(), t = g.width();
  g.sequence(t, 32 * h);
  for (int l = 0; l < 5; ++l) {
    g.recurrent(1024, 4, true);
    g.set_channels(1024);  // the two directions are summed
    if (l + 1 < 5) g.batch_norm();
  }
  g.linear(29, false);
  return g.build();
}

LayerGraph neumf(double users, double items, int factors, int mlp_layers) {
  GraphBuilder g("neumf", "NeuMF (GMF and a 3-layer MLP, 8 predictive factors), MovieLens-1M sized tables");
  const int mlp_dim = factors << (mlp_layers - 1);  // 32 for 8 factors, 3 layers
  g.sequence(1, 2 * factors);
  g.embedding(users, factors, 1).embedding(items, factors, 1);
  g.sequence(1, 2 * mlp_dim);
  g.embedding(users, mlp_dim, 1).embedding(items, mlp_dim, 1);
  for (int l = 0, w = 2 * mlp_dim; l < mlp_layers; ++l) {
    w /= 2;
    g.linear(w).relu();
  }
  g.set_channels(2 * factors).linear(1);  // GMF product concatenated with the MLP output
  return g.build();
}

const LayerGraph* find_network(const std::string& name) {
  static const std::map<std::string, LayerGraph> nets = [] {
    std::map<std::string, LayerGraph> m;
    for (auto g : {lenet5(), mlp_fashion(), resnet18_cifar(), resnet50(), bert_base(), yolov3(), deepspeech2(),
                   neumf()})
      m.emplace(g.name, std::move(g));
    return m;
  }();
  auto it = nets.find(name);
  if (it == nets.end())
    for (const auto& [workload, arch] : network_aliases())
      if (workload == name) it = nets.find(arch);
  // Then in any case, with or without '-', '_' or spaces ("CIFAR-10" is cifar10): a folder or
  // a column names a network as its owner wrote it.
  if (it == nets.end()) {
    const std::string key = network_name_key(name);
    for (auto i = nets.begin(); i != nets.end() && it == nets.end(); ++i)
      if (network_name_key(i->first) == key) it = i;
    for (const auto& [workload, arch] : network_aliases())
      if (it == nets.end() && network_name_key(workload) == key) it = nets.find(arch);
  }
  return it == nets.end() ? nullptr : &it->second;
}

std::string network_name_key(const std::string& name) {
  std::string key;
  for (unsigned char c : name)
    if (c != '-' && c != '_' && c != ' ') key += char(std::tolower(c));
  return key;
}

const LayerGraph* find_network(const SampleSet& samples) {
  const auto names = samples.model_names();
  return names.size() == 1 ? find_network(*names.begin()) : nullptr;
}

std::vector<std::string> network_names() {
  return {"bert-base-squad", "deepspeech2", "lenet5", "mlp-784-256-128-10", "neumf", "resnet18-cifar", "resnet50",
          "yolov3"};
}

std::vector<std::pair<std::string, std::string>> network_aliases() {
  return {{"lenet-mnist", "lenet5"},   {"mlp-fashion", "mlp-784-256-128-10"}, {"cifar10", "resnet18-cifar"},
          {"imagenet", "resnet50"},    {"bert", "bert-base-squad"},          {"yolov3", "yolov3"},
          {"deepspeech2", "deepspeech2"}, {"ncf", "neumf"}};
}

}  // namespace trainplan::structure
