// trainplan: plan distributed training configurations from measured performance.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/shortfall_json.h"
#include "cli/command.h"
#include "cli/number_text.h"
#include "cli/shared_options.h"
#include "core/edit_distance.h"
#include "core/error.h"
#include "io/csv.h"
#include "io/json_text.h"
#include "profile/launcher.h"

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

namespace {
bool json_answer_printed_flag = false;
}  // namespace
void note_json_answer_printed() { json_answer_printed_flag = true; }

namespace {
std::string program_path_text = "trainplan";
}  // namespace

void note_program_path(const char* argv0) {
  const std::string p = argv0 ? argv0 : "";
  program_path_text = p.find('/') == std::string::npos ? "trainplan" : profile::shell_word(p);
}

std::string program_path() { return program_path_text; }
bool json_answer_printed() { return json_answer_printed_flag; }

}  // namespace trainplan::cli

namespace {

// With --json a failure is also a JSON object on stdout, so that a script that
// parses stdout reads why instead of failing on an empty document; the message
// goes to stderr as without --json.
bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--json") == 0) return true;
  return false;
}

void print_json_error(const std::string& message, int exit_code, const trainplan::InputError* input,
                      const nlohmann::json& figures = nlohmann::json::object()) {
  nlohmann::json j = trainplan::cli::json_error_fields(message, exit_code, input);
  j.update(figures);
  // One line: watch --json prints a document a line; a message may quote bytes that are not UTF-8.
  std::cout << trainplan::io::json_text(j, -1) << "\n";
}

// Where a command is due and the word names none ("trainplan llm plann"),
// that word, the commands there and the nearest of them; where a group ends
// with no command ("trainplan llm"), the commands it has. CLI11 says only
// that a subcommand is required. Empty when every command word is known, or
// when an option comes before the command (--help, say).
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  std::string path = "trainplan";
  auto command_list = [](const std::vector<CLI::App*>& commands) {
    std::string list;
    for (const CLI::App* c : commands) list += (list.empty() ? "" : ", ") + c->get_name();
    return list;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return "";
    const auto commands = at->get_subcommands([](CLI::App*) { return true; });
    if (commands.empty()) return "";  // a verb's own arguments
    const auto named = at->get_subcommands([&](CLI::App* c) { return c->check_name(word); });
    if (!named.empty()) {
      at = named.front();
      path += " " + at->get_name();
      continue;
    }
    std::string nearest;
    size_t nearest_edits = 3;  // suggest within two edits only, whatever the case
    for (const CLI::App* c : commands)
      if (const size_t d = trainplan::edit_distance(trainplan::io::lowercase(word), c->get_name()); d < nearest_edits)
        nearest = c->get_name(), nearest_edits = d;
    return fmt::format("'{}' is not a {} command{} (commands: {})", word, path,
                       nearest.empty() ? "" : fmt::format("; did you mean '{}'?", nearest), command_list(commands));
  }
  const auto commands = at->get_subcommands([](CLI::App*) { return true; });
  if (at != &app && !commands.empty() && at->get_require_subcommand_min() > 0)
    return fmt::format("{} needs a command: {}", path, command_list(commands));
  return "";
}

// Whether an option takes a whole number: its type's name is INT or UINT,
// before any validator's text ("INT:NUMBER > 0").
bool takes_whole_number(const CLI::Option* o, bool unsigned_only = false) {
  if (o == nullptr) return false;
  const std::string type = o->get_type_name().substr(0, o->get_type_name().find(':'));
  return type == "UINT" || (!unsigned_only && type == "INT");
}

// Where an option word names no option of the command it is given to
// ("trainplan plan --sample x.csv"), that word, the command and the nearest
// option: CLI11 checks required options first, so it would say only that
// --samples is required, never that --sample is unknown. Empty when every
// option word is known. Values are never read as names: the word after an
// option that takes one, and every word after "--".
struct UnknownOption {
  std::string option;
  std::string message;
};
// The command the leading words name ("llm plan"), as unknown_command walks
// them: the deepest command, its path for messages, and the index of the
// first word after them.
struct CommandGiven {
  CLI::App* at;
  std::string path;
  int next;
};
CommandGiven command_given(CLI::App& app, int argc, char** argv) {
  CommandGiven g{&app, "trainplan", 1};
  for (; g.next < argc; ++g.next) {
    const std::string word = argv[g.next];
    if (word.empty() || word[0] == '-') break;
    const auto named = g.at->get_subcommands([&](CLI::App* c) { return c->check_name(word); });
    if (named.empty()) break;
    g.at = named.front();
    g.path += " " + g.at->get_name();
  }
  return g;
}

// A command and its option groups: what holds its options.
std::vector<CLI::App*> option_holders(CLI::App* at) {
  std::vector<CLI::App*> holders{at};
  for (CLI::App* group : at->get_subcommands([](CLI::App* c) { return c->get_name().empty(); })) holders.push_back(group);
  return holders;
}

UnknownOption unknown_option(CLI::App& app, int argc, char** argv) {
  auto [at, path, i] = command_given(app, argc, argv);
  for (int h = i; h < argc && std::strcmp(argv[h], "--") != 0; ++h)
    if (std::strcmp(argv[h], "--help") == 0 || std::strcmp(argv[h], "-h") == 0) return {};  // help comes first
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (const CLI::Option* known = at->get_option_no_throw(name); known != nullptr || arg.rfind("--", 0) != 0) {
      // The word after an option that takes a value is that value, even "--bogus"
      // (bench serve --serve-args --bogus): CLI11 reads it so.
      const bool value_next = known != nullptr && name == arg && known->get_items_expected_min() > 0;
      const std::string value = value_next ? (i + 1 < argc ? argv[i + 1] : "") : arg.substr(name.size() + (name.size() < arg.size()));
      // CLI11 reads "-1" into an unsigned count as 2^64 - 1: a limit of "-1" would be none.
      // A value that is an option ("--max-rows --quiet") is left to CLI11's "needs a value".
      if (takes_whole_number(known, true) && value.rfind('-', 0) == 0 && value.rfind("--", 0) != 0)
        return {name, fmt::format("{}: '{}' is negative: it takes a whole number, 0 or more", name, value)};
      if (value_next) ++i;
      continue;
    }
    std::string nearest;
    size_t nearest_edits = 3;  // within two edits, or the only option the word begins
    size_t starts = 0;
    std::string started;
    std::vector<std::string> known_names;  // the command's own options and its option groups'
    for (CLI::App* holder : option_holders(at))
      for (const CLI::Option* o : holder->get_options())
        for (const std::string& long_name : o->get_lnames()) known_names.push_back("--" + long_name);
    for (const std::string& known : known_names) {
      if (const size_t d = trainplan::edit_distance(trainplan::io::lowercase(name), known); d < nearest_edits)
        nearest = known, nearest_edits = d;
      if (known.rfind(name, 0) == 0) ++starts, started = known;
    }
    if (nearest.empty() && starts == 1) nearest = started;
    // A group's options come after its command ("trainplan samples --store s.db": samples list --store).
    std::string commands;
    for (const CLI::App* c : at->get_subcommands([](CLI::App* c) { return !c->get_name().empty(); }))
      commands += (commands.empty() ? "" : ", ") + c->get_name();
    if (!commands.empty())
      return {name, fmt::format("{} is not an option of {}: give one of its commands first ({}), then its options",
                                name, path, commands)};
    // After a command template ("--cmd python3 train.py --batch {batch}"), the word is most likely
    // the template's own option: the template was not quoted.
    // Only where words no option takes stand between the template and this one ("--cmd python3
    // train.py --batch"): a template given whole leaves none.
    for (int k = i - 1; k >= 1; --k) {
      const std::string before = argv[k];
      if (before.rfind("-", 0) == 0) {
        if ((before == "--cmd" || before == "--time-cmd") && k + 2 < i && at->get_option_no_throw(before))
          return {name, fmt::format("{} is not an option of {}: if it belongs to the {} template, quote the whole "
                                    "template as one word: {} 'python3 train.py {} ...'{}",
                                    name, path, before, before, arg,
                                    nearest.empty() ? "" : fmt::format(" (or did you mean {}?)", nearest))};
        break;
      }
    }
    return {name, fmt::format("{} is not an option of {}{}; `{} --help` lists them", name, path,
                              nearest.empty() ? "" : fmt::format(" (did you mean {}?)", nearest), path)};
  }
  return {};
}

// CLI11 reads an empty value ("--target-trials ''" or "--seed=") as the option's default, so a
// script whose variable came out empty would run on a value nobody chose. No option of trainplan
// takes an empty value; the first one given is named.
std::string empty_value_option(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    // "--name=" alone; "--cmd=... --extra=" gives a value that itself ends in '='.
    if (arg.rfind("--", 0) == 0 && arg.size() > 2 && arg.find('=') == arg.size() - 1) return arg.substr(0, arg.size() - 1);
    if (arg.empty()) {
      if (i > 1 && argv[i - 1][0] == '-') return argv[i - 1];
      return "argument " + std::to_string(i);
    }
  }
  return "";
}

// The option `name` ("--target") of the command that was being parsed (the
// deepest command given), or of any, or nullptr.
const CLI::Option* option_named(const CLI::App& app, const std::string& name) {
  const CLI::App* at = &app;
  for (;;) {
    const auto given = at->get_subcommands();  // those parsed
    const auto command = std::find_if(given.begin(), given.end(), [](const CLI::App* c) { return !c->get_name().empty(); });
    if (command == given.end()) break;
    at = *command;
  }
  for (; at != nullptr; at = at->get_parent())
    if (const CLI::Option* o = at->get_option_no_throw(name)) return o;
  return nullptr;
}

// A message about an option that has several names ("--cv,--folds") says
// the name the user typed: the verb's code and CLI11 name it by its first.
// `text` (an InputError's field, or a CLI11 message, which begins with the
// option's name) has its leading name replaced by the one the command line
// gives, where it gives one name of that option alone. Only the leading
// name: the rest of a message may quote what the user wrote (a --cmd
// template with a --timeout of its own).
std::string as_typed(CLI::App& app, int argc, char** argv, std::string text) {
  const auto [at, path, i] = command_given(app, argc, argv);
  auto typed = [&](const std::string& name) {
    for (int k = i; k < argc && std::strcmp(argv[k], "--") != 0; ++k)
      if (const std::string arg = argv[k]; arg == name || arg.rfind(name + "=", 0) == 0) return true;
    return false;
  };
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
  for (const CLI::App* holder : option_holders(at))
    for (const CLI::Option* o : holder->get_options()) {
      if (o->get_lnames().size() < 2) continue;
      std::vector<std::string> given;
      for (const std::string& l : o->get_lnames())
        if (typed("--" + l)) given.push_back("--" + l);
      if (given.size() != 1) continue;
      for (const std::string& l : o->get_lnames()) {
        const std::string other = "--" + l;
        if (other != given.front() && text.rfind(other, 0) == 0 &&
            (text.size() == other.size() || !name_char(text[other.size()])))
          return given.front() + text.substr(other.size());
      }
    }
  return text;
}

// CLI11's usage messages said as what is wrong: "Could not convert: --target
// = 90%", "Value -1 not in range 0.000000 to 1.797e308", "At Most 1 required
// but received 2", "1 required TEXT missing".
std::string usage_error_text(const CLI::App& app, const CLI::Error& e) {
  const std::string text = e.what();
  const std::string tag = "Could not convert: ";
  if (text.rfind(tag, 0) == 0)
    if (const size_t eq = text.find(" = ", tag.size()); eq != std::string::npos) {
      const std::string name = text.substr(tag.size(), eq - tag.size()), value = text.substr(eq + 3);
      if (value.rfind("--", 0) == 0)
        return fmt::format("{} needs a value: what follows it, {}, is an option", name, value);
      const bool whole = takes_whole_number(option_named(app, name));
      return whole ? fmt::format("{}: '{}' is not a value it takes (a count is a whole number written out, such as "
                                 "1000; --help gives each option's kind)",
                                 name, value)
                   : fmt::format("{}: '{}' is not a number (a plain one, such as 0.9 or 3e11; --help gives each "
                                 "option's kind and unit)",
                                 name, value);
    }
  // "NAME: Value V not in range A to B"
  if (const size_t v = text.find(": Value "); v != std::string::npos)
    if (const size_t r = text.find(" not in range ", v); r != std::string::npos)
      if (const size_t to = text.find(" to ", r + 14); to != std::string::npos) {
        const std::string name = text.substr(0, v), value = text.substr(v + 8, r - v - 8);
        char* end = nullptr;
        const double lo = std::strtod(text.c_str() + r + 14, &end), hi = std::strtod(text.c_str() + to + 4, &end);
        const double x = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0') return fmt::format("{}: '{}' is not a number", name, value);
        if (takes_whole_number(option_named(app, name)) && x != std::floor(x))
          return fmt::format("{}: '{}' is not a value it takes (a count is a whole number written out, such as 1000)",
                             name, value);
        const auto shown = trainplan::cli::number_text;  // a whole bound as written, 1048576 rather than 1.04858e+06
        if (hi > 1e300) return fmt::format("{}: {} is out of range: it must be at least {}", name, value, shown(lo));
        return fmt::format("{}: {} is out of range: it must be from {} to {}", name, value, shown(lo), shown(hi));
      }
  if (const size_t at_most = text.find(": At Most 1 required but received "); at_most != std::string::npos)
    return fmt::format("{} is given {} times: give it once", text.substr(0, at_most),
                       text.substr(at_most + std::string(": At Most 1 required but received ").size()));
  if (const size_t missing = text.find(": 1 required "); missing != std::string::npos && text.ends_with(" missing"))
    return fmt::format("{} needs a value", text.substr(0, missing));
  return text;
}

// Whether everything written to standard output reached it: a full disk or
// a closed file under a redirection fails only at a flush, which a verb that
// returned 0 never sees. Says why on stderr when not.
bool stdout_written() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (flushed && !std::ferror(stdout) && !std::cout.fail()) return true;
  std::cerr << "error: cannot write standard output"
            << (flush_errno ? fmt::format(" ({})", std::strerror(flush_errno)) : std::string()) << "\n";
  return false;
}

int run(int argc, char** argv) {
  using namespace trainplan;
  // `trainplan help [COMMAND...]`, as git has it: the same as `trainplan [COMMAND...] --help`.
  std::vector<char*> helped;
  static char help_flag[] = "--help";
  if (argc >= 2 && std::strcmp(argv[1], "help") == 0) {
    // The command words only: an option after them is what help is asked about, not given
    // (CLI11 would check its value before printing the help).
    helped.push_back(argv[0]);
    for (int i = 2; i < argc && argv[i][0] != '-'; ++i) helped.push_back(argv[i]);
    helped.push_back(help_flag);
    argc = int(helped.size());
    argv = helped.data();
  }
  cli::note_program_path(argc > 0 ? argv[0] : nullptr);
  // Read when a verb fails: by then it may have printed its own JSON answer.
  auto json = [&] { return wants_json(argc, argv) && !cli::json_answer_printed(); };
  CLI::App app{
      "trainplan: choose workers, batch size and epochs for distributed training from measured performance,\n"
      "on the GPUs you profiled or on others (transfer); plan tensor, pipeline and data parallelism for\n"
      "transformers (llm); and simulate how a GPU cluster is shared among many such jobs.\n\n"
      "Exit codes: 0 ok, 1 internal failure, 2 bad input or usage, 3 constraints cannot be met."};
  app.require_subcommand(1);
  // Usage errors read as every other error does: "error: ...".
  app.failure_message([&](const CLI::App* at, const CLI::Error& e) {
    return "error: " + as_typed(app, argc, argv, usage_error_text(*at, e)) + "\nRun with --help for more information.\n";
  });
  app.set_version_flag("--version", "trainplan 0.1.0");
  cli::setup_commands(app);
  if (argc == 1) {  // as git does: the verbs, not just "a subcommand is required"
    app.name("trainplan");
    std::cerr << app.help();
    return kExitInputError;
  }
  if (const std::string message = unknown_command(app, argc, argv); !message.empty()) {
    std::cerr << "error: " << message << "\nRun with --help for more information.\n";
    if (json()) print_json_error(message, kExitInputError, nullptr);
    return kExitInputError;
  }
  if (const UnknownOption unknown = unknown_option(app, argc, argv); !unknown.option.empty()) {
    std::cerr << "error: " << unknown.message << "\n";
    const InputError named("", 0, unknown.option, unknown.message);
    if (json()) print_json_error(unknown.message, kExitInputError, &named);
    return kExitInputError;
  }
  if (const std::string option = empty_value_option(argc, argv); !option.empty()) {
    const std::string message = option[0] == '-'
                                    ? option + ": an empty value; give one, or leave the option out for its default"
                                    : option + " is empty";
    std::cerr << "error: " << message << "\n";
    // As every other option error: the JSON names the option as its field.
    const InputError named("", 0, option[0] == '-' ? option : "", message);
    if (json()) print_json_error(message, kExitInputError, &named);
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
    if (rc != 0 && json()) {
      // The option CLI11 names (its messages put it first or after "Could not convert: "), as the
      // field of an input error.
      const std::string what = as_typed(app, argc, argv, usage_error_text(app, e));
      std::string field;
      if (const size_t at = what.find("--"); at != std::string::npos) {
        const size_t end = what.find_first_of(" :=,'\"", at);
        field = what.substr(at, end == std::string::npos ? std::string::npos : end - at);
      }
      const trainplan::InputError named("", 0, field, what);
      print_json_error(what, kExitInputError, field.empty() ? nullptr : &named);
    }
    return rc == 0 ? 0 : kExitInputError;
  } catch (const InputError& thrown) {
    const InputError e(thrown.file(), thrown.line(), as_typed(app, argc, argv, thrown.field()), thrown.message());
    std::cerr << "error: " << e.what() << "\n";
    if (json()) print_json_error(e.what(), kExitInputError, &e);
    return kExitInputError;
  } catch (const InfeasibleError& e) {
    std::cerr << "infeasible: " << e.what() << "\n";
    // Which constraint fails and by how much, in figures, where the planner measured it.
    if (json()) print_json_error(e.what(), kExitInfeasible, nullptr, trainplan::app::to_json(e.shortfall()));
    return kExitInfeasible;
  } catch (const ExternalError& e) {
    std::cerr << "error: " << e.what() << "\n";
    if (json()) print_json_error(e.what(), kExitFailure, nullptr);
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    if (json()) print_json_error(std::string("internal error: ") + e.what(), kExitFailure, nullptr);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

// An answer cut short is a failure, whatever the verb returned.
int main(int argc, char** argv) {
  const int rc = run(argc, argv);
  if (!stdout_written() && rc == trainplan::kExitOk) return trainplan::kExitFailure;
  return rc;
}
