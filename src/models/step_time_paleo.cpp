#include "models/step_time_paleo.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "core/nodes.h"
#include "core/error.h"
#include "io/csv.h"
#include "structure/gpu_catalog.h"
#include "structure/network_zoo.h"
#include "numerics/nnls.h"
#include "models/registry.h"

namespace trainplan::models {

namespace {
constexpr double kBytesPerParam = 4;  // fp32 gradients

// Forward + backward (= 2 x forward) of `flops` and `bytes` per example at `batch`.
double compute_seconds(double flops, double batch, const PaleoHardware& hw) {
  return 3 * batch * flops / (hw.peak_flops * hw.efficiency);
}
double activation_seconds(double bytes, double batch, const PaleoHardware& hw) {
  return 3 * batch * bytes / hw.memory_bytes_per_s;
}
}  // namespace

PaleoTerms paleo_step_terms(const structure::LayerGraph& g, double batch, int workers, int nodes, const PaleoHardware& hw) {
  PaleoTerms t;
  const double param_bytes = g.params() * kBytesPerParam;
  t.compute = compute_seconds(g.flops(), batch, hw);
  t.memory = activation_seconds(g.bytes(), batch, hw) + paleo_update_seconds(g, hw);
  if (workers > 1) {
    const double ring = 2.0 * (workers - 1) / workers;
    if (nodes > 1)
      t.sync_inter = ring * param_bytes / hw.links.inter_node_bytes_per_s + 2.0 * (workers - 1) * hw.links.inter_node_latency_s;
    else
      t.sync_intra = ring * param_bytes / hw.links.intra_node_bytes_per_s + 2.0 * (workers - 1) * hw.links.intra_node_latency_s;
  }
  return t;
}

double paleo_layer_seconds(const structure::Layer& l, double batch, const PaleoHardware& hw) {
  return compute_seconds(l.flops, batch, hw) + activation_seconds(l.bytes, batch, hw);
}

double paleo_update_seconds(const structure::LayerGraph& g, const PaleoHardware& hw) {
  return 3 * g.params() * kBytesPerParam / hw.memory_bytes_per_s;
}

const structure::LayerGraph& network_for(const SampleSet& samples, const std::string& requested) {
  std::string name = requested;
  if (name.empty()) {
    const std::set<std::string> seen = samples.model_names();
    if (seen.size() > 1)
      throw InputError(samples.source, 0, "model",
                       fmt::format("the samples name {} different models; a structure model fits one network",
                                   seen.size()));
    if (seen.empty())
      throw InputError(samples.source, 0, "model",
                       "the samples do not name their model, so the structure models cannot find its layer graph");
    name = *seen.begin();
  }
  if (const structure::LayerGraph* g = structure::find_network(name)) return *g;
  std::string known;
  for (const auto& n : structure::network_names()) known += (known.empty() ? "" : ", ") + n;
  for (const auto& [w, a] : structure::network_aliases()) known += fmt::format(", {} ({})", w, a);
  throw InputError(samples.source, 0, "model",
                   fmt::format("no layer graph for model {} (known: {})", io::quoted_value(name), known));
}

PaleoModel::PaleoModel(PaleoParams p) : p_(std::move(p)) {}

int PaleoModel::nodes_for(int workers, int nodes) const {
  return nodes > 0 ? nodes : trainplan::nodes_for(workers, p_.gpus_per_node);
}

PaleoFactors fit_paleo_factors(const std::vector<PaleoObservation>& obs, const PaleoHardware& hw) {
  if (obs.empty()) throw InputError("PALEO calibration: no observations");
  // Columns: compute, memory, sync within a node, sync across nodes, overhead;
  // each row divided by its measured step time (least relative squares).
  const int rows = static_cast<int>(obs.size());
  Eigen::MatrixXd A(rows, 5);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(rows);
  bool intra = false, inter = false;
  for (int i = 0; i < rows; ++i) {
    const auto& o = obs[i];
    if (!o.graph || !(o.batch > 0) || o.workers < 1 || !(o.step_s > 0) || !std::isfinite(o.step_s))
      throw InputError("PALEO calibration: observations need a network, batch > 0, workers >= 1, step time > 0");
    const PaleoTerms t = paleo_step_terms(*o.graph, o.batch, o.workers, o.nodes, hw);
    A.row(i) << t.compute / o.step_s, t.memory / o.step_s, t.sync_intra / o.step_s, t.sync_inter / o.step_s,
        1 / o.step_s;
    intra |= t.sync_intra > 0, inter |= t.sync_inter > 0;
  }
  PaleoFactors out;
  // A sync term no observation exercises keeps its datasheet value: move it to the target.
  auto fix = [&](int col, const char* what) {
    b -= A.col(col);
    A.col(col).setZero();
    out.notes.push_back(fmt::format("no {} sample: that sync term kept at the datasheet value (factor 1)", what));
  };
  if (!intra) fix(2, "multi-worker single-node");
  if (!inter) fix(3, "multi-node");
  const auto r = numerics::nnls(A, b);
  for (int j = 0; j < 5; ++j) out.f[j] = r.x(j);
  if (!intra) out.f[2] = 1;
  if (!inter) out.f[3] = 1;
  return out;
}

double PaleoFactors::step(const structure::LayerGraph& g, double batch, int workers, int nodes, const PaleoHardware& hw) const {
  const PaleoTerms t = paleo_step_terms(g, batch, workers, nodes, hw);
  return f[0] * t.compute + f[1] * t.memory + f[2] * t.sync_intra + f[3] * t.sync_inter + f[4];
}

void PaleoModel::fit(const SampleSet& set) {
  graph_ = &network_for(set, p_.network);
  auto ds = p_.dataset_size ? p_.dataset_size : set.dataset_size;
  if (!ds || *ds <= 0)
    throw InputError(set.source, 0, "dataset_size", "the structure models need the dataset size (examples per epoch)");
  n_ = double(*ds);
  factors_ = PaleoFactors{};
  hardware_note_.clear();
  std::set<std::string> hw;
  for (const auto& s : set.samples) hw.insert(s.hardware);
  // A label the catalog knows is compared by its entry's datasheet ("Tesla T4" is a T4's figures,
  // a hardware file over the A100's figures is an A100's); any other by the GPU's name in it, in any case.
  auto same_gpu = [&](const std::string& label) {
    if (const auto h = structure::find_builtin_hardware(label))
      return h->gpu.fp32_tflops * 1e12 == p_.hardware.peak_flops &&
             h->gpu.memory_bandwidth_gbps * 1e9 == p_.hardware.memory_bytes_per_s;
    const std::string g = io::lowercase(p_.hardware.gpu);
    return !g.empty() && io::lowercase(label).find(g) != std::string::npos;
  };
  if (!hw.empty() && (hw.size() != 1 || !same_gpu(*hw.begin())))
    hardware_note_ = fmt::format("the samples were measured on {}, the datasheet figures are {}'s{}: {}",
                                 hw.size() > 1 ? "several kinds of hardware"
                                 : hw.begin()->empty() ? "unrecorded hardware"
                                                       : "'" + *hw.begin() + "'",
                                 p_.hardware.gpu, p_.hardware.named ? " (--hardware)" : " (give --hardware)",
                                 p_.calibrate ? "the fitted factors absorb the difference"
                                              : "this analytical model is off by the hardware's speed");
  if (!p_.calibrate) return;
  if (set.empty()) throw InputError(set.source, 0, "", "paleo-fit: no samples to fit");
  std::vector<PaleoObservation> obs;
  for (const auto& s : set.samples) {
    if (!(s.batch > 0) || s.workers < 1 || !(s.epoch_time_s > 0) || !std::isfinite(s.epoch_time_s))
      throw InputError(set.source, 0, "", "paleo-fit: samples need batch > 0, workers >= 1, epoch_time_s > 0");
    obs.push_back({graph_, s.batch, s.workers, nodes_for(s.workers, s.nodes), s.epoch_time_s * s.batch * s.workers / n_});
  }
  factors_ = fit_paleo_factors(obs, p_.hardware);
}

double PaleoModel::step_time(double batch, int workers, int nodes) const {
  return factors_.step(*graph_, batch, workers, nodes_for(workers, nodes), p_.hardware);
}

double PaleoModel::predict(double batch, int workers, int nodes) const {
  return n_ / (batch * workers) * step_time(batch, workers, nodes);
}

std::string PaleoModel::describe() const {
  if (!graph_) return name() + ": (not fitted)";
  const structure::LayerGraph& g = *graph_;
  std::string s = fmt::format("{}: {} ({} layers: {} conv, {} linear, {} recurrent, {} attention); "
                              "{:.4g} GFLOP forward and {:.4g} MB of activations per example, {:.4g} M parameters\n"
                              "  hardware: {}, efficiency {:g}",
                              name(), g.name, g.layers.size(), g.count(structure::LayerKind::kConv),
                              g.count(structure::LayerKind::kLinear), g.count(structure::LayerKind::kRecurrent),
                              g.count(structure::LayerKind::kAttention), g.flops() / 1e9, g.bytes() / 1e6,
                              g.params() / 1e6, p_.hardware.name, p_.hardware.efficiency);
  if (p_.calibrate)
    s += fmt::format("\n  step = {:.4g} compute + {:.4g} memory + {:.4g} sync within a node + {:.4g} sync across "
                     "nodes + {:.4g} s overhead (NNLS on relative errors; factors of PALEO's terms)",
                     factors_.f[0], factors_.f[1], factors_.f[2], factors_.f[3], factors_.f[4]) +
         "\n  note: within one network compute and memory are both proportional to the batch, so only their sum "
         "is identified; the split between them is one of many that fit equally";
  else
    s += "\n  analytical: nothing fitted (PALEO's formula with datasheet figures)";
  for (const auto& n : factors_.notes) s += "\n  note: " + n;
  if (!hardware_note_.empty()) s += "\n  note: " + hardware_note_;
  return s;
}

PaleoHardware paleo_hardware(const structure::HardwareSpec& spec) {
  PaleoHardware h;
  h.name = fmt::format("{} (fp32 {:.4g} TFLOP/s, {:.4g} GB/s)", spec.name, spec.fp32_flops / 1e12,
                       spec.memory_bytes_per_s / 1e9);
  h.peak_flops = spec.fp32_flops;
  h.memory_bytes_per_s = spec.memory_bytes_per_s;
  h.links = spec;
  h.gpu = spec.gpu;
  h.named = true;
  return h;
}

namespace {
// The hardware --hardware names (ModelParams::hardware), else the T4 node of PaleoHardware's defaults.
std::unique_ptr<TimeModel> make_paleo(const ModelParams& mp, bool calibrate) {
  PaleoParams p;
  if (mp.hardware) p.hardware = paleo_hardware(*mp.hardware);
  p.calibrate = calibrate;
  return std::make_unique<PaleoModel>(p);
}
}  // namespace

static TimeModelRegistrar reg_paleo("paleo",
                                    "PALEO: step time from the network's layer graph and the hardware's datasheet "
                                    "(flops/peak, bytes/bandwidth, ring all-reduce; --hardware's, else a T4's); "
                                    "fits nothing",
                                    TimeFactory([](const ModelParams& p) { return make_paleo(p, false); }));
static TimeModelRegistrar reg_paleo_fit("paleo-fit",
                                        "PALEO's four cost terms of the layer graph, each scaled by NNLS, plus a "
                                        "per-step overhead",
                                        TimeFactory([](const ModelParams& p) { return make_paleo(p, true); }));

}  // namespace trainplan::models
