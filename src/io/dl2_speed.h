// Reader for DL2's parameter-server speed table (pengyanghua/DL2,
// config_speed.txt). Each non-blank line is a Python tuple:
//   (model, mode, total_batch_size, num_ps, num_workers,
//    [per-worker speed], [ps cpu%], [worker cpu%])
// for example ('resnet-50', 'dist_sync', 32, 1, 2, [7.702, 7.702], [1.942], [0.436, 0.423]).
// Blank lines and lines starting with '#' are skipped.
#pragma once
#include <string>
#include <vector>

namespace trainplan::io {

// What one per-worker speed entry counts. The file does not say. The README
// suggests steps/s per worker; the data itself reads as samples/s per worker
// (MXNet's Speedometer): total_batch_size M is fixed at 32 and split over the
// w workers, and with one server the sum over workers stays near 15.8 for
// resnet-50 as w grows 1..4 while each entry falls as 1/w. Optimus's form fits
// the samples reading about twice as well (see docs/lab/MODELS-TIME.md).
enum class Dl2SpeedUnit { kSamplesPerWorker, kStepsPerWorker };
const char* to_string(Dl2SpeedUnit u);
Dl2SpeedUnit parse_dl2_speed_unit(const std::string& s);  // "samples" | "steps"; InputError otherwise

struct Dl2SpeedRow {
  long line = 0;            // 1-based line in the file
  std::string model;        // e.g. "resnet-50"
  std::string mode;         // e.g. "dist_sync"
  long total_batch = 0;     // global batch M of one step
  int num_ps = 0;
  int num_workers = 0;
  std::vector<double> worker_speed;  // one per worker, >= 0
  std::vector<double> ps_cpu;        // one per parameter server
  std::vector<double> worker_cpu;    // one per worker

  bool sync() const { return mode.find("async") == std::string::npos; }
  // A run in which some worker made no progress (speed 0): a failed measurement.
  bool stalled() const;
  // The job's speed in steps per second (Optimus's f).
  //  samples: each worker runs M/w samples a step, so a worker's step rate is
  //           speed_i * w / M; sync: the job's rate is their mean, sum_i speed_i / M;
  //           async: every worker's step counts, w * sum_i speed_i / M.
  //  steps:   sync: workers advance in lockstep, so the mean over workers
  //           (averaging measurement noise); async: the sum.
  double job_speed(Dl2SpeedUnit unit) const;
};

struct Dl2SpeedTable {
  std::string path;
  std::vector<Dl2SpeedRow> rows;  // in file order
};

// Throws InputError(file, line, field, message) for a line that is not such a
// tuple: wrong field count, a non-number, a count < 1, a speed list whose
// length differs from num_workers, negative or non-finite values.
Dl2SpeedTable read_dl2_speed(const std::string& path);
Dl2SpeedTable parse_dl2_speed(const std::string& text, const std::string& name);

}  // namespace trainplan::io
