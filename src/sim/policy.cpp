#include "sim/policy.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace trainplan::sim {

void check_pollux_p(double p) {
  if (!(p >= -10 && p <= 1)) throw InputError("", 0, "--pollux-p", fmt::format("must be from -10 to 1, got {}", p));
}

void check_coconfig_min_gain(double g) {
  if (!(g >= 0 && g <= 1))
    throw InputError("", 0, "--min-gain", fmt::format("must be a share from 0 to 1 of the goodput per GPU, got {}", g));
}

PolicyRegistry& PolicyRegistry::instance() {
  static PolicyRegistry r;
  return r;
}

void PolicyRegistry::add(PolicyEntry e) { entries_.push_back(std::move(e)); }

std::unique_ptr<Policy> PolicyRegistry::make(const std::string& name, const PolicyOptions& opts) const {
  for (const auto& e : entries_)
    if (e.name == name) return e.make(opts);
  std::string list;
  for (const auto& n : names()) list += (list.empty() ? "" : ", ") + n;
  throw InputError("", 0, "--policy", "unknown policy '" + name + "' (known: " + list + ")");
}

std::vector<const PolicyEntry*> PolicyRegistry::all() const {
  std::vector<const PolicyEntry*> v;
  for (const auto& e : entries_) v.push_back(&e);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return v;
}

std::vector<std::string> PolicyRegistry::names() const {
  std::vector<std::string> v;
  for (const auto* e : all()) v.push_back(e->name);
  return v;
}

}  // namespace trainplan::sim
