// The options shared by fit, predict and plan that describe the cluster
// (--comm-profile, --hardware) and the metric (--metric-range), and their
// reading of --samples.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/shared_options.h"
#include "core/error.h"
#include "core/price.h"
#include "io/csv.h"
#include "io/hardware_file.h"
#include "profile/samples_file.h"
#include "scoring/transfer_eval.h"
#include "structure/comm_profile.h"
#include "structure/gpu_catalog.h"

namespace trainplan::cli {

void add_comm_profile_option(CLI::App* cmd, std::string& path) {
  cmd->add_option("--comm-profile", path,
                  "Cluster communication profile (JSON from `trainplan comm-profile`): the time models' "
                  "inter-node cost shape across nodes and GPUs per node");
}

void add_hardware_option(CLI::App* cmd, std::string& name_or_path) {
  cmd->add_option("--hardware", name_or_path,
                  "What the workers run on: a catalog name (`trainplan hardware` lists them) or a hardware file "
                  "(docs/HARDWARE.md). Sets the links the time models assume for a sync term the samples cannot "
                  "identify, and the GPUs a node holds [default: a T4 node on PCIe 3.0 x16 and 25 Gb/s Ethernet for "
                  "the links, said as a default wherever it is used (not the catalog's t4, whose g4dn.12xlarge nodes "
                  "have 50 Gb/s: --hardware t4 for those); the samples' packing for the nodes]");
}

SampleSet read_samples_noted(const std::string& path) {
  SampleSet set = profile::read_samples(path);
  if (!set.times_predicted_from.empty())
    std::cerr << fmt::format(
        "note: {}'s epoch times were predicted from {} by `trainplan transfer`, not measured: the models' "
        "cross-validated errors leave out the transfer's own error{} (docs/TRANSFER.md)\n",
        path, set.times_predicted_from,
        set.times_predicted_log_sd
            ? fmt::format(" (80% of such errors within x/{:.2f}), which predict's epoch-time interval and "
                          "`plan --confidence`'s bounds add",
                          std::exp(scoring::kZ80 * *set.times_predicted_log_sd))
            : ", and so do their intervals");
  return set;
}

void apply_dataset_size(SampleSet& set, long dataset_size, const std::string& path) {
  if (dataset_size <= 0) return;
  if (set.dataset_size && *set.dataset_size != dataset_size)
    std::cerr << fmt::format("note: {}: --dataset-size {} replaces the samples' own dataset_size={}\n", path,
                             dataset_size, *set.dataset_size);
  set.dataset_size = dataset_size;
}

std::vector<std::string> comma_list(const std::string& value, const std::string& option) {
  std::vector<std::string> out;
  for (size_t at = 0;;) {
    const size_t comma = value.find(',', at);
    std::string item = value.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    item.erase(0, item.find_first_not_of(" \t"));  // "32, 64" and "32 ,64" are 32 and 64
    item.erase(item.find_last_not_of(" \t") + 1);
    out.push_back(std::move(item));
    if (out.back().empty()) throw InputError("", 0, option, "an empty item in '" + value + "'");
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

std::vector<std::string> distinct_comma_list(const std::string& value, const std::string& option) {
  std::vector<std::string> out = comma_list(value, option);
  for (size_t i = 0; i < out.size(); ++i)
    if (std::find(out.begin(), out.begin() + i, out[i]) != out.begin() + i)
      throw InputError("", 0, option, "'" + out[i] + "' is named twice");
  return out;
}

void note_catalog_alias(const std::string& gpu, const std::string& option) {
  if (auto key = structure::builtin_alias_target(gpu))
    std::cerr << fmt::format("note: {} '{}' is the catalog's {} (`trainplan hardware` lists the others)\n", option, gpu,
                             *key);
}

nlohmann::json json_error_fields(const std::string& message, int exit_code, const InputError* input) {
  nlohmann::json j = {{"error", message}, {"exit_code", exit_code}};
  if (exit_code == kExitInfeasible) j["infeasible"] = true;
  if (input) {
    if (!input->file().empty()) j["file"] = input->file();
    if (input->line() > 0) j["line"] = input->line();
    if (!input->field().empty()) j["field"] = input->field();
  }
  return j;
}

std::pair<std::string, std::string> hardware_file_input(const std::string& gpu, const std::string& option) {
  return {io::names_hardware_file(gpu) ? gpu : "", option};
}

std::vector<double> parse_tiresias_thresholds(const std::string& value) {
  std::vector<double> out;
  for (const auto& item : comma_list(value, "--tiresias-thresholds")) {
    const auto x = io::parse_finite(item);
    if (!x || !(*x > 0)) throw InputError("", 0, "--tiresias-thresholds", "'" + item + "' is not a number > 0");
    // The queues lie between thresholds taken in increasing order: one given
    // twice would make a queue no job can be in, most likely a slip.
    if (std::find(out.begin(), out.end(), *x) != out.end())
      throw InputError("", 0, "--tiresias-thresholds", "'" + item + "' is given twice");
    out.push_back(*x);
  }
  return out;
}

void add_time_repeats_option(CLI::App* cmd, int& repeats, bool& back_to_back, bool& batches_apart) {
  cmd->add_option("--time-repeats", repeats,
                  "Runs of each time trial, each a fresh set of processes; one more when they differ by over 5% "
                  "(interference), and the lowest median is kept")
      ->capture_default_str()
      ->check(CLI::Range(1, 10));
  cmd->add_flag("--repeats-back-to-back", back_to_back,
                "Run each time trial's repeats one after the other [default: consecutive time trials first run "
                "once each, in one round, then take their other runs in turn, so that a slow spell of the machine "
                "reaches one run of a configuration rather than all of them]");
  cmd->add_flag("--time-batches-apart", batches_apart,
                "Time each batch in runs of its own [default, where the time command takes {batches}, as the "
                "built-in trainer's does: each run times all the batches of one worker count in turn, so that the "
                "machine's speed, which moves between runs, moves them alike]");
}

void add_metric_range_option(CLI::App* cmd, std::string& range) {
  cmd->add_option("--metric-range", range,
                  "The values the metric can take, LO:HI (a side may be empty: unbounded); intervals are clipped to "
                  "it [default: the samples' metric_range=LO:HI, else [0, 1] when every sampled metric lies in "
                  "[0, 1] and larger is better, else [0, inf) when none is negative]");
}

models::ModelParams model_params(const std::string& comm_profile_path, const std::string& hardware) {
  models::ModelParams p;
  if (!comm_profile_path.empty())
    p.comm_profile = std::make_shared<structure::CommProfile>(structure::CommProfile::load(comm_profile_path));
  if (!hardware.empty())
    p.hardware = std::make_shared<structure::HardwareSpec>(
        structure::interconnect_spec(io::resolve_hardware(hardware, "--hardware")));
  return p;
}

namespace {
// `v` as a number when all of it is one (NaN and inf included), else nullopt.
std::optional<double> whole_number(const std::string& v) {
  try {
    size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

CLI::Validator number_check(bool zero_ok) {
  return CLI::Validator(
      [zero_ok](std::string& v) -> std::string {
        const auto number = whole_number(v);
        if (!number) {
          // std::stod refuses what underflows or overflows a double (1e-320, 1e400): a number still.
          try {
            (void)std::stod(v);
          } catch (const std::out_of_range&) {
            return "'" + v + "' is outside the range of the numbers read (about 1e-308 to 1e308)";
          } catch (const std::exception&) {
          }
          return "must be a number, got '" + v + "'";
        }
        const double x = *number;
        if (!std::isfinite(x) || (zero_ok ? x < 0 : x <= 0))
          return std::string(zero_ok ? "must be a finite number >= 0" : "must be a finite number > 0") + ", got '" +
                 v + "'";
        return "";
      },
      zero_ok ? "NUMBER >= 0" : "NUMBER > 0");
}
}  // namespace

CLI::Validator coverage_or_none() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const double x = whole_number(v).value_or(-1);
        if (x == 0 || (x > 0 && x < 1)) return "";
        return "must be a coverage strictly between 0 and 1 (e.g. 0.8), or 0 for none; got '" + v + "'";
      },
      "0 or (0, 1)");
}

CLI::Validator coverage_within(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& v) -> std::string {
        // Not CLI::Range, which lets NaN through (every comparison with it is false).
        const auto x = whole_number(v);
        if (x && *x >= lo && *x <= hi) return "";
        return fmt::format("must be a coverage from {:g} to {:g} (e.g. 0.8); got '{}'", lo, hi, v);
      },
      fmt::format("{:g} to {:g}", lo, hi));
}

CLI::Validator number_within(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& v) -> std::string {
        const auto x = whole_number(v);
        if (!x) return "must be a number, got '" + v + "'";
        if (*x >= lo && *x <= hi) return "";
        return fmt::format("must be from {:g} to {:g}, got '{}'", lo, hi, v);
      },
      fmt::format("{:g} to {:g}", lo, hi));
}

CLI::Validator positive_number() { return number_check(false); }
CLI::Validator non_negative_number() { return number_check(true); }

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        // Read here rather than by the option's conversion, which clamps a number past 2^64 - 1 to it.
        uint64_t x = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec == std::errc::result_out_of_range) return "must be a whole number from 0 to 2^64 - 1, got '" + v + "'";
        if (ec != std::errc() || end != v.data() + v.size()) return "must be a whole number >= 0, got '" + v + "'";
        return "";
      },
      "");  // the type, UINT, says it; "UINT:WHOLE NUMBER >= 0=1" read as a condition
}

// A GPU-hour's price for each of `names` (the --gpu items, in order), from
// --price: one number for all, or NAME=PRICE for each, NAME a --gpu item or
// the hardware's name. Zeros (no price) when --price is empty.
std::vector<double> prices_for(const std::string& text, const std::vector<std::string>& names,
                               const std::vector<structure::HardwareProfile>& gpus, const std::string& priced) {
  std::vector<double> out(names.size(), 0.0);
  if (text.empty()) return out;
  auto number = [&](const std::string& v, const std::string& item) {
    double x = 0;
    size_t used = 0;
    try {
      x = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != v.size() || !std::isfinite(x) || x <= 0)
      throw InputError("", 0, "--price",
                       fmt::format("'{}' is not a positive price per GPU-hour (give one number, or NAME=PRICE for each "
                                   "{})",
                                   item, priced));
    if (x > kMostPricePerGpuHour)
      throw InputError("", 0, "--price", fmt::format("'{}': a GPU-hour's price must be at most {:g}", item, kMostPricePerGpuHour));
    return x;
  };
  if (text.find('=') == std::string::npos) {
    std::fill(out.begin(), out.end(), number(text, text));
    return out;
  }
  for (const auto& item : comma_list(text, "--price")) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError("", 0, "--price", fmt::format("'{}' is not NAME=PRICE (give one number, or a price for each {})", item, priced));
    const std::string name = item.substr(0, eq);
    // The item as written, or any name of that catalog entry (h100-sxm is h100).
    const auto named = structure::find_builtin_hardware(name);
    size_t i = 0;
    while (i < names.size() && names[i] != name && gpus[i].name != name && !(named && named->name == gpus[i].name)) ++i;
    if (i == names.size())
      throw InputError("", 0, "--price", fmt::format("'{}' is not one of {} ({})", name, priced, fmt::join(names, ", ")));
    if (out[i] != 0)  // two prices for one GPU: which was meant is not for the planner to guess
      throw InputError("", 0, "--price", fmt::format("{} is priced twice", names[i]));
    out[i] = number(item.substr(eq + 1), item);
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (out[i] == 0) throw InputError("", 0, "--price", fmt::format("no price for {} (give NAME=PRICE for each {})", names[i], priced));
  return out;
}

void add_tf32_option(CLI::App* cmd, bool& on) {
  cmd->add_flag("--tf32", on,
                "The training runs fp32 dense layers (matmuls) on TF32 tensor cores, where a GPU has them: PyTorch "
                "1.7-1.11 by default, later with torch.backends.cuda.matmul.allow_tf32 = True [default: off, as PyTorch "
                "from 1.12; convolutions are taken on TF32 either way, cuDNN's default]");
}

void add_transfer_precision_options(CLI::App* cmd, models::TrainingPrecision& p) {
  // The enum's value as CLI11 reads an enum (its number), from its name.
  const CLI::Validator by_name(
      [](std::string& in) -> std::string {
        const auto v = models::precision_named(in);
        if (!v) return "must be auto, fp32 or mixed, got '" + in + "'";
        in = std::to_string(static_cast<int>(*v));
        return "";
      },
      "auto|fp32|mixed");
  cmd->add_option("--precision", p.profiled,
                  "What the training ran its matrix work in: fp32 (convolutions on TF32 where a GPU has it, dense "
                  "layers as --tf32 says), mixed (automatic mixed precision, fp16 tensor cores), or auto: mixed when "
                  "the source ran the network's flops faster than its GPU's sustained fp32 peak, which an fp32 run on "
                  "a GPU with TF32 can also do [default: auto]")
      ->transform(by_name);
  cmd->add_option("--target-precision", p.target,
                  "What the training will run its matrix work in on the target GPU, when not what it ran in where "
                  "measured (profiled in fp32, to be trained with automatic mixed precision): fp32, mixed, or auto, "
                  "the same [default: auto]")
      ->transform(by_name);
}

std::optional<size_t> least_of(const std::vector<std::optional<double>>& values) {
  std::optional<size_t> best;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] && (!best || *values[i] < *values[*best])) best = i;
  return best;
}

std::string best_and_gaps(const std::vector<std::string>& names, const std::vector<std::optional<double>>& values,
                          size_t best, const std::string& what) {
  std::vector<std::string> others;
  for (size_t i = 0; i < names.size(); ++i)
    if (i != best && values[i]) others.push_back(fmt::format("{} +{:.0f}%", names[i], 100 * (*values[i] / *values[best] - 1)));
  return fmt::format("{}, {}{}", names[best], what, others.empty() ? "" : fmt::format(" ({})", fmt::join(others, ", ")));
}

}  // namespace trainplan::cli
