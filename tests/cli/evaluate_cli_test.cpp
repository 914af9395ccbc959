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
