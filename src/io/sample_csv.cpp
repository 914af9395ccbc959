#include "io/sample_csv.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "core/edit_distance.h"
#include "core/error.h"
#include "core/whole_file.h"
#include "io/csv.h"

namespace trainplan::io {

// "trainplan: metric=max dataset_size=N", a '#' line before the header.
static bool is_format_line(const CsvComment& c) { return c.text.starts_with("trainplan:"); }

static void parse_format_line(const CsvComment& comment, SampleSet& set, const std::string& name) {
  const long line = comment.line;
  std::istringstream in(comment.text.substr(std::string("trainplan:").size()));
  std::string kv;
  while (in >> kv) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) throw InputError(name, line, "", "format line: expected key=value, got '" + kv + "'");
    std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key == "metric") {
      try {
        set.direction = parse_direction(value);
      } catch (const InputError& e) {
        throw InputError(name, line, "metric", e.message());
      }
    } else if (key == "dataset_size") {
      auto v = parse_finite(value);
      // Past 2^53 a double no longer holds every integer, and past 2^63 a long holds none.
      if (!v || *v < 1 || *v != std::floor(*v) || *v > 9007199254740992.0)
        throw InputError(name, line, "dataset_size", "must be a positive integer up to 2^53, got '" + value + "'");
      set.dataset_size = static_cast<long>(*v);
    } else if (key == "metric_range") {
      try {
        set.declared_metric_range = parse_metric_range(value, "metric_range");
        set.declared_metric_range->from = "declared in " + name + " (metric_range=" + value + ")";
      } catch (const InputError& e) {
        throw InputError(name, line, "metric_range", e.message());
      }
    } else if (key == "times_predicted_from") {
      set.times_predicted_from = value;
    } else if (key == "times_predicted_log_sd") {
      auto v = parse_finite(value);
      if (!v || *v < 0 || *v > 10)
        throw InputError(name, line, "times_predicted_log_sd", "must be a number from 0 to 10, got '" + value + "'");
      set.times_predicted_log_sd = *v;
    } else if (key == "diverged") {
      // "64x1,64x2": the (batch, workers) whose training diverged; integers, as a grid's are.
      if (value.empty()) throw InputError(name, line, "diverged", "expected BATCHxWORKERS[,BATCHxWORKERS...], got nothing");
      std::istringstream cells(value);
      for (std::string cell; std::getline(cells, cell, ',');) {
        const auto x = cell.find('x');
        const auto b = x == std::string::npos ? std::nullopt : parse_finite(cell.substr(0, x));
        const auto r = x == std::string::npos ? std::nullopt : parse_finite(cell.substr(x + 1));
        auto whole = [](std::optional<double> v) { return v && *v >= 1 && *v <= 1e9 && *v == std::floor(*v); };
        if (!whole(b) || !whole(r))
          throw InputError(name, line, "diverged",
                           "expected BATCHxWORKERS[,BATCHxWORKERS...] of whole numbers from 1 to 1e9, got '" + cell +
                               "'");
        set.diverged.insert({*b, int(*r)});
      }
    } else if (lowercase(key) == "direction") {
      // The direction's own name for it: read as nothing, it would leave a loss maximised.
      throw InputError(name, line, key,
                       fmt::format("format line: the metric's direction is metric=min or metric=max, not {}=", key));
    } else {
      // Unknown keys are ignored so that newer files stay readable; one a
      // typo away from a known key would leave that key's default unseen.
      // One edit away, or the same but for case; not a key that extends a
      // known one (a newer "metrics" is not a slip of "metric").
      const std::string lower = lowercase(key);
      for (const std::string known : {"metric", "dataset_size", "metric_range", "times_predicted_from",
                                      "times_predicted_log_sd", "diverged"})
        if ((!lower.starts_with(known) && !known.starts_with(lower) && edit_distance(lower, known) <= 1) ||
            (lower == known && key != known))
          throw InputError(name, line, key,
                           fmt::format("format line: unknown key '{}'; did you mean '{}'?", key, known));
    }
  }
  // The error of a prediction from nowhere: a hand edit, most likely.
  if (set.times_predicted_log_sd && set.times_predicted_from.empty())
    throw InputError(name, line, "times_predicted_log_sd",
                     "is the error of times predicted on other hardware: give times_predicted_from=NAME with it, or "
                     "drop it for measured times");
}

SampleSet parse_samples_csv(const std::string& text, const std::string& name) {
  CsvTable t = CsvTable::parse(text, name);
  SampleSet set;
  set.source = name;
  // The format line wherever it stands among the comments before the header
  // (an exporter's own comment may come first), once; after the header it
  // would be a comment that silently drops the metric's direction.
  const CsvComment* format_line = nullptr;
  for (const auto& c : t.leading_comments()) {
    // "# TrainPlan: metric=min" would be a comment, and the loss maximised without a word.
    if (!is_format_line(c) && lowercase(c.text).starts_with("trainplan:"))
      throw InputError(name, c.line, "",
                       fmt::format("'# {}' reads as a comment: the format line begins '# trainplan:', lowercase",
                                   c.text.substr(0, std::string("trainplan:").size())));
    if (is_format_line(c)) {
      if (format_line)
        throw InputError(name, c.line, "",
                         fmt::format("a second format line ('# trainplan: ...'); line {} is the first: keep one",
                                     format_line->line));
      format_line = &c;
    }
  }
  if (format_line) parse_format_line(*format_line, set, name);
  for (const auto& c : t.comments_after_header())
    if (is_format_line(c))
      throw InputError(name, c.line, "",
                       fmt::format("the format line ('# trainplan: ...') must come before the header (line {}): "
                                   "here it would be read as a comment and its keys ignored",
                                   t.header_line()));
  t.require_columns({"batch", "workers", "epochs", "epoch_time_s", "metric"});
  // A column read beside another that differs only in case ('batch' and 'Batch') would leave the
  // other's values unread without a word: which was meant is the user's to say.
  for (const char* read : {"batch", "workers", "epochs", "epoch_time_s", "metric", "nodes", "model", "hardware",
                           "grad_sqr", "grad_var", "time_spread", "source"})
    t.refuse_ambiguous(read);
  if (t.rows().empty()) throw InputError(name, 0, "", "file has a header but no samples");
  // One file is one workload on one kind of machine: the models fit every row together, so rows of
  // another network or GPU pasted in would be fitted as if they were more of the same.
  std::pair<long, std::string> first_model, first_hardware;  // line and value of the first row naming one
  auto same_as_first = [&](const CsvRow& row, const char* column, const std::string& value,
                           std::pair<long, std::string>& first) {
    if (value.empty()) return;
    if (first.second.empty()) first = {row.line, value};
    else if (value != first.second)
      t.fail(row, column, fmt::format("'{}', where line {} has '{}': a sample file holds one workload's trials on one "
                                      "kind of hardware; give each its own file",
                                      value, first.first, first.second));
  };
  for (const auto& row : t.rows()) {
    Sample s;
    // A per-worker batch counts examples; a fractional one would be rounded to a batch no trial ran
    // when the planner makes its search space of them.
    s.batch = t.positive(row, "batch");
    if (s.batch > 1e9) t.fail(row, "batch", "must be at most 1e9, got " + t.text(row, "batch"));
    if (s.batch != std::floor(s.batch))
      t.fail(row, "batch", "must be a whole number (examples per worker), got " + t.text(row, "batch"));
    s.workers = t.positive_int(row, "workers");
    s.epochs = t.number(row, "epochs");
    // Past the planner's largest count an epoch number is a slip (1e308 made the curve fits infinite).
    if (s.epochs < 0 || s.epochs > kMostEpochs)
      t.fail(row, "epochs", fmt::format("must be in [0, {}], got {}", kMostEpochs, t.text(row, "epochs")));
    s.epoch_time_s = t.positive(row, "epoch_time_s");
    if (s.epoch_time_s > kMostEpochSeconds || s.epoch_time_s < kLeastEpochSeconds)
      t.fail(row, "epoch_time_s", fmt::format("must be in [{:g}, {:g}] s, got {}", kLeastEpochSeconds, kMostEpochSeconds,
                                              t.text(row, "epoch_time_s")));
    s.metric = t.optional_number(row, "metric");
    s.line = row.line;
    if (s.metric && std::abs(*s.metric) > kMostMetricMagnitude)
      t.fail(row, "metric",
             fmt::format("must be within +-{:g}, got {}", kMostMetricMagnitude, t.text(row, "metric")));
    if (t.has_column("nodes") && !t.text(row, "nodes").empty()) {
      s.nodes = t.positive_int(row, "nodes");
      if (s.nodes > s.workers)
        t.fail(row, "nodes", fmt::format("{} nodes for {} workers: each node runs a worker at least", s.nodes, s.workers));
    }
    if (t.has_column("model")) s.model = t.text(row, "model");
    if (t.has_column("hardware")) s.hardware = t.text(row, "hardware");
    same_as_first(row, "model", s.model, first_model);
    same_as_first(row, "hardware", s.hardware, first_hardware);
    if (t.has_column("grad_sqr")) s.grad_sqr = t.optional_number(row, "grad_sqr");
    if (t.has_column("grad_var")) s.grad_var = t.optional_number(row, "grad_var");
    if (t.has_column("time_spread")) {
      s.time_spread = t.optional_number(row, "time_spread");
      // A relative uncertainty: past 10 (+-1000%) the time is not measured at
      // all, and the intervals scaled by it would reach infinity.
      if (s.time_spread && (*s.time_spread < 0 || *s.time_spread > kMostTimeSpread))
        t.fail(row, "time_spread",
               fmt::format("must be in [0, {:g}] (a relative uncertainty: 0.02 is +-2%), got {}", kMostTimeSpread,
                           t.text(row, "time_spread")));
    }
    std::string kind = t.has_column("source") ? t.text(row, "source") : "";
    if (kind.empty() || kind == "trial") {
      set.samples.push_back(std::move(s));
    } else if (kind == "curve") {
      if (!s.metric) t.fail(row, "metric", "a curve point needs a metric");
      set.curve.push_back(std::move(s));
    } else {
      t.fail(row, "source", "must be 'trial' or 'curve', got '" + kind + "'");
    }
  }
  if (set.samples.empty()) throw InputError(name, 0, "", "file has curve points but no trial samples");
  // One configuration, one node count: a blank beside a stated count for the
  // same batch and workers would be a second configuration of the same runs
  // (cross-validation could hold it out and train on it at once), and which
  // count the blank meant cannot be known.
  std::map<std::pair<double, int>, const Sample*> stated;
  for (const auto& s : set.samples)
    if (s.nodes > 0) stated.emplace(std::pair{s.batch, s.workers}, &s);
  for (const auto& s : set.samples)
    if (s.nodes == 0 && s.workers > 1)
      if (auto it = stated.find({s.batch, s.workers}); it != stated.end())
        throw InputError(name, s.line, "nodes",
                         fmt::format("is empty where line {} gives {} for the same batch ({:g}) and workers ({}): state "
                                     "it on every row of a configuration, or on none",
                                     it->second->line, it->second->nodes, s.batch, s.workers));
  return set;
}

SampleSet read_samples_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open sample file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_samples_csv(ss.str(), path);
}

std::string format_samples_csv(const SampleSet& set) {
  bool any_nodes = false, any_model = false, any_hw = false, any_grad = false, any_spread = false;
  const bool any_curve = !set.curve.empty();
  for (const auto& v : {&set.samples, &set.curve})
    for (const auto& s : *v) {
      any_nodes |= s.nodes > 0;
      any_model |= !s.model.empty();
      any_hw |= !s.hardware.empty();
      any_grad |= s.grad_sqr.has_value() || s.grad_var.has_value();
      any_spread |= s.time_spread.has_value();
    }
  std::string out = fmt::format("# trainplan: metric={}", to_string(set.direction));
  if (set.dataset_size) out += fmt::format(" dataset_size={}", *set.dataset_size);
  if (const auto& r = set.declared_metric_range)
    out += " metric_range=" + r->text();
  if (!set.times_predicted_from.empty()) {
    std::string from = set.times_predicted_from;  // one word on the format line
    for (char& c : from)
      if (std::isspace(static_cast<unsigned char>(c))) c = '_';
    out += " times_predicted_from=" + from;
  }
  if (set.times_predicted_log_sd) out += fmt::format(" times_predicted_log_sd={:.6g}", *set.times_predicted_log_sd);
  if (!set.diverged.empty()) {
    out += " diverged=";
    for (auto it = set.diverged.begin(); it != set.diverged.end(); ++it)
      out += fmt::format("{}{:.10g}x{}", it == set.diverged.begin() ? "" : ",", it->first, it->second);
  }
  out += "\nbatch,workers,epochs,epoch_time_s,metric";
  if (any_nodes) out += ",nodes";
  if (any_model) out += ",model";
  if (any_hw) out += ",hardware";
  if (any_grad) out += ",grad_sqr,grad_var";
  if (any_spread) out += ",time_spread";
  if (any_curve) out += ",source";
  out += "\n";
  // Every figure in the shortest form that reads back to the same double: an
  // export answers as the store it came from does, to the last digit.
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string(); };
  auto rows = [&](const std::vector<Sample>& v, const char* kind) {
    for (const auto& s : v) {
      out += fmt::format("{},{},{},{},{}", s.batch, s.workers, s.epochs, s.epoch_time_s, opt(s.metric));
      if (any_nodes) out += fmt::format(",{}", s.nodes > 0 ? std::to_string(s.nodes) : "");
      // Names are the user's (--name, a CPU's model string): quoted when they hold a comma or a quote.
      if (any_model) out += "," + csv_field(s.model);
      if (any_hw) out += "," + csv_field(s.hardware);
      if (any_grad) out += "," + opt(s.grad_sqr) + "," + opt(s.grad_var);
      if (any_spread) out += "," + opt(s.time_spread);
      if (any_curve) out += std::string(",") + kind;
      out += "\n";
    }
  };
  rows(set.samples, "trial");
  rows(set.curve, "curve");
  return out;
}

void write_samples_csv(const std::string& path, const SampleSet& set) {
  // Write to a temporary file and rename, so a crash never leaves half a file.
  write_whole_file(path, format_samples_csv(set));
}

}  // namespace trainplan::io
