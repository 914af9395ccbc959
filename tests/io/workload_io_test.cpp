// Workload and Philly readers, and the simulate verb's handling of bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/philly.h"
#include "io/workload_csv.h"
#include "test_util.h"

using namespace trainplan;
namespace fs = std::filesystem;

namespace {

// A one-application trace directory ("lin") usable by `trainplan simulate`.
fs::path tiny_data() {
  auto root = tptest::temp_dir("wldata");
  fs::create_directories(root / "lin");
  tptest::write_file(root / "lin" / "placements.csv",
                     "placement,local_bsz,step_time,sync_time\n1,1,1.0,0\n1,16,16.0,0\n2,1,1.0,0\n2,16,16.0,0\n");
  tptest::write_file(root / "lin" / "scalability.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n");
  tptest::write_file(root / "lin" / "validation-8.csv", "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,0\n20,20,0.7,1,0\n");
  return root;
}

}  // namespace

TEST(WorkloadIo, ReadsPolluxFormat) {
  auto d = tptest::temp_dir("wl");
  auto p = tptest::write_file(d / "w.csv",
                              "name,time,application,num_replicas,batch_size,deadline\n"
                              "a,0,cifar10,2,256,\nb,12.5,bert,4,96,3600\nc,13,bert,4,96,NA\nd,14,bert,4,96,soon\n");
  // A word for no deadline (R's NA) is none; any other word is refused, naming the cell.
  const auto e = tptest::input_error_of([&] { io::read_workload_csv(p); });
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.field(), "deadline");
  tptest::write_file(d / "w.csv",
                     "name,time,application,num_replicas,batch_size,deadline\n"
                     "a,0,cifar10,2,256,\nb,12.5,bert,4,96,3600\nc,13,bert,4,96,NA\n");
  auto jobs = io::read_workload_csv(p);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_FALSE(jobs[2].deadline_s.has_value());
  EXPECT_EQ(jobs[1].name, "b");
  EXPECT_DOUBLE_EQ(jobs[1].arrival_s, 12.5);
  EXPECT_EQ(jobs[1].replicas, 4);
  EXPECT_EQ(jobs[1].batch, 96);
  EXPECT_FALSE(jobs[0].deadline_s.has_value());
  EXPECT_DOUBLE_EQ(*jobs[1].deadline_s, 3600);
}

TEST(WorkloadIo, RejectsMalformedRowsWithFileAndLine) {
  auto d = tptest::temp_dir("wl");
  auto p = tptest::write_file(d / "w.csv", "name,time,application,num_replicas,batch_size\na,0,lin,2,8\nb,soon,lin,2,8\n");
  try {
    io::read_workload_csv(p);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p);
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "time");
  }
  auto q = tptest::write_file(d / "x.csv", "name,time,application,num_replicas,batch_size\na,0,lin,0,8\n");
  EXPECT_THROW(io::read_workload_csv(q), InputError);
  auto r = tptest::write_file(d / "y.csv", "name,time,application,num_replicas,batch_size\na,0,lin,1,8\na,1,lin,1,8\n");
  EXPECT_THROW(io::read_workload_csv(r), InputError);  // duplicate name
  auto s = tptest::write_file(d / "z.csv", "name,time,application,num_replicas\na,0,lin,1\n");
  EXPECT_THROW(io::read_workload_csv(s), InputError);  // missing column
}

TEST(WorkloadIo, UnknownApplicationNamesLine) {
  auto d = tptest::temp_dir("wl");
  auto p = tptest::write_file(d / "w.csv", "name,time,application,num_replicas,batch_size\na,0,lin,1,8\nb,1,gpt9,1,8\n");
  try {
    io::read_workload_csv(p, {"lin"});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p);
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "application");
    EXPECT_NE(e.message().find("'gpt9'"), std::string::npos) << e.what();  // the value to fix
  }
}

TEST(WorkloadIo, PhillyTimestampsAreSortedAndRelative) {
  auto d = tptest::temp_dir("ph");
  auto p = tptest::write_file(d / "p.csv",
                              "timestamp,duration,num_gpus,gpu_time,cluster\n"
                              "2017-10-09 07:01:55,66.0,1,66.0,c1\n2017-10-09 06:13:03,2951.0,8,23608.0,c2\n");
  auto jobs = io::read_philly_csv(p);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].gpus, 8);
  EXPECT_DOUBLE_EQ(jobs[0].arrival_s, 0);
  EXPECT_DOUBLE_EQ(jobs[1].arrival_s, 48 * 60 + 52);
  EXPECT_EQ(io::read_philly_csv(p, 1).size(), 1u);
  auto bad = tptest::write_file(d / "b.csv", "timestamp,duration,num_gpus\n2017-13-09 07:01:55,66.0,1\n");
  EXPECT_THROW(io::read_philly_csv(bad), InputError);
  auto bad2 = tptest::write_file(d / "c.csv", "timestamp,duration,num_gpus\n2017-10-09 07:01:55,66.0,0.5\n");
  EXPECT_THROW(io::read_philly_csv(bad2), InputError);
  // A day the month does not have is refused (timegm would carry it into the next); 29
  // February only in a leap year; seconds before their origin are no time.
  for (const char* when : {"2017-02-31 07:01:55", "2017-02-29 00:00:00", "2017-04-31 00:00:00", "-1e20"}) {
    auto day = tptest::write_file(d / "d.csv", std::string("timestamp,duration,num_gpus\n1,1,1\n") + when + ",66.0,1\n");
    try {
      io::read_philly_csv(day);
      ADD_FAILURE() << when;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), 3) << when;
      EXPECT_EQ(e.field(), "timestamp") << when;
    }
  }
  auto leap = tptest::write_file(d / "e.csv", "timestamp,duration,num_gpus\n2016-02-29 00:00:00,1,1\n2016-03-01 00:00:00,1,1\n");
  EXPECT_DOUBLE_EQ(io::read_philly_csv(leap)[1].arrival_s, 86400);
}

TEST(WorkloadIo, CliReportsUnknownApplicationWithExit2) {
  auto data = tiny_data();
  auto wl = tptest::write_file(data / "w.csv", "name,time,application,num_replicas,batch_size\na,0,lin,1,8\nb,5,resnet,1,8\n");
  auto r = tptest::run_cli("simulate --workload " + wl + " --data " + data.string() + " --nodes 1 --gpus-per-node 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, wl, 3, "application", {"'resnet'"}));
}

TEST(WorkloadIo, CliRejectsJobLargerThanCluster) {
  auto data = tiny_data();
  auto wl = tptest::write_file(data / "w.csv", "name,time,application,num_replicas,batch_size\na,0,lin,1,8\nbig,5,lin,8,8\n");
  auto r = tptest::run_cli("simulate --workload " + wl + " --data " + data.string() + " --nodes 1 --gpus-per-node 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, wl, 3, "num_replicas", {"'big'"}));
  auto ph = tptest::write_file(data / "p.csv", "timestamp,duration,num_gpus\n0,10,1\n5,10,64\n");
  auto r2 = tptest::run_cli("simulate --philly " + ph + " --nodes 2 --gpus-per-node 4");
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r2.err, ph, 3, "num_gpus"));
  // A cluster whose GPUs overflow an int is refused, not simulated as 8 GPUs.
  tptest::expect_each_exits_two_naming("simulate --philly " + ph + " ",
                                       {{"--nodes 536870913 --gpus-per-node 8", "--nodes"},
                                        {"--nodes 2 --gpus-per-node 0", "--gpus-per-node"}});
}

TEST(WorkloadIo, CliMalformedWorkloadExit2) {
  auto data = tiny_data();
  auto wl = tptest::write_file(data / "w.csv", "name,time,application,num_replicas,batch_size\na,0,lin,two,8\n");
  auto r = tptest::run_cli("simulate --workload " + wl + " --data " + data.string() + " --nodes 1 --gpus-per-node 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, wl, 2, "num_replicas", {"'two'"}));
}

TEST(WorkloadIo, CliRunsAndWritesJsonAndJobsCsv) {
  auto data = tiny_data();
  auto wl = tptest::write_file(data / "w.csv", "name,time,application,num_replicas,batch_size\na,0,lin,1,8\nb,5,lin,2,8\n");
  auto csv = (data / "jobs.csv").string();
  auto r = tptest::run_cli("simulate --workload " + wl + " --data " + data.string() +
                           " --nodes 1 --gpus-per-node 2 --policy fifo,tiresias --interval 0 --restart-delay 0 --json --jobs-csv " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // fifo: a runs 0..160 (20 steps x 8 s) on 1 GPU; b needs 2 GPUs: 160..240. Average JCT (160 + 235) / 2.
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["policies"].size(), 2u) << r.out;
  const auto& fifo = j["policies"][0];
  EXPECT_EQ(fifo["policy"], "fifo");
  EXPECT_EQ(fifo["jobs"], 2);
  EXPECT_DOUBLE_EQ(fifo["avg_jct_s"].get<double>(), 197.5);
  EXPECT_DOUBLE_EQ(fifo["makespan_s"].get<double>(), 240.0);
  EXPECT_EQ(j["policies"][1]["policy"], "tiresias");
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("policy,name,app,arrival", 0), 0u);
}

// An application is its trace folder's name in any case, with or without separators.
TEST(WorkloadIo, ApplicationsAreMatchedInAnyCase) {
  auto data = tiny_data();
  auto wl = tptest::write_file(data / "w.csv", "name,time,application,num_replicas,batch_size\na,0,LIN,1,8\nb,5,l-i_n,1,8\n");
  auto r = tptest::run_cli("simulate --workload " + wl + " --data " + data.string() + " --nodes 1 --gpus-per-node 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}
