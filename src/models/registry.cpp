#include "models/registry.h"

#include <algorithm>

#include "core/edit_distance.h"
#include "core/error.h"
#include "io/csv.h"
#include "models/config_pooled_time_model.h"

namespace trainplan::models {

ModelRegistry& ModelRegistry::instance() {
  static ModelRegistry r;
  return r;
}

static ModelEntry& entry_for(std::vector<ModelEntry>& entries, const std::string& name, const std::string& summary) {
  for (auto& e : entries)
    if (e.name == name) {
      if (e.summary.empty()) e.summary = summary;
      return e;
    }
  entries.push_back(ModelEntry{name, summary, nullptr, nullptr});
  return entries.back();
}

void ModelRegistry::add_time(const std::string& name, const std::string& summary, TimeFactory make,
                             AutoChoice in_auto) {
  auto& e = entry_for(entries_, name, summary);
  // Every time model is fitted on one point per configuration (config_pooled_time_model.h).
  e.make_time = [make = std::move(make)](const ModelParams& p) -> std::unique_ptr<TimeModel> {
    return std::make_unique<ConfigPooledTimeModel>(make(p));
  };
  e.time_auto = in_auto;
}

void ModelRegistry::add_metric(const std::string& name, const std::string& summary, MetricFactory make,
                               AutoChoice in_auto) {
  auto& e = entry_for(entries_, name, summary);
  e.make_metric = std::move(make);
  e.metric_auto = in_auto;
}

const ModelEntry& ModelRegistry::with_time(const std::string& name) const {
  const auto& e = get(name);
  if (!e.make_time) throw InputError("model '" + name + "' has no epoch-time part");
  return e;
}

const ModelEntry& ModelRegistry::with_metric(const std::string& name) const {
  const auto& e = get(name);
  if (!e.make_metric) throw InputError("model '" + name + "' has no metric part");
  return e;
}

std::unique_ptr<TimeModel> ModelRegistry::make_time(const std::string& name, const ModelParams& p) const {
  return with_time(name).make_time(p);
}

std::unique_ptr<MetricModel> ModelRegistry::make_metric(const std::string& name, const ModelParams& p) const {
  return with_metric(name).make_metric(p);
}

const ModelEntry* ModelRegistry::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const ModelEntry& ModelRegistry::get(const std::string& name) const {
  if (auto* e = find(name)) return *e;
  std::string known, nearest;
  size_t nearest_edits = 3;  // a slip of two edits at most
  for (const auto& n : names()) {
    known += (known.empty() ? "" : ", ") + n;
    if (const size_t d = edit_distance(io::lowercase(name), n); d < nearest_edits) nearest = n, nearest_edits = d;
  }
  throw InputError("unknown model " + io::quoted_value(name) +
                   (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") + " (known: " + known + ")");
}

std::vector<const ModelEntry*> ModelRegistry::all() const {
  std::vector<const ModelEntry*> out;
  for (const auto& e : entries_) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return out;
}

std::vector<std::string> ModelRegistry::names() const {
  std::vector<std::string> out;
  for (auto* e : all()) out.push_back(e->name);
  return out;
}

}  // namespace trainplan::models
