// The page trainplan serve answers at / (server/web_assets.h) and POST
// /curves (app/curves.h), the samples view's data.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "app/curves.h"
#include "app/llm_measured_rows.h"
#include "io/sample_csv.h"
#include "server/request_fields.h"
#include "server/web_assets.h"
#include "server_util.h"

namespace {

using namespace tpserver;
using namespace trainplan;

// The page and its files are served from the binary with their types; the
// page names only files the server has, so it needs no network.
TEST(Web, ServesThePageAndItsFiles) {
  Running s;
  httplib::Client c("127.0.0.1", s.port);
  auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  EXPECT_NE(page->body.find("id=\"plan-form\""), std::string::npos);
  for (const char* ref : {"/web/app.js", "/web/app.css", "/web/uPlot.iife.min.js", "/web/uPlot.min.css"}) {
    EXPECT_NE(page->body.find(std::string("\"") + ref + "\""), std::string::npos) << ref;
    auto r = c.Get(ref);
    ASSERT_TRUE(r) << ref;
    EXPECT_EQ(r->status, 200) << ref;
    EXPECT_GT(r->body.size(), 100u) << ref;
    const std::string type = r->get_header_value("Content-Type");
    EXPECT_EQ(type.substr(0, type.find(';')), std::string(ref).ends_with(".js") ? "text/javascript" : "text/css") << ref;
  }
  EXPECT_EQ(page->body, c.Get("/web/index.html")->body);
  // Nothing loaded from elsewhere.
  EXPECT_EQ(page->body.find("http://"), std::string::npos);
  EXPECT_EQ(page->body.find("https://"), std::string::npos);
  // The embedded uPlot is the vendored file, byte for byte.
  EXPECT_EQ(c.Get("/web/uPlot.iife.min.js")->body,
            tptest::read_file(tptest::source_dir() + "/third_party/uplot/uPlot.iife.min.js"));

  // Other paths stay the JSON API's.
  auto missing = c.Get("/web/nothing.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_TRUE(json::parse(missing->body).contains("error"));
  auto post = c.Post("/", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 404);
  int st = 0;
  EXPECT_EQ(s.get("/health", &st)["status"], "ok");
}

// /curves by id: the measured points, a curve per batch and per run with its
// band, the candidates' scores as `trainplan evaluate --json` gives them,
// and the same answer as the library on a fresh fit.
TEST(Web, CurvesByIdEqualLibrary) {
  Running s;
  const std::string csv = fixture_csv();
  int st = 0;
  json f = s.post("/fit", json{{"samples_csv", csv}, {"time_model", "isotonic-mi"}, {"metric_model", "global-batch"}}, &st);
  ASSERT_EQ(st, 200) << f.dump();
  json got = s.post("/curves", json{{"id", f["id"]}, {"evaluate", {"isotonic-mi", "global-batch"}}, {"curves", 3}}, &st);
  ASSERT_EQ(st, 200) << got.dump();
  EXPECT_EQ(got["time_model"], "isotonic-mi");
  EXPECT_EQ(got["metric_model"], "global-batch");
  EXPECT_EQ(got["time"]["points"].size(), 48u);
  EXPECT_EQ(got["metric"]["points"].size(), 48u);
  ASSERT_EQ(got["time"]["curves"].size(), 3u);
  const json& c0 = got["time"]["curves"][0];
  EXPECT_EQ(c0["batch"], 16);
  ASSERT_EQ(c0["workers"].size(), 8u);  // 1..8, the most sampled
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_GT(c0["epoch_time_s"][i].get<double>(), 0);
    ASSERT_TRUE(c0["lo"][i].is_number()) << c0.dump();
    EXPECT_LE(c0["lo"][i].get<double>(), c0["epoch_time_s"][i].get<double>() + 1e-9);
    EXPECT_GE(c0["hi"][i].get<double>(), c0["epoch_time_s"][i].get<double>() - 1e-9);
  }
  ASSERT_EQ(got["metric"]["curves"].size(), 3u);
  EXPECT_EQ(got["metric"]["curves"][0]["epochs"].size(), 80u);
  EXPECT_TRUE(got["metric"]["curves"][0]["lo"][40].is_number());
  // Scores keyed as evaluate --json keys them.
  const json& ev = got["evaluation"]["datasets"]["samples_csv"];
  ASSERT_TRUE(ev.contains("isotonic-mi")) << got["evaluation"].dump();
  EXPECT_TRUE(ev["isotonic-mi"]["time"]["cv_mre"].is_number());
  EXPECT_TRUE(ev["global-batch"]["metric"]["cv_mre"].is_number());
  EXPECT_EQ(got["evaluation"]["cv"], 5);

  app::CurvesQuery q;
  q.time_model = "isotonic-mi";
  q.metric_model = "global-batch";
  q.curves = 3;
  q.evaluate = {"isotonic-mi", "global-batch"};
  app::ModelSource fresh(io::parse_samples_csv(csv, "samples_csv"));
  json want = app::curves(fresh, q, "samples_csv");
  // fit_ms are wall times; everything else is equal.
  for (json* j : {&got, &want})
    for (auto& [name, m] : (*j)["evaluation"]["datasets"]["samples_csv"].items()) m["time"].erase("fit_ms"), m["metric"].erase("fit_ms");
  EXPECT_EQ(got, json::parse(want.dump()));
}

// Metric curves start at the fewest epochs measured: samples whose metric was
// taken at 1 and 5 epochs only are drawn on [1, 5.5], not extrapolated
// towards 0 (where a fitted accuracy curve can fall below 0).
TEST(Web, MetricCurvesStartWhereTheMetricWasMeasured) {
  std::string csv = "batch,workers,epochs,epoch_time_s,metric\n";
  for (int b : {16, 64, 256})
    for (int e : {1, 5}) csv += fmt::format("{},1,{},{},{}\n", b, e, 100.0 / b + 1, 0.99 - 0.3 * b / 256.0 / e);
  app::CurvesQuery q;
  q.time_model = "isotonic-mi";
  q.metric_model = "optimus-curve";
  q.steps = 10;
  app::ModelSource src(io::parse_samples_csv(csv, "samples_csv"));
  json got = app::curves(src, q, "samples_csv");
  ASSERT_TRUE(got["metric"].is_object()) << got.dump();
  for (const auto& c : got["metric"]["curves"]) {
    ASSERT_EQ(c["epochs"].size(), 10u);
    EXPECT_DOUBLE_EQ(c["epochs"][0].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(c["epochs"][9].get<double>(), 5.5);
  }
}

// Inline samples, time-only samples (no metric part), and the errors.
TEST(Web, CurvesInlineTimeOnlyAndErrors) {
  Running s;
  std::string time_only = "batch,workers,epochs,epoch_time_s,metric\n";
  for (int b : {16, 64})
    for (int r : {1, 2, 4}) time_only += fmt::format("{},{},1,{},\n", b, r, 1000.0 / (b * r) + 3);
  int st = 0;
  json got = s.post("/curves", json{{"samples_csv", time_only}, {"time_model", "isotonic-mi"}}, &st);
  ASSERT_EQ(st, 200) << got.dump();
  EXPECT_TRUE(got["metric"].is_null());
  EXPECT_TRUE(got["evaluation"].is_null());
  EXPECT_EQ(got["time"]["curves"].size(), 2u);

  s.post("/curves", json{{"samples_csv", time_only}, {"confidence", 1.5}}, &st);
  EXPECT_EQ(st, 400);
  json e = s.post("/curves", json{{"samples_csv", time_only}, {"evaluate", {"no-such-model"}}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  e = s.post("/curves", json{{"samples_csv", time_only}, {"evaluate", 3}}, &st);
  EXPECT_EQ(st, 400);
  EXPECT_EQ(e["field"], "evaluate");
  e = s.post("/curves", json{{"samples_csv", time_only}, {"curvs", 3}}, &st);
  EXPECT_EQ(st, 400);
  EXPECT_EQ(e["field"], "curvs");
  e = s.post("/curves", json{{"id", "fit-9"}}, &st);
  EXPECT_EQ(st, 404);
  e = s.get("/curves", &st);
  EXPECT_EQ(st, 405);
}

// The row limit holds for /curves as for every request with samples.
TEST(Web, CurvesKeepTheLimits) {
  trainplan::server::Limits l;
  l.max_rows = 10;
  Running s(l);
  int st = 0;
  json e = s.post("/curves", json{{"samples_csv", fixture_csv()}}, &st);
  EXPECT_EQ(st, 422) << e.dump();
  EXPECT_EQ(e["field"], "samples_csv");
  // And for /llm/plan's measured rows.
  std::string measured = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,iteration_time_s\n";
  for (int i = 0; i < 11; ++i) measured += "8,8,1,1024,16,24,2048,8,1,1,0.5\n";
  e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 8},
                               {"calibrate", measured}},
             &st);
  EXPECT_EQ(st, 422) << e.dump();
  EXPECT_EQ(e["field"], "calibrate");
}

}  // namespace

namespace {

// /llm/plan with "gpus": the same job on each GPU, as `llm plan --gpu A,B
// --price ... --frontier --json` answers it (each GPU's plan, the cheapest,
// the cheapest GPU for every training time); bad combinations are 400 naming
// the field; no GPU with a plan is 422 with every GPU's answer.
TEST(Web, LlmPlanOnSeveralGpusEqualsCli) {
  Running s;
  int st = 0;
  const json ask = {{"model", "gpt3-1.3b"}, {"gpus", {"a100-80gb", "h100", "l4"}}, {"max_gpus", 32}, {"tokens", 3e10},
                    {"global_batch", 512}, {"deadline", "3d"}, {"frontier", true},
                    {"prices", {{"a100-80gb", 1.8}, {"h100", 3.2}, {"l4", 0.25}}}};
  json got = s.post("/llm/plan", ask, &st);
  ASSERT_EQ(st, 200) << got.dump().substr(0, 500);
  auto cli = tptest::run_cli("llm plan --model gpt3-1.3b --gpu a100-80gb,h100,l4 --price a100-80gb=1.8,h100=3.2,l4=0.25 "
                             "--max-gpus 32 --tokens 3e10 --global-batch 512 --deadline 3d --frontier --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const json want = json::parse(cli.out);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got["cheapest"], want["cheapest"]);
  EXPECT_FALSE(got["frontier"].empty());
  // One GPU's plan in fp16 where its tensor cores take no bf16, as the CLI plans it.
  json t4 = ask;
  t4["gpus"] = {"h100", "t4"};
  t4.erase("prices");
  json both = s.post("/llm/plan", t4, &st);
  ASSERT_EQ(st, 200) << both.dump().substr(0, 300);
  auto cli_t4 = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100,t4 --max-gpus 32 --tokens 3e10 --global-batch 512 "
                                "--deadline 3d --frontier --json");
  ASSERT_EQ(cli_t4.exit_code, 0) << cli_t4.err;
  EXPECT_EQ(both, json::parse(cli_t4.out));
  EXPECT_EQ(both["gpus"][1]["frontier"][0]["precision"], "fp16") << both["gpus"][1].dump().substr(0, 300);
  EXPECT_FALSE(both.contains("frontier"));  // without prices the GPUs' frontiers do not merge
  struct Bad {
    json change;
    std::string field;
  };
  for (const auto& b : {Bad{{{"gpu", "h100"}}, "gpu"}, Bad{{{"gpus", "h100"}}, "gpus"}, Bad{{{"gpus", {"h100", "h100"}}}, "gpus"},
                        Bad{{{"gpus", {"h100", "nosuchgpu"}}}, "gpus"}, Bad{{{"prices", {{"h100", 3}}}}, "prices"},
                        Bad{{{"prices", {{"v100", 3}, {"h100", 1}, {"l4", 1}, {"a100-80gb", 1}}}}, "prices"},
                        Bad{{{"prices", {{"h100", -1}, {"l4", 1}, {"a100-80gb", 1}}}}, "prices"},
                        Bad{{{"prices", {{"h100", 1e308}, {"l4", 1}, {"a100-80gb", 1}}}}, "prices"},
                        Bad{{{"price_per_gpu_hour", 2}}, "price_per_gpu_hour"},
                        Bad{{{"calibrate", "gpus,global_batch\n"}}, "calibrate"},
                        Bad{{{"prices", nullptr}, {"cost_budget", 1e6}}, "prices"}}) {
    json body = ask;
    for (const auto& [k, v] : b.change.items()) body[k] = v;
    json e = s.post("/llm/plan", body, &st);
    EXPECT_EQ(st, 400) << body.dump() << " -> " << e.dump();
    EXPECT_EQ(e["field"], b.field) << e.dump();
  }
  json one_priced = {{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 8}, {"prices", {{"h100", 1}}}};
  json e = s.post("/llm/plan", one_priced, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "prices");
  json far = {{"model", "gpt3-175b"}, {"gpus", {"t4", "v100"}}, {"max_gpus", 8}, {"tokens", 1e9}, {"global_batch", 8}};
  json none = s.post("/llm/plan", far, &st);
  EXPECT_EQ(st, 422) << none.dump().substr(0, 300);
  ASSERT_TRUE(none.contains("plan"));
  EXPECT_EQ(none["plan"]["gpus"].size(), 2u);
}

// /llm/plan answers what `trainplan llm plan --json` prints (one function
// builds both); nothing fitting is 422 with the reason and the search's answer.
TEST(Web, LlmPlanEqualsCli) {
  Running s;
  int st = 0;
  json z = s.get("/llm/models", &st);
  ASSERT_EQ(st, 200);
  EXPECT_NE(std::find(z["models"].begin(), z["models"].end(), "gpt3-1.3b"), z["models"].end()) << z.dump();
  EXPECT_NE(std::find(z["gpus"].begin(), z["gpus"].end(), "h100"), z["gpus"].end()) << z.dump();
  // One plan through the server and the CLI, with `field` and `flags` added to each.
  auto plan_both = [&](json field, const std::string& flags) {
    json req{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"max_gpus", 64}, {"tokens", 30e9}, {"global_batch", 512},
             {"deadline", 48 * 3600}};
    req.update(field);
    json server = s.post("/llm/plan", req, &st);
    EXPECT_EQ(st, 200) << server.dump();
    auto cli = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --max-gpus 64 --tokens 30e9 --global-batch 512 "
                               "--deadline 48h --json" + flags);
    EXPECT_EQ(cli.exit_code, 0) << cli.err;
    return std::make_pair(server, cli.exit_code == 0 ? json::parse(cli.out) : json());
  };
  auto [got, cli_got] = plan_both(json::object(), "");
  ASSERT_EQ(st, 200);
  EXPECT_EQ(got, cli_got);
  EXPECT_GT(got["chosen"]["memory_gib"].get<double>(), 0);
  // What each deadline costs, as --frontier gives it.
  auto [front, cli_front] = plan_both(json{{"frontier", true}}, " --frontier");
  EXPECT_EQ(front, cli_front);
  EXPECT_GE(front["frontier"].size(), 2u) << front.dump();
  // The deadline as the command line writes it.
  EXPECT_EQ(s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"max_gpus", 64}, {"tokens", 30e9},
                                     {"global_batch", 512}, {"deadline", "2d"}},
                   &st),
            got);

  json none = s.post("/llm/plan", json{{"model", "gpt3-175b"}, {"gpu", "a100-40gb"}, {"max_gpus", 8}, {"tokens", 300e9},
                                       {"global_batch", 1536}, {"deadline", 24 * 3600}},
                     &st);
  EXPECT_EQ(st, 422) << none.dump();
  EXPECT_NE(none["error"].get<std::string>().find("memory"), std::string::npos);
  auto cli3 = tptest::run_cli("llm plan --model gpt3-175b --gpu a100-40gb --max-gpus 8 --tokens 300e9 "
                              "--global-batch 1536 --deadline 24h --json");
  EXPECT_EQ(cli3.exit_code, 3);
  // The CLI's plan with the failure fields of its exit status; the server says those with its status and error.
  json cli_plan = json::parse(cli3.out);
  EXPECT_EQ(cli_plan["exit_code"], 3);
  for (const char* k : {"error", "exit_code", "infeasible"}) cli_plan.erase(k);
  EXPECT_EQ(none["plan"], cli_plan);

  // A hardware file would be a read of the server's files: catalog names only.
  json e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "/etc/passwd"}, {"tokens", 1e9}, {"global_batch", 8}}, &st);
  EXPECT_EQ(st, 400);
  EXPECT_EQ(e["field"], "gpu");
  e = s.post("/llm/plan", json{{"model", "gpt-9"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 8}}, &st);
  EXPECT_EQ(st, 400);
  EXPECT_EQ(e["field"], "model");
  e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"global_batch", 8}}, &st);
  EXPECT_EQ(st, 400);
  EXPECT_EQ(e["field"], "tokens");
  e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 0}}, &st);
  EXPECT_EQ(st, 400) << e.dump();

  // A price and a cost budget, as `llm plan --price --cost-budget`; a budget without a price is 400.
  auto [priced, cli_priced] = plan_both({{"price_per_gpu_hour", 2.5}, {"cost_budget", 1e6}}, " --price 2.5 --cost-budget 1e6");
  ASSERT_EQ(st, 200);
  EXPECT_EQ(priced, cli_priced);
  EXPECT_EQ(priced["objective"], "least time");
  EXPECT_DOUBLE_EQ(priced["chosen"]["cost"].get<double>(), 2.5 * priced["chosen"]["gpu_hours"].get<double>());
  e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 8},
                               {"cost_budget", 100}},
             &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "cost_budget");

  // Without dropout, as `llm plan --no-dropout`; a dropout that is not a boolean is 400.
  auto [nodrop, cli_nodrop] = plan_both({{"dropout", false}}, " --no-dropout");
  ASSERT_EQ(st, 200);
  EXPECT_EQ(nodrop, cli_nodrop);
  EXPECT_NE(nodrop, got) << "dropout false changes the memory and time of the plans";
  e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 8},
                               {"dropout", "sometimes"}},
             &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "dropout");
}

// Values JSON can carry but no plan can use: 400 naming the request's field
// (not the planner's option), and the server keeps answering.
TEST(Web, LlmPlanRefusesValuesNoPlanCanUse) {
  Running s;
  int st = 0;
  const json base{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"max_gpus", 16}, {"tokens", 1e9}, {"global_batch", 64}};
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"reserve_gib", 1e300}}, "reserve_gib"}, {{{"gpu_budget", -1}}, "gpu_budget"},
      {{{"tokens", 1e308}}, "tokens"},           {{{"max_gpus", 0}}, "max_gpus"},
      {{{"top", 0}}, "top"},
  };
  for (const auto& [change, field] : cases) {
    json req = base;
    req.update(change);
    json e = s.post("/llm/plan", req, &st);
    EXPECT_EQ(st, 400) << change << " " << e.dump();
    EXPECT_EQ(e["field"], field) << e.dump();
  }
  for (const char* f : {"model", "gpu"}) {
    json req = base;
    req.erase(f);
    json e = s.post("/llm/plan", req, &st);
    EXPECT_EQ(st, 400) << e.dump();
    EXPECT_EQ(e["field"], f);
    EXPECT_NE(e["error"].get<std::string>().find("missing"), std::string::npos) << e.dump();
  }
  // A null field is an absent one: the GPU's default precision.
  json with_null = base;
  with_null["precision"] = nullptr;
  s.post("/llm/plan", with_null, &st);
  EXPECT_EQ(st, 200);
  // Context parallelism up to 2^30 once doubled an int past its range and divided by zero.
  json huge = base;
  huge.update({{"max_gpus", 1073741824}, {"max_cp", 1073741824}});
  json h = s.post("/llm/plan", huge, &st);
  EXPECT_EQ(st, 200) << h.dump();
  s.get("/health", &st);
  EXPECT_EQ(st, 200);
}

// /llm/plan's `calibrate` (measured iterations as CSV text) plans as `llm
// plan --calibrate FILE` does; a bad row is 400 naming its line and column.
TEST(Web, LlmPlanCalibratedEqualsCli) {
  Running s;
  int st = 0;
  const std::string measured = tptest::llm_measured_csv(*structure::find_builtin_hardware("h100"), 0.6, 3.0);
  json got = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"max_gpus", 64}, {"tokens", 30e9},
                                      {"global_batch", 512}, {"calibrate", measured}},
                    &st);
  ASSERT_EQ(st, 200) << got.dump();
  auto d = tptest::temp_dir("web_llm");
  auto m = tptest::write_file(d / "measured.csv", measured);
  auto cli = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --max-gpus 64 --tokens 30e9 --global-batch 512 "
                             "--calibrate " + m + " --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  json want = json::parse(cli.out);
  EXPECT_EQ(got["calibration"]["measured"], "calibrate");
  EXPECT_EQ(want["calibration"]["measured"], m);
  got["calibration"].erase("measured");
  want["calibration"].erase("measured");
  EXPECT_EQ(got, want);

  json e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 8},
                                    {"calibrate", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,"
                                                  "iteration_time_s\n8,8,1,1024,16,24,2048,8,1,x,0.5\n"}},
                  &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["line"], 2) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("column 'pp'"), std::string::npos) << e.dump();

  // calibrate_gpu: the rows ran on another GPU, as --calibrate-gpu.
  const std::string on_a100 = tptest::llm_measured_csv(*structure::find_builtin_hardware("a100-80gb"), 0.6, 3.0);
  json moved = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"max_gpus", 64}, {"tokens", 30e9},
                                        {"global_batch", 512}, {"calibrate", on_a100}, {"calibrate_gpu", "a100-80gb"}},
                      &st);
  ASSERT_EQ(st, 200) << moved.dump();
  auto m2 = tptest::write_file(d / "on-a100.csv", on_a100);
  auto cli2 = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --max-gpus 64 --tokens 30e9 --global-batch 512 "
                              "--calibrate " + m2 + " --calibrate-gpu a100-80gb --json");
  ASSERT_EQ(cli2.exit_code, 0) << cli2.err;
  json want2 = json::parse(cli2.out);
  moved["calibration"].erase("measured");
  want2["calibration"].erase("measured");
  EXPECT_EQ(moved, want2);
  e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpu", "h100"}, {"tokens", 1e9}, {"global_batch", 8},
                               {"calibrate_gpu", "a100-80gb"}},
             &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "calibrate_gpu") << e.dump();
  // With several GPUs, as llm plan --gpu A,B --calibrate-gpu: each priced with the A100's factors.
  json several = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpus", {"a100-80gb", "h100"}}, {"max_gpus", 64},
                                          {"tokens", 30e9}, {"global_batch", 512}, {"calibrate", on_a100},
                                          {"calibrate_gpu", "a100-80gb"}},
                        &st);
  ASSERT_EQ(st, 200) << several.dump();
  auto cli3 = tptest::run_cli("llm plan --model gpt3-1.3b --gpu a100-80gb,h100 --max-gpus 64 --tokens 30e9 "
                              "--global-batch 512 --calibrate " + m2 + " --calibrate-gpu a100-80gb --json");
  ASSERT_EQ(cli3.exit_code, 0) << cli3.err;
  json want3 = json::parse(cli3.out);
  for (auto* j : {&several, &want3})
    for (auto& g : (*j)["gpus"]) g["calibration"].erase("measured");
  // The server's notes name its fields, the CLI's its options.
  for (auto& g : want3["gpus"])
    for (auto& n : g["notes"]) n = trainplan::server::api_wording(n.get<std::string>());
  EXPECT_EQ(several, want3);
  e = s.post("/llm/plan", json{{"model", "gpt3-1.3b"}, {"gpus", {"a100-80gb", "h100"}}, {"tokens", 1e9},
                               {"global_batch", 8}, {"calibrate", on_a100}},
             &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "calibrate") << e.dump();
}

// /simulate on a named workload answers `trainplan simulate --json` plus each
// job's result and the GPUs in use; without data it says what is missing.
TEST(Web, SimulateEqualsCli) {
  // Through tptest::shell_safe_path: both go into command lines below.
  const std::string shared = tptest::shell_safe_path(TRAINPLAN_SHARED_DATA, "shared_data_web");
  const std::string data = shared + "/pollux-t4";
  const std::string workloads = shared + "/workloads";
  Running s;
  s.service.set_simulation_dirs(data, workloads);
  int st = 0;
  json w = s.get("/workloads", &st);
  ASSERT_EQ(st, 200);
  if (!std::filesystem::is_directory(data) || w["workloads"].empty())
    GTEST_SKIP() << "no simulation data under " << TRAINPLAN_SHARED_DATA;
  EXPECT_NE(std::find(w["workloads"].begin(), w["workloads"].end(), "pollux-1.0/workload-1"), w["workloads"].end());
  // Times at which the clock could not move (an interval of 1e300 s once spun forever) and a negative gain: 400.
  for (const auto& [field, value] : std::vector<std::pair<std::string, double>>{
           {"interval", 1e300}, {"interval", 1e-9}, {"restart_delay", 1e300}, {"min_gain", -5}, {"pollux_p", 2}}) {
    json e = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {field, value}}, &st);
    EXPECT_EQ(st, 400) << field << " " << e.dump();
    EXPECT_EQ(e["field"], field) << e.dump();
  }
  json none = s.post("/simulate", json::object(), &st);
  EXPECT_EQ(st, 400) << none.dump();
  EXPECT_EQ(none["field"], "workload");
  json got = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {"policies", {"fifo", "tiresias"}}}, &st);
  ASSERT_EQ(st, 200) << got.dump();
  auto cli = tptest::run_cli("simulate --workload " + workloads + "/pollux-1.0/workload-1.csv --data " + data +
                             " --policy fifo,tiresias --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  json want = json::parse(cli.out);
  json summary = got;
  for (auto& p : summary["policies"]) {
    EXPECT_EQ(p["job_results"].size(), p["jobs"].get<size_t>());
    const json& use = p["gpus_in_use"];
    ASSERT_EQ(use["t_s"].size(), use["gpus"].size());
    ASSERT_FALSE(use["gpus"].empty());
    for (const auto& g : use["gpus"]) EXPECT_LE(g.get<int>(), 64);
    EXPECT_EQ(use["gpus"].back(), 0);  // all done
    p.erase("job_results");
    p.erase("gpus_in_use");
  }
  EXPECT_EQ(summary, want);

  json e = s.post("/simulate", json{{"workload", "../../etc/passwd"}}, &st);
  EXPECT_EQ(st, 404);
  EXPECT_EQ(e["field"], "workload");
  e = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {"policies", {"nope"}}}, &st);
  EXPECT_EQ(st, 400);
  // A name repeated would be simulated (and answered) again: a long list of one would hold memory.
  e = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {"policies", {"fifo", "tiresias", "fifo"}}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "policies");
  e = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {"nodes", 0}}, &st);
  EXPECT_EQ(st, 400);
  // A time model no policy of the request reads is checked all the same.
  e = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {"policies", {"fifo"}}, {"time_model", "zzz"}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "time_model") << e.dump();

  // Another GPU: the CLI's answer to --gpu, from catalog names only.
  EXPECT_NE(std::find(w["gpus"].begin(), w["gpus"].end(), "h100"), w["gpus"].end()) << w.dump();
  json on_h100 = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {"policies", {"tiresias"}}, {"gpu", "h100"}}, &st);
  ASSERT_EQ(st, 200) << on_h100.dump();
  auto cli_h100 = tptest::run_cli("simulate --workload " + workloads + "/pollux-1.0/workload-1.csv --data " + data +
                                  " --policy tiresias --gpu h100 --json");
  ASSERT_EQ(cli_h100.exit_code, 0) << cli_h100.err;
  json want_h100 = json::parse(cli_h100.out);
  EXPECT_NE(on_h100["policies"][0]["avg_jct_s"], got["policies"][1]["avg_jct_s"]);
  for (auto& p : on_h100["policies"]) p.erase("job_results"), p.erase("gpus_in_use");
  EXPECT_EQ(on_h100, want_h100);
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {{{"gpu", "/etc/passwd"}}, "gpu"},
           {{{"gpu", "h100"}, {"from_gpu", "nosuch"}}, "from_gpu"},
           {{{"from_gpu", "t4"}}, "from_gpu"},
           {{{"gpu", "h100"}, {"gpus_per_node", 10}}, "gpus_per_node"},
           {{{"gpu", "a100-40gb"}, {"gpus_per_node", 9}}, "gpus_per_node"}}) {
    json b = body;
    b["workload"] = "pollux-1.0/workload-1";
    e = s.post("/simulate", b, &st);
    EXPECT_EQ(st, 400) << b.dump() << " " << e.dump();
    EXPECT_EQ(e["field"], field) << e.dump();
  }

  // The traces' own GPU is not moved: its nodes may be any size, as without 'gpu'.
  json own = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {"policies", {"tiresias"}}, {"gpu", "t4"},
                                      {"nodes", 8}, {"gpus_per_node", 8}},
                    &st);
  ASSERT_EQ(st, 200) << own.dump();
  EXPECT_FALSE(own.contains("step_times")) << own.dump();
  EXPECT_EQ(own["gpu"], "t4");

  // A cluster of two GPU types: the CLI's answer to --cluster (the A100 group's steps moved from the T4).
  json mixed = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}, {"policies", {"tiresias", "pollux"}},
                                        {"cluster", {{{"gpu", "t4"}, {"nodes", 8}, {"gpus_per_node", 4}},
                                                     {{"gpu", "a100-40gb"}, {"nodes", 2}, {"gpus_per_node", 8}}}}},
                      &st);
  ASSERT_EQ(st, 200) << mixed.dump();
  auto cli_mixed = tptest::run_cli("simulate --workload " + workloads + "/pollux-1.0/workload-1.csv --data " + data +
                                   " --policy tiresias,pollux --cluster t4=8x4,a100-40gb=2x8 --json");
  ASSERT_EQ(cli_mixed.exit_code, 0) << cli_mixed.err;
  for (auto& p : mixed["policies"]) {
    ASSERT_FALSE(p["job_results"].empty());
    EXPECT_TRUE(p["job_results"][0].contains("gpu")) << p["job_results"][0].dump();
    p.erase("job_results"), p.erase("gpus_in_use");
  }
  EXPECT_EQ(mixed, json::parse(cli_mixed.out));
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {{{"cluster", "t4=4x4"}}, "cluster"},
           {{{"cluster", json::array()}}, "cluster"},
           {{{"cluster", {{{"gpu", "/etc/passwd"}}}}}, "cluster"},
           {{{"cluster", {{{"gpu", "h100"}, {"gpus_per_node", 10}}}}}, "cluster"},
           {{{"cluster", {{{"gpu", "t4"}}, {{"gpu", "t4"}}}}}, "cluster"},
           {{{"cluster", {{{"gpu", "t4"}}}}, {"nodes", 2}}, "nodes"},
           {{{"cluster", {{{"gpu", "t4"}}}}, {"gpu", "h100"}}, "cluster"},
           {{{"cluster", {{{"gpu", "t4"}}}}, {"pollux_types", "some"}}, "pollux_types"},
           {{{"pollux_types", "blind"}}, "pollux_types"},
           {{{"cluster", {{{"gpu", "t4"}, {"nodes", "two"}}}}}, "cluster"},
           {{{"cluster", {{{"gpu", 4}}}}}, "cluster"},
           {{{"cluster", {{{"gpu", "t4"}, {"nodes", 2}}}}}, "cluster"}}) {  // workload 1 asks 32 GPUs of one job
    json b = body;
    b["workload"] = "pollux-1.0/workload-1";
    e = s.post("/simulate", b, &st);
    EXPECT_EQ(st, 400) << b.dump() << " " << e.dump();
    EXPECT_EQ(e["field"], field) << b.dump() << " " << e.dump();
  }

  // The time limit holds.
  trainplan::server::Limits l;
  l.request_timeout_s = 1e-6;
  Running slow(l);
  slow.service.set_simulation_dirs(data, workloads);
  slow.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}}, &st);
  EXPECT_EQ(st, 503);
}

TEST(Web, SimulateWithoutDataSaysWhatIsMissing) {
  Running s;
  s.service.set_simulation_dirs("/nonexistent/pollux-t4", "/nonexistent/workloads");
  int st = 0;
  json w = s.get("/workloads", &st);
  ASSERT_EQ(st, 200);
  EXPECT_TRUE(w["workloads"].empty());
  EXPECT_NE(w["note"].get<std::string>().find("--sim-data"), std::string::npos) << w.dump();
  EXPECT_FALSE(w["policies"].empty());
  // Each policy with the line `simulate --help` gives it (the page shows it on hover).
  for (const auto& p : w["policies"])
    EXPECT_FALSE(w["policy_summaries"].value(p.get<std::string>(), std::string()).empty()) << p << " " << w.dump();
  EXPECT_NE(w["policy_summaries"].value("pollux", std::string()).find("power mean"), std::string::npos) << w.dump();
  json e = s.post("/simulate", json{{"workload", "pollux-1.0/workload-1"}}, &st);
  EXPECT_EQ(st, 404);
  EXPECT_NE(e["error"].get<std::string>().find("/nonexistent/pollux-t4"), std::string::npos) << e.dump();
}

}  // namespace

namespace {

// A server reads no file for a request unless started with --allow-paths.
TEST(Web, SamplesPathNeedsAllowPaths) {
  auto dir = tptest::temp_dir("web_paths");
  const std::string path = tptest::write_file(dir / "s.csv", fixture_csv());
  int st = 0;
  {
    Running s;
    json e = s.post("/fit", json{{"samples_path", path}, {"model", "isotonic-mi"}}, &st);
    EXPECT_EQ(st, 403) << e.dump();
    EXPECT_EQ(e["field"], "samples_path");
    EXPECT_NE(e["error"].get<std::string>().find("--allow-paths"), std::string::npos);
    s.post("/curves", json{{"samples_path", path}}, &st);
    EXPECT_EQ(st, 403);
    s.post("/plan", json{{"samples_path", "/etc/passwd"}, {"target", 0.8}, {"deadline", 100}}, &st);
    EXPECT_EQ(st, 403);
  }
  Running s(with_paths());
  json f = s.post("/fit", json{{"samples_path", path}, {"model", "isotonic-mi"}}, &st);
  EXPECT_EQ(st, 200) << f.dump();
}

// --allow-paths DIR: only the files under DIR, links followed; the others,
// a way out by "..", or a link that points out, are 403 before anything is read.
TEST(Web, SamplesPathWithinTheAllowedFolderOnly) {
  auto dir = tptest::temp_dir("web_root");
  std::filesystem::create_directories(dir / "allowed" / "sub");
  const std::string inside = tptest::write_file(dir / "allowed" / "sub" / "s.csv", fixture_csv());
  const std::string outside = tptest::write_file(dir / "s.csv", fixture_csv());
  std::filesystem::create_symlink(outside, dir / "allowed" / "link.csv");
  auto l = with_paths();
  l.allowed_root = (dir / "allowed").string();
  Running s(l);
  int st = 0;
  json f = s.post("/fit", json{{"samples_path", inside}, {"model", "isotonic-mi"}}, &st);
  EXPECT_EQ(st, 200) << f.dump();
  for (const std::string& p : {outside, (dir / "allowed" / ".." / "s.csv").string(), (dir / "allowed" / "link.csv").string(),
                               std::string("/etc/passwd")}) {
    json e = s.post("/fit", json{{"samples_path", p}, {"model", "isotonic-mi"}}, &st);
    EXPECT_EQ(st, 403) << p << " -> " << e.dump();
    EXPECT_EQ(e["field"], "samples_path");
    EXPECT_NE(e["error"].get<std::string>().find("outside the folder"), std::string::npos) << e.dump();
    EXPECT_EQ(e["error"].get<std::string>().find("root:"), std::string::npos) << e.dump();  // nothing of the file said
  }
  // The folder itself is in it, and no sample file.
  json e = s.post("/fit", json{{"samples_path", (dir / "allowed").string()}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("not a regular file"), std::string::npos) << e.dump();
  auto bad = tptest::run_cli("serve --port 0 --allow-paths " + (dir / "s.csv").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--allow-paths"), std::string::npos) << bad.err;
  // Every file, to every client of a wider address: refused before listening
  // (`timeout`: a server that started would otherwise keep the test waiting).
  const std::string cli = tptest::cli_word();
  for (const char* host : {"0.0.0.0", "::"}) {
    const std::string err = (dir / "wide.err").string();
    const int rc = std::system(("timeout 10 " + cli + " serve --port 0 --quiet --host " + host +
                                " --allow-paths 2>" + err).c_str());
    EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 2) << host;
    EXPECT_NE(tptest::read_file(err).find("--allow-paths DIR"), std::string::npos) << tptest::read_file(err);
  }
  // On loopback it is the local user's own reach, and is served.
  for (const char* host : {"127.0.0.1", "localhost"}) {
    const int rc = std::system(("timeout 2 " + cli + " serve --port 0 --quiet --host " + host +
                                " --allow-paths 2>/dev/null").c_str());
    EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 124) << host << ": still serving when timeout stopped it";
  }
}

}  // namespace
