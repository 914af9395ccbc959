// What the verbs share beyond their registration (cli/command.h): options
// several verbs add, the parsing of their values with errors that name the
// option, and small helpers of their output (the JSON answer printed, the
// program's path as the user ran it, a comparison of GPUs).
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/sample.h"
#include "models/registry.h"
#include "models/transfer.h"
#include "structure/gpu_catalog.h"

namespace trainplan::cli {

// Adds the required `--data DIR` of the benchmarks that read the Pollux traces
// (resolved by io::find_pollux_traces), stored in `dir`.
void add_pollux_data_option(CLI::App* cmd, std::string& dir);

// Adds `--comm-profile FILE` to `cmd`, stored in `path`.
void add_comm_profile_option(CLI::App* cmd, std::string& path);
// Adds `--hardware NAME|FILE` to `cmd`, stored in `name_or_path`: the
// interconnect prior of the all-reduce time models and the GPUs a node holds.
void add_hardware_option(CLI::App* cmd, std::string& name_or_path);
// The items of a comma-separated option value ("a100-80gb, h100"), in order,
// each without spaces around it. Throws InputError naming `option` on an
// empty item or an empty list.
std::vector<std::string> comma_list(const std::string& value, const std::string& option);
// comma_list, and throws InputError naming `option` on an item given twice
// (a name repeated would run, and be counted, twice).
std::vector<std::string> distinct_comma_list(const std::string& value, const std::string& option);
// Says on stderr which catalog entry a GPU name given as one of its aliases
// stands for ("--gpu 'a100' is the catalog's a100-40gb"): an alias can hide a
// choice (of two memory sizes) the user did not make.
void note_catalog_alias(const std::string& gpu, const std::string& option);
// A GPU option's value as an input an output must not replace ({path,
// option} for io::check_output_path): a hardware file is read, a catalog
// name is not (its path is then "", which is skipped).
std::pair<std::string, std::string> hardware_file_input(const std::string& gpu, const std::string& option);
// --tiresias-thresholds: comma-separated GPU-seconds, each a number > 0.
std::vector<double> parse_tiresias_thresholds(const std::string& value);

// profile::read_samples, saying on stderr when the epoch times were
// predicted on other hardware rather than measured (`transfer --samples`).
SampleSet read_samples_noted(const std::string& path);
// --dataset-size N (> 0; 0: not given) as the samples' dataset_size, saying on
// stderr when it replaces a different one the file gave.
void apply_dataset_size(SampleSet& set, long dataset_size, const std::string& path);
// --time-repeats: runs of each time trial (profile, demo).
void add_time_repeats_option(CLI::App* cmd, int& repeats, bool& back_to_back, bool& batches_apart);
// Adds `--metric-range LO:HI` to `cmd`, stored in `range` (parse it with
// trainplan::parse_metric_range).
void add_metric_range_option(CLI::App* cmd, std::string& range);
// The models' parameters with the profile at `comm_profile_path` loaded (an
// empty path: none, the ring factor) and the interconnect prior of
// `hardware` (a catalog name or a hardware file; empty: the default prior).
// Throws InputError naming the file or the option.
models::ModelParams model_params(const std::string& comm_profile_path, const std::string& hardware = "");

// Adds an option `name` that reads a duration, plain seconds or with units
// (90, 180s, 3m, 1h30m), into `seconds`; a malformed value fails parsing
// with the option's name.
CLI::Option* add_duration_option(CLI::App* cmd, const std::string& name, double& seconds, const std::string& help);

// True when stderr is a terminal (progress bars redraw there).
bool stderr_is_tty();

// Checks for numeric options whose failure message says the rule and the
// value ("must be > 0, got 0"), where CLI11's print its range's double limits.
CLI::Validator positive_number();
CLI::Validator non_negative_number();
// A number from lo to hi; NaN, inf and text refused (CLI::Range lets NaN through).
CLI::Validator number_within(double lo, double hi);
// A seed: a whole number that fits 64 bits, refused beyond instead of clamped.
CLI::Validator seed_number();
// An interval's coverage: strictly between 0 and 1, or 0 for no interval.
CLI::Validator coverage_or_none();
// A coverage from lo to hi; NaN, inf and text refused.
CLI::Validator coverage_within(double lo, double hi);

// What a failing --json answer says: error, exit_code (and infeasible for
// exit 3), and the file, line and field `input` names.
nlohmann::json json_error_fields(const std::string& message, int exit_code, const InputError* input = nullptr);

// A verb that has printed its JSON answer and then fails (exit 3 with the
// plan that came closest) calls this, so that main does not print a second
// document: with --json, a failure is otherwise printed as JSON on stdout.
void note_json_answer_printed();
bool json_answer_printed();

// How this program was started, for a command line a user is told to run
// again: argv[0] where it names a path ("build/trainplan"), else "trainplan"
// (found on PATH), as a shell word.
void note_program_path(const char* argv0);
std::string program_path();

// A GPU-hour's price for each of `names` (the --gpu items, in order), from
// --price: one number for all, or NAME=PRICE for each, NAME an item or the
// hardware's name. Zeros (no price) when --price is empty. Throws InputError
// naming --price, its message calling the items `priced` (default "--gpu").
std::vector<double> prices_for(const std::string& text, const std::vector<std::string>& names,
                               const std::vector<structure::HardwareProfile>& gpus,
                               const std::string& priced = "--gpu");

// --tf32: the framework runs fp32 dense layers on TF32 tensor cores
// (structure::GpuSpec::fp32_matmul_tf32); `cmd` gets the flag, `on` its value.
void add_tf32_option(CLI::App* cmd, bool& on);

// --precision auto|fp32|mixed and --target-precision: what the training ran
// its matrix work in, and will run in on the target, for the hardware
// transfer (models::TransferProblem::precision); `cmd` gets the options, `p`
// their values.
void add_transfer_precision_options(CLI::App* cmd, models::TrainingPrecision& p);

// Comparing GPUs (`plan --gpu`, `llm plan --gpu A,B`): the index of the
// least of `values` among those that have one (a GPU with a plan), or nullopt.
std::optional<size_t> least_of(const std::vector<std::optional<double>>& values);
// "h100, cost 5.9e+05 (a100-80gb +53%, h200 +4%)": names[best], `what`, and how
// far each other entry with a value is behind values[best], in per cent.
std::string best_and_gaps(const std::vector<std::string>& names, const std::vector<std::optional<double>>& values,
                          size_t best, const std::string& what);

}  // namespace trainplan::cli
