// Named model factories. Each model file registers itself with a static
// TimeModelRegistrar or MetricModelRegistrar, so adding a model is its own
// files plus one registration line (docs/DEVELOPING.md). Names are what users
// type after --model (for example "isotonic-mi").
//
// A registered name stands for a model class and its parameters struct: a
// variant (isotonic-mi-unimodal, optimus-curve-shared, paleo-fit) is the same
// class registered again with other parameters, never a new class.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "structure/hardware.h"

namespace trainplan::structure {
class CommProfile;
}

namespace trainplan::models {

// What every factory is given: settings that describe the cluster rather than
// one model. Each model reads the ones it uses; the defaults are the
// registered model as documented.
struct ModelParams {
  // The cluster's inter-node communication shape (`trainplan comm-profile`),
  // read by the all-reduce time models. Null: the ring factor 2(r-1)/r.
  std::shared_ptr<const structure::CommProfile> comm_profile;
  // The interconnect prior of the all-reduce time models: the links they
  // assume for a sync term the samples cannot identify (no multi-worker
  // sample on one node, or none across nodes). Null: HardwareSpec's
  // defaults (a T4 node on PCIe 3.0, 25 Gb/s Ethernet), which describe()
  // names as a default. The CLI's --hardware NAME|FILE sets it from the GPU
  // catalog or a hardware file (structure::interconnect_spec).
  std::shared_ptr<const structure::HardwareSpec> hardware;
};

using TimeFactory = std::function<std::unique_ptr<TimeModel>(const ModelParams&)>;
using MetricFactory = std::function<std::unique_ptr<MetricModel>(const ModelParams&)>;

// Whether "auto" (the default of fit, predict and plan) cross-validates a
// model. Every model "auto" considers is fitted k times on every default
// plan, so a model that is slow to fit or only of research interest
// registers with kExcluded: it stays available by name and under
// `evaluate --models all`.
enum class AutoChoice { kIncluded, kExcluded };

struct ModelEntry {
  std::string name;
  std::string summary;      // one line for help and leaderboards
  TimeFactory make_time;    // null if no time model
  MetricFactory make_metric;  // null if no metric model
  AutoChoice time_auto = AutoChoice::kIncluded, metric_auto = AutoChoice::kIncluded;
};

class ModelRegistry {
 public:
  static ModelRegistry& instance();
  // Adds or extends the entry `name` (a name may have a time and a metric part).
  void add_time(const std::string& name, const std::string& summary, TimeFactory make, AutoChoice in_auto);
  void add_metric(const std::string& name, const std::string& summary, MetricFactory make, AutoChoice in_auto);
  // Throws InputError naming the known models if `name` is unknown.
  const ModelEntry& get(const std::string& name) const;
  const ModelEntry* find(const std::string& name) const;
  // All entries, sorted by name.
  std::vector<const ModelEntry*> all() const;
  std::vector<std::string> names() const;
  // The entry `name` when it has a time (metric) part. Throw InputError when
  // the name is unknown or has no such part.
  const ModelEntry& with_time(const std::string& name) const;
  const ModelEntry& with_metric(const std::string& name) const;
  // New unfitted parts of `name` made with `p`; throw as with_time/with_metric.
  // A time part comes wrapped to fit on one point per configuration
  // (config_pooled_time_model.h), as every time factory add_time stores does.
  std::unique_ptr<TimeModel> make_time(const std::string& name, const ModelParams& p = {}) const;
  std::unique_ptr<MetricModel> make_metric(const std::string& name, const ModelParams& p = {}) const;

 private:
  std::vector<ModelEntry> entries_;
};

// Static registration, at namespace scope in the model's .cpp file:
//   static TimeModelRegistrar reg("name", "summary", [] { return std::make_unique<MyModel>(); });
// The factory takes no argument, or `const ModelParams&` when the model reads
// the cluster settings.
struct TimeModelRegistrar {
  TimeModelRegistrar(const std::string& name, const std::string& summary, TimeFactory make,
                     AutoChoice in_auto = AutoChoice::kIncluded) {
    ModelRegistry::instance().add_time(name, summary, std::move(make), in_auto);
  }
  TimeModelRegistrar(const std::string& name, const std::string& summary,
                     std::function<std::unique_ptr<TimeModel>()> make, AutoChoice in_auto = AutoChoice::kIncluded)
      : TimeModelRegistrar(name, summary, TimeFactory([make](const ModelParams&) { return make(); }), in_auto) {}
};
struct MetricModelRegistrar {
  MetricModelRegistrar(const std::string& name, const std::string& summary, MetricFactory make,
                       AutoChoice in_auto = AutoChoice::kIncluded) {
    ModelRegistry::instance().add_metric(name, summary, std::move(make), in_auto);
  }
  MetricModelRegistrar(const std::string& name, const std::string& summary,
                       std::function<std::unique_ptr<MetricModel>()> make, AutoChoice in_auto = AutoChoice::kIncluded)
      : MetricModelRegistrar(name, summary, MetricFactory([make](const ModelParams&) { return make(); }), in_auto) {}
};

}  // namespace trainplan::models
