// trainplan-train: the reference trainer (see docs/TRAINER.md): data-parallel
// LeNet/MLP, or the GPT workload with tensor, pipeline and data parallelism.
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <exception>
#include <iostream>
#include <string>

#include "train/dist.h"
#include "train/fork_server.h"
#include "train/gpt.h"
#include "train/options.h"
#include "train/trainer.h"

namespace {

int trainer_main(int argc, char** argv) {
  using namespace trainplan::train;
  ParseResult parsed = parse_options(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  const TrainOptions& o = *parsed.options;
  try {
    at::set_num_threads(o.threads);
    at::set_num_interop_threads(1);
    auto print = [](const nlohmann::json& j) { std::cout << j.dump() << std::endl; };  // endl: flush each line
    EventSink report = o.rank == 0 ? EventSink(print) : EventSink([](const nlohmann::json&) {});
    if (o.workload == "gpt")
      train_gpt(o, report);
    else
      train(o, [&] { return make_communicator(o); }, report, print);
  } catch (const c10::Error& e) {
    std::cerr << "trainplan-train: rank " << o.rank << ": " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "trainplan-train: rank " << o.rank << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // `--fork-server SOCKET` must come first and alone: the server parses no
  // other option, and each run it forks parses its own.
  if (argc >= 2 && std::string(argv[1]) == "--fork-server") {
    if (argc != 3) {
      std::cerr << "usage: trainplan-train --fork-server SOCKET\n";
      return 2;
    }
    return trainplan::train::serve_forks(argv[2], trainer_main);
  }
  return trainer_main(argc, argv);
}
