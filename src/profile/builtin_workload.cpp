#include "profile/builtin_workload.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "profile/launcher.h"

namespace trainplan::profile {

namespace fs = std::filesystem;

const std::vector<std::string>& builtin_workloads() {
  static const std::vector<std::string> w = {"lenet-mnist", "mlp-fashion"};
  return w;
}

std::string find_trainer() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path p = self.parent_path() / "trainplan-train";
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return find_on_path("trainplan-train");
}

std::string builtin_template(const std::string& workload, const BuiltinWorkloadOptions& o) {
  const auto& w = builtin_workloads();
  if (std::find(w.begin(), w.end(), workload) == w.end())
    throw InputError("", 0, "--workload",
                     fmt::format("unknown workload '{}'; built in: {}", workload, fmt::join(w, ", ")));
  std::string trainer = o.trainer.empty() ? find_trainer() : o.trainer;
  if (!o.trainer.empty() && access(o.trainer.c_str(), X_OK) != 0)
    throw InputError("", 0, "--trainer", o.trainer + " is not an executable file");
  if (trainer.empty()) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    throw InputError("", 0, "--workload",
                     fmt::format("the built-in workloads run trainplan-train, which is neither next to trainplan{} "
                                 "nor on PATH: install it with trainplan (a build makes it where libtorch is found, "
                                 "-DTRAINPLAN_WITH_TORCH=ON), pass --trainer PATH, or profile your own program with --cmd",
                                 ec ? "" : " (in " + self.parent_path().string() + ")"));
  }
  std::string t = template_literal(shell_quote(trainer)) + " --workload " + workload +
                  " --batch {batch} --workers {workers} --rank {rank}" +
                  (o.time_only ? " --time-only --time-batches {batches}" : " --epochs {epochs}") +
                  " --master-addr {master_addr} --master-port {master_port}";
  if (o.threads != 1) t += fmt::format(" --threads {}", o.threads);
  if (o.time_only && o.step_clock != "wall") t += " --step-clock " + o.step_clock;
  if (o.time_only && o.max_timed_s > 0) t += fmt::format(" --max-timed-s {:g}", o.max_timed_s);
  if (!o.data_dir.empty()) t += " --data-dir " + template_literal(shell_quote(o.data_dir));
  if (o.train_subset > 0) t += fmt::format(" --train-subset {}", o.train_subset);
  if (o.test_subset > 0) t += fmt::format(" --test-subset {}", o.test_subset);
  t += fmt::format(" --seed {}", o.seed);
  return t;
}

}  // namespace trainplan::profile
