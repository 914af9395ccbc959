// The page trainplan serve answers at / (server/web_assets.h) and POST
// /curves (app/curves.h), the samples view's data.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "app/curves.h"
#include "io/sample_csv.h"
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
            tptest::read_file(std::string(TRAINPLAN_SOURCE_DIR) + "/third_party/uplot/uPlot.iife.min.js"));

  // Other paths stay the JSON API's.
  auto missing = c.Get("/web/nothing.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_TRUE(json::parse(missing->body).contains("error"));
  auto post = c.Post("/", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 404);
  EXPECT_EQ(s.get("/health", nullptr)["status"], "ok");
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
  // Close to the fixture's surface at a measured point: 50000/16 * (0.01 + 0.0005*16).
  EXPECT_NEAR(c0["epoch_time_s"][0].get<double>(), 56.25, 56.25 * 0.05);
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

// Inline samples, time-only samples (no metric part), and the errors.
TEST(Web, CurvesInlineTimeOnlyAndErrors) {
  Running s;
  std::string time_only = "batch,workers,epochs,epoch_time_s\n";
  for (int b : {16, 64})
    for (int r : {1, 2, 4}) time_only += fmt::format("{},{},1,{}\n", b, r, 1000.0 / (b * r) + 3);
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
}

}  // namespace
