#include "models/registry.h"

#include <algorithm>

#include "core/error.h"

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

void ModelRegistry::add_time(const std::string& name, const std::string& summary,
                             std::function<std::unique_ptr<TimeModel>()> make) {
  entry_for(entries_, name, summary).make_time = std::move(make);
}

void ModelRegistry::add_metric(const std::string& name, const std::string& summary,
                               std::function<std::unique_ptr<MetricModel>()> make) {
  entry_for(entries_, name, summary).make_metric = std::move(make);
}

const ModelEntry* ModelRegistry::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const ModelEntry& ModelRegistry::get(const std::string& name) const {
  if (auto* e = find(name)) return *e;
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown model '" + name + "' (known: " + known + ")");
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
