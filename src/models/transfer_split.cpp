#include "models/transfer_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/median.h"
#include "numerics/levenberg_marquardt.h"
#include "numerics/normal_quantile.h"
#include "numerics/student_t_quantile.h"

namespace trainplan::models {

namespace {

// Below this share of every source step, the GPU's part is not seen.
constexpr double kHostBoundShare = 0.05;

// (a^p + b^p)^(1/p), scaled to stay finite for large p.
double soft_max(double a, double b, double p) {
  double m = std::max(a, b);
  if (!(m > 0)) return 0;
  return m * std::pow(std::pow(a / m, p) + std::pow(b / m, p), 1 / p);
}

double ring(int r) { return r > 1 ? 2.0 * (r - 1) / r : 0; }

// The compute side a row measured: its step less the synchronisation it
// waited for, unless that leaves too little to trust.
double compute_time(const StepSample& s) {
  if (s.sync_s && *s.sync_s > 0 && s.step_s - *s.sync_s > 0.1 * s.step_s) return s.step_s - *s.sync_s;
  return s.step_s;
}

// Whether a row's compute side is known: one GPU (no all-reduce), or a
// measured synchronisation. A multi-GPU step without one (profiling samples
// measure none) mixes the all-reduce into its compute side.
bool compute_side_known(const StepSample& s) { return s.gpus() == 1 || s.sync_s.has_value(); }

double median_or_zero(const std::vector<double>& v) { return v.empty() ? 0 : median(v); }

// The TFLOP/s a layer kind's matrix work runs at, at `precision`.
double matrix_peak_tflops(structure::LayerKind kind, const structure::GpuSpec& g, Precision precision) {
  using structure::LayerKind;
  if (precision == Precision::kMixed) return g.amp_matrix_tflops();
  return kind == LayerKind::kConv ? g.fp32_conv_tflops() : g.fp32_matmul_tflops();
}

// bounded_lm's forward differences step 1e-6 x |x|, which is no step at all
// for a parameter at or near 0 (a latency, a log factor of 1): fit x + 10.
numerics::LmResult shifted_lm(const numerics::ResidualFn& f, const Eigen::VectorXd& x0, const Eigen::VectorXd& lo,
                              const Eigen::VectorXd& hi, const Eigen::Array<bool, Eigen::Dynamic, 1>& fixed) {
  const double shift = 10;
  auto g = [&](const Eigen::VectorXd& y) { return f((y.array() - shift).matrix()); };
  Eigen::VectorXd y0 = (x0.array() + shift).matrix(), ylo = (lo.array() + shift).matrix(),
                  yhi = (hi.array() + shift).matrix();
  auto r = numerics::bounded_lm(g, y0, ylo, yhi, fixed);
  r.x = (r.x.array() - shift).matrix();
  return r;
}

}  // namespace

RooflineTime roofline_time(const structure::LayerGraph& g, const structure::GpuSpec& gpu, Precision precision) {
  const double bytes_scale = precision == Precision::kMixed ? 0.5 : 1.0;  // fp16 activations
  const double bw = gpu.memory_bandwidth_gbps * 1e9;
  RooflineTime r;
  double compute_bound = 0;
  for (const auto& l : g.layers) {
    double peak = matrix_peak_tflops(l.kind, gpu, precision) * 1e12;
    double tc = peak > 0 ? l.flops / peak : 0;
    double tm = bw > 0 ? l.bytes * bytes_scale / bw : 0;
    double t = 3 * std::max(tc, tm);  // backward = 2 x forward
    r.seconds += t;
    if (tc >= tm) compute_bound += t;
  }
  r.compute_share = r.seconds > 0 ? compute_bound / r.seconds : 0;
  return r;
}

StepParts SplitTransferModel::evaluate(const Terms& t, const StepSample& at, double scale) {
  StepParts p;
  const int k = std::max(1, at.busiest_node()), r = std::max(1, at.gpus()), n = std::max(1, at.nodes());
  p.host = scale * t.host * (1 + t.contention * (k - 1));
  p.gpu_fixed = scale * t.gpu_step;
  double example = scale * t.gpu_example * at.batch;
  p.compute = example * t.compute_share;
  p.memory = example * (1 - t.compute_share);
  double c = soft_max(p.host, p.gpu_fixed + example, t.p);
  if (r > 1) p.comm = n == 1 ? t.ai + t.ki * ring(r) : t.ae + t.ke * ring(r) * (1 + t.lambda * (k - 1));
  p.total = p.comm > 0 ? soft_max(c, p.comm, t.g) : c;
  p.exposed_comm = p.total - c;
  return p;
}

void SplitTransferModel::fit_source(const std::vector<StepSample>& rows, const TransferProblem& problem) {
  src_ = {};
  src_.rows = rows.size();
  std::vector<double> cm;
  double cmin = INFINITY;
  for (const auto& s : rows) cm.push_back(compute_time(s)), cmin = std::min(cmin, cm.back());
  // The shortest one-GPU step, else the shortest of all.
  src_.shortest_step_s = INFINITY;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].gpus() == 1) src_.shortest_step_s = std::min(src_.shortest_step_s, cm[i]);
  if (!std::isfinite(src_.shortest_step_s)) src_.shortest_step_s = cmin;

  Terms t = fit_compute_side(rows, cm, problem);
  fit_communication(rows, problem, t);
  src_.intra_latency_s = t.ai, src_.intra_s = t.ki, src_.inter_latency_s = t.ae, src_.inter_s = t.ke;
  src_.inter_per_gpu = t.lambda, src_.comm_overlap = t.g;
  t.compute_share = ratios_.compute_share_source;
  source_terms_ = t;

  fit_batch_quirks(rows, cm, t);

  double num = 0, den = 0, ss = 0;
  for (const auto& s : rows) {
    double y = evaluate(t, s).total;
    num += std::abs(y - s.step_s), den += s.step_s, ss += std::pow(std::log(y / s.step_s), 2);
  }
  src_.in_sample_mre = den > 0 ? num / den : 0;
  src_.rms_log_residual = std::sqrt(ss / rows.size());
}

SplitTransferModel::Terms SplitTransferModel::fit_compute_side(const std::vector<StepSample>& rows,
                                                               const std::vector<double>& cm,
                                                               const TransferProblem& problem) {
  // Stage 1 fits the rows whose compute side is known (all of them when
  // none is); the others' all-reduce is left to stage 2.
  std::vector<size_t> known;
  for (size_t i = 0; i < rows.size(); ++i)
    if (compute_side_known(rows[i])) known.push_back(i);
  if (known.empty())
    for (size_t i = 0; i < rows.size(); ++i) known.push_back(i);
  bool shared_node = false;  // a known row with more than one GPU on a node: contention is seen
  double bmin = INFINITY, bmax = 0, cmin = INFINITY, cmax = 0;
  for (size_t i : known) {
    bmin = std::min(bmin, rows[i].batch), bmax = std::max(bmax, rows[i].batch);
    cmin = std::min(cmin, cm[i]), cmax = std::max(cmax, cm[i]);
    shared_node = shared_node || rows[i].busiest_node() > 1;
  }
  // Stage 1: host, contention, per-step and per-example GPU time, overlap.
  // Starting points from a straight line c = F + V b (relative least squares).
  double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (size_t i : known) {
    double w = 1 / (cm[i] * cm[i]), b = rows[i].batch;
    s00 += w, s01 += w * b, s11 += w * b * b, r0 += w * cm[i], r1 += w * b * cm[i];
  }
  double det = s00 * s11 - s01 * s01;
  double slope = det > 0 ? (s00 * r1 - s01 * r0) / det : cmax / bmax;
  double fixed = det > 0 ? (r0 - slope * s01) / s00 : cmin;
  slope = std::max(slope, 1e-3 * cmax / bmax), fixed = std::max(fixed, 0.05 * cmin);

  auto stage1 = [&](const Eigen::VectorXd& x) {
    Terms t;
    t.host = std::exp(x(0)), t.contention = x(1), t.gpu_step = std::exp(x(2)), t.gpu_example = std::exp(x(3));
    t.p = x(4);
    Eigen::VectorXd res(known.size());
    for (size_t j = 0; j < known.size(); ++j) {
      double v = evaluate(t, rows[known[j]]).total;  // r GPUs but no comm terms: c only
      res(j) = std::log(std::max(v, 1e-300)) - std::log(cm[known[j]]);
    }
    return res;
  };
  // evaluate() adds communication for r > 1; stage 1 has none (all zero).
  Eigen::VectorXd lo(5), hi(5);
  lo << std::log(1e-4 * cmin), 0, std::log(1e-4 * cmin), std::log(1e-6 * cmax / bmax), 1;
  hi << std::log(2 * cmax), p_.contention_max, std::log(2 * cmax), std::log(10 * cmax / bmin), p_.overlap_max;
  Eigen::Array<bool, Eigen::Dynamic, 1> free1 = Eigen::Array<bool, Eigen::Dynamic, 1>::Constant(5, false);
  free1(1) = !shared_node;  // no row shows a shared node's contention: held at 0
  numerics::LmResult best;
  best.cost = INFINITY;
  for (double host_share : {0.1, 0.5, 0.9})
    for (double p : {2.0, 5.0}) {
      Eigen::VectorXd x0(5);
      x0 << std::log(std::max(host_share * fixed, 1e-4 * cmin)), shared_node ? 0.05 : 0.0,
          std::log(std::max((1 - host_share) * fixed, 1e-4 * cmin)), std::log(slope), p;
      auto r = shifted_lm(stage1, x0, lo, hi, free1);
      if (r.cost < best.cost) best = r;
    }
  // A per-step cost that does not change with the batch fits as host time or
  // as per-step GPU work alike. Claim GPU work beyond streaming the weights
  // only when the steps need it: the fit with the per-step GPU work at that
  // floor wins unless it is clearly worse.
  double floor_u = std::max(1e-4 * cmin, problem.network && problem.source_hw.gpu.memory_bandwidth_gbps > 0
                                             ? 12 * problem.network->params() / (problem.source_hw.gpu.memory_bandwidth_gbps * 1e9)
                                             : 0.0);
  if (std::exp(best.x(2)) > floor_u) {
    Eigen::Array<bool, Eigen::Dynamic, 1> hold_u = free1;
    hold_u(2) = true;
    for (double p : {1.5, 5.0}) {
      Eigen::VectorXd x0 = best.x;
      x0(0) = std::log(std::max(std::exp(best.x(0)) + std::exp(best.x(2)), 1e-4 * cmin));
      x0(2) = std::log(floor_u), x0(4) = p;
      auto r = shifted_lm(stage1, x0, lo, hi, hold_u);
      if (r.cost <= best.cost * (1 + p_.host_preference)) best = r, src_.host_preferred = true;
    }
  }
  Terms t;
  t.host = std::exp(best.x(0)), t.contention = best.x(1), t.gpu_step = std::exp(best.x(2));
  t.gpu_example = std::exp(best.x(3)), t.p = best.x(4);
  src_.host_s = t.host, src_.contention = t.contention, src_.gpu_step_s = t.gpu_step;
  src_.gpu_example_s = t.gpu_example, src_.host_overlap = t.p;
  // The host time shapes the steps when it is at least half the GPU time at
  // the smallest batch; below that the fit cannot tell it from zero.
  src_.host_seen = t.host >= 0.5 * (t.gpu_step + t.gpu_example * bmin);

  return t;
}

void SplitTransferModel::fit_communication(const std::vector<StepSample>& rows,
                                           const TransferProblem& problem, Terms& t) {
  // Stage 2: communication, on the multi-GPU rows, with c held.
  std::vector<size_t> multi;
  std::vector<double> intra_syncs, inter_syncs;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& s = rows[i];
    if (s.gpus() < 2) continue;
    multi.push_back(i);
    // Unmeasured, the synchronisation is what the step adds to its compute side's fit.
    double sync = s.sync_s ? std::max(*s.sync_s, 1e-5) : std::max(s.step_s - evaluate(t, s).total, 1e-5);
    (s.nodes() == 1 ? src_.intra_measured : src_.inter_measured) = true;
    (s.nodes() == 1 ? intra_syncs : inter_syncs).push_back(sync / ring(s.gpus()));
  }
  const auto& shw = problem.source_hw.node;
  if (!multi.empty()) {
    auto stage2 = [&](const Eigen::VectorXd& x) {
      Terms u = t;
      u.ai = x(0), u.ki = std::exp(x(1)), u.ae = x(2), u.ke = std::exp(x(3)), u.lambda = x(4), u.g = x(5);
      if (!src_.intra_measured) u.ki = u.ke * shw.inter_node_gbps / std::max(shw.intra_node_gbps, 1e-9);
      Eigen::VectorXd res(multi.size());
      for (size_t j = 0; j < multi.size(); ++j) {
        const auto& s = rows[multi[j]];
        res(j) = std::log(std::max(evaluate(u, s).total, 1e-300)) - std::log(s.step_s);
      }
      return res;
    };
    double ki0 = intra_syncs.empty() ? median_or_zero(inter_syncs) : median_or_zero(intra_syncs);
    double ke0 = inter_syncs.empty() ? ki0 : median_or_zero(inter_syncs);
    Eigen::VectorXd x0(6), lo2(6), hi2(6);
    lo2 << 0, std::log(1e-9), 0, std::log(1e-9), 0, 1;
    hi2 << p_.latency_max, std::log(100.0), p_.latency_max, std::log(100.0), 2, p_.comm_overlap_max;
    Eigen::Array<bool, Eigen::Dynamic, 1> fixed2 = Eigen::Array<bool, Eigen::Dynamic, 1>::Constant(6, false);
    if (!src_.intra_measured) fixed2(0) = fixed2(1) = true;
    if (!src_.inter_measured) fixed2(2) = fixed2(3) = fixed2(4) = true;
    numerics::LmResult b2;
    b2.cost = INFINITY;
    for (double g : {1.5, 3.0}) {
      x0 << 0, std::log(std::max(ki0, 1e-8)), 0, std::log(std::max(ke0, 1e-8)), 0, g;
      auto r = shifted_lm(stage2, x0, lo2, hi2, fixed2);
      if (r.cost < b2.cost) b2 = r;
    }
    t.ai = b2.x(0), t.ki = std::exp(b2.x(1)), t.ae = b2.x(2), t.ke = std::exp(b2.x(3)), t.lambda = b2.x(4);
    t.g = b2.x(5);
    // A part no row exercised: scaled from the other by the links' bandwidths.
    if (!src_.intra_measured) {
      t.ki = t.ke * shw.inter_node_gbps / std::max(shw.intra_node_gbps, 1e-9), t.ai = t.ae;
      notes_.push_back("no source row on one node with >= 2 GPUs: intra-node cost scaled from the inter-node one by the links");
    }
    if (!src_.inter_measured) {
      t.ke = t.ki * shw.intra_node_gbps / std::max(shw.inter_node_gbps, 1e-9), t.ae = t.ai, t.lambda = 0;
      notes_.push_back("no source row across nodes: inter-node cost scaled from the intra-node one by the links");
    }
  } else if (problem.network) {
    double bytes = 4 * problem.network->params();
    t.ki = bytes / (std::max(shw.intra_node_gbps, 1e-9) * 1e9 * p_.link_efficiency);
    t.ke = bytes / (std::max(shw.inter_node_gbps, 1e-9) * 1e9 * p_.link_efficiency);
    t.g = 2;
    notes_.push_back(fmt::format("no multi-GPU source row: all-reduce of {:.3g} MB at {:.0f}% of the links' bandwidth",
                                 bytes / 1e6, 100 * p_.link_efficiency));
  } else {
    notes_.push_back("no multi-GPU source row and no layer graph: communication is not modelled (zero)");
  }
}

void SplitTransferModel::fit_batch_quirks(const std::vector<StepSample>& rows, const std::vector<double>& cm,
                                          const Terms& t) {
  // The source's mean log departure from its compute-side fit, per batch.
  std::map<double, std::pair<double, int>> q;
  for (size_t i = 0; i < rows.size(); ++i) {
    auto& a = q[rows[i].batch];
    const StepParts e = evaluate(t, rows[i]);
    a.first += compute_side_known(rows[i]) ? std::log(cm[i] / (e.total - e.exposed_comm)) : std::log(rows[i].step_s / e.total);
    a.second++;
  }
  // Kept only as far as the departures alternate from batch to batch (lag-1
  // autocorrelation below 0): a smooth run of departures is this model's
  // misfit of the source's shape, which the transfer changes; a batch that
  // stands out from both neighbours is the workload's own (an input pipeline
  // that is slow at that batch), and recurs on other hardware.
  quirk_.clear();
  std::vector<double> dev;
  double mean = 0;
  for (const auto& [b, v] : q) dev.push_back(v.first / v.second), mean += dev.back() / q.size();
  double num1 = 0, den1 = 0;
  for (size_t i = 0; i < dev.size(); ++i) {
    dev[i] -= mean, den1 += dev[i] * dev[i];
    if (i > 0) num1 += dev[i] * dev[i - 1];
  }
  src_.batch_quirk_weight = dev.size() >= 3 && den1 > 0 ? std::clamp(-num1 / den1, 0.0, 1.0) : 0;
  size_t qi = 0;
  for (const auto& [b, v] : q) quirk_[b] = src_.batch_quirk_weight * dev[qi++];

}

void SplitTransferModel::set_ratios(const TransferProblem& problem) {
  const auto& sg = problem.source_hw.gpu;
  const auto& tg = problem.target_hw.gpu;
  auto ratio = [](double tgt, double src) { return src > 0 && tgt > 0 ? tgt / src : 1.0; };
  ratios_ = {};
  ratios_.memory = ratio(tg.memory_bandwidth_gbps, sg.memory_bandwidth_gbps);
  ratios_.intra_link = ratio(problem.target_hw.node.intra_node_gbps, problem.source_hw.node.intra_node_gbps);
  // A network the catalog only assumes says nothing of the cluster the
  // steps will run on; like the host, the measured cluster's is kept. But
  // not as faster than the target's nodes: where their GPUs are linked more
  // slowly than the source's (PCIe against NVLink), their network is taken
  // as slower by as much (a DGX's InfiniBand is not a PCIe server's).
  ratios_.inter_link_assumed = problem.target_hw.node.inter_node_assumed || problem.source_hw.node.inter_node_assumed;
  ratios_.inter_link = ratios_.inter_link_assumed
                           ? std::min(1.0, ratios_.intra_link)
                           : ratio(problem.target_hw.node.inter_node_gbps, problem.source_hw.node.inter_node_gbps);

  // The target's all-reduce no slower than its own links at the least efficiency allow
  // (SplitTransferParams::least_link_efficiency): what the source's links cannot explain is not
  // carried to the target multiplied by their ratio.
  if (problem.network && p_.least_link_efficiency > 0) {
    const double bytes = 4 * problem.network->params();
    auto held = [&](double k_src, double bw_src, double bw_tgt, double& ratio, double& efficiency) {
      if (!(k_src > 0 && bw_src > 0 && bw_tgt > 0 && bytes > 0)) return false;
      efficiency = bytes / (k_src * bw_src * 1e9);
      const double ceiling = p_.latency_max + bytes / (bw_tgt * 1e9 * p_.least_link_efficiency);
      if (k_src / ratio <= ceiling) return false;
      ratio = k_src / ceiling;
      return true;
    };
    const auto &sn = problem.source_hw.node, &tn = problem.target_hw.node;
    ratios_.intra_link_held = held(src_.intra_s, sn.intra_node_gbps, tn.intra_node_gbps, ratios_.intra_link,
                                   ratios_.source_intra_efficiency);
    // A network the catalog only assumes has no bandwidth to price at the floor: its ratio stays.
    if (!ratios_.inter_link_assumed)
      ratios_.inter_link_held = held(src_.inter_s, sn.inter_node_gbps, tn.inter_node_gbps, ratios_.inter_link,
                                     ratios_.source_inter_efficiency);
  }

  const bool given = problem.precision.profiled != Precision::kAuto;
  Precision prec = given ? problem.precision.profiled : p_.precision;
  if (prec == Precision::kAuto) {
    if (problem.network && src_.gpu_example_s > 0) {
      double achieved = 3 * problem.network->flops() / src_.gpu_example_s / 1e12;
      double fp32 = sg.fp32_tflops * sg.fp32_sustained;
      const double best = std::max(fp32, sg.amp_matrix_tflops());
      if (achieved > 2 * best) {
        // No GPU runs faster than its peak: a per-example time this small is
        // not GPU work the fit could see, and says nothing of the precision.
        prec = Precision::kFp32;
        ratios_.precision_reason = fmt::format(
            "the fitted per-example GPU time would be {:.3g} TFLOP/s ({} flops x 3 per example), above every peak "
            "of the GPU ({:.3g}): too small to tell the precision, fp32 assumed",
            achieved, problem.network->name, best);
      } else {
        prec = achieved > fp32 ? Precision::kMixed : Precision::kFp32;
        ratios_.precision_reason = fmt::format(
            "the source ran {:.3g} TFLOP/s per GPU ({} flops x 3 per example), {} the sustained fp32 peak {:.3g}",
            achieved, problem.network->name, achieved > fp32 ? "above" : "within", fp32);
      }
    } else {
      prec = Precision::kFp32;
      ratios_.precision_reason = "no layer graph: fp32 assumed";
    }
  } else {
    ratios_.precision_reason = given ? "as the user gave it" : "as given";
  }
  ratios_.precision = prec;
  const Precision tprec = problem.precision.target == Precision::kAuto ? prec : problem.precision.target;
  ratios_.target_precision = tprec;
  if (tprec != prec) ratios_.precision_reason += fmt::format("; on the target {}, as the user gave it", to_string(tprec));
  ratios_.compute = ratio(tprec == Precision::kMixed ? tg.amp_matrix_tflops() : tg.fp32_matmul_tflops(),
                          prec == Precision::kMixed ? sg.amp_matrix_tflops() : sg.fp32_matmul_tflops());
  if (problem.network) {
    auto rs = roofline_time(*problem.network, sg, prec), rt = roofline_time(*problem.network, tg, tprec);
    ratios_.per_example = rs.seconds > 0 && rt.seconds > 0 ? rs.seconds / rt.seconds : 1;
    ratios_.compute_share_source = rs.compute_share, ratios_.compute_share_target = rt.compute_share;
  } else {
    double phi = p_.default_compute_share;
    double c = phi / ratios_.compute, m = (1 - phi) / ratios_.memory;
    ratios_.per_example = 1 / (c + m);
    ratios_.compute_share_source = phi, ratios_.compute_share_target = c / (c + m);
  }
  // Per-step GPU work: streaming the weights scales with the bandwidth; the
  // rest by the midpoint of unchanged (latency) and per-example (throughput).
  double stream = 0;
  if (problem.network && sg.memory_bandwidth_gbps > 0 && src_.gpu_step_s > 0)
    stream = std::min(1.0, 3 * 4 * problem.network->params() / (sg.memory_bandwidth_gbps * 1e9) / src_.gpu_step_s);
  ratios_.step_streaming_share = stream;
  ratios_.per_step = 1 / (stream / ratios_.memory + (1 - stream) / std::sqrt(ratios_.per_example));
}

SplitTransferModel::Terms SplitTransferModel::transferred(const SplitFactors& f) const {
  Terms t = source_terms_;
  t.host = f.host_base_s * f.host;
  t.gpu_step = source_terms_.gpu_step / ratios_.per_step * f.gpu_step;
  t.gpu_example = source_terms_.gpu_example / ratios_.per_example * f.gpu_example;
  t.compute_share = ratios_.compute_share_target;
  t.ki = source_terms_.ki / ratios_.intra_link * f.comm;
  t.ke = source_terms_.ke / ratios_.inter_link * f.comm;
  t.ai = source_terms_.ai * f.comm;
  t.ae = source_terms_.ae * f.comm;
  return t;
}

double SplitTransferModel::row_noise() const { return std::max(p_.min_trial_sd, src_.rms_log_residual); }

void SplitTransferModel::fit_factors(const std::vector<StepSample>& trials) {
  factors_ = {};
  factors_.host_base_s = src_.host_s;
  factors_.trials = static_cast<int>(trials.size());
  const double sd_step = std::max(p_.prior_sd_gpu_step, 0.5 * std::abs(std::log(ratios_.per_example)));
  const double sd[4] = {src_.host_seen ? p_.prior_sd_host : p_.prior_sd_host_unseen, sd_step,
                        p_.prior_sd_gpu_example, p_.prior_sd_comm};
  factor_cov_.fill(0);
  trial_scale_ = 1;
  for (int j = 0; j < 4; ++j) factor_cov_[5 * j] = sd[j] * sd[j];
  if (trials.empty()) return;
  if (!src_.host_seen)
    factors_.host_base_s = std::max(src_.host_s, p_.unseen_host_fraction * src_.shortest_step_s);
  for (const auto& s : trials) factors_.comm_fitted |= s.gpus() > 1;
  const double noise = row_noise();
  auto residuals = [&](const Eigen::VectorXd& x) {
    SplitFactors f = factors_;
    f.host = std::exp(x(0)), f.gpu_step = std::exp(x(1)), f.gpu_example = std::exp(x(2)), f.comm = std::exp(x(3));
    Terms t = transferred(f);
    std::vector<double> r;
    for (const auto& s : trials) {
      StepParts p = evaluate(t, s, batch_quirk(s.batch));
      r.push_back((std::log(std::max(p.total, 1e-300)) - std::log(s.step_s)) / noise);
      if (s.gpus() > 1 && s.sync_s && s.step_s - *s.sync_s > 0)
        r.push_back((std::log(std::max(p.total - p.exposed_comm, 1e-300)) - std::log(s.step_s - *s.sync_s)) / noise);
    }
    for (int j = 0; j < 4; ++j) r.push_back(x(j) / sd[j]);
    return Eigen::Map<Eigen::VectorXd>(r.data(), static_cast<Eigen::Index>(r.size())).eval();
  };
  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(4), lo = Eigen::VectorXd::Constant(4, -6), hi = Eigen::VectorXd::Constant(4, 6);
  Eigen::Array<bool, Eigen::Dynamic, 1> fixed = Eigen::Array<bool, Eigen::Dynamic, 1>::Constant(4, false);
  fixed(3) = !factors_.comm_fitted;
  // Starts spread over the factors: at the prior a part that is hidden (a GPU
  // part under a host-bound step) has no gradient, so a single local fit
  // would keep it at 1 even when the trials need it changed.
  numerics::LmResult r;
  r.cost = INFINITY;
  for (double h : {-1.0, 0.0, 1.0})
    for (double e : {-1.0, 0.0, 1.0, 2.0}) {
      x0 << h, 0, e, 0;
      auto ri = shifted_lm(residuals, x0, lo, hi, fixed);
      if (ri.cost < r.cost) r = ri;
    }
  factors_.host = std::exp(r.x(0)), factors_.gpu_step = std::exp(r.x(1)), factors_.gpu_example = std::exp(r.x(2));
  factors_.comm = std::exp(r.x(3));

  // Laplace: the whitened residuals' Jacobian at the fit, by central
  // differences; the prior rows keep J'J invertible. A factor held (no
  // multi-GPU trial for communication) keeps its prior's width.
  const double h = 1e-4;
  Eigen::MatrixXd J(residuals(r.x).size(), 4);
  for (int j = 0; j < 4; ++j) {
    Eigen::VectorXd up = r.x, down = r.x;
    up(j) += h, down(j) -= h;
    J.col(j) = (residuals(up) - residuals(down)) / (2 * h);
  }
  Eigen::Matrix4d cov = (J.transpose() * J).inverse();
  // How far the trials sit from the fit, against the noise they were
  // trusted to: the residual variance over the degrees of freedom the fit
  // left (trial rows less the trace of their hat matrix). Where the form
  // fits the target worse than the source, this is larger than the
  // source's misfit, and the intervals widen by as much.
  const Eigen::Index nt = J.rows() - 4;
  const Eigen::MatrixXd Jt = J.topRows(nt);
  const double p_eff = (Jt * cov * Jt.transpose()).trace();
  const Eigen::VectorXd res = residuals(r.x).head(nt);
  const double dof = std::max(0.0, static_cast<double>(nt) - p_eff);
  trial_scale_ = 1;
  if (p_.misfit_prior_dof > 0) {
    // The target's misfit is unknown: the source's, worth misfit_prior_dof
    // residuals, pooled with the trials' own. A few trials estimate it
    // poorly, so the interval is Student's t on the pooled degrees of freedom
    // (expressed as the normal sd that gives the same 80% interval).
    const double nu = p_.misfit_prior_dof + dof;
    const double pooled = (p_.misfit_prior_dof + res.squaredNorm()) / nu;
    trial_scale_ = std::sqrt(std::max(1.0, pooled)) * numerics::student_t_quantile(0.9, nu) / numerics::normal_quantile(0.9);
  } else if (dof >= 1) {
    trial_scale_ = std::max(1.0, std::sqrt(res.squaredNorm() / dof));
  }
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) factor_cov_[4 * a + b] = cov(a, b);
}

std::optional<double> SplitTransferModel::log_sd(const StepSample& at) const {
  if (!fitted_) throw std::logic_error("split-transfer: log_sd before fit");
  const double quirk = batch_quirk(at.batch);
  auto log_step = [&](int j, double dx) {
    SplitFactors f = factors_;
    double* x[4] = {&f.host, &f.gpu_step, &f.gpu_example, &f.comm};
    *x[j] *= std::exp(dx);
    return std::log(std::max(evaluate(transferred(f), at, quirk).total, 1e-300));
  };
  const double h = 1e-4;
  double g[4];
  for (int j = 0; j < 4; ++j) g[j] = (log_step(j, h) - log_step(j, -h)) / (2 * h);
  double var = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) var += g[a] * factor_cov_[4 * a + b] * g[b];
  var = trial_scale_ * trial_scale_ * (var + row_noise() * row_noise());
  return std::sqrt(std::max(var, 0.0));
}

void SplitTransferModel::fit(const TransferProblem& problem) {
  if (problem.source.empty()) throw InputError("split-transfer: no source rows to fit");
  for (const auto* set : {&problem.source, &problem.target_trials})
    for (const auto& s : *set)
      if (!(s.step_s > 0) || !(s.batch > 0) || s.gpus_per_node.empty())
        throw InputError("split-transfer: every row needs a placement, a batch > 0 and a step time > 0");
  notes_.clear();
  ratios_ = {};
  ratios_.compute_share_source = problem.network ? 0 : p_.default_compute_share;
  // The source's compute share (for its parts) needs the ratios, and the
  // precision rule needs the source's per-example time: fit, then set the
  // ratios, then record the share in the source terms.
  fit_source(problem.source, problem);
  set_ratios(problem);
  source_terms_.compute_share = ratios_.compute_share_source;
  // A source whose every step is host time tells nothing of its GPU: the
  // target's prediction then moves with the host and the nodes, not the GPU.
  double gpu_share = 0;
  for (const auto& r : problem.source) {
    const StepParts sp = evaluate(source_terms_, r);
    if (sp.total > 0) gpu_share = std::max(gpu_share, (sp.gpu_fixed + sp.compute + sp.memory) / sp.total);
  }
  if (gpu_share < kHostBoundShare)
    notes_.push_back(fmt::format(
        "every source step is host time (the GPU's part at most {:.2g}% of a step): the prediction on the target "
        "moves with its host and nodes, hardly with its GPU; a trial there is worth more than the datasheet",
        100 * gpu_share));
  fit_factors(problem.target_trials);
  target_terms_ = transferred(factors_);
  fitted_ = true;
}

double SplitTransferModel::predict(const StepSample& at) const { return target_parts(at).total; }

std::optional<double> SplitTransferModel::predict_source(const StepSample& at) const {
  return source_parts(at).total;
}

double SplitTransferModel::batch_quirk(double batch) const {
  auto it = quirk_.find(batch);
  return it == quirk_.end() ? 1 : std::exp(p_.batch_quirk_weight * it->second);
}

StepParts SplitTransferModel::target_parts(const StepSample& at) const {
  if (!fitted_) throw std::logic_error("split-transfer: predict before fit");
  return evaluate(target_terms_, at, batch_quirk(at.batch));
}

StepParts SplitTransferModel::source_parts(const StepSample& at) const {
  if (!fitted_) throw std::logic_error("split-transfer: predict before fit");
  return evaluate(source_terms_, at);
}

double SplitTransferModel::source_with_departure(const StepSample& at) const {
  if (!fitted_) throw std::logic_error("split-transfer: predict before fit");
  return evaluate(source_terms_, at, batch_quirk(at.batch)).total;
}

std::string SplitTransferModel::describe() const {
  const auto& s = src_;
  std::string out = fmt::format(
      "source: host {:.4g} s{} (+{:.3g} per extra GPU on the node), GPU {:.4g} s/step + {:.4g} s/example, overlap p "
      "{:.2f}; all-reduce intra {:.4g} + {:.4g} s x ring, inter {:.4g} + {:.4g} s x ring x (1 + {:.3g} (k-1)), "
      "overlap g {:.2f}; in-sample MRE {:.1f}% over {} rows\n",
      s.host_s, s.host_seen ? "" : " (unseen: the source's steps are GPU-bound)", s.contention, s.gpu_step_s,
      s.gpu_example_s, s.host_overlap, s.intra_latency_s, s.intra_s, s.inter_latency_s, s.inter_s, s.inter_per_gpu,
      s.comm_overlap, 100 * s.in_sample_mre, s.rows);
  const auto& r = ratios_;
  out += fmt::format(
      "ratios (target / source speed): per-example GPU work {:.3g} (precision {}: {}; compute-bound share {:.0f}% -> "
      "{:.0f}%), per-step GPU work {:.3g} ({:.0f}% streaming the weights), matrix peak {:.3g}, memory bandwidth "
      "{:.3g}, links intra {:.3g}, inter {:.3g}{}\n",
      r.per_example, to_string(r.precision), r.precision_reason, 100 * r.compute_share_source,
      100 * r.compute_share_target, r.per_step, 100 * r.step_streaming_share, r.compute, r.memory, r.intra_link,
      r.inter_link,
      r.inter_link_assumed
          ? " (a network the catalog only assumes: the measured cluster's kept, no faster than the nodes' links allow)"
          : "");
  if (r.intra_link_held || r.inter_link_held)
    out += fmt::format(
        "all-reduce: the source's ran its links at {} of their nominal bandwidth; moved by the links' ratio it would "
        "be slower than the target's links at {:.0f}% allow, and is held there ({:.0f}%, plus {:.3g} s of latency)\n",
        r.intra_link_held && r.inter_link_held
            ? fmt::format("{:.2g}% (within a node) and {:.2g}% (across nodes)", 100 * r.source_intra_efficiency,
                          100 * r.source_inter_efficiency)
            : r.intra_link_held ? fmt::format("{:.2g}% within a node", 100 * r.source_intra_efficiency)
                                : fmt::format("{:.2g}% across nodes", 100 * r.source_inter_efficiency),
        100 * p_.least_link_efficiency, 100 * p_.least_link_efficiency, p_.latency_max);
  const auto& f = factors_;
  if (f.trials > 0)
    out += fmt::format("target trials ({}): host x{:.3g} (of {:.4g} s), GPU per step x{:.3g}, per example x{:.3g}, "
                       "communication x{:.3g}{}\n",
                       f.trials, f.host, f.host_base_s, f.gpu_step, f.gpu_example, f.comm,
                       f.comm_fitted ? "" : " (no multi-GPU trial: kept)");
  for (const auto& n : notes_) out += "note: " + n + "\n";
  return out;
}

static TransferModelRegistrar reg(
    0, "split-transfer",
    "host, GPU compute and memory, and all-reduce parts fitted on the source, each scaled by what changes "
    "(datasheet ratios, per-layer roofline), four factors refitted on the target trials",
    [] { return std::make_unique<SplitTransferModel>(); });

}  // namespace trainplan::models
