// Builds the zb-ilp model: end times, order variables, big-M from time windows, memory, span.
#include "sim/solver/detail/ilp_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "sim/support/error.h"
#include "sim/solver/detail/list_timing.h"
#include "sim/solver/detail/split_pass.h"

namespace zb {

int LinearProgram::add_column(std::string name, double lower, double upper, double objective, bool integer) {
  columns.push_back(Column{std::move(name), lower, upper, objective, integer});
  return static_cast<int>(columns.size()) - 1;
}

void LinearProgram::add_row(std::string name, double lower, double upper,
                            std::vector<std::pair<int, double>> terms) {
  rows.push_back(Row{std::move(name), lower, upper, std::move(terms)});
}

double LinearProgram::max_violation(const std::vector<double>& values) const {
  double worst = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const double v = values[c];
    worst = std::max({worst, columns[c].lower - v, v - columns[c].upper});
    if (columns[c].integer) worst = std::max(worst, std::abs(v - std::round(v)));
  }
  for (const Row& row : rows) {
    double sum = 0;
    for (const auto& [col, coef] : row.terms) sum += coef * values[static_cast<std::size_t>(col)];
    worst = std::max({worst, row.lower - sum, sum - row.upper});
  }
  return worst;
}

namespace {

std::size_t idx(int i) { return static_cast<std::size_t>(i); }

enum Block { kHead = 0, kMiddle = 1, kTail = 2 };
enum class Relation { before, after, variable };

constexpr int kFixedLowFirst = -1;   // window-fixed: the lower pass id runs first
constexpr int kFixedHighFirst = -2;  // window-fixed: the higher pass id runs first

std::uint64_t pair_key(int a, int b) {
  const auto lo = static_cast<std::uint64_t>(std::min(a, b));
  const auto hi = static_cast<std::uint64_t>(std::max(a, b));
  return (lo << 32) | hi;
}

// A 0/1 quantity "x runs before y": a constant, or (+/-) an order variable.
struct OrderTerm {
  double constant = 0;
  int column = -1;
  double coefficient = 0;
};

// Where each pass of one stage sits: its block and its position in the reference order.
struct StageLayout {
  std::vector<int> block;     // per pass id
  std::vector<int> position;  // per pass id
  std::vector<int> middle;    // pass ids of the middle block, reference order
  std::vector<std::vector<int>> members{3};  // pass ids per block, reference order
};

class ModelBuilder {
 public:
  ModelBuilder(const Problem& problem, const Schedule& reference, const IlpModelOptions& options)
      : problem_(problem), reference_(reference), options_(options), p_(problem.devices),
        m_(problem.microbatches) {}

  IlpModel build() {
    model_.stages = p_;
    model_.microbatches = m_;
    model_.order_column.assign(idx(p_), {});
    layout();
    first_starts();
    windows();
    if (model_.empty_windows) return std::move(model_);
    columns();
    precedence_rows();
    order_variables();
    if (options_.order_cuts) order_cuts();
    if (options_.positional_rows) positional_rows();
    memory_rows();
    span_rows();
    warm_start();
    return std::move(model_);
  }

 private:
  // A pass id is kind * m + microbatch, its kind the split_index of its pass (split_pass.h).
  int kind_of(int pass) const { return pass / m_; }
  int mb_of(int pass) const { return pass % m_; }
  double cost(int s, int kind) const {
    return of_pass(split_pass(kind), problem_.t_f[idx(s)], problem_.t_b[idx(s)], problem_.t_w[idx(s)]);
  }
  double delta(int s, int kind) const {
    return of_pass(split_pass(kind), problem_.mem_f[idx(s)], problem_.mem_b[idx(s)], problem_.mem_w[idx(s)]);
  }
  std::string_view name_of(int pass) const { return pass_name(split_pass(kind_of(pass))); }
  double pass_cost(int s, int pass) const { return cost(s, kind_of(pass)); }
  int node(int s, int pass) const { return s * 3 * m_ + pass; }

  void layout() {
    layouts_.assign(idx(p_), {});
    int total = 3 * m_;
    int head = std::min(options_.free_head, total);
    int tail = std::min(options_.free_tail, total - head);
    // Blocks that cover everything are the full model (no head-before-tail restriction).
    if (head + tail >= total) {
      head = total;
      tail = 0;
    }
    model_.decomposed = head + tail < total;
    for (int s = 0; s < p_; ++s) {
      StageLayout& lay = layouts_[idx(s)];
      lay.block.assign(idx(total), kMiddle);
      lay.position.assign(idx(total), -1);
      const auto& list = reference_.devices[idx(s)];
      if (static_cast<int>(list.size()) != total) {
        throw Error(fmt::format("zb-ilp: reference order of stage {} has {} actions, expected {}", s,
                                list.size(), total));
      }
      for (int pos = 0; pos < total; ++pos) {
        const Action& a = list[idx(pos)];
        const int pass = split_index(a.pass) * m_ + a.microbatch;
        lay.position[idx(pass)] = pos;
        const int block = pos < head ? kHead : pos >= total - tail ? kTail : kMiddle;
        lay.block[idx(pass)] = block;
        lay.members[idx(block)].push_back(pass);
      }
      lay.middle = lay.members[kMiddle];
    }
  }

  // Relation of a and b on stage s from the structure alone (blocks, pass-type chains).
  Relation structural(int s, int a, int b) const {
    const StageLayout& lay = layouts_[idx(s)];
    const int ba = lay.block[idx(a)];
    const int bb = lay.block[idx(b)];
    if (ba != bb) return ba < bb ? Relation::before : Relation::after;
    if (ba == kMiddle) return lay.position[idx(a)] < lay.position[idx(b)] ? Relation::before : Relation::after;
    const int ka = kind_of(a), kb = kind_of(b), ia = mb_of(a), ib = mb_of(b);
    if (ka == kb) return ia < ib ? Relation::before : Relation::after;
    // Same microbatch or a later one of a later pass type follows: F_i < F_j < B_j for j >= i.
    if (ka < kb) return ia <= ib ? Relation::before : Relation::variable;
    return ib <= ia ? Relation::after : Relation::variable;
  }

  OrderTerm before(int s, int a, int b) const {
    switch (structural(s, a, b)) {
      case Relation::before: return {1, -1, 0};
      case Relation::after: return {0, -1, 0};
      case Relation::variable: break;
    }
    const int value = model_.order_column[idx(s)].at(pair_key(a, b));
    const bool a_low = a < b;
    if (value == kFixedLowFirst) return {a_low ? 1.0 : 0.0, -1, 0};
    if (value == kFixedHighFirst) return {a_low ? 0.0 : 1.0, -1, 0};
    return a_low ? OrderTerm{0, value, 1} : OrderTerm{1, value, -1};
  }

  void first_starts() {
    model_.first_start.assign(idx(p_), 0.0);
    for (int s = 1; s < p_; ++s) {
      model_.first_start[idx(s)] = model_.first_start[idx(s - 1)] + problem_.t_f[idx(s - 1)] + problem_.comm_after(s - 1);
    }
  }

  // Work that must run on the stage before (and after) each pass, from the fixed relations.
  void fixed_work(int s, std::vector<double>& before_work, std::vector<double>& after_work) const {
    const StageLayout& lay = layouts_[idx(s)];
    double block_before = 0;
    double total = 0;
    for (int pass = 0; pass < 3 * m_; ++pass) total += pass_cost(s, pass);
    for (int block = kHead; block <= kTail; ++block) {
      const auto& members = lay.members[idx(block)];
      double block_total = 0;
      for (int pass : members) block_total += pass_cost(s, pass);
      if (block == kMiddle) {
        double prefix = 0;
        for (int pass : members) {
          before_work[idx(pass)] = block_before + prefix;
          prefix += pass_cost(s, pass);
          after_work[idx(pass)] = total - block_before - prefix;
        }
      } else {
        for (int a : members) {
          double in_before = 0, in_after = 0;
          for (int b : members) {
            if (a == b) continue;
            const Relation r = structural(s, b, a);
            if (r == Relation::before) in_before += pass_cost(s, b);
            if (r == Relation::after) in_after += pass_cost(s, b);
          }
          before_work[idx(a)] = block_before + in_before;
          after_work[idx(a)] = (total - block_before - block_total) + in_after;
        }
      }
      block_before += block_total;
    }
  }

  // Time windows: earliest end from predecessors and fixed work; latest end from the incumbent
  // span U backwards. Both hold for every schedule with span <= U that the model allows.
  void windows() {
    const int nodes = p_ * 3 * m_;
    edges_.clear();
    auto add_edge = [&](int from, int to, double lag) { edges_.push_back(Edge{from, to, lag}); };
    for (int s = 0; s < p_; ++s) {
      for (int i = 0; i < m_; ++i) {
        for (int k = 0; k < kSplitPassCount; ++k) {
          if (i > 0) add_edge(node(s, k * m_ + i - 1), node(s, k * m_ + i), 0);
          if (k > 0) add_edge(node(s, (k - 1) * m_ + i), node(s, k * m_ + i), 0);
        }
        if (s > 0) add_edge(node(s - 1, i), node(s, i), problem_.comm_after(s - 1));
        if (s + 1 < p_) add_edge(node(s + 1, m_ + i), node(s, m_ + i), problem_.comm_after(s));
      }
      const StageLayout& lay = layouts_[idx(s)];
      const auto& head = lay.members[kHead];
      const auto& tail = lay.members[kTail];
      for (std::size_t k = 1; k < lay.middle.size(); ++k) add_edge(node(s, lay.middle[k - 1]), node(s, lay.middle[k]), 0);
      if (!lay.middle.empty()) {
        for (int h : head) add_edge(node(s, h), node(s, lay.middle.front()), 0);
        for (int t : tail) add_edge(node(s, lay.middle.back()), node(s, t), 0);
      } else if (!head.empty() && !tail.empty()) {
        for (int h : head) {
          for (int t : tail) add_edge(node(s, h), node(s, t), 0);
        }
      }
    }
    // Topological order (Kahn).
    std::vector<std::vector<std::pair<int, double>>> preds(idx(nodes)), succs(idx(nodes));
    std::vector<int> indegree(idx(nodes), 0);
    for (const Edge& e : edges_) {
      preds[idx(e.to)].push_back({e.from, e.lag});
      succs[idx(e.from)].push_back({e.to, e.lag});
      ++indegree[idx(e.to)];
    }
    std::vector<int> order;
    order.reserve(idx(nodes));
    std::deque<int> ready;
    for (int n = 0; n < nodes; ++n) {
      if (indegree[idx(n)] == 0) ready.push_back(n);
    }
    while (!ready.empty()) {
      const int n = ready.front();
      ready.pop_front();
      order.push_back(n);
      for (const auto& [to, lag] : succs[idx(n)]) {
        if (--indegree[idx(to)] == 0) ready.push_back(to);
      }
    }
    if (static_cast<int>(order.size()) != nodes) throw Error("zb-ilp: internal error: cyclic precedence graph");

    const double u = search_span();
    model_.earliest_end.assign(idx(nodes), 0.0);
    model_.latest_end.assign(idx(nodes), 0.0);
    std::vector<double> before_work(idx(3 * m_)), after_work(idx(3 * m_));
    std::vector<double> work_es(idx(nodes)), work_ls(idx(nodes));
    for (int s = 0; s < p_; ++s) {
      fixed_work(s, before_work, after_work);
      const double c = model_.first_start[idx(s)];
      for (int pass = 0; pass < 3 * m_; ++pass) {
        work_es[idx(node(s, pass))] = c + before_work[idx(pass)] + pass_cost(s, pass);
        work_ls[idx(node(s, pass))] = c + u - after_work[idx(pass)];
      }
    }
    auto stage_of_node = [&](int n) { return n / (3 * m_); };
    for (int n : order) {
      const int s = stage_of_node(n);
      const double own = pass_cost(s, n % (3 * m_));
      double es = work_es[idx(n)];
      for (const auto& [from, lag] : preds[idx(n)]) es = std::max(es, model_.earliest_end[idx(from)] + lag + own);
      model_.earliest_end[idx(n)] = es;
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int n = *it;
      double ls = work_ls[idx(n)];
      for (const auto& [to, lag] : succs[idx(n)]) {
        const int st = stage_of_node(to);
        ls = std::min(ls, model_.latest_end[idx(to)] - pass_cost(st, to % (3 * m_)) - lag);
      }
      model_.latest_end[idx(n)] = ls;
    }
    for (int s = 0; s < p_; ++s) {
      // F0 is the first action of every stage and starts at c_s under list scheduling.
      const int f0 = node(s, 0);
      model_.earliest_end[idx(f0)] = model_.first_start[idx(s)] + problem_.t_f[idx(s)];
      model_.latest_end[idx(f0)] = model_.earliest_end[idx(f0)];
    }
    for (int n = 0; n < nodes; ++n) {
      if (model_.earliest_end[idx(n)] > model_.latest_end[idx(n)] + 1e-6 * std::max(1.0, u)) {
        if (options_.search_span <= 0) {
          throw Error(fmt::format("zb-ilp: internal error: empty time window for node {} ([{}, {}])", n,
                                  model_.earliest_end[idx(n)], model_.latest_end[idx(n)]));
        }
        model_.empty_windows = true;
        return;
      }
      model_.latest_end[idx(n)] = std::max(model_.latest_end[idx(n)], model_.earliest_end[idx(n)]);
    }
  }

  void columns() {
    model_.end_column.assign(idx(p_ * 3 * m_), -1);
    for (int s = 0; s < p_; ++s) {
      for (int pass = 0; pass < 3 * m_; ++pass) {
        const int n = node(s, pass);
        model_.end_column[idx(n)] = model_.lp.add_column(
            fmt::format("E_{}_{}{}", s, name_of(pass), mb_of(pass)), model_.earliest_end[idx(n)],
            model_.latest_end[idx(n)], 0, false);
      }
    }
    const double u = search_span();
    model_.span_column = model_.lp.add_column("span", std::min(options_.lower_bound, u), u, 1.0, false);
  }

  double search_span() const {
    const double u = options_.search_span > 0 ? options_.search_span : options_.incumbent_span;
    return u + kSlack * std::max(1.0, u);
  }

  int end_col(int s, int pass) const { return model_.end_column[idx(node(s, pass))]; }

  void precedence_rows() {
    const double inf = std::numeric_limits<double>::infinity();
    for (const Edge& e : edges_) {
      const int s_to = e.to / (3 * m_);
      const int s_from = e.from / (3 * m_);
      const double own = pass_cost(s_to, e.to % (3 * m_));
      // Redundant when the windows already imply it.
      if (model_.earliest_end[idx(e.to)] - own - e.lag >= model_.latest_end[idx(e.from)]) continue;
      model_.lp.add_row(fmt::format("prec_{}", model_.lp.rows.size()), own + e.lag, inf,
                        {{end_col(s_to, e.to % (3 * m_)), 1.0}, {end_col(s_from, e.from % (3 * m_)), -1.0}});
    }
  }

  void order_variables() {
    const double inf = std::numeric_limits<double>::infinity();
    for (int s = 0; s < p_; ++s) {
      auto& columns = model_.order_column[idx(s)];
      for (int block : {kHead, kTail}) {
        const auto& members = layouts_[idx(s)].members[idx(block)];
        for (int a : members) {
          for (int b : members) {
            if (a >= b || structural(s, a, b) != Relation::variable) continue;
            const double es_a = model_.earliest_end[idx(node(s, a))], ls_a = model_.latest_end[idx(node(s, a))];
            const double es_b = model_.earliest_end[idx(node(s, b))], ls_b = model_.latest_end[idx(node(s, b))];
            const double ta = pass_cost(s, a), tb = pass_cost(s, b);
            const double m1 = ls_a - (es_b - tb);  // largest E_a - start_b
            const double m2 = ls_b - (es_a - ta);  // largest E_b - start_a
            if (ta + tb > 0 && m1 <= 0) {
              columns[pair_key(a, b)] = kFixedLowFirst;
              ++model_.fixed_by_windows;
              continue;
            }
            if (ta + tb > 0 && m2 <= 0) {
              columns[pair_key(a, b)] = kFixedHighFirst;
              ++model_.fixed_by_windows;
              continue;
            }
            const int z = model_.lp.add_column(
                fmt::format("x_{}_{}{}_{}{}", s, name_of(a), mb_of(a), name_of(b), mb_of(b)),
                                               0, 1, 0, true);
            columns[pair_key(a, b)] = z;
            ++model_.order_pairs;
            // z = 1: a before b, so b starts after a ends; z = 0: a starts after b ends.
            model_.lp.add_row(fmt::format("dis_{}", model_.lp.rows.size()), tb - m1, inf,
                              {{end_col(s, b), 1.0}, {end_col(s, a), -1.0}, {z, -m1}});
            model_.lp.add_row(fmt::format("dis_{}", model_.lp.rows.size()), ta, inf,
                              {{end_col(s, a), 1.0}, {end_col(s, b), -1.0}, {z, m2}});
          }
        }
      }
    }
  }

  // "x before y" implies "x before y'" for y' after y in a chain; likewise for predecessors of x.
  void implication(int s, int z, int x, int y) {
    const OrderTerm t = before(s, x, y);
    const double inf = std::numeric_limits<double>::infinity();
    if (t.column < 0) {
      if (t.constant < 0.5) model_.lp.columns[idx(z)].upper = 0;  // z would force a contradiction
      return;
    }
    // z <= constant + coefficient * column
    model_.lp.add_row(fmt::format("cut_{}", model_.lp.rows.size()), -inf, t.constant,
                      {{z, 1.0}, {t.column, -t.coefficient}});
  }

  void order_cuts() {
    for (int s = 0; s < p_; ++s) {
      // Sorted, so the row order (and CBC's path) does not depend on hashing.
      std::vector<std::pair<std::uint64_t, int>> pairs(model_.order_column[idx(s)].begin(),
                                                       model_.order_column[idx(s)].end());
      std::sort(pairs.begin(), pairs.end());
      for (const auto& [key, z] : pairs) {
        if (z < 0) continue;
        const int a = static_cast<int>(key >> 32);
        const int b = static_cast<int>(key & 0xffffffffu);
        const int ka = kind_of(a), ia = mb_of(a), kb = kind_of(b), ib = mb_of(b);
        // z = 1 iff a before b.
        if (ib + 1 < m_) implication(s, z, a, kb * m_ + ib + 1);
        if (kb < split_index(Pass::W)) implication(s, z, a, (kb + 1) * m_ + ib);
        if (ia > 0) implication(s, z, ka * m_ + ia - 1, b);
        if (ka > 0) implication(s, z, (ka - 1) * m_ + ia, b);
      }
    }
  }

  // A device runs one pass at a time, so a pass ends no earlier than the first start plus all
  // work ordered before it, and the last W ends no earlier than the pass plus all work ordered
  // after it. Exact for integer orders; in the LP relaxation they tie end times to the order
  // variables far tighter than the big-M rows alone.
  void positional_rows() {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> before_work(idx(3 * m_)), after_work(idx(3 * m_));
    for (int s = 0; s < p_; ++s) {
      fixed_work(s, before_work, after_work);
      const StageLayout& lay = layouts_[idx(s)];
      const int last = 2 * m_ + m_ - 1;
      for (int block : {kHead, kTail}) {
        const auto& members = lay.members[idx(block)];
        for (int x : members) {
          std::vector<std::pair<int, double>> head_terms{{end_col(s, x), 1.0}};
          std::vector<std::pair<int, double>> tail_terms{{end_col(s, last), 1.0}, {end_col(s, x), -1.0}};
          double head_rhs = model_.first_start[idx(s)] + before_work[idx(x)] + pass_cost(s, x);
          double tail_rhs = after_work[idx(x)];
          for (int y : members) {
            if (y == x || structural(s, y, x) != Relation::variable) continue;
            const double cy = pass_cost(s, y);
            const OrderTerm yx = before(s, y, x);  // y before x
            head_rhs += cy * yx.constant;
            if (yx.column >= 0) head_terms.push_back({yx.column, -cy * yx.coefficient});
            const OrderTerm xy = before(s, x, y);  // x before y
            tail_rhs += cy * xy.constant;
            if (xy.column >= 0) tail_terms.push_back({xy.column, -cy * xy.coefficient});
          }
          if (head_terms.size() > 1) {
            model_.lp.add_row(fmt::format("pos_{}", model_.lp.rows.size()), head_rhs, inf, std::move(head_terms));
          }
          if (x != last && tail_terms.size() > 2) {
            model_.lp.add_row(fmt::format("pos_{}", model_.lp.rows.size()), tail_rhs, inf, std::move(tail_terms));
          }
        }
      }
    }
  }

  void memory_rows() {
    const double limit = options_.memory_limit;
    const double inf = std::numeric_limits<double>::infinity();
    for (int s = 0; s < p_; ++s) {
      const StageLayout& lay = layouts_[idx(s)];
      double base_tail = 0;  // head and middle all run before the tail
      for (int block : {kHead, kMiddle}) {
        for (int pass : lay.members[idx(block)]) base_tail += delta(s, kind_of(pass));
      }
      for (int block : {kHead, kTail}) {
        const auto& members = lay.members[idx(block)];
        for (int x : members) {
          const double own = delta(s, kind_of(x));
          if (own <= 0) continue;  // peaks follow passes that add memory
          double constant = own + (block == kTail ? base_tail : 0.0);
          std::vector<std::pair<int, double>> terms;
          for (int y : members) {
            if (y == x) continue;
            const OrderTerm t = before(s, y, x);
            const double dy = delta(s, kind_of(y));
            constant += dy * t.constant;
            if (t.column >= 0) terms.push_back({t.column, dy * t.coefficient});
          }
          if (terms.empty()) {
            if (constant > limit + 1e-9) {
              throw Error(fmt::format("zb-ilp: internal error: fixed order exceeds memory on stage {}", s));
            }
            continue;
          }
          model_.lp.add_row(fmt::format("mem_{}", model_.lp.rows.size()), -inf, limit - constant, std::move(terms));
        }
      }
    }
  }

  void span_rows() {
    const double inf = std::numeric_limits<double>::infinity();
    for (int s = 0; s < p_; ++s) {
      // W of the last microbatch is always the last action of its stage.
      model_.lp.add_row(fmt::format("span_{}", s), -model_.first_start[idx(s)], inf,
                        {{model_.span_column, 1.0}, {end_col(s, 2 * m_ + m_ - 1), -1.0}});
    }
  }

  void warm_start() {
    const ListTiming timing = list_timing(problem_, reference_);
    auto& values = model_.warm_start;
    values.assign(model_.lp.columns.size(), 0.0);
    for (int s = 0; s < p_; ++s) {
      for (int pass = 0; pass < 3 * m_; ++pass) {
        values[idx(end_col(s, pass))] = timing.end[idx(s)][idx(kind_of(pass))][idx(mb_of(pass))];
      }
      for (const auto& [key, z] : model_.order_column[idx(s)]) {
        if (z < 0) continue;
        const int a = static_cast<int>(key >> 32);
        const int b = static_cast<int>(key & 0xffffffffu);
        const auto& pos = layouts_[idx(s)].position;
        values[idx(z)] = pos[idx(a)] < pos[idx(b)] ? 1.0 : 0.0;
      }
    }
    values[idx(model_.span_column)] = timing.span;
  }

  struct Edge {
    int from;
    int to;
    double lag;
  };

  // Relative slack on the incumbent span so its own (floating-point) times stay inside windows.
  static constexpr double kSlack = 1e-9;

  const Problem& problem_;
  const Schedule& reference_;
  IlpModelOptions options_;
  int p_;
  int m_;
  IlpModel model_;
  std::vector<StageLayout> layouts_;
  std::vector<Edge> edges_;
};

}  // namespace

void require_one_chunk_per_device(const Problem& problem) {
  if (problem.chunks == 1) return;
  throw InputError(fmt::format(
      "zb-ilp: needs one stage per device (chunks = 1), got chunks = {}: its order variables and memory rows "
      "are per stage, and with {} chunks a device runs {} stages' passes in one order; for {} placements use "
      "zb-auto, which tries {}",
      problem.chunks, problem.chunks, problem.chunks, placement_name(problem.placement),
      problem.placement == Placement::vshape ? "zb-v and zb-v-h" : "zb-i and 1f1b-i"));
}

IlpModel build_ilp_model(const Problem& problem, const Schedule& reference, const IlpModelOptions& options) {
  require_one_chunk_per_device(problem);
  return ModelBuilder(problem, reference, options).build();
}

Schedule ilp_solution_order(const IlpModel& model, const std::vector<double>& values) {
  const int m = model.microbatches;
  Schedule schedule;
  schedule.name = "zb-ilp";
  schedule.devices.assign(idx(model.stages), {});
  for (int s = 0; s < model.stages; ++s) {
    std::vector<int> passes(idx(3 * m));
    for (int pass = 0; pass < 3 * m; ++pass) passes[idx(pass)] = pass;
    auto end_of = [&](int pass) { return values[idx(model.end_column[idx(s * 3 * m + pass)])]; };
    // Same-type passes keep microbatch order and F < B < W: sort by end, then by a key that
    // respects those chains when end times tie (zero-cost passes).
    std::stable_sort(passes.begin(), passes.end(), [&](int a, int b) {
      const double ea = end_of(a), eb = end_of(b);
      if (std::abs(ea - eb) > 1e-7 * std::max(1.0, std::abs(ea))) return ea < eb;
      const auto it = model.order_column[idx(s)].find(pair_key(a, b));
      if (it != model.order_column[idx(s)].end()) {
        const int v = it->second;
        const bool low_first = v == kFixedLowFirst || (v >= 0 && values[idx(v)] > 0.5);
        return (a < b) == low_first;
      }
      const int ia = a % m, ib = b % m, ka = a / m, kb = b / m;
      return ia != ib ? ia < ib : ka < kb;
    });
    auto& list = schedule.devices[idx(s)];
    for (int pass : passes) {
      list.push_back(Action{split_pass(pass / m), pass % m, 0});
    }
  }
  return schedule;
}

}  // namespace zb
