#include "fuzz_target.h"

#include <fstream>
#include <deque>

namespace trainplan::fuzz {

std::vector<const Target*>& targets() {
  static std::vector<const Target*> all;
  return all;
}

const Target* find_target(const std::string& name) {
  for (const Target* t : targets())
    if (t->name == name) return t;
  return nullptr;
}

TargetRegistrar::TargetRegistrar(Target t) {
  // A deque keeps the addresses of the targets already listed as it grows.
  static std::deque<Target> store;
  store.push_back(std::move(t));
  targets().push_back(&store.back());
}

bool expect_value_or_input_error(const std::string& file, const std::function<void()>& parse) {
  try {
    parse();
    return true;
  } catch (const InputError& e) {
    if (e.file().rfind(file, 0) != 0)
      throw ContractBreach("InputError does not name the input '" + file + "': " + e.what());
    if (e.message().empty()) throw ContractBreach(std::string("InputError without a message: ") + e.what());
    return false;
  }
}

void write_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace trainplan::fuzz
