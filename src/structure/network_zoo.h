// Built-in layer graphs of the networks trainplan knows: the reference
// trainer's two and the six models of the Pollux traces, written from their
// papers' and reference implementations' architecture descriptions.
//
// Each is found by its own name or by the workload that trains it
// ("cifar10" -> resnet18-cifar, "lenet-mnist" -> lenet5, ...). Inputs that
// vary per example (speech length) are fixed at a stated typical size, which
// describe() repeats.
#pragma once
#include <string>
#include <vector>

#include "core/sample.h"
#include "structure/layer_graph.h"

namespace trainplan::structure {

// The network of `name` (architecture or workload name; failing the exact
// name, its network_name_key), or nullptr.
const LayerGraph* find_network(const std::string& name);
// The network of the samples' one model name; nullptr when they name none,
// several, or one without a graph.
const LayerGraph* find_network(const SampleSet& samples);
// Architecture names, sorted; and the workload names that map to each.
std::vector<std::string> network_names();

// A network's name folded for matching: lowercase, without '-', '_' or spaces
// ("CIFAR-10" and "cifar10" are one key; "opt-1.3b" and "opt-13b" are not).
std::string network_name_key(const std::string& name);
std::vector<std::pair<std::string, std::string>> network_aliases();  // (workload, architecture)

// Builders, exposed for tests.
LayerGraph lenet5();
LayerGraph mlp_fashion();
LayerGraph resnet18_cifar(int classes = 10);
LayerGraph resnet50(int classes = 1000, int image = 224);
LayerGraph bert_base(int sequence = 384);
LayerGraph yolov3(int classes = 20, int image = 416);
LayerGraph deepspeech2(int frames = 500, int freq_bins = 161);
LayerGraph neumf(double users = 6040, double items = 3706, int factors = 8, int mlp_layers = 3);

}  // namespace trainplan::structure
