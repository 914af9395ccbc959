#include "plan/tabu.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <random>

#include "core/cancel.h"
#include "core/error.h"
#include "plan/diagnose.h"

namespace trainplan::plan {
namespace {

using Cell = std::pair<int, int>;  // (batch index, workers)

class TabuRun {
 public:
  TabuRun(const models::PerformanceModel& m, const PlanProblem& p, const TabuParams& tp)
      : m_(m), p_(p), tp_(tp), rng_(tp.seed), board_(static_cast<size_t>(std::max(0, tp.alternatives)), m.direction()) {}

  PlanResult run() {
    PlanResult res;
    res.method = "coconfig-tabu";
    auto start = random_feasible();
    if (!start) throw_infeasible(m_, p_, res.method);
    Cell cur = *start;
    visit(cur);
    for (int it = 0; it < tp_.iterations; ++it) {
      check_cancelled();
      std::vector<Cell> moves = admissible_neighbours(cur);
      if (moves.empty()) {
        auto again = random_feasible();
        if (!again) break;
        cur = *again;
        visit(cur);
        continue;
      }
      std::shuffle(moves.begin(), moves.end(), rng_);  // random choice among infeasible ones
      Cell next = moves.front();
      const Candidate* best = nullptr;
      for (const Cell& c : moves)
        if (const auto& v = eval(c); v && (!best || preferred(*v, *best, m_.direction()))) {
          best = &*v;
          next = c;
        }
      cur = next;
      visit(cur);
    }
    board_.fill(res);
    res.evaluations = static_cast<long>(cache_.size());
    return res;
  }

 private:
  int nb() const { return static_cast<int>(p_.space.batches.size()); }

  const std::optional<Candidate>& eval(const Cell& c) {
    auto it = cache_.find(c);
    if (it != cache_.end()) return it->second;
    auto v = evaluate_cell(m_, p_, p_.space.batches[c.first], c.second, tp_.epochs);
    if (v) board_.offer(*v);
    return cache_.emplace(c, v).first->second;
  }

  void visit(const Cell& c) {
    tabu_.push_back(c);
    while (static_cast<int>(tabu_.size()) > std::max(1, tp_.tenure)) tabu_.pop_front();
  }
  bool is_tabu(const Cell& c) const { return std::find(tabu_.begin(), tabu_.end(), c) != tabu_.end(); }

  std::vector<Cell> admissible_neighbours(const Cell& cur) const {
    std::vector<Cell> out;
    for (int db = -1; db <= 1; ++db)
      for (int dr = -1; dr <= 1; ++dr) {
        if (db == 0 && dr == 0) continue;
        Cell c{cur.first + db, cur.second + dr};
        if (c.first < 0 || c.first >= nb() || c.second < 1 || c.second > p_.space.max_workers) continue;
        if (!is_tabu(c)) out.push_back(c);
      }
    return out;
  }

  // A random feasible cell not on the tabu list: random draws first, then a
  // scan in random order so that a feasible cell is found whenever one exists.
  std::optional<Cell> random_feasible() {
    std::uniform_int_distribution<int> bi(0, nb() - 1), wr(1, p_.space.max_workers);
    for (int i = 0; i < tp_.start_tries; ++i) {
      check_cancelled();
      Cell c{bi(rng_), wr(rng_)};
      if (!is_tabu(c) && eval(c)) return c;
    }
    long total = static_cast<long>(nb()) * p_.space.max_workers;
    std::vector<long> order(static_cast<size_t>(total));
    std::iota(order.begin(), order.end(), 0L);
    std::shuffle(order.begin(), order.end(), rng_);
    for (long k : order) {
      Cell c{static_cast<int>(k / p_.space.max_workers), static_cast<int>(k % p_.space.max_workers) + 1};
      if (!is_tabu(c) && eval(c)) return c;
    }
    return std::nullopt;
  }

  const models::PerformanceModel& m_;
  const PlanProblem& p_;
  TabuParams tp_;
  std::mt19937_64 rng_;
  Leaderboard board_;
  std::map<Cell, std::optional<Candidate>> cache_;
  std::deque<Cell> tabu_;
};

}  // namespace

PlanResult tabu_search(const models::PerformanceModel& m, const PlanProblem& p, const TabuParams& params) {
  validate(p);
  if (params.iterations < 0) throw InputError("tabu iterations must be >= 0");
  return TabuRun(m, p, params).run();
}

}  // namespace trainplan::plan
