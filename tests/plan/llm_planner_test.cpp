// The LLM planner (plan/llm_planner.h): its answer is the exact optimum of a
// brute-force enumeration written independently here, every configuration
// of the space is counted once, a configuration predicted not to fit is never
// chosen, and an infeasible problem names the constraint and by how much.
#include "plan/frontier.h"
#include "plan/llm_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

#include "structure/gpu_catalog.h"

namespace {

using namespace trainplan;
using structure::ParallelLayout;
using structure::Recompute;

structure::TransformerSpec small_model() {
  structure::TransformerSpec s;
  s.name = "small";
  s.layers = 8, s.hidden = 1024, s.heads = 8, s.seq = 1024, s.vocab = 32000;
  return s;
}

structure::HardwareProfile a100() { return *structure::find_builtin_hardware("a100-80gb"); }

struct Brute {
  long count = 0;
  double best = std::numeric_limits<double>::infinity();
  long two_stages_interleaved_uneven = 0;  // of count: pp 2, vpp > 1, end stages counted
};

// Every tp, cp (powers of two up to max_cp), pp, vpp, dp and micro-batch up
// to the bounds, kept when check_layout and the planner's documented rules
// accept it.
Brute brute_force(const structure::TransformerSpec& s, const models::LlmTimeModel& tm, const plan::LlmPlanOptions& o,
                  int per_node) {
  Brute b;
  models::LlmMemoryModel mm;
  double cap = tm.hardware().gpu.memory_gb * 1e9 - o.memory_reserve_bytes;
  long iters = long(std::ceil(o.tokens / (double(o.global_batch) * s.seq)));
  for (int tp = 1; tp <= per_node; ++tp)
   for (int cp = 1; cp <= o.max_cp; cp *= 2)
    for (int pp = 1; pp <= s.layers; ++pp)
      for (int vpp = 1; vpp <= s.layers; ++vpp)
       for (int ends = 0; ends <= s.layers; ++ends)
        for (int dp = 1; dp <= o.max_gpus; ++dp)
          for (int mb = 1; mb <= o.global_batch; ++mb)
            for (auto rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
              for (bool sp : {false, true})
                for (bool dist : {false, true})
                 for (bool fused : {false, true}) {
                  // Context parallelism on fused kernels only; cp 1 with the kernel asked for, and with
                  // fused ones too where cp > 1 is searched.
                  if (cp > 1 ? !fused : fused != o.flash_attention && !(fused && o.max_cp > 1)) continue;
                  ParallelLayout l;
                  l.tp = tp, l.cp = cp, l.pp = pp, l.virtual_stages = vpp, l.dp = dp, l.micro_batch = mb;
                  l.global_batch = o.global_batch, l.recompute = rc, l.sequence_parallel = sp;
                  l.distributed_optimizer = dist, l.precision = o.precision;
                  l.flash_attention = fused;
                  // Uneven: the embedding and the loss counted as a layer
                  // each in pp·vpp chunks of layers + 2, where that differs
                  // from the even split.
                  if (ends > 0) {
                    const int chunks = pp * vpp;
                    if (!o.uneven_end_stages || pp == 1 || (s.layers + 2) % chunks != 0 ||
                        (s.layers + 2) / chunks < 2 || ends != (s.layers + 2) / pp - 1 ||
                        (vpp == 1 && s.layers % pp == 0 && ends == s.layers / pp))
                      continue;
                    l.first_stage_layers = l.last_stage_layers = ends;
                  }
                  if (l.gpus() > o.max_gpus || structure::check_layout(s, l)) continue;
                  if (l.gpus() > per_node && l.gpus() % per_node != 0) continue;  // past one node, whole nodes
                  if (vpp > 1 && (pp == 1 || l.micro_batches() % pp != 0)) continue;
                  if ((sp && tp == 1) || (dist && dp * cp == 1)) continue;  // it shards over dp·cp
                  ++b.count;
                  b.two_stages_interleaved_uneven += pp == 2 && vpp > 1 && ends > 0;
                  if (mm.predict(s, l).total() > cap) continue;
                  double train = tm.predict(s, l).iteration * iters;
                  double hours = train * l.gpus() / 3600;
                  if (o.deadline_s > 0 && train > o.deadline_s) continue;
                  if (o.gpu_hour_budget > 0 && hours > o.gpu_hour_budget) continue;
                  b.best = std::min(b.best, o.gpu_hour_budget > 0 ? train : hours);
                }
  return b;
}

plan::LlmPlanOptions small_options() {
  plan::LlmPlanOptions o;
  o.tokens = 2e9, o.global_batch = 32, o.max_gpus = 16;
  return o;
}

}  // namespace

TEST(LlmPlanner, ChosenIsTheExactOptimumOfABruteForceEnumeration) {
  auto s = small_model();
  models::LlmTimeModel tm(a100());
  for (int mode = 0; mode < 6; ++mode) {
    auto o = small_options();
    // Mode 3: context parallelism searched too; mode 4: the splits that count
    // the embedding and the loss (8 + 2 layers: 5 stages of 1, 2, 2, 2, 1);
    // mode 5: the same with 10 layers, whose two stages of 5 interleave in
    // chunks of 2 and 3 (12 over 2 stages of 2 virtual stages), unlike the
    // even split's.
    if (mode == 3) o.max_cp = 4;
    if (mode >= 4) o.uneven_end_stages = true;
    s.layers = mode == 5 ? 10 : small_model().layers;
    auto r0 = plan::plan_llm(s, tm, models::LlmMemoryModel(), o);
    ASSERT_FALSE(r0.top.empty());
    // Mode 1: a deadline that rules out the cheapest; mode 2: least time in a budget.
    if (mode == 1) o.deadline_s = 0.5 * r0.top.front().train_s;
    if (mode == 2) o.gpu_hour_budget = 1.5 * r0.top.front().gpu_hours;
    auto r = plan::plan_llm(s, tm, models::LlmMemoryModel(), o);
    auto b = brute_force(s, tm, o, 8);
    EXPECT_EQ(r.enumerated, b.count) << "mode " << mode;
    if (mode == 5) EXPECT_GT(b.two_stages_interleaved_uneven, 0);
    ASSERT_FALSE(r.top.empty()) << "mode " << mode << ": " << r.explanation;
    const auto& c = r.top.front();
    double got = mode == 2 ? c.train_s : c.gpu_hours;
    EXPECT_DOUBLE_EQ(got, b.best) << "mode " << mode << ": " << plan::describe(c.layout);
    for (size_t i = 1; i < r.top.size(); ++i)
      EXPECT_LE(mode == 2 ? r.top[i - 1].train_s : r.top[i - 1].gpu_hours,
                mode == 2 ? r.top[i].train_s : r.top[i].gpu_hours);
    if (mode == 4) EXPECT_GT(r.enumerated, plan::plan_llm(s, tm, models::LlmMemoryModel(), small_options()).enumerated);
    if (mode == 1) EXPECT_LE(c.train_s, o.deadline_s);
    if (mode == 2) EXPECT_LE(c.gpu_hours, o.gpu_hour_budget);
  }
}

// A long search tells its progress (the enumerated count so far, rising,
// about every 2^16 configurations) and finds what it finds without.
TEST(LlmPlanner, ALongSearchTellsItsProgressAndFindsTheSame) {
  auto s = small_model();
  models::LlmTimeModel tm(a100());
  auto o = small_options();
  o.max_gpus = 1 << 16, o.global_batch = 1 << 18, o.max_cp = 4, o.uneven_end_stages = true;
  const auto quiet = plan::plan_llm(s, tm, models::LlmMemoryModel(), o);
  ASSERT_GT(quiet.enumerated, 2L << 16) << "the search is too small to report";
  std::vector<long> told;
  o.on_progress = [&](long n) { told.push_back(n); };
  const auto r = plan::plan_llm(s, tm, models::LlmMemoryModel(), o);
  ASSERT_GE(told.size(), 2u);
  EXPECT_LE(told.size(), size_t(quiet.enumerated >> 16) + 1);
  for (size_t i = 1; i < told.size(); ++i) EXPECT_GT(told[i], told[i - 1]);
  EXPECT_LE(told.back(), r.enumerated);
  EXPECT_EQ(r.enumerated, quiet.enumerated);
  ASSERT_FALSE(r.top.empty());
  EXPECT_EQ(plan::describe(r.top.front().layout), plan::describe(quiet.top.front().layout));
  EXPECT_EQ(r.top.front().gpu_hours, quiet.top.front().gpu_hours);
}

// The cost-time frontier: fastest first with GPU-hours falling, nothing that
// fits beats a point of it on both, and the cheapest within any deadline is
// the last point that meets it (the planner's own answer to that deadline).
TEST(LlmPlanner, FrontierIsWhatEachDeadlineCosts) {
  auto s = small_model();
  models::LlmTimeModel tm(a100());
  auto o = small_options();
  o.frontier = true;
  auto r = plan::plan_llm(s, tm, models::LlmMemoryModel(), o);
  ASSERT_GE(r.frontier.size(), 2u);
  for (size_t i = 1; i < r.frontier.size(); ++i) {
    EXPECT_GT(r.frontier[i].train_s, r.frontier[i - 1].train_s);
    EXPECT_LT(r.frontier[i].gpu_hours, r.frontier[i - 1].gpu_hours);
  }
  // The last point is the cheapest of all, the planner's choice without a deadline.
  EXPECT_DOUBLE_EQ(r.frontier.back().gpu_hours, r.top.front().gpu_hours);
  // Without the frontier asked for, none is kept.
  EXPECT_TRUE(plan::plan_llm(s, tm, models::LlmMemoryModel(), small_options()).frontier.empty());
  for (size_t i = 0; i + 1 < r.frontier.size(); ++i) {
    auto d = o;
    d.frontier = false;
    d.deadline_s = 0.5 * (r.frontier[i].train_s + r.frontier[i + 1].train_s);
    auto within = plan::plan_llm(s, tm, models::LlmMemoryModel(), d);
    ASSERT_FALSE(within.top.empty());
    EXPECT_DOUBLE_EQ(within.top.front().gpu_hours, r.frontier[i].gpu_hours) << "deadline " << d.deadline_s;
    EXPECT_DOUBLE_EQ(brute_force(s, tm, d, 8).best, r.frontier[i].gpu_hours);
  }
}

TEST(LlmPlanner, NeverChoosesAConfigurationPredictedNotToFit) {
  // GPT-3 6.7B on up to 8 A100-80GB: one GPU cannot hold its 18 bytes per
  // parameter, so the answer has to split it.
  auto s = *structure::find_transformer("gpt3-6.7b");
  plan::LlmPlanOptions o;
  o.tokens = 1e10, o.global_batch = 64, o.max_gpus = 8, o.top_k = 20;
  models::LlmMemoryModel mm;
  auto r = plan::plan_llm(s, models::LlmTimeModel(a100()), mm, o);
  ASSERT_FALSE(r.top.empty());
  EXPECT_LT(r.fit, r.enumerated);
  for (const auto& c : r.top) {
    EXPECT_LE(c.memory_bytes, r.capacity_bytes);
    EXPECT_DOUBLE_EQ(c.memory_bytes, mm.predict(s, c.layout).total());
    EXPECT_NEAR(c.headroom_bytes, 80e9 - c.memory_bytes, 1);
  }
}

TEST(LlmPlanner, MemoryFailureNamesTheSmallestConfigurationAndTheExcess) {
  auto s = *structure::find_transformer("gpt3-175b");
  plan::LlmPlanOptions o;
  o.tokens = 1e9, o.global_batch = 8, o.max_gpus = 8;
  auto r = plan::plan_llm(s, models::LlmTimeModel(a100()), models::LlmMemoryModel(), o);
  EXPECT_TRUE(r.top.empty());
  EXPECT_EQ(r.failing, "memory");
  EXPECT_EQ(r.fit, 0);
  ASSERT_TRUE(r.closest);
  EXPECT_GT(r.closest->memory_bytes, r.capacity_bytes);
  EXPECT_NE(r.explanation.find("GiB"), std::string::npos) << r.explanation;
  EXPECT_NE(r.explanation.find("over"), std::string::npos) << r.explanation;
  EXPECT_EQ(r.explanation.find("unfused"), std::string::npos) << r.explanation;  // the weights, not the scores
  // At a long sequence the unfused scores are what does not fit, and the way out is said.
  auto longer = *structure::find_transformer("gpt3-1.3b");
  longer.seq = 131072;
  auto l = plan::plan_llm(longer, models::LlmTimeModel(a100()), models::LlmMemoryModel(), o);
  EXPECT_EQ(l.failing, "memory");
  EXPECT_NE(l.explanation.find("unfused attention's scores"), std::string::npos) << l.explanation;
  o.flash_attention = true;
  EXPECT_FALSE(plan::plan_llm(longer, models::LlmTimeModel(a100()), models::LlmMemoryModel(), o).top.empty());
}

// An fp32 plan has no fused attention to ask for, and searches no context
// parallelism, which runs on those kernels only.
TEST(LlmPlanner, AnFp32PlanHasNoFusedAttention) {
  models::LlmTimeModel tm(a100());
  auto o = small_options();
  o.precision = structure::Precision::kFp32, o.flash_attention = true;
  auto r = plan::plan_llm(small_model(), tm, models::LlmMemoryModel(), o);
  EXPECT_TRUE(r.top.empty());
  EXPECT_EQ(r.failing, "attention");
  EXPECT_NE(r.explanation.find("fp16 or bf16"), std::string::npos) << r.explanation;
  o.flash_attention = false, o.max_cp = 4;
  r = plan::plan_llm(small_model(), tm, models::LlmMemoryModel(), o);
  ASSERT_FALSE(r.top.empty());
  for (const auto& c : r.top) EXPECT_EQ(c.layout.cp, 1);
}

// Searching context parallelism (which runs fused attention kernels) also
// prices cp 1 on those kernels: a cp > 1 layout never wins on the kernel
// alone, and the plan is the better of the two searches.
TEST(LlmPlanner, ContextParallelismIsComparedOnTheSameAttentionKernel) {
  models::LlmTimeModel tm(a100());
  auto s = small_model();
  auto unfused = small_options();
  auto fused = unfused;
  fused.flash_attention = true;
  auto with_cp = unfused;
  with_cp.max_cp = 4;
  auto with_cp_fused = fused;
  with_cp_fused.max_cp = 4;
  const auto a = plan::plan_llm(s, tm, models::LlmMemoryModel(), fused);
  const auto b = plan::plan_llm(s, tm, models::LlmMemoryModel(), with_cp);
  const auto c = plan::plan_llm(s, tm, models::LlmMemoryModel(), with_cp_fused);
  ASSERT_FALSE(a.top.empty());
  ASSERT_FALSE(b.top.empty());
  // The same search whether fused kernels were asked for or implied by --max-cp, but for cp 1 unfused.
  EXPECT_DOUBLE_EQ(b.top.front().gpu_hours, c.top.front().gpu_hours);
  EXPECT_LE(b.top.front().gpu_hours, a.top.front().gpu_hours);
  if (b.top.front().layout.cp > 1) EXPECT_LT(b.top.front().gpu_hours, a.top.front().gpu_hours);
  EXPECT_EQ(b.enumerated, c.enumerated + plan::plan_llm(s, tm, models::LlmMemoryModel(), unfused).enumerated);
}

TEST(LlmPlanner, DeadlineAndBudgetFailuresSayByHowMuch) {
  auto s = small_model();
  models::LlmTimeModel tm(a100());
  auto o = small_options();
  auto best = plan::plan_llm(s, tm, models::LlmMemoryModel(), o);
  double fastest = std::numeric_limits<double>::infinity();
  o.top_k = 100000;
  for (const auto& c : plan::plan_llm(s, tm, models::LlmMemoryModel(), o).top) fastest = std::min(fastest, c.train_s);

  auto d = small_options();
  d.deadline_s = 0.8 * fastest;
  auto r = plan::plan_llm(s, tm, models::LlmMemoryModel(), d);
  EXPECT_EQ(r.failing, "deadline");
  ASSERT_TRUE(r.closest);
  EXPECT_DOUBLE_EQ(r.closest->train_s, fastest);
  EXPECT_NE(r.explanation.find("25.0%"), std::string::npos) << r.explanation;

  auto g = small_options();
  g.gpu_hour_budget = 0.5 * best.top.front().gpu_hours;
  r = plan::plan_llm(s, tm, models::LlmMemoryModel(), g);
  EXPECT_EQ(r.failing, "gpu_budget");
  EXPECT_NE(r.explanation.find("100.0%"), std::string::npos) << r.explanation;
}

TEST(LlmPlanner, RejectsOptionsOutsideTheirContracts) {
  auto o = small_options();
  o.tokens = 0;
  EXPECT_THROW(plan::plan_llm(small_model(), models::LlmTimeModel(a100()), models::LlmMemoryModel(), o), InputError);
  auto field_of = [](const plan::LlmPlanOptions& bad) {
    try {
      plan::plan_llm(small_model(), models::LlmTimeModel(a100()), models::LlmMemoryModel(), bad);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  auto c = small_options();
  c.cost_budget = 100;  // no price to turn it into GPU-hours
  EXPECT_EQ(field_of(c), "cost_budget");
  c.price_per_gpu_hour = 2, c.gpu_hour_budget = 10;  // two budgets
  EXPECT_EQ(field_of(c), "cost_budget");
  auto p = small_options();
  p.price_per_gpu_hour = -1;
  EXPECT_EQ(field_of(p), "price_per_gpu_hour");
  p.price_per_gpu_hour = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(field_of(p), "price_per_gpu_hour");
  // Past any currency's price: 1e308 made every cost infinite (JSON null).
  p.price_per_gpu_hour = 1e308;
  EXPECT_EQ(field_of(p), "price_per_gpu_hour");
  p.price_per_gpu_hour = 2, p.cost_budget = 1e300;
  EXPECT_EQ(field_of(p), "cost_budget");
}

// A cost budget is the GPU-hours it buys at the price: the same plan as that
// GPU-hour budget, and its failure said in cost.
TEST(LlmPlanner, CostBudgetIsTheGpuHoursItBuys) {
  auto s = small_model();
  models::LlmTimeModel tm(a100());
  auto o = small_options();
  const double cheapest = plan::plan_llm(s, tm, models::LlmMemoryModel(), o).top.front().gpu_hours;
  auto g = small_options();
  g.gpu_hour_budget = 3 * cheapest;
  auto c = small_options();
  c.price_per_gpu_hour = 2.5, c.cost_budget = 2.5 * 3 * cheapest;
  auto by_hours = plan::plan_llm(s, tm, models::LlmMemoryModel(), g), by_cost = plan::plan_llm(s, tm, models::LlmMemoryModel(), c);
  ASSERT_FALSE(by_cost.top.empty());
  EXPECT_EQ(plan::describe(by_cost.top.front().layout), plan::describe(by_hours.top.front().layout));
  EXPECT_LE(by_cost.top.front().gpu_hours * 2.5, c.cost_budget * (1 + 1e-12));
  EXPECT_LT(by_cost.top.front().train_s, plan::plan_llm(s, tm, models::LlmMemoryModel(), o).top.front().train_s);
  c.cost_budget = 2.5 * 0.5 * cheapest;
  auto r = plan::plan_llm(s, tm, models::LlmMemoryModel(), c);
  EXPECT_TRUE(r.top.empty());
  EXPECT_EQ(r.failing, "cost_budget");
  EXPECT_NE(r.explanation.find("100.0%"), std::string::npos) << r.explanation;
  EXPECT_NE(r.explanation.find("a cost of"), std::string::npos) << r.explanation;
}

// A choice that runs context parallelism says that the ring's host work is
// not priced; one without it says nothing of the kind.
TEST(LlmPlanner, AContextParallelChoiceSaysWhatItsPriceLeavesOut) {
  structure::TransformerSpec s;
  s.name = "long";
  s.layers = 16, s.hidden = 4096, s.heads = 32, s.seq = 131072, s.vocab = 32000;
  const models::LlmTimeModel tm(*structure::find_builtin_hardware("h100"));
  plan::LlmPlanOptions o;
  o.tokens = 1e9, o.global_batch = 8, o.min_gpus = o.max_gpus = 16, o.max_cp = 8, o.flash_attention = true;
  auto says = [](const plan::LlmPlanResult& r) {
    return std::any_of(r.notes.begin(), r.notes.end(),
                       [](const std::string& n) { return n.find("context parallelism, priced without") != std::string::npos; });
  };
  const auto with_cp = plan::plan_llm(s, tm, models::LlmMemoryModel(), o);
  ASSERT_FALSE(with_cp.top.empty());
  ASSERT_GT(with_cp.top.front().layout.cp, 1) << "the long sequence should need context parallelism to fit";
  EXPECT_TRUE(says(with_cp));
  o.max_cp = 1, o.max_gpus = 64, o.min_gpus = 1;
  const auto without = plan::plan_llm(s, tm, models::LlmMemoryModel(), o);
  ASSERT_FALSE(without.top.empty()) << without.explanation;
  EXPECT_FALSE(says(without));
}

// A frontier's printed time, given back as a deadline, admits the run printed.
TEST(Frontier, PrintedTimesAreRoundedUp) {
  EXPECT_DOUBLE_EQ(plan::ceil_significant(343.202), 343.3);
  EXPECT_DOUBLE_EQ(plan::ceil_significant(420.2), 420.2);  // exact figures stay
  EXPECT_DOUBLE_EQ(plan::ceil_significant(123456), 123500);
  EXPECT_DOUBLE_EQ(plan::ceil_significant(0.0012341), 0.001235);
  EXPECT_GE(plan::ceil_significant(977.36), 977.36);
}
