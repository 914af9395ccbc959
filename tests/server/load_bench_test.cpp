// The load benchmark's client (server/load_bench.h) against a server in this
// process: a short mixed load ends with every valid request answered 200 and
// every malformed one answered as expected, and a server that answers
// otherwise is caught. Figures are not checked here (docs/SERVER.md has them).
#include <gtest/gtest.h>

#include <httplib.h>

#include <chrono>
#include <set>
#include <thread>

#include "server/load_bench.h"
#include "server/server_util.h"
#include "test_util.h"

namespace {

using trainplan::server::LoadOptions;
using tpserver::Running;

LoadOptions small_load() {
  LoadOptions o;
  o.clients = 4;
  o.requests = 40;
  o.duration_s = 60;
  o.samples_csv = tptest::read_file(tptest::source_dir() + "/examples/lenet-mnist-samples.csv");
  o.max_rows = 200;  // the over-the-limit requests stay small
  o.max_body_bytes = 64 << 10;
  o.setup_model = "isotonic-mi";  // auto's cross-validation would take seconds
  return o;
}

trainplan::server::Limits limits_of(const LoadOptions& o) {
  trainplan::server::Limits l;
  l.max_rows = o.max_rows;
  l.max_body_bytes = o.max_body_bytes;
  l.max_fits = 1000;
  return l;
}

TEST(LoadBench, MixedLoadIsAnsweredAsExpected) {
  const LoadOptions o = small_load();
  ASSERT_FALSE(o.samples_csv.empty());
  Running s(limits_of(o));
  auto r = trainplan::server::run_load("127.0.0.1", s.port, o);
  EXPECT_EQ(r.requests(), o.requests);
  EXPECT_EQ(r.valid_failed(), 0);
  EXPECT_EQ(r.malformed_wrong(), 0);
  for (const auto& f : r.failures) ADD_FAILURE() << f;
  EXPECT_EQ(r.health_failed, 0);
  EXPECT_FALSE(r.health_ms.empty());
  std::set<std::string> valid, malformed;
  for (const auto& k : r.kinds)
    if (k.sent) (k.valid ? valid : malformed).insert(k.kind);
  EXPECT_TRUE(valid.count("predict-id") && valid.count("plan-id"));
  EXPECT_GE(malformed.size(), 3u);
  const auto j = trainplan::server::to_json(r);
  EXPECT_EQ(j["valid"]["failed"], 0);
  EXPECT_GT(j["throughput_rps"].get<double>(), 0);
}

// A server that answers 200 to everything: every malformed request is
// counted as answered otherwise than expected, and no valid one as failed.
TEST(LoadBench, WrongAnswersAreCounted) {
  httplib::Server fake;
  auto ok = [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"id\": \"fit-1\"}", "application/json");
  };
  fake.Get(".*", ok);
  fake.Post(".*", ok);
  fake.set_read_timeout(0, 200000);  // it waits for a POST without a length to end
  const int port = fake.bind_to_any_port("127.0.0.1");
  std::thread t([&] { fake.listen_after_bind(); });
  while (!fake.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  LoadOptions o = small_load();
  o.requests = 30;
  auto r = trainplan::server::run_load("127.0.0.1", port, o);
  fake.stop();
  t.join();
  long malformed = 0;
  for (const auto& k : r.kinds) malformed += k.valid ? 0 : k.sent;
  EXPECT_GT(malformed, 0);
  EXPECT_EQ(r.malformed_wrong(), malformed);
  EXPECT_EQ(r.valid_failed(), 0);
  EXPECT_FALSE(r.failures.empty());
}

TEST(LoadBench, Percentile) {
  EXPECT_EQ(trainplan::server::percentile({}, 0.5), 0);
  EXPECT_EQ(trainplan::server::percentile({3, 1, 2}, 0.5), 2);
  EXPECT_EQ(trainplan::server::percentile({1, 2, 3, 4}, 0.5), 2);
  EXPECT_EQ(trainplan::server::percentile({1, 2, 3, 4}, 0.99), 4);
  EXPECT_EQ(trainplan::server::percentile({5, 1}, 1.0), 5);
}

}  // namespace

// bench serve's bad input is exit 2 naming the option, as every verb's is:
// limits checked before the server starts, samples it refuses, flags it
// does not take.
TEST(BenchServeCli, BadInputIsExitTwoNamingTheOption) {
  const auto dir = tptest::temp_dir("bench_serve_bad");
  const std::string empty = tptest::write_file(dir / "empty.csv", "");
  const std::string ok = tptest::source_dir() + "/examples/lenet-mnist-samples.csv";
  struct Case {
    std::string args, option;
  } cases[] = {{"--max-rows 0", "--max-rows"},
               {"--max-rows 100000000", "--max-rows"},
               {"--samples " + empty + " --requests 5 --duration 5", "--samples"},
               {"--samples " + ok + " --serve-args --bogus --requests 5 --duration 5", "--serve-args"}};
  for (const auto& c : cases) {
    const auto r = tptest::run_cli("bench serve " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find("option '" + c.option + "'"), std::string::npos) << c.args << ": " << r.err;
  }
}
