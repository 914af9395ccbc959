#include "structure/comm_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "core/error.h"
#include "core/whole_file.h"
#include "core/json_parse.h"

namespace trainplan::structure {

void CommProfile::set(int nodes, int gpus_per_node, double rho) {
  // rho is a cost relative to 2 nodes of 1 GPU: measured clusters give 1 to
  // about 12; past 1e4 (or under 1e-4) a figure is a unit slip, and an
  // extreme one drove a time model's predictions to 0.
  if (nodes < 2 || gpus_per_node < 1 || !(rho >= 1e-4 && rho <= 1e4))
    throw InputError(fmt::format("communication profile: need nodes >= 2, gpus_per_node >= 1 and rho in [1e-4, 1e4], got "
                                 "({}, {}, {})",
                                 nodes, gpus_per_node, rho));
  rho_[{nodes, gpus_per_node}] = rho;
}

double CommProfile::at_nodes(int nodes, double k) const {
  // The tabulated k at this node count, sorted.
  auto lo = rho_.lower_bound({nodes, 0}), hi = rho_.lower_bound({nodes + 1, 0});
  if (lo == hi) return 1;
  if (k <= lo->first.second) return lo->second;
  auto last = std::prev(hi);
  if (k >= last->first.second) return last->second;
  for (auto it = lo; std::next(it) != hi; ++it) {
    auto nx = std::next(it);
    if (k <= nx->first.second) {
      double f = (k - it->first.second) / double(nx->first.second - it->first.second);
      return it->second + f * (nx->second - it->second);
    }
  }
  return last->second;
}

double CommProfile::at(int workers, int nodes) const {
  if (rho_.empty() || nodes < 2) return 1;
  double k = double(workers) / nodes;
  std::set<int> ns;
  for (const auto& [key, v] : rho_) ns.insert(key.first);
  if (nodes <= *ns.begin()) return at_nodes(*ns.begin(), k);
  if (nodes >= *ns.rbegin()) return at_nodes(*ns.rbegin(), k);
  auto up = ns.lower_bound(nodes);
  if (*up == nodes) return at_nodes(nodes, k);
  int n1 = *up, n0 = *std::prev(up);
  double f = double(nodes - n0) / (n1 - n0);
  return (1 - f) * at_nodes(n0, k) + f * at_nodes(n1, k);
}

nlohmann::json CommProfile::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [key, v] : rho_) rows.push_back({{"nodes", key.first}, {"gpus_per_node", key.second}, {"rho", v}});
  return {{"format", "trainplan-comm-profile-1"},
          {"normalised_to", "2 nodes x 1 GPU"},
          {"source", source},
          {"rho", rows}};
}

CommProfile CommProfile::from_json(const nlohmann::json& j, const std::string& file) {
  CommProfile p;
  // A file of another format, or of a later version of this one, would be read by guesswork.
  if (j.is_object() && j.contains("format") && j["format"] != "trainplan-comm-profile-1")
    throw InputError(file, 0, "format",
                     fmt::format("{}: not a communication profile this version reads (trainplan-comm-profile-1)",
                                 j["format"].dump()));
  if (!j.is_object() || !j.contains("rho") || !j["rho"].is_array() || j["rho"].empty())
    throw InputError(file, 0, "rho", "communication profile needs a non-empty array 'rho' of {nodes, gpus_per_node, rho}");
  int line = 0;
  for (const auto& row : j["rho"]) {
    ++line;
    for (const char* f : {"nodes", "gpus_per_node", "rho"})
      if (!row.contains(f) || !row[f].is_number())
        throw InputError(file, 0, f, fmt::format("communication profile: entry {} of 'rho' needs a number '{}'", line, f));
    // Checked as doubles first: get<int>() of one an int cannot hold is undefined.
    for (const char* f : {"nodes", "gpus_per_node"}) {
      const double v = row[f].get<double>();
      if (v != std::floor(v) || v < 0 || v > std::numeric_limits<int>::max())
        throw InputError(file, 0, f, fmt::format("communication profile: entry {} of 'rho' needs a whole number '{}'", line, f));
    }
    const int nodes = row["nodes"].get<int>(), gpus_per_node = row["gpus_per_node"].get<int>();
    if (p.rho_.count({nodes, gpus_per_node}))
      throw InputError(file, 0, "rho",
                       fmt::format("communication profile: entry {} gives ({} nodes, {} GPUs a node) again", line, nodes,
                                   gpus_per_node));
    try {
      p.set(nodes, gpus_per_node, row["rho"].get<double>());
    } catch (const InputError& e) {
      throw InputError(file, 0, "rho", fmt::format("entry {}: {}", line, e.message()));
    }
  }
  if (j.contains("source") && j["source"].is_string()) p.source = j["source"].get<std::string>();
  return p;
}

CommProfile CommProfile::load(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "communication profile");
  auto p = from_json(j, path);
  if (p.source.empty()) p.source = path;
  return p;
}

void CommProfile::save(const std::string& path) const {
  // replace: a trace's name, from a folder's, need not be UTF-8.
  write_whole_file(path, to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace trainplan::structure
