#include "profile/command_template.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace trainplan::profile {

const std::vector<std::string>& CommandTemplate::placeholder_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"batch", "workers", "epochs",      "rank",        "master_port", "master_addr",
                                  "nodes", "tp",      "pp",          "dp",          "micro_batch", "global_batch",
                                  "batches"};
    for (const auto& s : shape_placeholder_names()) v.push_back(s);
    return v;
  }();
  return names;
}

const std::vector<std::string>& CommandTemplate::shape_placeholder_names() {
  static const std::vector<std::string> names = {
      "hidden",         "heads",     "layers",          "seq",               "vocab",
      "ffn_hidden",     "kv_groups", "virtual_stages",  "first_stage_layers", "last_stage_layers",
      "recompute",      "precision",
      "sequence_parallel", "distributed_optimizer", "flash_attention", "dropout", "fp32_residual"};
  return names;
}

namespace {
// A template pasted from a multi-line example: each line break (with a
// shell's trailing backslash, if any) is a space, since `sh -c` would run
// the next line as a command of its own.
std::string one_line(std::string text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) continue;
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;  // CRLF: one break
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out;
}
}  // namespace

CommandTemplate::CommandTemplate(std::string text, const std::string& option) : text_(one_line(std::move(text))) {
  if (text_.find_first_not_of(" \t\n") == std::string::npos) throw InputError("", 0, option, "the command template is empty");
  std::string literal;
  for (size_t i = 0; i < text_.size(); ++i) {
    char c = text_[i];
    if ((c == '{' || c == '}') && i + 1 < text_.size() && text_[i + 1] == c) {
      literal += c;
      ++i;
      continue;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    auto close = text_.find('}', i);
    if (close == std::string::npos)
      throw InputError("", 0, option, fmt::format("unclosed '{{' at position {} (write '{{{{' for a literal brace)", i));
    std::string name = text_.substr(i + 1, close - i - 1);
    const auto& known = placeholder_names();
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InputError("", 0, option,
                       fmt::format("unknown placeholder {{{}}}; known: {{{}}} (write '{{{{' and '}}}}' for literal braces, as "
                                   "in a JSON line the command prints itself)",
                                   name, fmt::join(known, "} {")));
    if (!literal.empty()) pieces_.push_back({false, std::move(literal)});
    literal.clear();
    pieces_.push_back({true, name});
    i = close;
  }
  if (!literal.empty()) pieces_.push_back({false, std::move(literal)});
}

bool CommandTemplate::uses(const std::string& name) const {
  return std::any_of(pieces_.begin(), pieces_.end(), [&](const Piece& p) { return p.placeholder && p.text == name; });
}

std::string CommandTemplate::expand(const std::map<std::string, std::string>& values) const {
  std::string out;
  for (const auto& p : pieces_) out += p.placeholder ? values.at(p.text) : p.text;
  return out;
}

}  // namespace trainplan::profile
