// Options that take a duration: plain seconds or units (90, 180s, 3m, 1h30m, 60d, 2w).
#include "cli/shared_options.h"
#include "core/error.h"
#include "profile/profile_plan.h"

namespace trainplan::cli {

CLI::Option* add_duration_option(CLI::App* cmd, const std::string& name, double& seconds, const std::string& help) {
  const std::string flag = name.substr(0, name.find(','));
  return cmd
      ->add_option_function<std::string>(
          name, [&seconds, flag](const std::string& text) { seconds = profile::parse_duration(text, flag); },
          help + " (seconds, or with units: 90, 180s, 3m, 1h30m, 60d, 2w)")
      ->check([flag](const std::string& text) {
        try {
          profile::parse_duration(text, flag);
          return std::string();
        } catch (const InputError& e) {
          return e.message();
        }
      });
}

}  // namespace trainplan::cli
