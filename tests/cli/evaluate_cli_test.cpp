// `trainplan evaluate --samples` on a user's own samples: splits the samples
// cannot pose are said once as not applying, and a note many models share is
// printed once.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace {
std::string example(const std::string& name) { return std::string(TRAINPLAN_SOURCE_DIR) + "/examples/" + name; }
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
  EXPECT_TRUE(t["not_applicable"].contains("x-workers")) << t.dump(2);
  EXPECT_TRUE(t["not_applicable"].contains("x-w-1pn")) << t.dump(2);
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
