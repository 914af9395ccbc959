// trainplan serve: the JSON API (server/service.h) behind HTTP
// (server/http_server.h), called with httplib::Client on a free port.
#include <gtest/gtest.h>
#include <httplib.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/nodes.h"
#include "io/sample_csv.h"
#include "profile/sample_store.h"
#include "server/http_server.h"
#include "app/plan_request.h"
#include "app/predict.h"
#include "server/service.h"
#include "server/server_util.h"
#include "test_util.h"

namespace {

using nlohmann::json;
using namespace trainplan;
using namespace trainplan::app;

using tpserver::fixture_csv;
using tpserver::Running;
using tpserver::with_paths;

TEST(Server, HealthAndModels) {
  Running s;
  EXPECT_GT(s.port, 0);
  int st = 0;
  json h = s.get("/health", &st);
  EXPECT_EQ(st, 200);
  EXPECT_EQ(h["status"], "ok");
  EXPECT_FALSE(h["version"].get<std::string>().empty());
  EXPECT_EQ(h["computing"], 0);
  EXPECT_EQ(h["waiting"], 0);
  json m = s.get("/models", &st);
  ASSERT_EQ(st, 200);
  bool time_part = false, metric_part = false, isotonic = false;
  for (const auto& e : m["models"]) {
    for (const auto& p : e["parts"]) time_part |= p == "time", metric_part |= p == "metric";
    isotonic |= e["name"] == "isotonic-mi";
  }
  EXPECT_TRUE(time_part);
  EXPECT_TRUE(metric_part);
  EXPECT_TRUE(isotonic);
}

// /fit then /predict by id answers exactly what the library computes on a
// fresh fit (so the cached models of the id are the ones a fresh fit gives).
TEST(Server, FitThenPredictEqualsLibrary) {
  Running s;
  const std::string csv = fixture_csv();
  int st = 0;
  json f = s.post("/fit", json{{"samples_csv", csv}, {"model", "auto"}}, &st);
  ASSERT_EQ(st, 200) << f.dump();
  ASSERT_TRUE(f["id"].is_string());
  EXPECT_EQ(f["n_samples"], 48);
  EXPECT_TRUE(f["time_model"].is_string());
  EXPECT_TRUE(f["metric_model"].is_string());
  EXPECT_GE(f["in_sample_mre"]["time"].get<double>(), 0);
  EXPECT_LT(f["in_sample_mre"]["metric"].get<double>(), 0.2);

  app::PredictQuery q;
  q.batch = 48;
  q.workers = 4;
  q.epochs = 20;
  q.confidence = 0.8;
  json got = s.post("/predict", json{{"id", f["id"]}, {"batch", 48}, {"workers", 4}, {"epochs", 20}, {"confidence", 0.8}}, &st);
  ASSERT_EQ(st, 200) << got.dump();
  app::ModelSource fresh(io::parse_samples_csv(csv, "samples_csv"));
  json want = app::to_json(app::predict(fresh, q));
  EXPECT_EQ(got, json::parse(want.dump())) << got.dump(2) << "\nvs\n" << want.dump(2);
  EXPECT_EQ(got["epoch_time_s"]["model"], f["time_model"]);
  EXPECT_EQ(got["metric"]["model"], f["metric_model"]);
  double x = 20 * 528.0 / (400 + 192);
  EXPECT_NEAR(got["metric"]["value"].get<double>(), 0.95 - 0.6 / (1 + x / 4), 0.02);

  // With a target: the epochs to reach it, as the library gives them.
  json tg = s.post("/predict", json{{"id", f["id"]}, {"batch", 48}, {"workers", 4}, {"target", 0.8}, {"confidence", 0.8}},
                   &st);
  ASSERT_EQ(st, 200) << tg.dump();
  app::PredictQuery qt = q;
  qt.epochs = -1;
  qt.target = 0.8;
  app::ModelSource fresh_t(io::parse_samples_csv(csv, "samples_csv"));
  EXPECT_EQ(tg, json::parse(app::to_json(app::predict(fresh_t, qt)).dump()));
  EXPECT_TRUE(tg["to_target"]["epochs"]["value"].is_number()) << tg.dump();
  s.post("/predict", json{{"id", f["id"]}, {"batch", 48}, {"workers", 4}, {"target", 0.8}, {"max_epochs", 0}}, &st);
  EXPECT_EQ(st, 400);

  // Time only: no epochs, no metric.
  json t = s.post("/predict", json{{"id", f["id"]}, {"batch", 32}, {"workers", 2}}, &st);
  ASSERT_EQ(st, 200) << t.dump();
  EXPECT_TRUE(t["metric"].is_null());
  EXPECT_GT(t["epoch_time_s"]["value"].get<double>(), 0);

  // GET /fits lists the id.
  json l = s.get("/fits", &st);
  ASSERT_EQ(l["fits"].size(), 1u);
  EXPECT_EQ(l["fits"][0]["id"], f["id"]);
}

// Inline samples give what `trainplan predict --json` prints.
TEST(Server, PredictInlineEqualsCli) {
  Running s(with_paths());
  auto dir = tptest::temp_dir("server");
  const std::string path = tptest::write_file(dir / "s.csv", fixture_csv());
  auto cli = tptest::run_cli("predict --samples " + path +
                             " --batch 48 --workers 6 --epochs 12 --time-model isotonic-mi --metric-model global-batch --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  int st = 0;
  json got = s.post("/predict",
                    json{{"samples_path", path}, {"batch", 48}, {"workers", 6}, {"epochs", 12},
                         {"time_model", "isotonic-mi"}, {"metric_model", "global-batch"}},
                    &st);
  ASSERT_EQ(st, 200) << got.dump();
  EXPECT_EQ(got, json::parse(cli.out));
}

TEST(Server, PlanByIdEqualsLibraryAndInfeasibleIs422) {
  Running s;
  const std::string csv = fixture_csv();
  int st = 0;
  json f = s.post("/fit", json{{"samples_csv", csv}, {"time_model", "isotonic-mi"}, {"metric_model", "global-batch"}}, &st);
  ASSERT_EQ(st, 200) << f.dump();
  EXPECT_EQ(f["time_model"], "isotonic-mi");
  json got = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 8}}, &st);
  ASSERT_EQ(st, 200) << got.dump();
  app::ModelSource fresh(io::parse_samples_csv(csv, "samples_csv"));
  // The query the requests below make, as the library takes it.
  auto base_query = [] {
    app::PlanQuery q;
    q.target = 0.8;
    q.deadline = 3000;
    q.max_workers = 8;
    q.time_model = "isotonic-mi";
    q.metric_model = "global-batch";
    return q;
  };
  app::PlanQuery q = base_query();
  json want = app::to_json(app::make_plan(fresh, q), "samples_csv");
  EXPECT_EQ(got, json::parse(want.dump())) << got.dump(2) << "\nvs\n" << want.dump(2);
  EXPECT_GE(got["choice"]["metric"].get<double>(), 0.8);
  EXPECT_LE(got["choice"]["total_time_s"].get<double>(), 3000);
  // Without max_workers the space reaches the largest worker count in the samples.
  int most = 0;
  for (const auto& x : fresh.samples().samples) most = std::max(most, x.workers);
  json dflt = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}}, &st);
  ASSERT_EQ(st, 200) << dflt.dump();
  EXPECT_EQ(dflt["space"]["max_workers"], most);
  // A deadline reads as on the command line: "50m" is 3000 seconds; a bad one names the field.
  json worded = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", "50m"}, {"max_workers", 8}}, &st);
  ASSERT_EQ(st, 200) << worded.dump();
  EXPECT_EQ(worded, got);
  json unworded = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", "50 minutes"}}, &st);
  EXPECT_EQ(st, 400) << unworded.dump();
  EXPECT_EQ(unworded["field"], "deadline");

  json bad = s.post("/plan", json{{"id", f["id"]}, {"target", 0.99}, {"deadline", 1}, {"max_workers", 8}}, &st);
  EXPECT_EQ(st, 422) << bad.dump();
  EXPECT_TRUE(bad["error"].is_string());
  // The failing constraint in figures: a reachable target with too short a deadline fails on the
  // deadline, the closest run is the soonest to reach the target, and that run's time as the
  // deadline makes the plan feasible.
  json late = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 1}, {"max_workers", 8}}, &st);
  ASSERT_EQ(st, 422) << late.dump();
  ASSERT_EQ(late["failing"], "deadline") << late.dump();
  EXPECT_EQ(late["shortfall"]["limit"], 1.0);
  EXPECT_EQ(late["shortfall"]["unit"], "s");
  const double soonest = late["shortfall"]["closest"].get<double>();
  EXPECT_GT(soonest, 1.0);
  EXPECT_DOUBLE_EQ(late["closest"]["total_time_s"].get<double>(), soonest);
  EXPECT_DOUBLE_EQ(late["shortfall"]["over"].get<double>(), soonest - 1);
  EXPECT_GE(late["closest"]["metric"].get<double>(), 0.8);
  EXPECT_LE(late["closest"]["workers"].get<int>(), 8);
  json just = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", soonest * (1 + 1e-9)}, {"max_workers", 8}},
                     &st);
  ASSERT_EQ(st, 200) << just.dump();
  EXPECT_LE(just["choice"]["total_time_s"].get<double>(), soonest * (1 + 1e-9));
  json sooner = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", soonest * (1 - 1e-9)}, {"max_workers", 8}},
                       &st);
  EXPECT_EQ(st, 422) << sooner.dump();  // the least time, not any time that meets the target

  // Early stopping and one-sided bounds through the API equal the library's answer too.
  json es = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 8},
                                 {"confidence", 0.9}, {"bounds", "one-sided"}, {"early_stop", true}},
                   &st);
  ASSERT_EQ(st, 200) << es.dump();
  q.confidence = 0.9;
  q.bounds = uncertainty::ConfidenceBounds::kOneSided;
  q.early_stop = true;
  app::ModelSource fresh2(io::parse_samples_csv(csv, "samples_csv"));
  json want_es = app::to_json(app::make_plan(fresh2, q), "samples_csv");
  EXPECT_EQ(es, json::parse(want_es.dump())) << es.dump(2) << "\nvs\n" << want_es.dump(2);
  EXPECT_EQ(es["method"], "coconfig-early-stop");
  EXPECT_EQ(es["early_stop"]["budget_epochs"], es["choice"]["epochs"]);
  EXPECT_EQ(es["early_stop"]["budget_rule"], "deadline");
  json es_target = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 8},
                                        {"confidence", 0.9}, {"bounds", "one-sided"}, {"early_stop", true},
                                        {"early_stop_budget", "target"}},
                          &st);
  ASSERT_EQ(st, 200) << es_target.dump();
  EXPECT_EQ(es_target["early_stop"]["budget_rule"], "target");
  EXPECT_LE(es_target["choice"]["epochs"].get<int>(), es["choice"]["epochs"].get<int>());
  s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 8},
                       {"early_stop", true}, {"early_stop_budget", "forever"}},
         &st);
  EXPECT_EQ(st, 400);
  // The frontier through the API, as the library gives it.
  json fr = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 8},
                                 {"frontier", true}},
                   &st);
  ASSERT_EQ(st, 200) << fr.dump();
  app::PlanQuery qf = base_query();
  qf.frontier = true;
  app::ModelSource fresh3(io::parse_samples_csv(csv, "samples_csv"));
  json want_fr = app::to_json(app::make_plan(fresh3, qf), "samples_csv");
  EXPECT_EQ(fr, json::parse(want_fr.dump()));
  EXPECT_FALSE(fr["frontier"].empty());
  EXPECT_FALSE(got.contains("frontier"));
  json wrong = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 8},
                                    {"bounds", "sideways"}},
                      &st);
  EXPECT_EQ(st, 400) << wrong.dump();
}

TEST(Server, Errors) {
  Running s(with_paths());
  int st = 0;
  // Malformed CSV: line 4 (the third row) has a non-number epoch time.
  std::string csv = "batch,workers,epochs,epoch_time_s,metric\n16,1,2,10.5,0.5\n32,1,2,6.1,0.6\n64,1,2,oops,0.7\n";
  json e = s.post("/fit", json{{"samples_csv", csv}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["file"], "samples_csv");
  EXPECT_EQ(e["line"], 4);
  EXPECT_EQ(e["field"], "samples_csv");  // the request field that carried the CSV
  EXPECT_EQ(e["column"], "epoch_time_s");
  // A batch column of 0 is the CSV's, not the request's batch.
  e = s.post("/predict",
             json{{"samples_csv", "batch,workers,epochs,epoch_time_s,metric\n0,1,2,10.5,0.5\n"}, {"batch", 16},
                  {"workers", 1}},
             &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "samples_csv") << e.dump();
  EXPECT_EQ(e["column"], "batch") << e.dump();
  // A calibration of null is none.
  e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 64},
                               {"calibrate", nullptr}},
             &st);
  EXPECT_EQ(st, 200) << e.dump();
  e = s.post("/predict", json{{"samples_csv", csv}, {"batch", 16}, {"workers", 1}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["line"], 4);

  e = s.post("/predict", json{{"id", "fit-999"}, {"batch", 16}, {"workers", 1}}, &st);
  EXPECT_EQ(st, 404) << e.dump();
  EXPECT_EQ(e["field"], "id");
  e = s.post("/plan", json{{"id", "nope"}, {"target", 0.5}, {"deadline", 10}, {"max_workers", 2}}, &st);
  EXPECT_EQ(st, 404) << e.dump();

  e = s.post("/predict", std::string("{\"batch\": 16,"), &st);  // truncated JSON
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("bad JSON"), std::string::npos);
  e = s.post("/predict", json{{"samples_csv", fixture_csv()}, {"workers", 1}}, &st);  // no batch
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "batch");
  e = s.post("/predict", json{{"samples_csv", fixture_csv()}, {"batch", "big"}, {"workers", 1}}, &st);
  EXPECT_EQ(st, 400);
  EXPECT_EQ(e["field"], "batch");
  e = s.post("/predict", json{{"samples_csv", fixture_csv()}, {"batch", 16}, {"workers", 1}, {"max-workers", 2}}, &st);
  EXPECT_EQ(st, 400);
  EXPECT_EQ(e["field"], "max-workers");
  e = s.post("/predict", json{{"batch", 16}, {"workers", 1}}, &st);  // no samples, no id
  EXPECT_EQ(st, 400);
  e = s.post("/fit", json{{"samples_path", "/nonexistent/s.csv"}}, &st);
  EXPECT_EQ(st, 400);
  EXPECT_EQ(e["file"], "/nonexistent/s.csv");
  e = s.post("/predict", json{{"samples_csv", fixture_csv()}, {"batch", 16}, {"workers", 1}, {"model", "no-such-model"}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("no-such-model"), std::string::npos);
  EXPECT_EQ(e["field"], "model");  // the field that held it
  e = s.post("/fit", json{{"samples_csv", fixture_csv()}, {"time_model", "nope"}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "time_model");
  e = s.post("/curves", json{{"samples_csv", fixture_csv()}, {"evaluate", {"nope"}}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "evaluate");
  // Values no configuration has: 400 naming the field.
  e = s.post("/predict", json{{"samples_csv", fixture_csv()}, {"batch", 16}, {"workers", 2}, {"nodes", 5}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "nodes");
  e = s.post("/predict", json{{"samples_csv", fixture_csv()}, {"batch", 1e20}, {"workers", 1}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "batch");
  // An answer's reasons name fields, not the CLI's options.
  json packed = s.post("/predict", json{{"samples_csv", fixture_csv()}, {"batch", 16}, {"workers", 8}}, &st);
  EXPECT_EQ(st, 200) << packed.dump();
  EXPECT_EQ(packed["config"]["nodes_from"].get<std::string>().find("--"), std::string::npos) << packed.dump();

  e = s.get("/predict", &st);
  EXPECT_EQ(st, 405);
  e = s.get("/nowhere", &st);
  EXPECT_EQ(st, 404);
  // Still serving after all that.
  EXPECT_EQ(s.get("/health", &st)["status"], "ok");
  EXPECT_EQ(st, 200);
}

// Parallel requests on one id (its models fitted lazily under its lock) all agree.
TEST(Server, ConcurrentPredictsAgree) {
  Running s;
  int st = 0;
  json f = s.post("/fit", json{{"samples_csv", fixture_csv()}, {"time_model", "allreduce-physical"},
                               {"metric_model", "global-batch"}}, &st);
  ASSERT_EQ(st, 200) << f.dump();
  json req = {{"id", f["id"]}, {"batch", 24}, {"workers", 3}, {"epochs", 7}, {"folds", 4}};
  std::vector<json> out(6);
  std::vector<int> status(6);
  std::vector<std::thread> ts;
  for (int i = 0; i < 6; ++i) ts.emplace_back([&, i] { out[i] = s.post("/predict", req, &status[i]); });
  for (auto& t : ts) t.join();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(status[i], 200) << out[i].dump();
    EXPECT_EQ(out[i], out[0]);
  }
}

// A port in use is refused, not shared (httplib's default sets SO_REUSEPORT).
TEST(Server, PortInUseIsRefused) {
  Running s;
  server::Service other;
  server::HttpServer second(other);
  EXPECT_THROW(second.bind("127.0.0.1", s.port), std::runtime_error);
}

// The verb: prints its address, serves, and exits 0 on SIGTERM.
TEST(ServeCli, ListensAndStopsOnSigterm) {
  auto p = tpserver::spawn_serve();
  ASSERT_GT(p.port, 0) << "no address printed: " << p.err();
  httplib::Client c("127.0.0.1", p.port);
  auto r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["status"], "ok");
  kill(p.pid, SIGTERM);
  int status = 0;
  waitpid(p.pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace

TEST(Server, SamplesPathTakesAProfileStoreAsTheCliDoes) {
  // A store written by `trainplan profile`: /fit reads its ok trials, as
  // `trainplan fit --samples store.db` does, not as CSV text.
  auto dir = tptest::temp_dir("server_store");
  const std::string store = (dir / "trials.db").string();
  {
    trainplan::profile::SampleStore s(store);
    for (int b : {16, 32, 64})
      for (int r : {1, 2}) {
        trainplan::profile::TrialRecord rec;
        rec.key = {b, r, 2};
        rec.epoch_time_s = 100.0 / (b * r) + 0.5;
        rec.metric = 0.9 - 0.001 * b * r;
        rec.metric_name = "accuracy";
        rec.epochs_reported = 2;
        rec.wall_s = 10;
        rec.started_at = "2026-01-01T00:00:00Z";
        rec.finished_at = "2026-01-01T00:00:10Z";
        rec.command = "train";
        s.put(rec);
      }
  }
  Running s(with_paths());
  int st = 0;
  json f = s.post("/fit", json{{"samples_path", store}, {"time_model", "isotonic-mi"}, {"metric_model", "global-batch"}},
                  &st);
  ASSERT_EQ(st, 200) << f.dump();
  EXPECT_EQ(f["n_samples"], 6) << f.dump();
}

// Found by fuzzing Service::handle (fuzz/targets/server_request.cpp): a number
// past double's range in a body is nlohmann's out_of_range, not parse_error,
// and was answered 500 "internal error" instead of 400.
TEST(Server, NumberPastDoubleRangeInABodyIs400) {
  trainplan::server::Service svc;
  for (const char* path : {"/fit", "/predict", "/plan"}) {
    auto r = svc.handle("POST", path, R"({"id": "fit-1", "target": 0.7, "deadline": 1e400})");
    EXPECT_EQ(r.status, 400) << path << ": " << r.body.dump();
    EXPECT_NE(r.body["error"].get<std::string>().find("bad JSON"), std::string::npos) << r.body.dump();
  }
}

// nlohmann keeps the last of two values under one key: a body that set the deadline twice ran on
// one of them without a word.
TEST(Server, AFieldGivenTwiceIs400NamingIt) {
  trainplan::server::Service svc;
  auto r = svc.handle("POST", "/plan", R"({"id": "fit-1", "target": 0.7, "deadline": 10, "deadline": 1000})");
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_EQ(r.body["field"], "deadline") << r.body.dump();
  EXPECT_NE(r.body["error"].get<std::string>().find("twice"), std::string::npos) << r.body.dump();
}

// Found by fuzzing Service::handle: /predict with workers = INT_MAX made the
// time models' node count, (workers + gpus_per_node - 1) / gpus_per_node,
// overflow int (undefined behaviour; UBSan stopped the process).
TEST(Server, PredictAtIntMaxWorkersDoesNotOverflow) {
  trainplan::server::Service svc;
  const json fit = {{"samples_csv", fixture_csv()}, {"model", "allreduce-local"}, {"metric_model", "global-batch"}};
  auto f = svc.handle("POST", "/fit", fit.dump());
  ASSERT_EQ(f.status, 200) << f.body.dump();
  const json q = {{"id", f.body["id"]}, {"batch", 32}, {"workers", 2147483647}, {"epochs", 3}};
  auto r = svc.handle("POST", "/predict", q.dump());
  EXPECT_TRUE(r.status == 200 || r.status == 400 || r.status == 422) << r.status << ": " << r.body.dump();
  EXPECT_EQ(trainplan::nodes_for(2147483647, 4), 536870912);
  EXPECT_EQ(trainplan::nodes_for(9, 4), 3);
  EXPECT_EQ(trainplan::nodes_for(8, 4), 2);
}

// Found by fuzzing Service::handle: a batch of 2^31 beside a metric of 1e308
// made global-batch's isotonic link NaN, and centering it looped forever
// (models/metric_global_batch.cpp, centered()), past the request's time limit.
TEST(Server, FitOnExtremeSamplesEnds) {
  trainplan::server::Service svc;
  const std::string csv =
      "# trainplan: metric=max dataset_size=50000\nbatch,workers,epochs,epoch_time_s,metric\n"
      "2147483648,1,2,50,0.5\n16,2,2,26,0.5\n32,1,2,30,1e308\n32,2,2,16,0.55\n64,1,4,20,0.7\n64,2,4,11,0.7\n"
      "16,1,8,50,0.8\n32,2,8,16,0.82\n";
  const json fit = {{"samples_csv", csv}, {"model", "allreduce-local"}, {"metric_model", "global-batch"}};
  auto r = svc.handle("POST", "/fit", fit.dump());
  EXPECT_NE(r.status, 500) << r.body.dump();
  EXPECT_NE(r.status, 503) << r.body.dump();  // not the time limit either
}

namespace {

// POST /transfer answers what `trainplan transfer --samples --json` prints (one
// function builds both), with the moved samples as CSV text that /fit takes;
// catalog names only, and bad input names its field.
TEST(Server, TransferEqualsCliAndItsSamplesFit) {
  Running s;
  auto dir = tptest::temp_dir("server-transfer");
  const std::string csv = tpserver::many_rows_csv(64);
  const std::string path = tptest::write_file(dir / "t4.csv", csv), out = (dir / "a100.csv").string();
  auto cli = tptest::run_cli("transfer --samples " + path + " --from-gpu t4 --to-gpu a100-40gb --json -o " + out);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  int st = 0;
  json got = s.post("/transfer", json{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "a100-40gb"}}, &st);
  ASSERT_EQ(st, 200) << got.dump();
  EXPECT_EQ(got["samples"], "samples_csv");
  json want = json::parse(cli.out);
  for (const char* k : {"from_gpu", "to_gpu", "network", "target_trials", "ratios", "times_predicted_log_sd",
                        "configurations", "notes"})
    EXPECT_EQ(got[k], want[k]) << k;
  EXPECT_EQ(io::parse_samples_csv(got["samples_csv"].get<std::string>(), "a").size(), io::read_samples_csv(out).size());
  EXPECT_EQ(got["samples_csv"].get<std::string>(), tptest::read_file(out));
  json fit = s.post("/fit", json{{"samples_csv", got["samples_csv"]}, {"time_model", "allreduce-local"}, {"metric_model", "global-batch"}}, &st);
  EXPECT_EQ(st, 200) << fit.dump();
  EXPECT_EQ(fit["times_predicted_from"], "t4");
  // Through the moved samples' text, which keeps six significant digits.
  EXPECT_NEAR(fit["times_predicted_log_sd"].get<double>(), want["times_predicted_log_sd"].get<double>(), 1e-6);
  // A plan on them says its times were predicted, and with what error (the page shows it).
  json plan = s.post("/plan", json{{"id", fit["id"]}, {"target", 0.5}, {"deadline", "100h"}}, &st);
  ASSERT_EQ(st, 200) << plan.dump();
  EXPECT_EQ(plan["times_predicted_from"], "t4");
  EXPECT_NEAR(plan["times_predicted_log_sd"].get<double>(), want["times_predicted_log_sd"].get<double>(), 1e-6);

  // Trials measured on the target move the prediction toward them.
  const std::string trials = "# trainplan: metric=max dataset_size=50000\nbatch,workers,epochs,epoch_time_s,metric\n16,1,1,100,\n";
  json with = s.post("/transfer", json{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "a100-40gb"},
                                       {"trials_csv", trials}},
                     &st);
  ASSERT_EQ(st, 200) << with.dump();
  EXPECT_EQ(with["target_trials"], 1);
  // A dataset size given is the trials' too, as transfer --dataset-size makes it; trials without one take the
  // samples' (the same job): the server and the command agree on both.
  const std::string trials_path = tptest::write_file(dir / "trials.csv", trials);
  const std::string sized = tptest::write_file(dir / "sized.csv", csv);
  auto cli_sized = tptest::run_cli("transfer --samples " + sized + " --from-gpu t4 --to-gpu a100-40gb --trials " +
                                   trials_path + " --dataset-size 40000 --json");
  ASSERT_EQ(cli_sized.exit_code, 0) << cli_sized.err;
  json server_sized = s.post("/transfer", json{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "a100-40gb"},
                                               {"trials_csv", trials}, {"dataset_size", 40000}},
                             &st);
  ASSERT_EQ(st, 200) << server_sized.dump();
  EXPECT_EQ(server_sized["configurations"], json::parse(cli_sized.out)["configurations"]);
  const std::string unsized = "batch,workers,epochs,epoch_time_s,metric\n16,1,1,100,\n";
  auto cli_unsized = tptest::run_cli("transfer --samples " + path + " --from-gpu t4 --to-gpu a100-40gb --trials " +
                                     tptest::write_file(dir / "unsized.csv", unsized) + " --json");
  ASSERT_EQ(cli_unsized.exit_code, 0) << cli_unsized.err;
  json server_unsized = s.post("/transfer", json{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "a100-40gb"},
                                                 {"trials_csv", unsized}},
                               &st);
  ASSERT_EQ(st, 200) << server_unsized.dump();
  EXPECT_EQ(server_unsized["configurations"], json::parse(cli_unsized.out)["configurations"]);

  // The training's precision and TF32, as transfer's --precision and --tf32 say them.
  auto said = tptest::run_cli("transfer --samples " + path + " --from-gpu t4 --to-gpu a100-40gb --precision mixed --tf32 --json");
  ASSERT_EQ(said.exit_code, 0) << said.err;
  json mixed = s.post("/transfer", json{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "a100-40gb"},
                                        {"precision", "mixed"}, {"tf32", true}},
                      &st);
  ASSERT_EQ(st, 200) << mixed.dump();
  EXPECT_EQ(mixed["ratios"], json::parse(said.out)["ratios"]);
  EXPECT_EQ(mixed["ratios"]["precision_reason"], "as the user gave it");
  // Profiled in fp32, trained in mixed precision there: as --target-precision says it.
  auto moved = tptest::run_cli("transfer --samples " + path +
                               " --from-gpu t4 --to-gpu a100-40gb --precision fp32 --target-precision mixed --json");
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  json to_mixed = s.post("/transfer", json{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "a100-40gb"},
                                           {"precision", "fp32"}, {"target_precision", "mixed"}},
                         &st);
  ASSERT_EQ(st, 200) << to_mixed.dump();
  EXPECT_EQ(to_mixed["ratios"], json::parse(moved.out)["ratios"]);
  EXPECT_EQ(to_mixed["ratios"]["target_precision"], "mixed");

  struct Bad {
    json body;
    std::string field;
  };
  for (const auto& b : {Bad{{{"samples_csv", csv}, {"from_gpu", "t4"}}, "to_gpu"},
                        Bad{{{"samples_csv", csv}, {"from_gpu", "/etc/passwd"}, {"to_gpu", "h100"}}, "from_gpu"},
                        Bad{{{"from_gpu", "t4"}, {"to_gpu", "h100"}}, "samples_csv"},
                        Bad{{{"id", "fit-1"}, {"from_gpu", "t4"}, {"to_gpu", "h100"}}, "id"},
                        Bad{{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "h100"}, {"network", "nonet"}}, "network"},
                        Bad{{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "h100"}, {"dataset_size", 0}}, "dataset_size"},
                        Bad{{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "h100"}, {"colour", 1}}, "colour"},
                        Bad{{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "h100"}, {"precision", "half"}}, "precision"},
                        Bad{{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "h100"}, {"target_precision", "fp8"}},
                            "target_precision"},
                        Bad{{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "h100"}, {"tf32", "yes"}}, "tf32"}}) {
    json e = s.post("/transfer", b.body, &st);
    EXPECT_EQ(st, 400) << b.body.dump() << " -> " << e.dump();
    EXPECT_EQ(e["field"], b.field) << e.dump();
  }
  json e = s.post("/transfer", json{{"samples_csv", csv}, {"from_gpu", "t4"}, {"to_gpu", "h100"},
                                    {"trials_csv", "batch,workers\n1,x\n"}},
                  &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["file"], "trials_csv") << e.dump();
}

// POST /plan with "gpus" answers what `trainplan plan --gpu --json` prints:
// each GPU's plan, the measured one as it is, the others on moved samples.
TEST(Server, PlanOnSeveralGpusEqualsCli) {
  Running s;
  const std::string path = tptest::source_dir() + "/examples/h200/lenet-mnist-samples.csv";
  auto cli = tptest::run_cli("plan --samples " + path + " --from-gpu h200 --gpu h200,l4 --price h200=3.5,l4=0.8 "
                             "--target 0.97 --deadline 600 --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const json want = json::parse(cli.out);
  int st = 0;
  json fit = s.post("/fit", json{{"samples_csv", tptest::read_file(path)}}, &st);
  ASSERT_EQ(st, 200) << fit.dump();
  const json ask = {{"id", fit["id"]}, {"target", 0.97}, {"deadline", 600}, {"from_gpu", "h200"},
                    {"gpus", {"h200", "l4"}}, {"prices", {{"h200", 3.5}, {"l4", 0.8}}}};
  json got = s.post("/plan", ask, &st);
  ASSERT_EQ(st, 200) << got.dump();
  ASSERT_EQ(got["gpus"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(got["gpus"][i]["gpu"], want["gpus"][i]["gpu"]);
    EXPECT_EQ(got["gpus"][i]["plan"]["choice"], want["gpus"][i]["plan"]["choice"]) << i;
    EXPECT_EQ(got["gpus"][i]["cost"], want["gpus"][i]["cost"]) << i;
  }
  EXPECT_EQ(got["cheapest"], want["cheapest"]);
  EXPECT_EQ(got["fastest"], want["fastest"]);
  // The frontier over every GPU, as plan --gpu --frontier gives it.
  auto cli_front = tptest::run_cli("plan --samples " + path +
                                   " --from-gpu h200 --gpu h200,l4 --price h200=3.5,l4=0.8 --target 0.97 --deadline 600 "
                                   "--frontier --json");
  ASSERT_EQ(cli_front.exit_code, 0) << cli_front.err;
  json with_frontier = ask;
  with_frontier["frontier"] = true;
  json got_front = s.post("/plan", with_frontier, &st);
  ASSERT_EQ(st, 200) << got_front.dump();
  const json want_front = json::parse(cli_front.out);
  ASSERT_FALSE(want_front["frontier"].empty());
  ASSERT_EQ(got_front["frontier"].size(), want_front["frontier"].size());
  for (size_t i = 0; i < want_front["frontier"].size(); ++i) {
    EXPECT_EQ(got_front["frontier"][i]["gpu"], want_front["frontier"][i]["gpu"]) << i;
    EXPECT_NEAR(got_front["frontier"][i]["cost"].get<double>(), want_front["frontier"][i]["cost"].get<double>(), 1e-9) << i;
  }
  // Trials timed on the L4 correct its move, as plan --gpu --trials does.
  const std::string timed = "# trainplan: metric=max dataset_size=60000\nbatch,workers,epochs,epoch_time_s,metric\n64,1,1,2.6,\n";
  auto dir = tptest::temp_dir("server-plan-gpus");
  const std::string timed_path = tptest::write_file(dir / "l4.csv", timed);
  auto cli_timed = tptest::run_cli("plan --samples " + path + " --from-gpu h200 --gpu h200,l4 --trials l4=" + timed_path +
                                   " --target 0.97 --deadline 600 --json");
  ASSERT_EQ(cli_timed.exit_code, 0) << cli_timed.err;
  json with_trials = ask;
  with_trials.erase("prices");
  with_trials["trials"] = {{"l4", timed}};
  json got_timed = s.post("/plan", with_trials, &st);
  ASSERT_EQ(st, 200) << got_timed.dump();
  EXPECT_EQ(got_timed["gpus"][1]["trials"], 1);
  EXPECT_EQ(got_timed["gpus"][1]["plan"]["choice"], json::parse(cli_timed.out)["gpus"][1]["plan"]["choice"]);

  struct Bad {
    json change;
    std::string field;
  };
  for (const auto& b : {Bad{{{"from_gpu", nullptr}}, "from_gpu"}, Bad{{{"gpus", "l4"}}, "gpus"},
                        Bad{{{"gpus", {"l4", "nosuchgpu"}}}, "gpus"}, Bad{{{"gpus", {"l4", "l4"}}}, "gpus"},
                        Bad{{{"prices", {{"h200", 3.5}}}}, "prices"}, Bad{{{"prices", {{"h200", -1}, {"l4", 1}}}}, "prices"},
                        Bad{{{"prices", {{"h200", 1e10}, {"l4", 1}}}}, "prices"},
                        Bad{{{"emit", "slurm"}}, "emit"}, Bad{{{"trials", {{"t4", timed}}}}, "trials"},
                        Bad{{{"trials", "x"}}, "trials"}, Bad{{{"trials", {{"l4", timed}, {"L4", timed}}}}, "trials"},
                        Bad{{{"trials", {{"l4", "batch,workers\n1,x\n"}}}}, "trials"},
                        Bad{{{"prices", {{"h200", 1}, {"l4", 1}, {"L4", 2}}}}, "prices"},
                        Bad{{{"precision", "fp16"}}, "precision"}}) {
    json body = ask;
    for (const auto& [k, v] : b.change.items()) body[k] = v;
    json e = s.post("/plan", body, &st);
    EXPECT_EQ(st, 400) << body.dump() << " -> " << e.dump();
    EXPECT_EQ(e["field"], b.field) << e.dump();
  }
  // The training's precision, as plan --gpu --precision says it; refused without 'gpus'.
  auto cli_mixed = tptest::run_cli("plan --samples " + path + " --from-gpu h200 --gpu h200,l4 --price h200=3.5,l4=0.8 "
                                   "--target 0.97 --deadline 600 --precision mixed --json");
  ASSERT_EQ(cli_mixed.exit_code, 0) << cli_mixed.err;
  json mixed = ask;
  mixed["precision"] = "mixed";
  json got_mixed = s.post("/plan", mixed, &st);
  ASSERT_EQ(st, 200) << got_mixed.dump();
  EXPECT_EQ(got_mixed["gpus"][1]["plan"]["choice"], json::parse(cli_mixed.out)["gpus"][1]["plan"]["choice"]);
  json alone = {{"id", fit["id"]}, {"target", 0.97}, {"deadline", 600}, {"precision", "fp32"}};
  json refused = s.post("/plan", alone, &st);
  EXPECT_EQ(st, 400) << refused.dump();
  EXPECT_EQ(refused["field"], "precision") << refused.dump();
  // No GPU with a plan: 422, each GPU's reason in the answer.
  json far = ask;
  far["target"] = 0.9999;
  json none = s.post("/plan", far, &st);
  EXPECT_EQ(st, 422) << none.dump();
  ASSERT_TRUE(none.contains("plan")) << none.dump();
  for (const auto& g : none["plan"]["gpus"]) EXPECT_TRUE(g.contains("infeasible")) << g.dump();
  json plain = ask;
  plain.erase("gpus");
  json e = s.post("/plan", plain, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "from_gpu") << e.dump();
}

}  // namespace

// A request on an id naming one part of the model keeps the id's other part,
// as the id keeps the model names given to /fit unless the request names its own.
TEST(Server, NamingOneModelPartOnAnIdKeepsTheOther) {
  Running s;
  int st = 0;
  json fit = s.post("/fit", json{{"samples_csv", tpserver::many_rows_csv(64)}, {"time_model", "allreduce-local"},
                                 {"metric_model", "global-batch"}},
                    &st);
  ASSERT_EQ(st, 200) << fit.dump();
  json p = s.post("/predict", json{{"id", fit["id"]}, {"batch", 32}, {"workers", 2}, {"epochs", 3},
                                   {"time_model", "isotonic-mi"}},
                  &st);
  ASSERT_EQ(st, 200) << p.dump();
  EXPECT_EQ(p["epoch_time_s"]["model"], "isotonic-mi");
  EXPECT_EQ(p["metric"]["model"], "global-batch");
  json m = s.post("/predict", json{{"id", fit["id"]}, {"batch", 32}, {"workers", 2}, {"epochs", 3},
                                   {"metric_model", "isotonic-mi"}},
                  &st);
  ASSERT_EQ(st, 200) << m.dump();
  EXPECT_EQ(m["epoch_time_s"]["model"], "allreduce-local");
  EXPECT_EQ(m["metric"]["model"], "isotonic-mi");
}

// /plan answers in the API's terms: the packing's reasons name fields, not
// the CLI's options; with 'gpus', samples without a dataset size are given
// one by 'dataset_size', as plan --gpu --dataset-size gives it.
TEST(Server, PlanNamesFieldsAndTakesADatasetSizeForGpus) {
  Running s;
  int st = 0;
  std::string csv = tpserver::many_rows_csv(64);
  csv = csv.substr(csv.find('\n') + 1);  // no format line: no dataset size
  const json ask = {{"samples_csv", csv}, {"target", 0.5}, {"deadline", "100h"}, {"max_workers", 4}};
  json plain = s.post("/plan", ask, &st);
  ASSERT_EQ(st, 200) << plain.dump();
  EXPECT_EQ(plain.dump().find("--"), std::string::npos) << plain.dump();
  json gpus = ask;
  gpus["gpus"] = {"t4", "a100-40gb"};
  gpus["from_gpu"] = "t4";
  json none = s.post("/plan", gpus, &st);
  EXPECT_EQ(st, 400) << none.dump();
  EXPECT_NE(none["error"].get<std::string>().find("dataset_size"), std::string::npos) << none.dump();
  gpus["dataset_size"] = 50000;
  json sized = s.post("/plan", gpus, &st);
  EXPECT_EQ(st, 200) << sized.dump();
  EXPECT_EQ(sized.dump().find("(--"), std::string::npos) << sized.dump();
  json misplaced = ask;
  misplaced["dataset_size"] = 50000;
  s.post("/plan", misplaced, &st);
  EXPECT_EQ(st, 400);
}
