// Named model factories. Each model file registers itself with a static
// ModelRegistrar, so adding a model is one file. Names are what users type
// after --model (for example "isotonic-mi").
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"

namespace trainplan::models {

struct ModelEntry {
  std::string name;
  std::string summary;  // one line for help and leaderboards
  std::function<std::unique_ptr<TimeModel>()> make_time;      // null if no time model
  std::function<std::unique_ptr<MetricModel>()> make_metric;  // null if no metric model
};

class ModelRegistry {
 public:
  static ModelRegistry& instance();
  // Adds or extends the entry `name` (a name may have a time and a metric part).
  void add_time(const std::string& name, const std::string& summary,
                std::function<std::unique_ptr<TimeModel>()> make);
  void add_metric(const std::string& name, const std::string& summary,
                  std::function<std::unique_ptr<MetricModel>()> make);
  // Throws InputError naming the known models if `name` is unknown.
  const ModelEntry& get(const std::string& name) const;
  const ModelEntry* find(const std::string& name) const;
  // All entries, sorted by name.
  std::vector<const ModelEntry*> all() const;
  std::vector<std::string> names() const;

 private:
  std::vector<ModelEntry> entries_;
};

// Static registration, at namespace scope in the model's .cpp file:
//   static TimeModelRegistrar reg("name", "summary", [] { return std::make_unique<MyModel>(); });
struct TimeModelRegistrar {
  TimeModelRegistrar(const std::string& name, const std::string& summary,
                     std::function<std::unique_ptr<TimeModel>()> make) {
    ModelRegistry::instance().add_time(name, summary, std::move(make));
  }
};
struct MetricModelRegistrar {
  MetricModelRegistrar(const std::string& name, const std::string& summary,
                       std::function<std::unique_ptr<MetricModel>()> make) {
    ModelRegistry::instance().add_metric(name, summary, std::move(make));
  }
};

}  // namespace trainplan::models
