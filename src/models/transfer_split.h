// split-transfer: a network's data-parallel step time moved from the GPU it
// was profiled on to another one, part by part (docs/TRANSFER.md).
//
// On one GPU with k GPUs busy on its node, at per-GPU batch b:
//   host(k)   = H (1 + kappa (k - 1))       CPU side: framework, launches, input
//                                           pipeline; slower when k processes share a node
//   gpu(b)    = U + V b                     U: per-step GPU work (weights update),
//                                           V: per-example GPU work
//   c(b, k)   = (host^p + gpu^p)^(1/p)      the host runs ahead of the GPU, so the
//                                           two overlap: p = 1 adds them, large p is max
// and for r GPUs over n nodes (ring factor rho = 2 (r - 1) / r):
//   a(P)      = 0                                     r = 1
//             = a_i + k_i rho                         one node
//             = a_e + k_e rho (1 + lambda (k - 1))    n > 1 nodes
//   step      = (c^g + a^g)^(1/g)                     all-reduce overlapped with backward
//
// Fit on the source (two stages, bounded Levenberg-Marquardt on log step
// times): c on step - sync of every row (the batch dependence separates the
// per-step parts from the per-example part; rows with more GPUs per node give
// kappa), then the communication terms and g on the multi-GPU rows with c
// held. A per-step cost that fits as host time or as GPU work alike is taken
// as host time (SplitTransferParams::host_preference).
//
// Transfer to the target, each part by what changed:
//   host, kappa, p, the latencies a_i, a_e, lambda, g: unchanged (the machine's);
//   V: divided by the ratio of the network's per-layer roofline times on the
//      two GPUs (each layer max(flops / peak, bytes / bandwidth), the peak of
//      its precision and kind, sustained) -- without a layer graph, a fixed
//      share of compute- and memory-bound work;
//   U: its part that streams the weights (3 x 4 bytes x parameters, the
//      graph's, at the source's bandwidth) divided by the bandwidth ratio; the
//      rest, launch-latency-bound (unchanged) or throughput-bound (as V), by the
//      geometric midpoint of 1 and V's ratio;
//   k_i, k_e: divided by the intra- and inter-node link bandwidth ratios;
//   the source's own departure from its fit at a batch, where such departures
//      alternate between batches (a workload's quirk, not a misfit), multiplies
//      the compute side at that batch.
//
// With K target trials, four factors (host, per-step GPU, per-example GPU,
// communication) multiply their parts. They are fitted in log space by
// regularised least squares: each trial's log step time and, where it
// measured its synchronisation, its log(step - sync), each trusted to the
// source fit's rms log residual, against a Gaussian prior at 1 (the datasheet
// prior) on each factor.
//
// Uncertainty (log_sd): the factors' posterior in log space, the priors'
// with no trial and the Laplace approximation at the fitted factors with
// some (the inverse of J'J, J the Jacobian of the whitened trial and prior
// residuals), carried to log(step) at a row through its gradient, plus the
// source fit's rms log residual for what the form misses at any one row.
// The priors' widths are the fit's regularisation, not measured errors of
// the transfer: how often the intervals hold is measured, not assumed
// (evaluate --transfer, docs/TRANSFER.md).

#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/transfer.h"

namespace trainplan::models {

struct SplitTransferParams {
  // Source fit. Upper bounds of the overlap exponents p (host and GPU) and g
  // (compute and all-reduce), and of kappa, the host's slowdown per extra
  // busy GPU on its node. A large g lets a large all-reduce hide behind the
  // compute, which the link ratios would then scale up: g stays within the
  // range Pollux reports.
  double overlap_max = 8;
  double comm_overlap_max = 3;
  double contention_max = 1;
  // Communication latencies a_i, a_e are held below this (seconds), so that
  // bandwidth-bound cost is carried by k_i, k_e, which the links scale.
  double latency_max = 0.005;
  // A per-step cost the batch does not change is taken as host time (the
  // machine's, unchanged by the GPU) unless that fits the source this much
  // worse (relative sum of squares) than per-step GPU work would.
  double host_preference = 0.05;

  // Hardware ratios. Precision of the network's matrix work: kAuto takes
  // mixed precision when the source ran the network's flops faster than the
  // source GPU's sustained fp32 peak allows (tensor cores), else fp32; with no
  // layer graph, fp32.
  Precision precision = Precision::kAuto;
  // Share of the per-example GPU time bound by arithmetic when the network's
  // layer graph is unknown.
  double default_compute_share = 0.5;
  // Model bytes and link efficiency for the communication prior when the
  // source has no multi-GPU row at all (parameters x 4 bytes of the graph).
  double link_efficiency = 0.5;
  // The least share of its links' nominal bandwidth a gradient all-reduce is
  // taken to reach: the target's per-ring cost is at most latency_max plus
  // the gradients' bytes (4 a parameter) at this share of its links. A
  // source all-reduce slower than its own links explain (a cluster's network
  // slower than its catalog entry, ranks waiting on one another) would
  // otherwise reach the target multiplied by the links' ratio. Needs the
  // layer graph (the bytes); 0: off.
  double least_link_efficiency = 0.05;

  // Target trials: a trial's log step time is trusted to the source fit's rms
  // log residual (the misfit of this model on measured steps), at least this.
  double min_trial_sd = 0.03;
  // Log-space standard deviations of the priors on the factors. The host part's prior is wide when the source could not see
  // the host time (its steps were GPU-bound throughout).
  double prior_sd_host = 0.7;
  double prior_sd_host_unseen = 2.0;
  // The per-step GPU work's prior is the least sure: besides streaming the
  // weights it may be launch-latency-bound (unchanged) or throughput-bound
  // (as per-example work); its sd is at least half the log of the
  // per-example ratio, so that both ends lie within one sd.
  double prior_sd_gpu_step = 0.5;
  double prior_sd_gpu_example = 0.7;
  double prior_sd_comm = 1.0;
  // With trials, an unseen host time starts from this fraction of the
  // source's shortest one-GPU step (the most the source allows), not from ~0,
  // so that the host factor can scale it.
  double unseen_host_fraction = 0.1;
  // A workload's quirks at particular batches (input pipeline, kernel
  // choices) recur on other hardware: the source's departure from its fit
  // at the same batch multiplies the target's compute side, as far as the
  // departures alternate between batches (SplitSourceFit::batch_quirk_weight),
  // times this (0: off).
  double batch_quirk_weight = 1;
  // With trials, how many residuals' worth the source fit's misfit counts
  // for as the target's: the trials' own misfit pools with it, and the
  // intervals are Student's t on the pooled degrees of freedom. 0: the
  // source's misfit is taken as known (normal intervals), widened only where
  // the trials' residuals over their degrees of freedom exceed it.
  double misfit_prior_dof = 1;
};

// The source-side fit: the step-time terms above, seconds (k_* per unit of
// ring factor), and which terms the source rows could identify.
struct SplitSourceFit {
  double host_s = 0, contention = 0, gpu_step_s = 0, gpu_example_s = 0, host_overlap = 1;
  double intra_latency_s = 0, intra_s = 0, inter_latency_s = 0, inter_s = 0, inter_per_gpu = 0, comm_overlap = 1;
  bool host_seen = false;       // the host time shapes the source's steps
  bool host_preferred = false;  // a per-step cost fitted either way was taken as host time
  bool intra_measured = false;  // some source row ran on one node with >= 2 GPUs
  bool inter_measured = false;  // some source row spanned nodes
  double shortest_step_s = 0;   // the source's shortest one-GPU compute time (step - sync)
  double in_sample_mre = 0;     // of the source fit on the source rows (equation 12)
  double rms_log_residual = 0;  // of the source fit: the misfit to expect of a trial
  double batch_quirk_weight = 0;  // how much of the source's per-batch departures is kept (0..1)
  size_t rows = 0;
};

// Target speed over source speed for each part (> 1: the target is faster).
struct SplitRatios {
  double per_example = 1, per_step = 1, intra_link = 1, inter_link = 1;
  bool inter_link_assumed = false;  // a network the catalog only assumes: the source's kept (ratio 1, or intra_link when below)
  // The share of its links' nominal bandwidth the source's fitted all-reduce
  // implies (0: unknown, no layer graph), and whether the target's is held at
  // the ceiling of SplitTransferParams::least_link_efficiency (the ratio
  // above is then the ceiling's).
  double source_intra_efficiency = 0, source_inter_efficiency = 0;
  bool intra_link_held = false, inter_link_held = false;
  double step_streaming_share = 0;  // of the source's per-step GPU work: streaming the weights
  double compute = 1, memory = 1;  // matrix peak and memory bandwidth ratios
  double compute_share_source = 0.5, compute_share_target = 0.5;  // of the per-example GPU time
  Precision precision = Precision::kFp32;         // the source's
  Precision target_precision = Precision::kFp32;  // the target's: the source's unless given
  std::string precision_reason;
};

// Corrections fitted on the target trials (1: the datasheet prior kept).
struct SplitFactors {
  double host = 1, gpu_step = 1, gpu_example = 1, comm = 1;
  double host_base_s = 0;  // the host time the host factor multiplies
  int trials = 0;
  bool comm_fitted = false;  // some trial had >= 2 GPUs
};

class SplitTransferModel : public TransferModel {
 public:
  explicit SplitTransferModel(SplitTransferParams p = {}) : p_(p) {}
  std::string name() const override { return "split-transfer"; }
  void fit(const TransferProblem& problem) override;
  double predict(const StepSample& at) const override;
  std::optional<StepParts> parts(const StepSample& at) const override { return target_parts(at); }
  std::optional<double> predict_source(const StepSample& at) const override;
  std::optional<double> log_sd(const StepSample& at) const override;
  std::string describe() const override;

  const SplitSourceFit& source_fit() const { return src_; }
  const SplitRatios& ratios() const { return ratios_; }
  const SplitFactors& factors() const { return factors_; }
  // The posterior covariance of the four log factors (host, GPU per step,
  // per example, communication), row-major.
  const std::array<double, 16>& factor_covariance() const { return factor_cov_; }
  // The log-space misfit any one row keeps: max(min_trial_sd, the source
  // fit's rms log residual).
  double row_noise() const;
  // Parts at `at` on the target (with the fitted factors), and on the source.
  StepParts target_parts(const StepSample& at) const;
  StepParts source_parts(const StepSample& at) const;
  // The source fit at `at` with the source's own departure at its batch,
  // which target_parts carries to the target: the two compare like with
  // like (a speed-up of exactly 1 where nothing changes).
  double source_with_departure(const StepSample& at) const;
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  // The step-time terms as one evaluable set.
  struct Terms {
    double host = 0, contention = 0, p = 1, gpu_step = 0, gpu_example = 0;
    double compute_share = 0.5;  // of gpu_example, for reporting
    double ai = 0, ki = 0, ae = 0, ke = 0, lambda = 0, g = 1;
  };
  // `scale` multiplies the compute side (host and GPU parts).
  static StepParts evaluate(const Terms& t, const StepSample& at, double scale = 1);
  // The source's own departure at this batch from its fit (measured / fitted
  // compute side, geometric mean over its rows at that batch, relative to
  // the mean over batches), weighted as above; 1 at a batch the source
  // never ran.
  double batch_quirk(double batch) const;
  void fit_source(const std::vector<StepSample>& rows, const TransferProblem& problem);
  // The stages of fit_source; cm is each row's compute side (step - sync).
  Terms fit_compute_side(const std::vector<StepSample>& rows, const std::vector<double>& cm,
                         const TransferProblem& problem);
  void fit_communication(const std::vector<StepSample>& rows, const TransferProblem& problem, Terms& t);
  void fit_batch_quirks(const std::vector<StepSample>& rows, const std::vector<double>& cm, const Terms& t);
  void set_ratios(const TransferProblem& problem);
  Terms transferred(const SplitFactors& f) const;
  void fit_factors(const std::vector<StepSample>& trials);

  SplitTransferParams p_;
  SplitSourceFit src_;
  SplitRatios ratios_;
  SplitFactors factors_;
  std::array<double, 16> factor_cov_{};
  double trial_scale_ = 1;
  Terms source_terms_, target_terms_;
  std::map<double, double> quirk_;  // batch -> mean log(measured / fitted compute side) on the source
  std::vector<std::string> notes_;
  bool fitted_ = false;
};

// The per-example roofline of a layer graph on one GPU at one precision:
// seconds per training example (forward + backward = 3 x forward) and the
// share of it spent in layers bound by arithmetic rather than memory.
struct RooflineTime {
  double seconds = 0, compute_share = 0;
};
RooflineTime roofline_time(const structure::LayerGraph& g, const structure::GpuSpec& gpu, Precision precision);

}  // namespace trainplan::models
