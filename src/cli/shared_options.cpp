// The --comm-profile option shared by fit, predict and plan.
#include <memory>

#include "cli/command.h"
#include "structure/comm_profile.h"

namespace trainplan::cli {

void add_comm_profile_option(CLI::App* cmd, std::string& path) {
  cmd->add_option("--comm-profile", path,
                  "Cluster communication profile (JSON from `trainplan comm-profile`): the time models' "
                  "inter-node cost shape across nodes and GPUs per node");
}

models::ModelParams model_params(const std::string& comm_profile_path) {
  models::ModelParams p;
  if (!comm_profile_path.empty())
    p.comm_profile = std::make_shared<structure::CommProfile>(structure::CommProfile::load(comm_profile_path));
  return p;
}

}  // namespace trainplan::cli
