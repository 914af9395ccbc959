#include "profile/command_check.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <map>
#include <sstream>

#include "profile/launcher.h"

namespace trainplan::profile {
namespace {

// Runs `command` with /bin/sh; its exit status and what it printed (stdout and stderr), or
// nullopt when it could not be started.
std::optional<std::pair<int, std::string>> run_quietly(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string out;
  std::array<char, 512> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status)) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return std::pair{WEXITSTATUS(status), out};
}

// The first word of a command after its plain VAR=value assignments (the last assignment where
// nothing follows them).
std::string program_word(const std::string& command) {
  std::istringstream words(command);
  std::string w;
  while (words >> w && w.find('=') != std::string::npos && w.find('=') > 0 && w.find_first_of("\"'$`") == std::string::npos) {
  }
  return w;
}

}  // namespace

std::optional<std::string> command_problem(const CommandTemplate& t, bool look_up_program) {
  std::map<std::string, std::string> values;
  for (const auto& name : CommandTemplate::placeholder_names()) values[name] = "1";
  values["master_addr"] = "127.0.0.1";
  values["recompute"] = "none";
  values["precision"] = "bf16";
  for (const char* flag : {"sequence_parallel", "distributed_optimizer", "flash_attention", "dropout", "fp32_residual"})
    values[flag] = "false";
  std::string text;
  try {
    text = t.expand(values);
  } catch (const std::exception&) {
    return std::nullopt;  // a placeholder without a stand-in: not ours to judge
  }
  const char* shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
  if (auto r = run_quietly(fmt::format("{} -n -c {}", shell, shell_quote(text))); r && r->first != 0)
    return fmt::format("the shell cannot parse it ({}): {}", shell, r->second.empty() ? "a syntax error" : r->second);
  if (!look_up_program) return std::nullopt;
  const std::string first = program_word(text);
  if (first.empty() || first.find_first_of("\"'$`\\(){}[]*?;|&<>~") != std::string::npos) return std::nullopt;
  if (first.find('=') != std::string::npos) return std::nullopt;  // assignments alone
  // A program named by the grid ("./run_{workers}.sh") differs trial by trial: the stand-ins
  // would name none of them.
  if (program_word(t.text()).find('{') != std::string::npos) return std::nullopt;
  // A path to a file that is there but cannot be run is said as that.
  if (first.find('/') != std::string::npos && access(first.c_str(), F_OK) == 0 && access(first.c_str(), X_OK) != 0)
    return fmt::format("'{}' is there but not executable (chmod +x it, or run it with its interpreter: sh {})", first,
                       first);
  if (auto r = run_quietly(fmt::format("{} -c {} _ {}", shell, shell_quote("command -v -- \"$1\" >/dev/null"),
                                       shell_quote(first)));
      r && r->first != 0)
    return fmt::format("'{}' is not a program the shell finds here (not on the PATH, and no such file)", first);
  return std::nullopt;
}

}  // namespace trainplan::profile
