// GET /workloads and POST /simulate of server/service.h: the cluster
// simulator over the workloads of the server's own folder.
#include "server/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "app/simulate_request.h"
#include "core/error.h"
#include "server/request_fields.h"
#include "server/request_gpus.h"
#include "sim/policy.h"
#include "sim/simulator.h"
#include "structure/gpu_catalog.h"

namespace trainplan::server {

using nlohmann::json;

void Service::set_simulation_dirs(std::string data, std::string workloads) {
  sim_data_ = std::move(data);
  sim_workloads_ = std::move(workloads);
}

std::vector<std::string> Service::workload_names() const {
  // "<folder>/<name>" for each CSV one folder down, and "<name>" for each at the top.
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  if (sim_workloads_.empty() || !fs::is_directory(sim_workloads_, ec)) return out;
  auto add = [&](const fs::path& dir, const std::string& prefix) {
    std::error_code e;
    for (const auto& f : fs::directory_iterator(dir, e))
      if (f.is_regular_file(e) && f.path().extension() == ".csv") out.push_back(prefix + f.path().stem().string());
  };
  add(sim_workloads_, "");
  for (const auto& d : fs::directory_iterator(sim_workloads_, ec))
    if (d.is_directory(ec)) add(d.path(), d.path().filename().string() + "/");
  std::sort(out.begin(), out.end());
  return out;
}

std::string Service::simulation_missing() const {
  std::error_code ec;
  if (!std::filesystem::is_directory(sim_data_, ec))
    return fmt::format("the server has no application traces to simulate: {} is not a directory (trainplan serve "
                       "--sim-data DIR)",
                       sim_data_.empty() ? std::string("(none)") : sim_data_);
  if (workload_names().empty())
    return fmt::format("the server has no workloads to simulate: no CSV in {} or its folders (trainplan serve "
                       "--sim-workloads DIR)",
                       sim_workloads_.empty() ? std::string("(none)") : sim_workloads_);
  return "";
}

json Service::workloads() const {
  json policies = json::array(), described = json::object();
  for (const auto* e : sim::PolicyRegistry::instance().all()) {
    policies.push_back(e->name);
    described[e->name] = e->summary;
  }
  const std::string missing = simulation_missing();
  json j = {{"workloads", missing.empty() ? json(workload_names()) : json::array()},
            {"policies", policies},
            {"policy_summaries", described},
            {"gpus", structure::builtin_hardware_names()}};
  if (!missing.empty()) j["note"] = missing;
  return j;
}

json Service::simulate_request(const json& req) {
  static const std::set<std::string> allowed = {"workload", "policies", "nodes", "gpus_per_node", "load_scale",
                                                "restart_delay", "interval", "placement", "oracle", "gittins",
                                                "min_gain", "pollux_p", "time_model", "gpu", "from_gpu", "cluster",
                                                "pollux_types"};
  refuse_unknown_fields(req, allowed, "GET /workloads lists the workloads and policies");
  if (const std::string missing = simulation_missing(); !missing.empty()) throw RequestError(404, "workload", missing);
  // A name from the listing, never a path: the server reads only its own workloads.
  if (!find(req, "workload")) throw RequestError(400, "workload", "missing field 'workload' (GET /workloads lists them)");
  const std::string name = get_string(req, "workload", "");
  const auto names = workload_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw RequestError(404, "workload", fmt::format("unknown workload '{}' (GET /workloads lists them)", name));
  app::SimulateQuery q;
  q.workload = (std::filesystem::path(sim_workloads_) / (name + ".csv")).string();
  q.data = sim_data_;
  q.detail = true;
  if (const json* p = find(req, "policies")) {
    if (!p->is_array() || p->empty()) throw RequestError(400, "policies", "field 'policies' must be a non-empty array of names");
    q.policies.clear();
    for (const auto& x : *p) {
      if (!x.is_string()) throw RequestError(400, "policies", "field 'policies' must be a non-empty array of names");
      // Each name is a whole simulation: a name repeated would run (and answer) it again, and a
      // long list of one name would hold the server's memory and a core for the request's limit.
      if (std::find(q.policies.begin(), q.policies.end(), x.get<std::string>()) != q.policies.end())
        throw RequestError(400, "policies", fmt::format("'{}' is named twice", x.get<std::string>()));
      q.policies.push_back(x.get<std::string>());
    }
    std::vector<std::string> known;
    for (const auto* e : sim::PolicyRegistry::instance().all()) known.push_back(e->name);
    for (const auto& x : q.policies) one_of(x, "policies", known);
  }
  q.nodes = get_int(req, "nodes", q.nodes);
  q.gpus_per_node = get_int(req, "gpus_per_node", q.gpus_per_node);
  // A cluster's size bounds the simulator's work per event.
  if (q.nodes < 1 || q.nodes > 4096) throw RequestError(400, "nodes", "nodes must be in 1..4096");
  if (q.gpus_per_node < 1 || q.gpus_per_node > 64) throw RequestError(400, "gpus_per_node", "gpus_per_node must be in 1..64");
  q.load_scale = get_number(req, "load_scale", q.load_scale);
  if (!(q.load_scale >= 0.01 && q.load_scale <= 100)) throw RequestError(400, "load_scale", "load_scale must be in 0.01..100");
  q.restart_delay = get_number(req, "restart_delay", q.restart_delay);
  q.interval = get_number(req, "interval", q.interval);
  sim::check_schedule_times(q.restart_delay, q.interval);  // 400 naming the field, before a slot is taken
  q.placement = get_string(req, "placement", q.placement);
  one_of(q.placement, "placement", {"pack", "spread"});
  q.oracle = get_bool(req, "oracle", false);
  q.gittins = get_bool(req, "gittins", false);
  q.min_gain = get_number(req, "min_gain", q.min_gain);
  if (!(q.min_gain >= 0)) throw RequestError(400, "min_gain", "min_gain must be >= 0");
  q.pollux_p = get_number(req, "pollux_p", q.pollux_p);
  sim::check_pollux_p(q.pollux_p);  // 400 naming the field, before a slot is taken
  q.time_model = get_string(req, "time_model", "");
  // Another GPU: catalog names only (a hardware file is a path on the server).
  if (find(req, "gpu")) {
    const auto hw = catalog_gpu(get_string(req, "gpu", ""), "gpu");
    q.gpu = hw.name;
    q.from_gpu = catalog_gpu(get_string(req, "from_gpu", q.from_gpu), "from_gpu").name;
    // The GPU the traces were measured on runs on their own steps (as `simulate --gpu` runs
    // it): no move, so no table whose nodes must fit.
    if (q.gpu != q.from_gpu && q.gpus_per_node > 9)
      throw RequestError(400, "gpus_per_node", "with 'gpu', gpus_per_node must be at most 9 (one digit a node in the "
                                               "moved steps' table)");
    if (q.gpu != q.from_gpu && hw.node.gpus_per_node > 0 && q.gpus_per_node > hw.node.gpus_per_node)
      throw RequestError(400, "gpus_per_node",
                         fmt::format("{}'s node holds {} GPUs; gpus_per_node is {}", hw.name, hw.node.gpus_per_node,
                                     q.gpus_per_node));
  } else if (const json* c = find(req, "cluster")) {
    // Several GPU types, each group's steps moved from from_gpu (catalog names only, as 'gpu').
    for (const char* f : {"nodes", "gpus_per_node"})
      if (find(req, f)) throw RequestError(400, f, fmt::format("give '{}' in each group of 'cluster'", f));
    const char* shape = "field 'cluster' must be an array of 1 to 4 groups {\"gpu\": NAME, \"nodes\": N, \"gpus_per_node\": G}";
    if (!c->is_array() || c->empty() || c->size() > 4) throw RequestError(400, "cluster", shape);
    q.from_gpu = catalog_gpu(get_string(req, "from_gpu", q.from_gpu), "from_gpu").name;
    for (const auto& g : *c) {
      if (!g.is_object()) throw RequestError(400, "cluster", shape);
      try {
        refuse_unknown_fields(g, {"gpu", "nodes", "gpus_per_node"}, shape);
      } catch (const RequestError& e) {  // a group's key is no request field: the group's field is 'cluster'
        throw RequestError(e.status, "cluster", std::string("in a group of 'cluster': ") + e.what());
      }
      if (!find(g, "gpu")) throw RequestError(400, "cluster", shape);
      // A group's fields, each wrongly typed one said as the group's (the names alone are top-level fields).
      std::string gpu;
      sim::NodeGroup group{"", 1, 4};
      try {
        gpu = get_string(g, "gpu", "");
        group.nodes = get_int(g, "nodes", group.nodes);
        group.gpus_per_node = get_int(g, "gpus_per_node", group.gpus_per_node);
      } catch (const RequestError& e) {
        throw RequestError(400, "cluster", std::string("in a group of 'cluster': ") + e.what());
      }
      const auto hw = catalog_gpu(gpu, "cluster");
      group.gpu = hw.name;
      if (group.nodes < 1 || group.nodes > 4096) throw RequestError(400, "cluster", "a group's nodes must be in 1..4096");
      const int most = hw.name == q.from_gpu ? 64 : std::min(9, hw.node.gpus_per_node > 0 ? hw.node.gpus_per_node : 9);
      if (group.gpus_per_node < 1 || group.gpus_per_node > most)
        throw RequestError(400, "cluster", fmt::format("{}'s gpus_per_node must be in 1..{}{}", hw.name, most,
                                                       hw.name == q.from_gpu ? "" : " (its steps are moved: one digit a node, within the GPU's node)"));
      for (const auto& other : q.groups)
        if (other.gpu == group.gpu) throw RequestError(400, "cluster", fmt::format("{} is named by two groups", group.gpu));
      q.groups.push_back(group);
    }
    const std::string types = get_string(req, "pollux_types", "aware");
    one_of(types, "pollux_types", {"aware", "blind"});
    q.pollux_types = types == "aware";
  } else if (find(req, "from_gpu")) {
    throw RequestError(400, "from_gpu", "field 'from_gpu' is the GPU the traces were measured on: give 'gpu' or 'cluster' with it");
  }
  if (find(req, "gpu") && find(req, "cluster")) throw RequestError(400, "cluster", "give 'gpu' or 'cluster', not both");
  if (find(req, "pollux_types") && q.groups.empty())
    throw RequestError(400, "pollux_types", "field 'pollux_types' says how pollux treats a 'cluster' of several GPU types: give 'cluster'");
  // A simulation computes like a fit: it takes a slot.
  auto slot = take_slot();
  try {
    const std::string gpu = q.gpu;
    if (gpu == q.from_gpu) q.gpu.clear();
    json answer = app::to_json(app::simulate(q));
    if (!gpu.empty()) answer["gpu"] = gpu;
    return answer;
  } catch (const InputError& e) {
    if (e.file().empty()) throw;
    // A file of the server's own (a workload, a trace): named by the
    // workload, not by its path on the server; a job larger than the
    // cluster asked for is the request's nodes.
    const bool size = e.field() == "num_replicas";
    throw RequestError(400, !size ? "workload" : q.groups.empty() ? "nodes" : "cluster",
                       fmt::format("workload '{}'{}: {}{}", name, e.line() > 0 ? fmt::format(" line {}", e.line()) : "",
                                   e.message(),
                                   !size                ? ""
                                   : q.groups.empty()   ? " (give more nodes or gpus_per_node)"
                                                        : " (give a group more nodes or gpus_per_node)"));
  }
}

}  // namespace trainplan::server
