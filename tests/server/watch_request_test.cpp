// POST /watch: a job's log read whole, answered with the forecast `trainplan
// watch` gives for it and the chart `watch --plot` draws, as data; a log on
// the server only where the server allows paths, within its limits.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "app/live_watch.h"
#include "server_util.h"

namespace {

using nlohmann::json;
using tpserver::Running;
using trainplan::server::Limits;

std::string job_log(int epochs) {
  std::string s = "starting\n";
  for (int k = 1; k <= epochs; ++k)
    s += fmt::format(R"({{"event":"epoch","epoch":{},"epoch_time_s":{},"metric":{:.5f},"metric_name":"accuracy"}})"
                     "\n",
                     k, 30 + k % 3, 0.95 - 0.6 * std::exp(-0.2 * k));
  return s;
}

TEST(WatchRequest, AnswersTheForecastTheWatchGivesAndItsChart) {
  Running s;
  int st = 0;
  const std::string log = job_log(9);
  json a = s.post("/watch", json{{"log_text", log}, {"target", 0.93}, {"deadline_s", "2h"}}, &st);
  ASSERT_EQ(st, 200) << a.dump();
  // The same lines fed to the watch itself.
  trainplan::app::WatchOptions o;
  o.target = 0.93;
  o.deadline_s = 7200;
  o.source = "log_text";
  trainplan::app::LiveWatch w(o);
  long n = 0;
  for (size_t at = 0, nl; (nl = log.find('\n', at)) != std::string::npos; at = nl + 1) w.feed(log.substr(at, nl - at), ++n);
  ASSERT_TRUE(w.last());
  EXPECT_EQ(a["forecast"]["predicted_epoch"], (*w.last())["predicted_epoch"]);
  EXPECT_EQ(a["forecast"]["interval"], (*w.last())["interval"]);
  EXPECT_EQ(a["forecast"]["deadline"], (*w.last())["deadline"]);
  EXPECT_EQ(a["text"], trainplan::app::LiveWatch::text(*w.last(), 0));
  EXPECT_EQ(a["lines"], 10);
  EXPECT_EQ(a["epochs_seen"], 9);
  EXPECT_EQ(a["warnings_total"], 1);  // "starting": not a JSON line
  EXPECT_FALSE(a["done"]);
  ASSERT_EQ(a["panels"].size(), 2u);
  const json& measured = a["panels"][0]["series"][1];
  EXPECT_EQ(measured["title"], "measured");
  EXPECT_EQ(measured["kind"], "points");
  EXPECT_EQ(measured["points"].size(), 9u);
  EXPECT_EQ(a["panels"][1]["series"][0]["title"], "elapsed");

  // A log with nothing to forecast from yet is an answer, not an error.
  a = s.post("/watch", json{{"log_text", ""}, {"target", 0.93}}, &st);
  EXPECT_EQ(st, 200) << a.dump();
  EXPECT_TRUE(a["forecast"].is_null());
  EXPECT_TRUE(a["panels"].empty());
}

// Read as `trainplan watch` reads a log: nothing after the run's done line;
// a profiling run's next trial starts afresh (the last trial's result is not
// carried into it); a line past 1 MiB not parsed.
TEST(WatchRequest, TheLogIsReadAsTheWatchReadsIt) {
  Running s;
  int st = 0;
  std::string log = job_log(6) + "{\"event\":\"done\"}\n" + job_log(9).substr(9);  // epochs after done
  json a = s.post("/watch", json{{"log_text", log}, {"target", 0.99}}, &st);
  ASSERT_EQ(st, 200) << a.dump();
  EXPECT_TRUE(a["done"]);
  EXPECT_EQ(a["epochs_seen"], 6);
  EXPECT_EQ(a["forecast"]["event"], "done");
  EXPECT_EQ(a["forecast"]["reached"], false);

  std::string profiling = "{\"event\":\"trial_start\",\"batch\":32,\"workers\":1,\"epochs\":6}\n" + job_log(6).substr(9) +
                          "{\"event\":\"done\"}\n{\"event\":\"trial_end\",\"status\":\"ok\"}\n" +
                          "{\"event\":\"trial_start\",\"batch\":64,\"workers\":2,\"epochs\":6}\n";
  a = s.post("/watch", json{{"log_text", profiling}, {"target", 0.99}}, &st);
  ASSERT_EQ(st, 200) << a.dump();
  EXPECT_EQ(a["trial"], "batch 64 on 2 workers");
  EXPECT_TRUE(a["forecast"].is_null()) << a["forecast"];
  EXPECT_TRUE(a["panels"].empty());

  a = s.post("/watch", json{{"log_text", std::string(1200000, 'x') + "\n" + job_log(5).substr(9)}, {"target", 0.99}}, &st);
  ASSERT_EQ(st, 200) << a.dump().substr(0, 300);
  EXPECT_EQ(a["epochs_seen"], 5);
  ASSERT_EQ(a["warnings"].size(), 1u);
  EXPECT_NE(a["warnings"][0].get<std::string>().find("more than 1 MiB"), std::string::npos) << a["warnings"][0];
}

// A log followed on the server is read from where the last request
// stopped: the answer is the one the whole file gives, from the bytes added
// alone; a file rewritten, or other options, start afresh.
TEST(WatchRequest, AFollowedLogIsReadFromWhereTheLastRequestStopped) {
  auto dir = tptest::temp_dir("watch_follow");
  const std::string log = job_log(12);
  const size_t half = log.rfind('\n', log.find("\"epoch\":7,")) + 1;  // the start of epoch 7's line
  ASSERT_EQ(log[half - 1], '\n');
  const std::string path = tptest::write_file(dir / "run.log", log.substr(0, half));
  Running s(tpserver::with_paths());
  int st = 0;
  json a = s.post("/watch", json{{"log_path", path}, {"target", 0.93}}, &st);
  ASSERT_EQ(st, 200) << a.dump();
  EXPECT_EQ(a["bytes_read"], half);
  EXPECT_EQ(a["epochs_seen"], 6);
  EXPECT_FALSE(a["restarted"]);
  { std::ofstream(path, std::ios::app) << log.substr(half); }
  a = s.post("/watch", json{{"log_path", path}, {"target", 0.93}}, &st);
  ASSERT_EQ(st, 200) << a.dump();
  EXPECT_EQ(a["bytes_read"], log.size() - half);
  EXPECT_EQ(a["epochs_seen"], 12);
  EXPECT_EQ(a["lines"], 13);
  const json whole = s.post("/watch", json{{"log_text", log}, {"target", 0.93}}, &st);
  EXPECT_EQ(a["forecast"], whole["forecast"]);
  EXPECT_EQ(a["panels"], whole["panels"]);
  // Nothing added: nothing read, the same answer.
  json again = s.post("/watch", json{{"log_path", path}, {"target", 0.93}}, &st);
  EXPECT_EQ(again["bytes_read"], 0);
  EXPECT_EQ(again["forecast"], a["forecast"]);
  // Other options: a watch of their own, from the start.
  again = s.post("/watch", json{{"log_path", path}, {"target", 0.9}}, &st);
  EXPECT_FALSE(again["restarted"]);
  EXPECT_EQ(again["bytes_read"], log.size());
  // Rewritten shorter, with other first bytes: afresh.
  tptest::write_file(dir / "run.log", job_log(4).substr(9));
  again = s.post("/watch", json{{"log_path", path}, {"target", 0.9}}, &st);
  EXPECT_TRUE(again["restarted"]);
  EXPECT_EQ(again["epochs_seen"], 4);
  EXPECT_EQ(again["warnings_total"], 0);
}

// The cases a kept watch could get wrong: a last line that ends in '}' but
// is not whole; a whole one whose newline comes later; a run restarted into
// the file and past the old end, with the same first lines; two options on
// one log. Each followed answer is the whole file's.
TEST(WatchRequest, AFollowedLogAgreesWithTheWholeFileWhereItCouldPart) {
  auto dir = tptest::temp_dir("watch_follow_edges");
  Running s(tpserver::with_paths());
  int st = 0;
  const auto whole = [&](const std::string& text, double target) {
    return s.post("/watch", json{{"log_text", text}, {"target", target}}, &st);
  };
  const auto followed = [&](const std::string& path, double target) {
    return s.post("/watch", json{{"log_path", path}, {"target", target}}, &st);
  };
  const auto same = [](const json& a, const json& b) {
    for (const char* k : {"forecast", "lines", "epochs_seen", "warnings_total", "panels"}) EXPECT_EQ(a[k], b[k]) << k;
  };
  const std::string log = job_log(8);
  const size_t cut = log.rfind('\n', log.find("\"epoch\":6,")) + 1;
  const std::string line6 = log.substr(cut, log.find('\n', cut) + 1 - cut);
  const std::string nested = line6.substr(0, line6.size() - 2) + R"(,"extra":{"lr":0.1}})" + "\n";

  // A line cut after a nested object's '}' is not taken as whole.
  const std::string a = tptest::write_file(dir / "a.log", log.substr(0, cut) + nested.substr(0, nested.size() - 2));
  followed(a, 0.93);
  { std::ofstream(a, std::ios::app) << "}\n" << log.substr(cut + line6.size()); }
  same(followed(a, 0.93), whole(log.substr(0, cut) + nested + log.substr(cut + line6.size()), 0.93));

  // A whole line fed before its newline: the newline is no line of its own.
  const std::string b = tptest::write_file(dir / "b.log", log.substr(0, cut + line6.size() - 1));
  EXPECT_FALSE(followed(b, 0.93)["partial_line"]);
  { std::ofstream(b, std::ios::app) << "\n" << log.substr(cut + line6.size()); }
  same(followed(b, 0.93), whole(log, 0.93));

  // Restarted into the file with the same first lines (its first 256 bytes
  // alike), already past the old end: the bytes before where the reading
  // stopped differ.
  const std::string c = tptest::write_file(dir / "c.log", log.substr(0, cut));
  followed(c, 0.93);
  const size_t epoch4 = log.rfind('\n', log.find("\"epoch\":4,")) + 1;
  ASSERT_GE(epoch4, 256u);
  std::string rerun = log.substr(0, epoch4);
  for (int k = 4; k <= 12; ++k)
    rerun += fmt::format(R"({{"event":"epoch","epoch":{},"epoch_time_s":45,"metric":{:.5f},"metric_name":"accuracy"}})"
                         "\n",
                         k, 0.9 - 0.5 * std::exp(-0.3 * k));
  ASSERT_GT(rerun.size(), cut);
  tptest::write_file(dir / "c.log", rerun);
  const json r = followed(c, 0.93);
  EXPECT_TRUE(r["restarted"]) << r.dump().substr(0, 300);
  same(r, whole(rerun, 0.93));

  // Two options on one log keep a watch each.
  const std::string d = tptest::write_file(dir / "d.log", log);
  followed(d, 0.93);
  followed(d, 0.9);
  EXPECT_EQ(followed(d, 0.93)["bytes_read"], 0);
  EXPECT_EQ(followed(d, 0.9)["bytes_read"], 0);
}

// One request on a followed log at a time: another is told to come back
// (503) rather than hold a server thread while it waits.
TEST(WatchRequest, ASecondRequestOnALogBeingAnsweredIsToldToRetry) {
  auto dir = tptest::temp_dir("watch_turns");
  // Long enough that its first answer takes a while (every epoch refits the ensemble).
  const std::string path = tptest::write_file(dir / "long.log", job_log(1500));
  Running s(tpserver::with_paths());
  int first_status = 0, st = 0;
  json first;
  std::thread t([&] { first = s.post("/watch", json{{"log_path", path}, {"target", 0.99}}, &first_status); });
  // The first holds the log once it computes.
  ASSERT_TRUE(tpserver::wait_until([&] { return s.get("/health", &st).value("computing", 0) >= 1; }, 10));
  const json e = s.post("/watch", json{{"log_path", path}, {"target", 0.99}}, &st);
  t.join();
  EXPECT_EQ(st, 503) << e.dump();
  EXPECT_EQ(e.value("field", ""), "log_path");
  EXPECT_NE(e["error"].get<std::string>().find("retry"), std::string::npos) << e.dump();
  EXPECT_EQ(first_status, 200) << first.dump().substr(0, 300);
  EXPECT_EQ(first["epochs_seen"], 1500);
}

TEST(WatchRequest, BadFieldsAreNamed) {
  Running s;
  int st = 0;
  const std::string log = job_log(4);
  const std::vector<std::pair<json, std::string>> cases = {
      {json{{"log_text", log}}, "target"},
      {json{{"target", 0.9}}, "log_text"},
      {json{{"log_text", log}, {"log_path", "/tmp/x"}, {"target", 0.9}}, "log_text"},
      {json{{"log_text", 3}, {"target", 0.9}}, "log_text"},
      {json{{"log_text", log}, {"target", "high"}}, "target"},
      {json{{"log_text", log}, {"target", 0.9}, {"coverage", 2}}, "coverage"},
      {json{{"log_text", log}, {"target", 0.9}, {"method", "magic"}}, "method"},
      {json{{"log_text", log}, {"target", 0.9}, {"direction", "up"}}, "direction"},
      {json{{"log_text", log}, {"target", 0.9}, {"deadline_s", -5}}, "deadline_s"},
      {json{{"log_text", log}, {"target", 0.9}, {"tail", 5}}, "tail"},
  };
  for (const auto& [body, field] : cases) {
    json e = s.post("/watch", body, &st);
    EXPECT_EQ(st, 400) << body.dump().substr(0, 200) << " " << e.dump();
    EXPECT_EQ(e.value("field", ""), field) << e.dump();
  }
}

TEST(WatchRequest, ALogOnTheServerOnlyWhereAllowedAndWithinTheLimits) {
  auto dir = tptest::temp_dir("watch_request");
  std::filesystem::create_directories(dir / "allowed");
  const std::string inside = tptest::write_file(dir / "allowed" / "run.log", job_log(6));
  const std::string outside = tptest::write_file(dir / "run.log", job_log(6));
  int st = 0;
  {
    Running s;  // no --allow-paths
    json e = s.post("/watch", json{{"log_path", inside}, {"target", 0.9}}, &st);
    EXPECT_EQ(st, 403) << e.dump();
    EXPECT_NE(e["error"].get<std::string>().find("--allow-paths"), std::string::npos) << e.dump();
  }
  Limits l = tpserver::with_paths();
  l.allowed_root = (dir / "allowed").string();
  l.max_body_bytes = 4000;
  Running s(l);
  json a = s.post("/watch", json{{"log_path", inside}, {"target", 0.9}}, &st);
  EXPECT_EQ(st, 200) << a.dump();
  EXPECT_EQ(a["epochs_seen"], 6);
  EXPECT_EQ(a["source"], inside);
  ASSERT_TRUE(a["quiet_s"].is_number()) << a.dump();
  EXPECT_GE(a["quiet_s"].get<double>(), 0);
  EXPECT_FALSE(a["partial_line"]);
  // A last line being written (no newline, not a whole object) is read next time.
  const std::string growing = tptest::write_file(dir / "allowed" / "growing.log", job_log(6) + R"({"event":"epo)");
  a = s.post("/watch", json{{"log_path", growing}, {"target", 0.9}}, &st);
  EXPECT_EQ(st, 200) << a.dump();
  EXPECT_TRUE(a["partial_line"]);
  EXPECT_EQ(a["warnings_total"], 1);  // "starting" alone
  EXPECT_EQ(a["epochs_seen"], 6);
  json e = s.post("/watch", json{{"log_path", outside}, {"target", 0.9}}, &st);
  EXPECT_EQ(st, 403) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("reads logs from"), std::string::npos) << e.dump();
  e = s.post("/watch", json{{"log_path", (dir / "allowed").string()}, {"target", 0.9}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("not a regular file"), std::string::npos) << e.dump();
  e = s.post("/watch", json{{"log_path", (dir / "allowed" / "none.log").string()}, {"target", 0.9}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("no such file"), std::string::npos) << e.dump();
  const std::string big = tptest::write_file(dir / "allowed" / "big.log", job_log(60));
  e = s.post("/watch", json{{"log_path", big}, {"target", 0.9}}, &st);
  EXPECT_EQ(st, 413) << e.dump();
  EXPECT_EQ(e["field"], "log_path");
}

}  // namespace
