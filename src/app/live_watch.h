// The state of `trainplan watch` between lines: it reads the trial protocol's
// lines one at a time (profile/trial_log_line.h), feeds each epoch to an
// EpochForecaster and answers one update per line that says something: a
// forecast after an epoch, a warning for a bad line (skipped), the end.
// Updates are JSON objects (`event`: "forecast", "warning", "stalled",
// "restarted", "done", "ended"); text() renders one for people. A profiling run's live log
// (profile/live_log.h) holds many trials: each trial_start line starts a new
// forecast ("trial"), each trial_end closes it ("trial_end"), and only
// profile_done ends the watch ("profile_done").
#pragma once
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sample.h"
#include "models/model.h"
#include "models/epoch_forecaster.h"

namespace trainplan::app {

// Earlier trials of the same workload, to forecast the run from as well: a
// metric model refitted after each epoch on them plus the run's own epochs
// (the run's configuration as curve points), and a time model fitted once.
struct WatchSamples {
  SampleSet samples;
  std::string metric_model = "global-batch";  // a registered metric model
  std::string time_model;                     // a registered time model (the CLI resolves "auto")
  int batch = 0, workers = 0;                 // the run's per-worker batch and workers. REQUIRES: > 0
  int nodes = 1;                              // the machines its workers span
  double max_epochs = 1000;                   // the latest epoch searched for the target
};

struct WatchOptions {
  // The metric the job should reach. REQUIRES: finite.
  double target = 0;
  // Seconds from the start of the first epoch by which the target should be
  // met; absent: no verdict.
  std::optional<double> deadline_s;
  // Whether larger metrics are better; absent: from the first metric_name
  // (loss, error, wer, perplexity, mse, mae: smaller), else larger.
  std::optional<MetricDirection> direction;
  // The forecaster's parameters (its direction is set as above).
  models::EpochForecasterParams forecaster;
  // Calibration errors of other runs, used beside the run's own
  // (models/epoch_forecaster.h); empty: the run's own only.
  std::vector<models::ForecastError> prior;
  // Set: each forecast also carries `samples`, the forecast from them.
  std::optional<WatchSamples> samples;
  // Named in warnings: the log's path or "stdout".
  std::string source = "log";
};

class LiveWatch {
 public:
  explicit LiveWatch(WatchOptions o);

  // Reads line `line_no`; returns its update, or nullopt for a line that
  // says nothing (blank, or a JSON object the protocol ignores).
  std::optional<nlohmann::json> feed(const std::string& line, long line_no);
  // Forgets the run: the log was rewritten from its start. Its update.
  nlohmann::json restarted();
  // The update for a log quiet for `quiet_s` seconds.
  nlohmann::json stalled(double quiet_s, long line_no) const;
  // The update for a command whose stdout closed without a done line.
  nlohmann::json ended(int exit_code) const;

  bool done() const { return done_; }
  // The latest forecast update, or nullopt before the first epoch with a metric.
  const std::optional<nlohmann::json>& last() const { return last_; }
  // The run's forecaster (its epochs, metrics and fit), or null before its
  // first epoch with a metric.
  const models::EpochForecaster* forecaster() const { return fc_.get(); }
  // The run's first metric_name, or empty when its lines gave none.
  const std::string& metric_name() const { return metric_name_; }
  // In a profiling run's live log, the trial being forecast ("batch 64 on 2
  // workers"); empty outside one.
  const std::string& trial() const { return trial_; }

  // One line for people; `bar_width` > 0 prefixes a progress bar of epochs
  // done over the predicted epoch.
  static std::string text(const nlohmann::json& update, int bar_width = 0);

 private:
  // Forgets the run's epochs and forecasts (a new trial, a rewritten log).
  void forget_run();
  nlohmann::json forecast_update(double epoch) const;
  // The last forecast as the run's end leaves it (done, or the job's output
  // closed): `reached`, and no forecast or deadline other than missed when not.
  nlohmann::json finished(const std::optional<nlohmann::json>& last) const;
  // The forecast from o_.samples and the run's epochs so far.
  nlohmann::json samples_forecast() const;

  WatchOptions o_;
  std::unique_ptr<models::EpochForecaster> fc_;
  double last_epoch_ = 0;
  // A share by its name (an accuracy, an F1, an AUC) whose every value so far lies in [0, 1].
  bool share_metric_ = true;
  double epoch_shift_ = 0;  // 1 for a run that counts its epochs from 0
  std::set<std::string> other_metrics_;  // metric names other than the run's, said once
  // Three epochs in [0, 1] under a share's name make it one: fewer (an
  // accuracy in percent whose first epoch is below 1) do not. While
  // share_metric_ holds, every epoch the forecaster took was such a one.
  bool known_share() const { return share_metric_ && fc_ && fc_->epochs_seen() >= 3; }
  bool done_ = false;
  bool in_profile_ = false;
  bool time_trial_ = false;  // the profiling run's current trial times steps only (epochs 0)
  std::vector<Sample> own_;      // the run's epochs, as curve points, for o_.samples
  // Seconds of epochs read without a metric since the last one with: given
  // to the next epoch with a metric, whose time then covers them too.
  double unmetered_s_ = 0;
  // Garbled epoch lines since the last timed one: each an epoch that ran, at
  // the next timed epoch's time.
  int garbled_epochs_ = 0;
  long text_lines_ = 0;  // lines with no JSON in them, read so far
  std::set<std::string> misspelt_events_;  // events near the protocol's, each warned of once
  double samples_epoch_time_ = 0;  // o_.samples' time model at the run's configuration  // a trial_start line was read: a done line ends one trial only
  std::optional<nlohmann::json> last_;
  std::string metric_name_;
  std::string trial_;
};

}  // namespace trainplan::app
