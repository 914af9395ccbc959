#include "io/hardware_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "io/csv.h"

namespace trainplan::io {

namespace {

const std::set<std::string>& known_columns() {
  static const std::set<std::string> k = {
      "name",           "base",           "fp16_tensor_dense_tflops", "bf16_tensor_dense_tflops",
      "tf32_tensor_tflops", "fp32_tflops", "mem_GB",                  "mem_bw_GBps",
      "fp32_sustained", "tensor_sustained", "gpus_per_node",           "intra_node_bw_GBps",
      "inter_node_bw_GBps", "intra_link", "inter_link",               "full_name",
      "collective_latency_exponent", "fp8_tflops", "fp8_matmul_share", "tf32_kernel_share", "source", "notes", "mem_reported_GiB", "gpus_per_host", "inter_node_assumed"};
  return k;
}

// Columns of ../shared/data/llm/gpu_specs_catalog.csv the models do not use:
// read past, so that a row of it can be pasted.
const std::set<std::string>& catalog_only_columns() {
  static const std::set<std::string> k = {"source_project", "fp64_tflops", "int8_tops", "vector_fp16_tflops",
                                          "num_sms",        "clock_mhz",   "l2_mb"};
  return k;
}

std::string catalog_list() {
  std::string s;
  for (const auto& n : structure::builtin_hardware_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The first figure in which `b` differs from `a`, said as "fp32_tflops 4.05
// against 8.1"; empty when every figure the models read is the same.
std::string first_difference(const structure::HardwareProfile& a, const structure::HardwareProfile& b) {
  const std::pair<const char*, std::pair<double, double>> figures[] = {
      {"fp16_tensor_dense_tflops", {a.gpu.fp16_tensor_tflops, b.gpu.fp16_tensor_tflops}},
      {"bf16_tensor_dense_tflops", {a.gpu.bf16_tensor_tflops, b.gpu.bf16_tensor_tflops}},
      {"tf32_tensor_tflops", {a.gpu.tf32_tensor_tflops, b.gpu.tf32_tensor_tflops}},
      {"fp8_tflops", {a.gpu.fp8_tensor_tflops, b.gpu.fp8_tensor_tflops}},
      {"fp32_tflops", {a.gpu.fp32_tflops, b.gpu.fp32_tflops}},
      {"mem_GB", {a.gpu.memory_gb, b.gpu.memory_gb}},
      {"mem_reported_GiB", {a.gpu.memory_reported_gib, b.gpu.memory_reported_gib}},
      {"mem_bw_GBps", {a.gpu.memory_bandwidth_gbps, b.gpu.memory_bandwidth_gbps}},
      {"fp32_sustained", {a.gpu.fp32_sustained, b.gpu.fp32_sustained}},
      {"tensor_sustained", {a.gpu.tensor_sustained, b.gpu.tensor_sustained}},
      {"fp8_matmul_share", {a.gpu.fp8_matmul_share, b.gpu.fp8_matmul_share}},
      {"tf32_kernel_share", {a.gpu.tf32_kernel_share, b.gpu.tf32_kernel_share}},
      {"gpus_per_node", {double(a.node.gpus_per_node), double(b.node.gpus_per_node)}},
      {"gpus_per_host", {double(a.node.launch_gpus_per_host()), double(b.node.launch_gpus_per_host())}},
      {"intra_node_bw_GBps", {a.node.intra_node_gbps, b.node.intra_node_gbps}},
      {"inter_node_bw_GBps", {a.node.inter_node_gbps, b.node.inter_node_gbps}},
      {"collective_latency_exponent", {a.node.collective_latency_exponent, b.node.collective_latency_exponent}},
      {"inter_node_assumed", {double(a.node.inter_node_assumed), double(b.node.inter_node_assumed)}},
  };
  for (const auto& [name, values] : figures)
    if (values.first != values.second) return fmt::format("{} {:g} against {:g}", name, values.second, values.first);
  return "";
}

}  // namespace

structure::HardwareProfile read_hardware_file(const std::string& path) {
  // A JSON description (as other tools keep theirs) would read as a header
  // of unknown columns, or as rows of the wrong width: said for what it is.
  {
    std::ifstream f(path, std::ios::binary);
    std::string head(256, '\0');
    f.read(head.data(), long(head.size()));
    head.resize(size_t(std::max<std::streamsize>(0, f.gcount())));
    if (head.rfind("\xEF\xBB\xBF", 0) == 0) head.erase(0, 3);
    const size_t at = head.find_first_not_of(" \t\r\n");
    if (at != std::string::npos && (head[at] == '{' || head[at] == '['))
      throw InputError(path, 1, "",
                       "this is JSON; a hardware file is CSV: a header line of column names, then one row "
                       "(docs/HARDWARE.md); the smallest is `name,base` over a row such as `my-a100,a100-40gb`, a "
                       "catalog GPU's figures with any column given overriding them");
  }
  CsvTable t = CsvTable::read(path);
  // Header names in any case and with '-' or ' ' for '_', as in every CSV the project reads (docs/FORMATS.md).
  std::set<std::string> known_folded;
  for (const auto& k : known_columns()) known_folded.insert(fold_column_name(k));
  for (const auto& h : t.header())
    if (const std::string f = fold_column_name(h); !f.empty() && !known_folded.count(f) &&
                                                   !catalog_only_columns().count(f) && f != "device") {
      std::string known;
      for (const auto& k : known_columns()) known += (known.empty() ? "" : ", ") + k;
      // One column whose name holds another separator: the file is not comma-separated.
      for (const char sep : {';', '\t', '|'})
        if (t.header().size() == 1 && h.find(sep) != std::string::npos)
          throw InputError(path, t.header_line(), "",
                           fmt::format("the header is one column, '{}': a hardware file is separated by commas, this one "
                                       "by '{}'",
                                       h, sep == '\t' ? std::string("\\t") : std::string(1, sep)));
      throw InputError(path, t.header_line(), h, "unknown column (a hardware file has: " + known + ")");
    }
  // One figure under two spellings ("fp32_tflops" and "FP32-TFLOPS").
  for (const auto& k : known_columns()) t.refuse_ambiguous(k);
  // The catalog file names its GPU in `device`.
  const std::string name_column = !t.has_column("name") && t.has_column("device") ? "device" : "name";
  t.require_columns({name_column});
  if (t.rows().empty()) throw InputError(path, t.header_line(), "", "no data row: a hardware file describes one GPU");
  if (t.rows().size() > 1)
    throw InputError(path, t.rows()[1].line, "", "a hardware file describes one GPU, but it has " +
                                                     std::to_string(t.rows().size()) + " data rows");
  const CsvRow& row = t.rows().front();

  structure::HardwareProfile h;
  bool has_base = t.has_column("base") && !t.text(row, "base").empty();
  if (has_base) {
    auto b = structure::find_builtin_hardware(t.text(row, "base"));
    if (!b) t.fail(row, "base", "'" + t.text(row, "base") + "' is not in the hardware catalog (" + catalog_list() + ")");
    h = *b;
  }
  h.name = t.text(row, name_column);
  if (h.name.empty()) t.fail(row, name_column, "value is empty");
  h.origin = path;
  if (t.has_column("full_name") && !t.text(row, "full_name").empty()) h.full_name = t.text(row, "full_name");
  if (h.full_name.empty()) h.full_name = h.name;
  h.sources = has_base ? "hardware file " + path + " over the catalog's " + t.text(row, "base") : "hardware file " + path;
  if (t.has_column("source") && !t.text(row, "source").empty()) h.sources += ": " + t.text(row, "source");

  auto present = [&](const std::string& c) { return t.has_column(c) && !t.text(row, c).empty(); };
  // A figure the file gives; `positive`: > 0, else >= 0 (0: the unit is
  // absent). A peak, a bandwidth or a size (TFLOP/s, GB/s, GB) is also
  // refused outside [1e-3, 1e6], past any device, which would carry
  // infinities and zeros through the predictions.
  auto figure = [&](const std::string& c, double& into, bool positive) {
    if (!present(c)) return;
    into = t.number(row, c);
    if (positive ? !(into > 0) : into < 0)
      t.fail(row, c, std::string("must be ") + (positive ? "> 0" : ">= 0") + ", got " + t.text(row, c));
    const bool magnitude = c.ends_with("_tflops") || c.ends_with("_GBps") || c.starts_with("mem_");
    if (magnitude && into != 0 && (into < 1e-3 || into > 1e6))
      t.fail(row, c, fmt::format("must be {}from 0.001 to 1e6 ({}), got {}", positive ? "" : "0 or ",
                                 c.ends_with("_tflops") ? "TFLOP/s"
                                 : c.ends_with("_GBps") ? "GB/s"
                                 : c.ends_with("GiB")   ? "GiB"
                                                        : "GB",
                                 t.text(row, c)));
  };
  // Without a base every one of these is needed: a pasted row that leaves several out hears of
  // them all at once, not one a run. On the header's line when a column is missing, else the row's.
  if (!has_base) {
    std::vector<std::string> missing;  // each with how: "(no column)" or "(empty)"
    std::string first_column, first_cell;  // where the error points: a missing column's header, else the row
    for (const char* c : {"fp32_tflops", "mem_bw_GBps", "gpus_per_node", "intra_node_bw_GBps", "inter_node_bw_GBps"}) {
      if (present(c)) continue;
      const bool column = t.has_column(c);
      missing.push_back(std::string(c) + (column ? " (empty)" : " (no column)"));
      std::string& first = column ? first_cell : first_column;
      if (first.empty()) first = c;
    }
    if (!missing.empty()) {
      const std::string why = fmt::format("required figure{} missing: {} (give {}, or a base GPU from the catalog)",
                                          missing.size() > 1 ? "s" : " is", fmt::join(missing, ", "),
                                          missing.size() > 1 ? "them" : "it");
      if (!first_column.empty()) throw InputError(path, t.header_line(), first_column, why);
      t.fail(row, first_cell, why);
    }
  }
  auto& g = h.gpu;
  const bool base_has_bf16 = has_base && g.bf16_tensor_tflops > 0;
  const double base_tensor16 = has_base ? std::max(g.fp16_tensor_tflops, g.bf16_tensor_tflops) : 0;
  figure("fp16_tensor_dense_tflops", g.fp16_tensor_tflops, false);
  figure("bf16_tensor_dense_tflops", g.bf16_tensor_tflops, false);
  figure("tf32_tensor_tflops", g.tf32_tensor_tflops, false);
  figure("fp8_tflops", g.fp8_tensor_tflops, false);
  figure("fp32_tflops", g.fp32_tflops, true);
  // A restated memory is no longer the base's card: its reported capacity goes with it.
  if (present("mem_GB") && !present("mem_reported_GiB")) g.memory_reported_gib = 0;
  figure("mem_GB", g.memory_gb, true);
  figure("mem_reported_GiB", g.memory_reported_gib, true);
  // The reported capacity qualifies the datasheet's: alone, it is neither
  // checked for its unit nor read as the memory.
  if (g.memory_reported_gib > 0 && !(g.memory_gb > 0))
    t.fail(row, "mem_reported_GiB", "needs mem_GB, the datasheet's memory, beside it (or a base GPU that has one)");
  // What a driver reports lies within a few per cent of the datasheet's figure read as GiB (HBM's
  // binary stacks) and above it read as 10^9 bytes less an ECC share: far outside, it is in other
  // units (MiB), and every layout would fit.
  if (g.memory_reported_gib > 0 && g.memory_gb > 0) {
    const double lo = 0.85 * g.memory_gb * 1e9 / (1024.0 * 1024 * 1024), hi = 1.01 * g.memory_gb;
    if (g.memory_reported_gib < lo || g.memory_reported_gib > hi)
      t.fail(row, present("mem_reported_GiB") ? "mem_reported_GiB" : "mem_GB",
             fmt::format("{:g} GiB reported for a card of {:g} GB: expected {:.1f} to {:.1f} GiB (a figure in MiB? "
                         "divide it by 1024)",
                         g.memory_reported_gib, g.memory_gb, lo, hi));
  }
  figure("mem_bw_GBps", g.memory_bandwidth_gbps, true);
  // bf16 runs at the fp16 tensor peak on every GPU that has it (docs/HARDWARE.md): a file that
  // restates one of the two over a base restates both, or the base's other figure would stay.
  if (base_has_bf16 && present("fp16_tensor_dense_tflops") && !present("bf16_tensor_dense_tflops"))
    g.bf16_tensor_tflops = g.fp16_tensor_tflops;
  if (base_has_bf16 && present("bf16_tensor_dense_tflops") && !present("fp16_tensor_dense_tflops"))
    g.fp16_tensor_tflops = g.bf16_tensor_tflops;
  // TF32 and FP8 run at fixed ratios to the 16-bit tensor rate on each
  // architecture: a 16-bit peak restated over a base (a power-capped card)
  // moves the base's other two with it unless the file gives them (to 0 with
  // a 16-bit peak of 0: a card without tensor cores has none of them).
  if (const double restated = std::max(g.fp16_tensor_tflops, g.bf16_tensor_tflops);
      base_tensor16 > 0 && restated >= 0 && (present("fp16_tensor_dense_tflops") || present("bf16_tensor_dense_tflops"))) {
    if (!present("tf32_tensor_tflops")) g.tf32_tensor_tflops *= restated / base_tensor16;
    if (!present("fp8_tflops")) g.fp8_tensor_tflops *= restated / base_tensor16;
  }
  // FP8 products run at twice the 16-bit tensor rate on every GPU that has them; a slower FP8
  // peak would have the FP8 layers' model FLOPs counted against a peak the rest of the step beats.
  const double tensor16 = std::max(g.fp16_tensor_tflops, g.bf16_tensor_tflops);
  if (g.fp8_tensor_tflops > 0 && g.fp8_tensor_tflops < tensor16)
    t.fail(row,
           present("fp8_tflops")                 ? "fp8_tflops"
           : present("fp16_tensor_dense_tflops") ? "fp16_tensor_dense_tflops"
                                                 : "bf16_tensor_dense_tflops",
           fmt::format("the FP8 peak ({:g} TFLOP/s) is below the 16-bit tensor peak ({:g}): FP8 runs at twice the "
                       "16-bit rate where a GPU has it (0 for none)",
                       g.fp8_tensor_tflops, tensor16));
  // The other way: TF32 runs at half the 16-bit tensor rate and FP8 at
  // twice it; a figure past those, most often the base's left beside a
  // restated 16-bit peak, would price fp32 or FP8 layers on a faster GPU.
  auto named = [&](const char* own) {
    return present(own) ? own : present("fp16_tensor_dense_tflops") ? "fp16_tensor_dense_tflops"
                                                                     : "bf16_tensor_dense_tflops";
  };
  // Without 16-bit tensor cores there are none for TF32 or FP8 either: no GPU has those alone.
  if (tensor16 == 0)
    for (const auto& [peak, column] : {std::pair{g.tf32_tensor_tflops, "tf32_tensor_tflops"},
                                       std::pair{g.fp8_tensor_tflops, "fp8_tflops"}})
      if (peak > 0)
        t.fail(row, column,
               fmt::format("{:g} TFLOP/s with no 16-bit tensor peak: a GPU with TF32 or FP8 tensor cores has 16-bit "
                           "ones (give fp16_tensor_dense_tflops or bf16_tensor_dense_tflops; 0 for none)",
                           peak));
  if (tensor16 > 0 && g.tf32_tensor_tflops > tensor16)
    t.fail(row, named("tf32_tensor_tflops"),
           fmt::format("the TF32 peak ({:g} TFLOP/s{}) is above the 16-bit tensor peak ({:g}): TF32 runs at half the "
                       "16-bit rate (give tf32_tensor_tflops with it, 0 for none)",
                       g.tf32_tensor_tflops, present("tf32_tensor_tflops") ? "" : ", the base's", tensor16));
  if (tensor16 > 0 && g.fp8_tensor_tflops > 2.5 * tensor16)
    t.fail(row, named("fp8_tflops"),
           fmt::format("the FP8 peak ({:g} TFLOP/s{}) is more than 2.5 times the 16-bit tensor peak ({:g}): FP8 runs "
                       "at twice the 16-bit rate (a figure with sparsity? give the dense one; 0 for none)",
                       g.fp8_tensor_tflops, present("fp8_tflops") ? "" : ", the base's", tensor16));
  figure("fp32_sustained", g.fp32_sustained, true);
  figure("tensor_sustained", g.tensor_sustained, true);
  figure("fp8_matmul_share", g.fp8_matmul_share, true);
  figure("tf32_kernel_share", g.tf32_kernel_share, true);
  // Shares of a peak relative to a reference GPU's share of its own (the
  // A100's; bf16's for FP8; fp32's for TF32): the catalog's run from 0.32 to
  // 1.07, and a GPU at twice the reference's would run past its datasheet
  // peak, since the reference sustains well over half of its own.
  for (const char* c : {"fp32_sustained", "tensor_sustained", "fp8_matmul_share", "tf32_kernel_share"})
    if (present(c) && (t.number(row, c) > 2 || t.number(row, c) < 0.01))
      t.fail(row, c, std::string("must be from 0.01 to 2 (a share of the peak relative to the reference's, which is "
                                 "1), got ") + t.text(row, c));
  double gpn = h.node.gpus_per_node;
  figure("gpus_per_node", gpn, true);
  if (present("gpus_per_node")) h.node.gpus_per_node = t.positive_int(row, "gpus_per_node");
  // The largest machine sold as one node (GB200 NVL72) holds 72; past 1024 a figure is a typo, and
  // node arithmetic on it (workers + gpus_per_node) would overflow.
  constexpr int kMostGpusPerNode = 1024;
  if (h.node.gpus_per_node > kMostGpusPerNode)
    t.fail(row, "gpus_per_node",
           fmt::format("{} GPUs in one node is past any machine (at most {})", h.node.gpus_per_node, kMostGpusPerNode));
  if (present("gpus_per_host")) {
    h.node.gpus_per_host = t.positive_int(row, "gpus_per_host");
    if (h.node.gpus_per_host > h.node.gpus_per_node)
      t.fail(row, "gpus_per_host",
             fmt::format("{} GPUs under one host is more than the node's {} (gpus_per_node is where NVLink reaches; a "
                         "host is one operating system, at most that)",
                         h.node.gpus_per_host, h.node.gpus_per_node));
  }
  figure("intra_node_bw_GBps", h.node.intra_node_gbps, true);
  figure("inter_node_bw_GBps", h.node.inter_node_gbps, true);
  // A network the file states is the user's cluster's, not the catalog's assumption.
  if (present("inter_node_bw_GBps")) h.node.inter_node_assumed = false;
  // As `trainplan hardware NAME --json` writes it: a copy of a catalog GPU keeps its assumed network.
  if (present("inter_node_assumed")) h.node.inter_node_assumed = t.truth(row, "inter_node_assumed");
  // A bandwidth restated over a base is no longer the base's link: its name would contradict it.
  if (present("intra_link")) h.node.intra_link = t.text(row, "intra_link");
  else if (has_base && present("intra_node_bw_GBps")) h.node.intra_link = "as given (" + t.text(row, "intra_node_bw_GBps") + " GB/s)";
  if (present("inter_link")) h.node.inter_link = t.text(row, "inter_link");
  else if (has_base && present("inter_node_bw_GBps")) h.node.inter_link = "as given (" + t.text(row, "inter_node_bw_GBps") + " GB/s)";
  figure("collective_latency_exponent", h.node.collective_latency_exponent, false);
  if (!(h.node.collective_latency_exponent < 1))
    t.fail(row, "collective_latency_exponent", "must be below 1, got " + t.text(row, "collective_latency_exponent"));
  // GPUs are told apart by name where several meet (the measured one among
  // plan --gpu's, simulate's groups, a calibration's GPU): figures of the
  // file's own under a catalog GPU's name would be read as the catalog's.
  if (const auto same = structure::find_builtin_hardware(h.name))  // as names are compared everywhere: "T4" is t4
    if (const std::string d = first_difference(*same, h); !d.empty())
      t.fail(row, name_column,
             fmt::format("'{}' is the catalog's name for its own {}, and this file's figures differ from it ({}): give "
                         "the file's GPU another name, such as {}-custom",
                         h.name, same->full_name, d, h.name));
  return h;
}

bool names_hardware_file(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos || !structure::find_builtin_hardware(name_or_path);
}

structure::HardwareProfile resolve_hardware(const std::string& name_or_path, const std::string& option) {
  // A path (it has a '/') is always a file, even where its last part is a
  // catalog name ("./l4"); a bare word is the catalog's before a file's.
  const bool path = name_or_path.find('/') != std::string::npos;
  if (!path)
    if (auto h = structure::find_builtin_hardware(name_or_path)) return *h;
  if (std::filesystem::is_regular_file(name_or_path)) return read_hardware_file(name_or_path);
  if (std::filesystem::is_directory(name_or_path))
    throw InputError(name_or_path, 0, option, "is a directory, not a hardware file");
  if (std::error_code ec; std::filesystem::exists(name_or_path, ec))
    throw InputError(name_or_path, 0, option,
                     "is not a regular file (a pipe, a device or a process substitution): give a hardware file");
  if (path || name_or_path.ends_with(".csv")) throw InputError(name_or_path, 0, option, "no such hardware file");
  throw InputError("", 0, option,
                   "unknown GPU '" + name_or_path + "': neither a name in the hardware catalog (" + catalog_list() +
                       ") nor a hardware file (docs/HARDWARE.md)");
}

structure::HardwareProfile resolve_llm_hardware(const std::string& name_or_path, const std::string& option) {
  structure::HardwareProfile h = resolve_hardware(name_or_path, option);
  if (!(h.gpu.memory_gb > 0))
    throw InputError(h.origin.empty() ? name_or_path : h.origin, 0, "mem_GB",
                     "the GPU's memory is not given; the transformer verbs need it (mem_GB, in GB, or a base GPU)");
  return h;
}

}  // namespace trainplan::io
