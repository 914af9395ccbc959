// trainplan_fuzz: the seeded random-mutation driver (mutator.h) over every
// registered target (fuzz_target.h). Needs no special compiler, so it runs in
// every build and under the sanitizers; deterministic for a seed, bounded in
// iterations and in seconds, so ctest can run it.
//
//   trainplan_fuzz --list
//   trainplan_fuzz TARGET [--iterations N] [--seconds S] [--seed N] [--corpus DIR]... [--max-len BYTES]
//                         [--timeout S]
//   trainplan_fuzz TARGET --run FILE...        replay inputs (a saved breach, a corpus)
//
// Seeds are the target's seed files and folders (fuzz/corpus/TARGET) and each --corpus. The
// run stops at the first breach of the contract: it prints what broke, saves
// the input as ./fuzz-breach-TARGET-SEED-ITERATION and exits 1. An input that
// runs past --timeout seconds is a hang: exit 3. A sanitizer report aborts the
// process; the input then is in the scratch folder printed at the start.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "fuzz_target.h"
#include "mutator.h"

namespace fs = std::filesystem;
using namespace trainplan::fuzz;

namespace {

char g_input_path[4096];  // for the alarm handler: async-signal-safe output only

void on_alarm(int) {
  const char msg[] = "trainplan_fuzz: an input ran past --timeout (a hang); it is in ";
  [[maybe_unused]] auto r = ::write(2, msg, sizeof msg - 1);
  r = ::write(2, g_input_path, std::strlen(g_input_path));
  r = ::write(2, "\n", 1);
  ::_exit(3);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The files named and those in the folders named, in a fixed order.
std::vector<std::string> load_corpus(const std::vector<std::string>& dirs) {
  std::vector<fs::path> files;
  for (const auto& d : dirs) {
    if (fs::is_regular_file(d)) files.push_back(d);
    if (!fs::is_directory(d)) continue;
    for (const auto& e : fs::directory_iterator(d))
      if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // directory order differs between file systems
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(slurp(f));
  return out;
}

int usage() {
  std::cerr << "usage: trainplan_fuzz --list | TARGET [--iterations N] [--seconds S] [--seed N] [--corpus DIR]...\n"
               "                      [--max-len BYTES] [--timeout S] | TARGET --run FILE...\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  if (std::string(argv[1]) == "--list") {
    for (const Target* t : targets()) std::cout << t->name << "\t" << t->summary << "\n";
    return 0;
  }
  const Target* target = find_target(argv[1]);
  if (!target) {
    std::cerr << "trainplan_fuzz: unknown target '" << argv[1] << "' (--list names them)\n";
    return 2;
  }
  long iterations = 2000;
  double seconds = 60, timeout = 20;
  uint64_t seed = 1;
  size_t max_len = 1 << 16;
  std::vector<std::string> seed_dirs, replay;
  for (const auto& d : target->seed_dirs) seed_dirs.push_back(std::string(TRAINPLAN_SOURCE_DIR) + "/" + d);
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--run") {
      for (++i; i < argc; ++i) replay.push_back(argv[i]);
    } else if (a == "--iterations" && has_value) {
      iterations = std::atol(argv[++i]);
    } else if (a == "--seconds" && has_value) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--seed" && has_value) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--corpus" && has_value) {
      seed_dirs.push_back(argv[++i]);
    } else if (a == "--max-len" && has_value) {
      max_len = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--timeout" && has_value) {
      timeout = std::atof(argv[++i]);
    } else {
      return usage();
    }
  }

  const fs::path work = fs::temp_directory_path() / ("trainplan-fuzz-" + target->name + "-" + std::to_string(::getpid()));
  const fs::path scratch = work / "scratch", input_file = work / "input";
  fs::create_directories(work);
  std::snprintf(g_input_path, sizeof g_input_path, "%s", input_file.c_str());
  ::signal(SIGALRM, on_alarm);
  std::cerr << "trainplan_fuzz " << target->name << ": seed " << seed << "; the input being run is kept in "
            << input_file.string() << "\n";

  std::vector<std::string> corpus = load_corpus(seed_dirs);
  Mutator mutator(seed, corpus, target->dictionary, max_len);
  const auto start = std::chrono::steady_clock::now();
  long done = 0, accepted = 0;
  const long total = replay.empty() ? iterations + static_cast<long>(corpus.size()) : static_cast<long>(replay.size());
  for (long it = 0; it < total; ++it) {
    // The seeds themselves first, unmutated: each must keep the contract too.
    std::string input = !replay.empty() ? slurp(replay[it])
                        : it < static_cast<long>(corpus.size()) ? corpus[it] : mutator.next();
    write_file(input_file.string(), input);
    fs::remove_all(scratch);
    fs::create_directories(scratch);
    std::string breach;
    ::alarm(static_cast<unsigned>(std::max(1.0, timeout)));
    try {
      accepted += target->run(input, scratch.string()) ? 1 : 0;
    } catch (const ContractBreach& e) {
      breach = e.what();
    } catch (const std::exception& e) {
      breach = std::string("threw ") + typeid(e).name() + ", not InputError: " + e.what();
    } catch (...) {
      breach = "threw something that is not a std::exception";
    }
    ::alarm(0);
    ++done;
    if (!breach.empty()) {
      const std::string keep = "fuzz-breach-" + target->name + "-" + std::to_string(seed) + "-" + std::to_string(it);
      write_file(keep, input);
      std::cerr << "trainplan_fuzz " << target->name << ": BREACH at iteration " << it << " (seed " << seed
                << "): " << breach << "\n  input saved as " << fs::absolute(keep).string()
                << "; replay: trainplan_fuzz " << target->name << " --run " << keep << "\n";
      return 1;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (replay.empty() && elapsed > seconds) break;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "trainplan_fuzz " << target->name << ": " << done << " inputs (" << corpus.size() << " seeds) in "
            << elapsed << " s, seed " << seed << ": " << accepted << " parsed, " << done - accepted
            << " rejected with InputError, no breach\n";
  std::error_code ec;
  fs::remove_all(work, ec);
  return 0;
}
