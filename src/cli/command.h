// Verb registration for the `trainplan` CLI. Each cmd_<verb>.cpp defines a
// setup function that adds its subcommand to the root app, and registers it
// with a static CommandRegistrar, so adding a verb is one file.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace trainplan::cli {

using SetupFn = std::function<void(CLI::App& root)>;

struct CommandRegistrar {
  // `order` sets the position in --help (lower first).
  CommandRegistrar(int order, SetupFn setup);
};

// Adds every registered verb to `root`, in order.
void setup_commands(CLI::App& root);

// The `bench` parent verb, created on first use, so that benchmark verbs
// (bench coconfig, bench simulate, ...) can live in separate files.
CLI::App* bench_command(CLI::App& root);

}  // namespace trainplan::cli
