// trainplan: plan distributed training configurations from measured performance.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <vector>

#include "cli/command.h"
#include "core/error.h"

namespace trainplan::cli {

static std::vector<std::pair<int, SetupFn>>& registry() {
  static std::vector<std::pair<int, SetupFn>> r;
  return r;
}

CommandRegistrar::CommandRegistrar(int order, SetupFn setup) { registry().push_back({order, std::move(setup)}); }

void setup_commands(CLI::App& root) {
  auto& r = registry();
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, fn] : r) fn(root);
}

CLI::App* bench_command(CLI::App& root) {
  for (auto* sub : root.get_subcommands([](CLI::App* a) { return a->get_name() == "bench"; })) return sub;
  auto* b = root.add_subcommand("bench", "Reproducible experiments on ../shared/data (co-configuration, scheduling)");
  b->require_subcommand(1);
  return b;
}

void add_pollux_data_option(CLI::App* cmd, std::string& dir) {
  cmd->add_option("--data", dir, "../shared/data (or a directory of Pollux-format trace directories)")->required();
}

bool stderr_is_tty() { return isatty(STDERR_FILENO) != 0; }

}  // namespace trainplan::cli

int main(int argc, char** argv) {
  using namespace trainplan;
  CLI::App app{
      "trainplan: choose workers, batch size and epochs for distributed training from measured performance,\n"
      "on the GPUs you profiled or on others (transfer); plan tensor, pipeline and data parallelism for\n"
      "transformers (llm); and simulate how a GPU cluster is shared among many such jobs.\n\n"
      "Exit codes: 0 ok, 1 internal failure, 2 bad input or usage, 3 constraints cannot be met."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainplan 0.1.0");
  cli::setup_commands(app);
  if (argc == 1) {  // as git does: the verbs, not just "a subcommand is required"
    app.name("trainplan");
    std::cerr << app.help();
    return kExitInputError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitInputError;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitInputError;
  } catch (const InfeasibleError& e) {
    std::cerr << "infeasible: " << e.what() << "\n";
    return kExitInfeasible;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}
