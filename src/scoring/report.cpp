#include "scoring/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace trainplan::scoring {

namespace {

nlohmann::json number_or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// "—" when the model has no such part, "no data" when the data cannot score
// it, "n/a" when this number failed (see the notes), else a percentage.
std::string cell(const PartScore& p, const std::optional<double>& v) {
  if (!p.has_part) return "—";
  if (!p.has_data) return "no data";
  if (!v) return "n/a";
  return fmt::format("{:.1f}%", 100 * *v);
}

// Pads to `w` display columns; "—" is one column but three bytes.
std::string pad(const std::string& s, size_t w, bool right = true) {
  size_t cols = 0;
  for (unsigned char c : s) cols += (c & 0xC0) != 0x80;
  std::string fill(cols < w ? w - cols : 0, ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

nlohmann::json to_json(const PartScore& p) {
  nlohmann::json j;
  j["in_sample_mre"] = number_or_null(p.in_sample_mre);
  j["cv_mre"] = number_or_null(p.cv_mre);
  j["extrapolation_mre"] = {{"workers", number_or_null(p.workers_mre)},
                            {"workers_one_per_node", number_or_null(p.workers_1pn_mre)},
                            {"batch", number_or_null(p.batch_mre)}};
  if (!p.not_applicable.empty()) {
    j["not_applicable"] = nlohmann::json::object();
    // Under the keys of extrapolation_mre (the table's column names are for the eye).
    static const std::map<std::string, std::string> key = {
        {"x-workers", "workers"}, {"x-w-1pn", "workers_one_per_node"}, {"x-batch", "batch"}};
    for (const auto& [split, why] : p.not_applicable) j["not_applicable"][key.count(split) ? key.at(split) : split] = why;
  }
  j["fit_ms"] = number_or_null(p.fit_ms);
  j["samples"] = p.n_samples;
  if (!p.notes.empty()) j["note"] = join(p.notes, "; ");
  return j;
}

nlohmann::json to_json(const std::vector<DatasetScores>& sets, const EvalOptions& opts) {
  nlohmann::json j;
  j["seed"] = opts.seed;
  j["cv"] = opts.cv_folds;
  j["datasets"] = nlohmann::json::object();
  j["descriptions"] = nlohmann::json::object();  // what each dataset is: its samples, trials, profile
  for (const auto& d : sets) {
    nlohmann::json dj = nlohmann::json::object();
    for (const auto& m : d.models) dj[m.model] = {{"time", to_json(m.time)}, {"metric", to_json(m.metric)}};
    j["datasets"][d.name] = dj;
    j["descriptions"][d.name] = d.description;
  }
  return j;
}

std::string format_table(const std::vector<DatasetScores>& sets, const EvalOptions& opts) {
  std::string out;
  size_t name_w = 5;
  for (const auto& d : sets)
    for (const auto& m : d.models) name_w = std::max(name_w, m.model.size());
  const size_t w = 11;
  for (const auto& d : sets) {
    out += fmt::format("{}: {}\n", d.name, d.description);
    out += fmt::format("MRE = sum|pred-true|/sum|true|; cv: {} folds, fold seed {}; x-workers (full-node trials), x-w-1pn (one-GPU-per-node trials), x-batch: extrapolation splits\n",
                       opts.cv_folds, opts.seed);
    out += pad("", name_w + 2, false) + pad("epoch time", 5 * w, false) + "  " + pad("metric", 5 * w, false) + "\n";
    out += pad("model", name_w + 2, false);
    for (int part = 0; part < 2; ++part) {
      for (const char* h : {"in-sample", "cv", "x-workers", "x-w-1pn", "x-batch"}) out += pad(h, w);
      out += "  ";
    }
    out += pad("fit ms (time/metric)", 22) + "\n";
    // A note many models share (a prior every all-reduce model takes, a split
    // the data cannot pose) is printed once, with the models it concerns.
    std::vector<std::pair<std::string, std::vector<std::string>>> notes;  // note, "model part"s, first-seen order
    std::map<std::string, std::string> not_applicable;
    for (const auto& m : d.models) {
      out += pad(m.model, name_w + 2, false);
      for (const PartScore* p : {&m.time, &m.metric}) {
        const std::pair<const char*, const std::optional<double>*> columns[] = {
            {"in-sample", &p->in_sample_mre}, {"cv", &p->cv_mre}, {"x-workers", &p->workers_mre},
            {"x-w-1pn", &p->workers_1pn_mre}, {"x-batch", &p->batch_mre}};
        for (const auto& [column, v] : columns)
          out += pad(p->has_part && p->has_data && p->not_applicable.count(column) ? "—" : cell(*p, *v), w);
        out += "  ";
        if (p->has_part) not_applicable.insert(p->not_applicable.begin(), p->not_applicable.end());
      }
      auto ms = [](const PartScore& p) { return p.fit_ms ? fmt::format("{:.2f}", *p.fit_ms) : std::string("—"); };
      out += pad(ms(m.time) + " / " + ms(m.metric), 22) + "\n";
      for (const auto& [label, p] : {std::pair{"time", &m.time}, std::pair{"metric", &m.metric}})
        if (p->has_part)
          for (const auto& n : p->notes) {
            auto it = std::find_if(notes.begin(), notes.end(), [&](const auto& x) { return x.first == n; });
            if (it == notes.end()) it = notes.insert(notes.end(), {n, {}});
            it->second.push_back(fmt::format("{} {}", m.model, label));
          }
    }
    for (const auto& [split, why] : not_applicable)
      out += fmt::format("{} does not apply to these samples ({}): shown as —\n", split, why);
    if (!notes.empty()) {
      out += "notes:\n";
      for (const auto& [n, who] : notes) out += fmt::format("  {}: {}\n", join(who, ", "), n);
    }
    out += "\n";
  }
  return out;
}

}  // namespace trainplan::scoring
