// What the shell would say of a command template before any trial runs it:
// a syntax error (an unbalanced quote) or a program it cannot find fails
// every trial the same way, after each has started.
#pragma once
#include <optional>
#include <string>

#include "profile/command_template.h"

namespace trainplan::profile {

// The template expanded with stand-in values (1 for every number,
// 127.0.0.1 for the address), then `bash -n` over it; with
// `look_up_program`, also whether its first word (after VAR=value
// assignments) names a program, builtin or function the shell finds, where
// that word is plain (no quotes, variables or expansions). nullopt when
// nothing is wrong or the shell cannot be run; else the complaint, for
// people.
std::optional<std::string> command_problem(const CommandTemplate& t, bool look_up_program);

}  // namespace trainplan::profile
