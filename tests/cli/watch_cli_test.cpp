// trainplan watch through the CLI: a log followed to its done line, bad
// lines reported with their numbers, a stalled log, --cmd, and --replay on a
// tiny synthetic trace folder.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <signal.h>
#include <nlohmann/json.hpp>

#include "io/gnuplot.h"
#include "test_util.h"

namespace {

using nlohmann::json;

// One trial-protocol epoch line, the metric written with `digits` decimals.
std::string epoch_line(int epoch, double epoch_time_s, double metric, int digits, const char* metric_name) {
  return fmt::format(R"({{"event":"epoch","epoch":{},"epoch_time_s":{},"metric":{:.{}f},"metric_name":"{}"}})"
                     "\n",
                     epoch, epoch_time_s, metric, digits, metric_name);
}

std::string log_text(int epochs, bool done) {
  std::string s = "loading data\n";
  for (int k = 1; k <= epochs; ++k) s += epoch_line(k, 30, 0.95 - 0.6 * std::exp(-0.15 * k), 5, "accuracy");
  if (done) s += "{\"event\":\"done\"}\n";
  return s;
}

TEST(WatchCli, JsonIsOneObjectPerUpdateAndBadLinesNameTheirNumber) {
  auto dir = tptest::temp_dir("watch_cli");
  const auto path = tptest::write_file(dir / "job.log", log_text(8, true));
  auto r = tptest::run_cli("watch --log " + path + " --target 0.93 --deadline 1h --json --stall 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ls = tptest::lines(r.out);
  ASSERT_EQ(ls.size(), 10u) << r.out;  // the warning, 8 forecasts, done
  auto w = json::parse(ls[0]);
  EXPECT_EQ(w["event"], "warning");
  EXPECT_EQ(w["line"], 1);
  EXPECT_NE(w["message"].get<std::string>().find(path + ":1"), std::string::npos);
  for (size_t i = 1; i <= 8; ++i) {
    auto u = json::parse(ls[i]);
    EXPECT_EQ(u["event"], "forecast");
    EXPECT_EQ(u["epoch"], double(i));
    EXPECT_TRUE(u.contains("deadline"));
  }
  auto last = json::parse(ls[8]);
  ASSERT_TRUE(last["predicted_epoch"].is_number());
  EXPECT_GT(last["predicted_epoch"].get<double>(), 8);
  EXPECT_TRUE(last["finish_s"].is_number());
  EXPECT_EQ(json::parse(ls[9])["event"], "done");
}

// A run whose metric is minimised (its name says so) with samples whose file
// does not say the direction: the samples' curve is fitted falling, as the
// run's, not rising, as a file without a header would have it.
TEST(WatchCli, SamplesAreFittedInTheRunsDirection) {
  auto dir = tptest::temp_dir("watch_direction");
  std::string csv = "batch,workers,epochs,epoch_time_s,metric\n";
  for (int b : {16, 32, 64})
    for (int e : {5, 10, 20, 40})
      csv += fmt::format("{},1,{},{:.3f},{:.4f}\n", b, e, 100.0 * 16 / b, 25 + 75 * std::exp(-e / (8.0 * b / 16)));
  const auto samples = tptest::write_file(dir / "samples.csv", csv);
  std::string log;
  for (int k = 1; k <= 4; ++k) log += epoch_line(k, 50, 25 + 75 * std::exp(-k / 16.0), 3, "wer");
  const auto path = tptest::write_file(dir / "run.log", log + "{\"event\":\"done\"}\n");
  auto r = tptest::run_cli("watch --log " + path + " --samples " + samples +
                           " --target 40 --batch 32 --workers 1 --time-model per-batch-extrapolation --json --stall 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ls = tptest::lines(r.out);
  ASSERT_GE(ls.size(), 2u) << r.out;
  const auto u = json::parse(ls[ls.size() - 2]);
  ASSERT_EQ(u["event"], "forecast") << u;
  EXPECT_EQ(u["direction"], "min");
  ASSERT_TRUE(u["samples"]["predicted_epoch"].is_number()) << u["samples"];
  EXPECT_GT(u["samples"]["predicted_epoch"].get<double>(), 4);
}

TEST(WatchCli, ALogWithoutDoneIsStalledNotFinished) {
  auto dir = tptest::temp_dir("watch_stall");
  const auto path = tptest::write_file(dir / "job.log", log_text(4, false));
  auto r = tptest::run_cli("watch --log " + path + " --target 0.93 --json --stall 1 --poll 0.05");
  EXPECT_EQ(r.exit_code, 1);
  const auto ls = tptest::lines(r.out);
  ASSERT_FALSE(ls.empty());
  auto u = json::parse(ls.back());
  EXPECT_EQ(u["event"], "stalled");
  EXPECT_GE(u["quiet_s"].get<double>(), 1.0);
  EXPECT_EQ(u["epoch"], 4);
  EXPECT_EQ(u["exit_code"], 1);  // the last line is also the watch's failure
  EXPECT_NE(u["error"].get<std::string>().find("--stall"), std::string::npos) << ls.back();
}

TEST(WatchCli, ALogNeverCreatedIsStalledSayingSo) {
  auto dir = tptest::temp_dir("watch_absent");
  const auto path = (dir / "not-yet.log").string();
  auto r = tptest::run_cli("watch --log " + path + " --target 0.93 --json --stall 0.5 --poll 0.05");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("waiting for " + path + " to be created"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was never created"), std::string::npos) << r.err;
  const auto ls = tptest::lines(r.out);
  ASSERT_EQ(ls.size(), 1u) << r.out;
  EXPECT_EQ(json::parse(ls[0])["event"], "stalled");
}

TEST(WatchCli, CmdReadsTheJobsStdoutAndTextHasNoBarOffATerminal) {
  auto dir = tptest::temp_dir("watch_cmd");
  const auto path = tptest::write_file(dir / "job.log", log_text(5, true));
  auto r = tptest::run_cli("watch --cmd 'cat " + path + "' --target 0.93");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: " + std::string("stdout:1")), std::string::npos) << r.err;  // beside the forecasts
  EXPECT_EQ(r.out.find("warning: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch 5: metric"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[#"), std::string::npos);  // stdout is a file here
}

// The job goes on after its done line (it saves a checkpoint, then fails):
// watch reads it to its end and exits with its status.
TEST(WatchCli, CmdWaitsForTheJobAfterDoneAndTakesItsStatus) {
  auto dir = tptest::temp_dir("watch_after_done");
  const auto log = tptest::write_file(dir / "job.log", log_text(5, true));
  const auto marker = (dir / "saved").string();
  const auto job = tptest::write_file(dir / "job.sh", "cat " + log + "\nsleep 0.3\necho saving\necho ok > " + marker +
                                                          "\nexit 4\n");
  auto r = tptest::run_cli("watch --cmd 'sh " + job + "' --target 0.93 --json");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(std::filesystem::exists(marker));
}

// The watch killed (here by timeout's SIGTERM): its job ends with it rather
// than run on until its next print fails.
TEST(WatchCli, TheJobEndsWithTheWatch) {
  auto dir = tptest::temp_dir("watch_killed");
  const auto pidfile = (dir / "pid").string();
  const std::string cmd = std::string("timeout -s TERM 1 ") + tptest::cli_word() + " watch --cmd 'echo $$ > " + pidfile +
                          "; exec sleep 60' --target 0.9 >/dev/null 2>&1";
  std::system(cmd.c_str());
  const pid_t job = std::atoi(tptest::read_file(pidfile).c_str());
  ASSERT_GT(job, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(job, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone);
  if (!gone) ::kill(job, SIGKILL);
}

// The job's shell ends while a process it left in the background holds its
// output open: the watch ends with the job's status, not when that process
// does. And a job that closes its output and runs on is still stopped by a
// Ctrl-C at once.
TEST(WatchCli, TheJobsEndIsSeenPastWhatHoldsItsOutput) {
  auto dir = tptest::temp_dir("watch_background");
  const auto log = tptest::write_file(dir / "job.log", log_text(3, false));
  const auto start = std::chrono::steady_clock::now();
  auto r = tptest::run_cli("watch --cmd 'sleep 30 & cat " + log + "; exit 4' --target 0.93");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_LT(took, 10) << r.out;
  EXPECT_NE(r.out.find("exit 4"), std::string::npos) << r.out;

  const std::string cmd = std::string("timeout --preserve-status -s INT 1.5 ") + tptest::cli_word() + " watch --cmd 'cat " + log +
                          "; exec >&-; sleep 30' --target 0.93 >/dev/null 2>&1";
  const auto at = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 130);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - at).count(), 8);
}

// A log that counts its epochs from 0 (Keras) loses none of them; an accuracy
// in percent whose first epoch is below 1 is not taken for a share.
TEST(WatchCli, EpochsFromZeroAndPercentsFromBelowOne) {
  auto dir = tptest::temp_dir("watch_counts");
  std::string zero;
  for (int k = 0; k < 5; ++k) zero += epoch_line(k, 30, 0.95 - 0.6 * std::exp(-0.15 * (k + 1)), 5, "accuracy");
  auto r = tptest::run_cli("watch --log " + tptest::write_file(dir / "zero.log", zero) + " --target 0.93 --stall 1");
  EXPECT_EQ(r.err.find("does not follow"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("epoch 5: metric"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("counts its epochs from 0"), std::string::npos) << r.out;
  std::string pct;
  const double values[] = {0.8, 3.5, 9, 15, 22, 28, 33};
  for (int k = 0; k < 7; ++k) pct += epoch_line(k + 1, 30, values[k], 1, "top1_accuracy");
  pct += "{\"event\":\"done\"}\n";
  auto p = tptest::run_cli("watch --log " + tptest::write_file(dir / "pct.log", pct) + " --target 70");
  EXPECT_EQ(p.err.find("outside [0, 1]"), std::string::npos) << p.err;
  EXPECT_NE(p.out.find("epoch 7: metric 33"), std::string::npos) << p.out;
}

// One epoch line without its time keeps the rest of the run timed: that
// epoch is taken at the recent epochs' median, and said so.
TEST(WatchCli, AnEpochWithoutItsTimeKeepsTheRunTimed) {
  auto dir = tptest::temp_dir("watch_notime");
  std::string text;
  for (int k = 1; k <= 8; ++k) {
    std::string line = epoch_line(k, 30, 0.95 - 0.6 * std::exp(-0.15 * k), 5, "accuracy");
    if (k == 4) line.replace(line.find("\"epoch_time_s\":30,"), std::string("\"epoch_time_s\":30,").size(), "");
    text += line;
  }
  text += "{\"event\":\"done\"}\n";
  auto r = tptest::run_cli("watch --log " + tptest::write_file(dir / "notime.log", text) + " --target 0.93 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json last;
  for (size_t at = 0, end; (end = r.out.find('\n', at)) != std::string::npos; at = end + 1) {
    const json u = json::parse(r.out.substr(at, end - at));
    if (u.value("event", "") == "forecast") last = u;
    if (u.value("epoch", 0.0) == 4) {
      EXPECT_NE(u.value("note", "").find("no epoch_time_s"), std::string::npos) << u.dump();
    }
  }
  ASSERT_TRUE(last.contains("elapsed_s")) << last.dump();
  EXPECT_NEAR(last["elapsed_s"].get<double>(), 8 * 30, 1e-6) << last.dump();
}

// A job restarted, appending to the same log: its epoch 1 after the old
// run's epochs starts a new forecast, where every epoch was skipped.
TEST(WatchCli, AnAppendedRestartIsANewRun) {
  auto dir = tptest::temp_dir("watch_appended");
  std::string text = log_text(6, false) + "Traceback (most recent call last): CUDA out of memory\n";
  for (int k = 1; k <= 4; ++k) text += epoch_line(k, 30, 0.95 - 0.6 * std::exp(-0.15 * k), 5, "accuracy");
  auto r = tptest::run_cli("watch --log " + tptest::write_file(dir / "app.log", text) + " --target 0.93 --stall 1");
  EXPECT_EQ(r.err.find("does not follow"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("epoch 1 after epoch 6: a new run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch 4: metric"), std::string::npos) << r.out;
}

// Two metrics in turn in one log: the run's is its first; the other's lines
// are said once and not taken.
TEST(WatchCli, ASecondMetricInTheLogIsSaidOnceAndNotTaken) {
  auto dir = tptest::temp_dir("watch_two_metrics");
  std::string text;
  for (int k = 1; k <= 6; ++k) {
    text += epoch_line(k, 30, 0.95 - 0.6 * std::exp(-0.15 * k), 5, "val_acc");
    text += epoch_line(k, 30, 0.3 + 1.0 / k, 5, "val_loss");
  }
  auto r = tptest::run_cli("watch --log " + tptest::write_file(dir / "mix.log", text) + " --target 0.93 --stall 1");
  size_t said = 0;
  for (size_t at = 0; (at = r.err.find("metric_name 'val_loss'", at)) != std::string::npos; ++at) ++said;
  EXPECT_EQ(said, 1u) << r.err;
  EXPECT_EQ(r.out.find("metric 1.3"), std::string::npos) << r.out;  // no loss value taken as the accuracy
}

// Nor does a process the job started outside its group (setsid), which the
// group's SIGTERM does not reach.
TEST(WatchCli, WhatTheJobStartedOutsideItsGroupEndsWithTheWatch) {
  auto dir = tptest::temp_dir("watch_setsid");
  const auto pidfile = (dir / "pid").string();
  const std::string cmd = std::string("timeout -s TERM 1 ") + tptest::cli_word() + " watch --cmd 'setsid sleep 300 & echo $! > " +
                          pidfile + "; exec sleep 60' --target 0.9 >/dev/null 2>&1";
  std::system(cmd.c_str());
  const pid_t escaped = std::atoi(tptest::read_file(pidfile).c_str());
  ASSERT_GT(escaped, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(escaped, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone);
  if (!gone) ::kill(escaped, SIGKILL);
}

// A run that ends short of its target: no forecast repeated, the deadline missed.
TEST(WatchCli, ARunThatEndsShortOfTheTargetSaysSo) {
  auto dir = tptest::temp_dir("watch_short");
  const auto path = tptest::write_file(dir / "job.log", log_text(6, true));
  auto r = tptest::run_cli("watch --log " + path + " --target 0.99 --deadline 100h --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto done = json::parse(tptest::lines(r.out).back());
  EXPECT_EQ(done["event"], "done");
  EXPECT_EQ(done["reached"], false);
  EXPECT_TRUE(done["predicted_epoch"].is_null());
  EXPECT_EQ(done["deadline"], "missed");
  auto text = tptest::run_cli("watch --log " + path + " --target 0.99 --deadline 100h");
  EXPECT_NE(text.out.find("target 0.99 not reached; deadline 100h00m: missed"), std::string::npos) << text.out;
}

// A log truncated and written again while it is followed: read again from its start.
TEST(WatchCli, ARewrittenLogIsReadAgainFromItsStart) {
  auto dir = tptest::temp_dir("watch_rewrite");
  const auto path = tptest::write_file(dir / "job.log", log_text(6, false));
  std::thread rewrite([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    tptest::write_file(dir / "job.log", log_text(3, true));
  });
  auto r = tptest::run_cli("watch --log " + path + " --target 0.93 --json --poll 0.05 --stall 20");
  rewrite.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool restarted = false;
  for (const auto& l : tptest::lines(r.out)) restarted |= json::parse(l)["event"] == "restarted";
  EXPECT_TRUE(restarted) << r.out;
  auto done = json::parse(tptest::lines(r.out).back());
  EXPECT_EQ(done["event"], "done");
  EXPECT_EQ(done["epoch"], 3);
}

// A new run in a rewritten log is judged afresh: the last run's accuracy in
// per cent (past 1) does not stop this one's share from being capped at 1,
// so a target of 1.5 is never reached, whatever its straight line says.
TEST(WatchCli, ANewRunInARewrittenLogJudgesItsMetricAfresh) {
  auto dir = tptest::temp_dir("watch_share");
  auto text = [](int epochs, double scale, bool done) {
    std::string s;
    for (int k = 1; k <= epochs; ++k) s += epoch_line(k, 30, scale * (0.3 + 0.1 * k), 4, "accuracy");
    return done ? s + "{\"event\":\"done\"}\n" : s;
  };
  const auto path = tptest::write_file(dir / "job.log", text(4, 100, false));
  std::thread rewrite([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    tptest::write_file(dir / "job.log", text(3, 1, true));
  });
  auto r = tptest::run_cli("watch --log " + path + " --target 1.5 --method naive --json --poll 0.05 --stall 20");
  rewrite.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ls = tptest::lines(r.out);
  ASSERT_GE(ls.size(), 2u) << r.out;
  const auto last = json::parse(ls[ls.size() - 2]);
  ASSERT_EQ(last["event"], "forecast") << last;
  EXPECT_EQ(last["epoch"], 3);
  EXPECT_TRUE(last["never"].get<bool>()) << last;
}

// A program's own logging is read past after one warning; an error rate
// named top1_err is minimised.
TEST(WatchCli, TextLinesAreReportedOnceAndErrorRatesAreMinimised) {
  auto dir = tptest::temp_dir("watch_text");
  std::string log = "step 1\nstep 2\nstep 3\n";
  for (int k = 1; k <= 6; ++k) log += epoch_line(k, 30, 0.1 + 0.5 / k, 4, "top1_err") + "step\n";
  const auto path = tptest::write_file(dir / "job.log", log + "{\"event\":\"done\"}\n");
  auto r = tptest::run_cli("watch --log " + path + " --target 0.2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int warnings = 0;
  json last;
  for (const auto& l : tptest::lines(r.out)) {
    last = json::parse(l);
    warnings += last["event"] == "warning";
  }
  EXPECT_EQ(warnings, 1) << r.out;
  EXPECT_EQ(last["direction"], "min");
  EXPECT_EQ(last["reached_at"], 5);  // 0.1 + 0.5 / 5 = 0.2
}

TEST(WatchCli, BadOptionsNameTheOption) {
  // A path that cannot become a file (under a file, not a directory); a missing one is waited for.
  const auto file = tptest::write_file(tptest::temp_dir("watch_bad") / "plain", "x");
  auto r = tptest::run_cli("watch --log " + file + "/job.log --target 0.9 --stall 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + "/job.log"), std::string::npos) << r.err;
  r = tptest::run_cli("watch --cmd true --target 0.9 --method magic");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--method"), std::string::npos) << r.err;
  r = tptest::run_cli("watch --cmd true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--target"), std::string::npos) << r.err;
}

// --plot keeps a chart of the forecast: drawn by the end of a run, a PNG
// (its signature), and no partly written file left beside it.
TEST(WatchCli, PlotKeepsAChartOfTheForecast) {
  if (!trainplan::io::gnuplot_available()) GTEST_SKIP() << "gnuplot not installed";
  auto dir = tptest::temp_dir("watch_plot");
  const auto path = tptest::write_file(dir / "job.log", log_text(8, true));
  const auto chart = (dir / "forecast.png").string();
  auto r = tptest::run_cli("watch --log " + path + " --target 0.93 --deadline 1h --stall 5 --plot " + chart);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("chart of the forecast -> " + chart), std::string::npos) << r.err;
  std::ifstream in(chart, std::ios::binary);
  std::string head(8, '\0');
  in.read(head.data(), 8);
  EXPECT_EQ(head, std::string("\x89PNG\r\n\x1a\n", 8));
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << e.path();
}

// Ctrl-C while following a log draws the chart's last forecast first, as
// the end of a run does. The test waits on what the watch has done, not on
// sleeps: the chart of epoch 4 drawn, then epochs 5 to 9 appended and read
// (their forecasts printed), then Ctrl-C, within the second the chart waits
// between redraws. On a machine slow enough to pass that second the chart
// is redrawn anyway and the check still holds.
TEST(WatchCli, ACtrlCOnALogDrawsTheLastForecast) {
  if (!trainplan::io::gnuplot_available()) GTEST_SKIP() << "gnuplot not installed";
  auto dir = tptest::temp_dir("watch_plot_ctrlc");
  const std::string all = log_text(9, false);
  size_t fifth = 0;
  for (int k = 0; k < 5; ++k) fifth = all.find('\n', fifth) + 1;  // "loading data" and epochs 1-4
  const auto path = tptest::write_file(dir / "job.log", all.substr(0, fifth));
  const auto more = tptest::write_file(dir / "more.log", all.substr(fifth));
  const auto chart = (dir / "forecast.svg").string();
  const auto out = (dir / "out.jsonl").string();
  const std::string script =
      tptest::cli_word() + " watch --log " + path + " --target 0.99 --stall 100 --poll 0.1 --json --plot " +
      chart + " >" + out + " 2>/dev/null &\n" +
      "pid=$!\n"
      "for i in $(seq 600); do [ -s " + chart + " ] && break; sleep 0.05; done\n" +
      "cat " + more + " >> " + path + "\n" +
      "for i in $(seq 600); do grep -q '\"epoch\":9' " + out + " && break; sleep 0.02; done\n" +
      "kill -INT $pid\n"
      "wait $pid\n";
  const auto script_path = tptest::write_file(dir / "ctrl-c.sh", script);
  const int rc = std::system(("bash " + script_path).c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 130);
  EXPECT_NE(tptest::read_file(out).find("\"epoch\":9"), std::string::npos) << "the watch never read epoch 9";
  EXPECT_NE(tptest::read_file(chart).find("up to epoch 9"), std::string::npos);
}

TEST(WatchCli, PlotOptionsAreCheckedBeforeTheWatch) {
  auto dir = tptest::temp_dir("watch_plot_bad");
  const auto path = tptest::write_file(dir / "job.log", log_text(3, true));
  tptest::expect_each_exits_two_naming("watch --log " + path + " --target 0.9 --stall 5",
                                       {{" --plot chart.pdf", "--plot"},
                                        {" --plot " + (dir / "missing" / "chart.png").string(), "--plot"}});
  auto r = tptest::run_cli("watch --replay " + dir.string() + " --plot chart.png");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--plot"), std::string::npos) << r.err;
  // Nor is any option of a followed run read by the replay: refused, not ignored.
  for (const char* option : {"--prior /nonexistent", "--samples s.csv", "--direction min", "--stall 5", "--poll 1"}) {
    auto o = tptest::run_cli("watch --replay " + dir.string() + " " + option);
    EXPECT_EQ(o.exit_code, 2) << option;
    EXPECT_NE(o.err.find("--replay excludes"), std::string::npos) << option << ": " << o.err;
  }
}

TEST(WatchCli, ReplayOnATinySyntheticTraceFolder) {
  auto root = tptest::temp_dir("watch_replay");
  for (const char* net : {"cifar10", "yolov3"}) {
    std::filesystem::create_directories(root / net);
    tptest::write_file(root / net / "placements.csv", "placement,local_bsz,step_time,sync_time\n1,32,0.1,0.01\n");
    for (int b : {128, 256}) {
      std::string csv = "progress,iteration,metric,grad_sqr,grad_var\n";
      for (int k = 1; k <= 20; ++k) {
        const double acc = 0.9 - 0.5 * std::exp(-0.1 * k * b / 128.0) + 0.004 * std::sin(7.0 * k);
        const double m = std::string(net) == "yolov3" ? 1 + 10 * (0.9 - acc) : acc;
        csv += fmt::format("{},{},{},1,1\n", k * 100, k * 100, m);
      }
      tptest::write_file(root / net / fmt::format("validation-{}.csv", b), csv);
    }
  }
  auto r = tptest::run_cli("watch --replay " + root.string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  EXPECT_EQ(doc["curves"], 4);
  ASSERT_EQ(doc["cells"].size(), 9u);  // 3 methods x 3 checkpoints
  for (const auto& c : doc["cells"]) {
    if (c["checkpoint"] == 0.1) {  // 2 rows seen: fewer than 3, and no figure stands for none
      EXPECT_EQ(c["forecasts"], 0);
      EXPECT_TRUE(c["median_error"].is_null() && c["coverage_own"].is_null()) << c;
    } else {
      EXPECT_GT(c["forecasts"], 0);
    }
    if (c["method"] == "ensemble" && c["checkpoint"] == 0.5) {
      ASSERT_TRUE(c["median_error"].is_number());
      EXPECT_LT(c["median_error"].get<double>(), 0.5);
    }
  }
  auto text = tptest::run_cli("watch --replay " + root.string());
  EXPECT_NE(text.out.find("ensemble"), std::string::npos);
  EXPECT_NE(text.out.find("10%          0     0  (no forecast: no run had 3 rows by then"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("nan"), std::string::npos) << text.out;
}

TEST(WatchCli, ReplayOnThePolluxTraces) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto r = tptest::run_cli("watch --replay " + tptest::shared_data_dir() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  EXPECT_EQ(doc["networks"].size(), 5u);  // bert's curves have two rows each
  EXPECT_GT(doc["curves"].get<int>(), 30);
}

}  // namespace

// --samples: earlier trials of the workload (tptest::synthetic_samples_csv,
// whose accuracy first reaches 0.85 at epoch 18 for b=32, r=2) forecast the
// run from its third epoch on, beside its own curve.
TEST(WatchCli, SamplesForecastTheRunFromEarlierTrials) {
  auto dir = tptest::temp_dir("watch_samples");
  const auto samples = tptest::write_file(dir / "s.csv", tptest::synthetic_samples_csv());
  std::string log;
  for (int k = 1; k <= 3; ++k) log += epoch_line(k, 20.3, 0.95 - 0.6 / (1 + k * 528.0 / 464 / 4), 6, "accuracy");
  const auto path = tptest::write_file(dir / "job.log", log + "{\"event\":\"done\"}\n");
  auto r = tptest::run_cli("watch --log " + path + " --target 0.85 --json --samples " + samples +
                           " --batch 32 --workers 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ls = tptest::lines(r.out);
  ASSERT_EQ(ls.size(), 4u) << r.out;
  auto u = json::parse(ls[2]);
  ASSERT_TRUE(u.contains("samples")) << u.dump(2);
  const auto& f = u["samples"];
  ASSERT_TRUE(f["predicted_epoch"].is_number()) << f.dump(2);
  EXPECT_NEAR(f["predicted_epoch"].get<double>(), 18, 2) << f.dump(2);
  EXPECT_NEAR(f["epoch_time_s"].get<double>(), 50000.0 / 64 * 0.026, 0.1 * 20.3) << f.dump(2);
  EXPECT_TRUE(f["finish_s"].is_number());

  auto bad = tptest::run_cli("watch --log " + path + " --target 0.85 --samples " + samples);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--batch"), std::string::npos) << bad.err;
  bad = tptest::run_cli("watch --log " + path + " --target 0.85 --batch 32");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--samples"), std::string::npos) << bad.err;
}

// --coverage takes a coverage from 0.01 to 0.99: NaN, which every range
// comparison lets through, is refused at the option (exit 2), not deep in the
// forecaster.
TEST(WatchCli, ACoverageThatIsNotANumberIsRefusedAtItsOption) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  for (const char* bad : {"nan", "1", "0", "-0.5"}) {
    auto r = tptest::run_cli(std::string("watch --replay ") + tptest::shared_data_dir() + " --coverage " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--coverage"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
}

// watch runs its command as given: a profile template's placeholder would reach the program as
// text ("invalid int value: '{batch}'"), so it is refused before anything runs.
TEST(WatchCli, APlaceholderInTheCommandIsRefused) {
  auto r = tptest::run_cli("watch --target 0.9 --cmd 'python3 train.py --batch {batch} --epochs 3'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "--cmd", {"'{batch}' is a placeholder", "as given"})) << r.err;
  // Every occurrence is looked at, past a literal {{batch}}.
  auto second = tptest::run_cli("watch --target 0.9 --cmd 'echo {{batch}} {batch}'");
  EXPECT_EQ(second.exit_code, 2) << second.err;
  // The shell's own ${batch} is a variable, not a placeholder.
  auto variable = tptest::run_cli("watch --target 0.9 --json --cmd 'batch=8; echo ${batch} >/dev/null; echo "
                                  "\"{\\\"event\\\":\\\"done\\\"}\"'");
  EXPECT_NE(variable.exit_code, 2) << variable.err;
  // Braces of the shell's own are not placeholders.
  auto shell = tptest::run_cli("watch --target 0.9 --json --cmd 'for i in {1..2}; do :; done; echo \"{\\\"event\\\":\\\"done\\\"}\"'");
  EXPECT_NE(shell.exit_code, 2) << shell.err;
}
