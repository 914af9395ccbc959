// `trainplan evaluate --samples` on a user's own samples: splits the samples
// cannot pose are said once as not applying, and a note many models share is
// printed once.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace {
std::string example(const std::string& name) { return tptest::source_dir() + "/examples/" + name; }
}  // namespace

TEST(EvaluateCli, SplitsThatDoNotApplyAreSaidOnceNotScoredAsFailures) {
  // One machine, at most 4 workers: no sample at 8..16 workers to test on.
  const std::string args = "evaluate --samples " + example("lenet-mnist-samples.csv") +
                           " --models isotonic-mi,allreduce-physical,global-batch";
  auto j = tptest::run_cli(args + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto d = nlohmann::json::parse(j.out)["datasets"]["lenet-mnist-samples"];
  auto t = d["isotonic-mi"]["time"];
  EXPECT_TRUE(t["extrapolation_mre"]["workers"].is_null());
  EXPECT_TRUE(t["not_applicable"].contains("workers")) << t.dump(2);
  EXPECT_TRUE(t["not_applicable"].contains("workers_one_per_node")) << t.dump(2);
  EXPECT_FALSE(t.contains("note") && t["note"].get<std::string>().find("test samples") != std::string::npos)
      << t.dump(2);

  auto r = tptest::run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t said = 0;
  std::map<std::string, int> note_lines;
  bool in_notes = false;
  for (const auto& line : tptest::lines(r.out)) {
    said += line.rfind("x-workers does not apply", 0) == 0;
    if (line == "notes:") in_notes = true;
    else if (in_notes && line.rfind("  ", 0) == 0) {
      // "  who: note": the same note never appears on two lines.
      const auto colon = line.find(": ");
      ++note_lines[line.substr(colon + 2)];
    }
  }
  EXPECT_EQ(said, 1u) << r.out;
  for (const auto& [note, n] : note_lines) EXPECT_EQ(n, 1) << note;
}

// The scores depend on the set of rows and the seed, not on the order the
// rows came in: the configuration folds are dealt from the configurations
// in key order.
TEST(EvaluateCli, TheOrderOfTheRowsChangesNoScore) {
  const std::string text = tptest::read_file(example("lenet-mnist-samples.csv"));
  std::vector<std::string> lines;
  for (size_t at = 0, end; at < text.size(); at = end + 1) {
    end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (end > at) lines.push_back(text.substr(at, end - at));
  }
  size_t first_row = 0;  // past the comment and header lines
  while (first_row < lines.size() && (lines[first_row][0] == '#' || lines[first_row].rfind("batch", 0) == 0)) ++first_row;
  ASSERT_LT(first_row + 10, lines.size());
  std::string reversed;
  for (size_t i = 0; i < first_row; ++i) reversed += lines[i] + "\n";
  for (size_t i = lines.size(); i-- > first_row;) reversed += lines[i] + "\n";
  const auto dir = tptest::temp_dir("evaluate_order");
  const std::string path = tptest::write_file(dir / "lenet-mnist-samples.csv", reversed);
  auto as_given = tptest::run_cli("evaluate --samples " + example("lenet-mnist-samples.csv") + " --json");
  auto backwards = tptest::run_cli("evaluate --samples " + path + " --json");
  ASSERT_EQ(as_given.exit_code, 0) << as_given.err;
  ASSERT_EQ(backwards.exit_code, 0) << backwards.err;
  const auto a = nlohmann::json::parse(as_given.out)["datasets"]["lenet-mnist-samples"];
  const auto b = nlohmann::json::parse(backwards.out)["datasets"]["lenet-mnist-samples"];
  int compared = 0;
  for (const auto& [model, parts] : a.items())
    for (const char* part : {"time", "metric"}) {
      const auto& x = parts[part]["cv_mre"];
      const auto& y = b[model][part]["cv_mre"];
      if (!x.is_number()) continue;
      ASSERT_TRUE(y.is_number()) << model << " " << part;
      EXPECT_NEAR(x.get<double>(), y.get<double>(), 1e-9 * std::max(1.0, x.get<double>())) << model << " " << part;
      ++compared;
    }
  EXPECT_GT(compared, 5);
}

// The workers splits' trials are configurations, taken with every epoch of
// their curves: the scores do not depend on the order of a file's rows.
TEST(EvaluateCli, ExtrapolationScoresDoNotDependOnRowOrder) {
  const std::string header = "# trainplan: metric=max dataset_size=10000\nbatch,workers,epochs,epoch_time_s,metric,nodes\n";
  const std::vector<std::string> rows = {"32,1,1,10,0.50,1",  "32,1,4,10,0.80,1",  "32,2,1,6,0.48,1",
                                         "32,2,4,6,0.78,1",   "64,1,1,8,0.45,1",   "64,1,4,8,0.75,1",
                                         "64,4,1,3,0.35,1",   "64,4,4,3,0.65,1",   "32,8,1,2,0.40,2",
                                         "32,8,4,2,0.70,2",   "64,12,1,1.5,0.30,3", "64,12,4,1.5,0.60,3",
                                         "32,12,2,1.6,0.50,3"};
  auto d = tptest::temp_dir("evaluate_order");
  std::string forward = header, backward = header;
  for (const auto& r : rows) forward += r + "\n";
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) backward += *it + "\n";
  const auto a = tptest::write_file(d / "a.csv", forward), b = tptest::write_file(d / "b.csv", backward);
  auto scores = [](const std::string& path, const char* name) {
    auto r = tptest::run_cli("evaluate --samples " + path + " --models global-batch,isotonic-mi --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["datasets"][name];
  };
  const auto sa = scores(a, "a");
  const auto sb = scores(b, "b");
  for (const char* model : {"global-batch", "isotonic-mi"})
    for (const char* part : {"time", "metric"})
      for (const char* split : {"workers", "workers_one_per_node", "batch"}) {
        const auto& x = sa[model][part]["extrapolation_mre"][split];
        const auto& y = sb[model][part]["extrapolation_mre"][split];
        ASSERT_EQ(x.is_null(), y.is_null()) << model << " " << part << " " << split;
        if (!x.is_null()) EXPECT_NEAR(x.get<double>(), y.get<double>(), 1e-9) << model << " " << part << " " << split;
      }
}

// Options a mode does not read are refused, not ignored; a model named twice,
// or 'all' beside others, is refused; an all-zero metric is said as fit says
// it; --describe reaches the JSON.
TEST(EvaluateCli, WhatAModeDoesNotReadIsRefused) {
  const std::string samples = example("lenet-mnist-samples.csv");
  tptest::expect_each_exits_two_naming(
      "evaluate --samples " + samples,
      {{" --models paleo,paleo", "--models"},
       {" --models all,paleo", "--models"},
       {" --layer-timings " + samples + " --models paleo", "--models"},
       {" --layer-timings " + samples + " --describe", "--describe"}});
  if (!tptest::shared_data_dir().empty()) {
    const std::string data = tptest::shared_data_dir() + "/pollux-t4";
    tptest::expect_each_exits_two_naming("evaluate --data " + data,
                                         {{" --cross-model --models paleo", "--models"},
                                          {" --cross-model --comm-profile none", "--comm-profile"},
                                          {" --cross-model --describe", "--describe"},
                                          {" --cross-model --cv 1", "--cv"},
                                          {" --hardware t4", "--hardware"}});
  }
  auto d = tptest::temp_dir("evaluate_zero");
  const auto zero = tptest::write_file(
      d / "zero.csv", "batch,workers,epochs,epoch_time_s,metric\n32,1,1,10,0\n64,1,1,8,0\n32,2,1,6,0\n64,2,1,5,0\n");
  auto z = tptest::run_cli("evaluate --samples " + zero + " --models per-batch-extrapolation");
  EXPECT_EQ(z.exit_code, 2) << z.out;
  EXPECT_NE(z.err.find("metric"), std::string::npos) << z.err;
  auto j = tptest::run_cli("evaluate --samples " + samples + " --models per-batch-extrapolation --describe --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto answer = nlohmann::json::parse(j.out);
  EXPECT_TRUE(answer["datasets"]["lenet-mnist-samples"]["per-batch-extrapolation"]["time"].contains("describe"));
  EXPECT_NE(answer["descriptions"]["lenet-mnist-samples"].get<std::string>().find("samples"), std::string::npos);
}
