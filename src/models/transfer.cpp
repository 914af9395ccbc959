#include "models/transfer.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace trainplan::models {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::kAuto: return "auto";
    case Precision::kFp32: return "fp32";
    case Precision::kMixed: return "mixed";
  }
  return "?";
}

std::optional<Precision> precision_named(const std::string& name) {
  for (auto p : {Precision::kAuto, Precision::kFp32, Precision::kMixed})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

int StepSample::gpus() const { return std::accumulate(gpus_per_node.begin(), gpus_per_node.end(), 0); }

int StepSample::busiest_node() const {
  return gpus_per_node.empty() ? 0 : *std::max_element(gpus_per_node.begin(), gpus_per_node.end());
}

std::string StepSample::placement() const {
  std::string s;
  for (int g : gpus_per_node) s += g <= 9 ? std::to_string(g) : "[" + std::to_string(g) + "]";
  return s;
}

std::string node_size_warning(const std::vector<StepSample>& steps, const structure::HardwareProfile& hw,
                              const std::string& where, const std::string& option) {
  const int per_node = hw.node.gpus_per_node;
  const StepSample* fullest = nullptr;
  for (const auto& s : steps)
    if (!fullest || s.busiest_node() > fullest->busiest_node()) fullest = &s;
  if (per_node <= 0 || !fullest || fullest->busiest_node() <= per_node) return "";
  const bool from_file = !hw.origin.empty() && hw.origin != "built-in";
  return fmt::format("{} places {} GPUs on a node (placement {}), and {} says {}'s node holds {}: the trace ran on "
                     "other nodes than {}, whose links ({:.3g} GB/s a GPU within a node, {:.3g} GB/s across) "
                     "price its all-reduce; where that cluster's links differ, {} (gpus_per_node {}, "
                     "intra_node_bw_GBps, inter_node_bw_GBps: docs/HARDWARE.md)",
                     where, fullest->busiest_node(), fullest->placement(), option, hw.name, per_node,
                     from_file ? "the file's" : "the catalog's", hw.node.intra_node_gbps, hw.node.inter_node_gbps,
                     from_file ? "state them in " + hw.origin : "give " + option + " a hardware file that states them",
                     fullest->busiest_node());
}

StepSample step_sample(const std::string& placement, double batch, double step_s, std::optional<double> sync_s) {
  StepSample s;
  for (char c : placement) {
    if (c < '1' || c > '9') throw InputError("", 0, "placement", "must be digits 1-9, got '" + placement + "'");
    s.gpus_per_node.push_back(c - '0');
  }
  if (s.gpus_per_node.empty()) throw InputError("", 0, "placement", "is empty");
  s.batch = batch, s.step_s = step_s, s.sync_s = sync_s;
  return s;
}

TransferRegistry& TransferRegistry::instance() {
  static TransferRegistry r;
  return r;
}

void TransferRegistry::add(TransferEntry e) {
  entries_.push_back(std::move(e));
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const TransferEntry& a, const TransferEntry& b) { return a.order < b.order; });
}

const TransferEntry& TransferRegistry::get(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return e;
  std::string known;
  for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.name;
  throw InputError("unknown transfer method '" + name + "' (known: " + known + ")");
}

std::vector<const TransferEntry*> TransferRegistry::all() const {
  std::vector<const TransferEntry*> out;
  for (const auto& e : entries_) out.push_back(&e);
  return out;
}

}  // namespace trainplan::models
