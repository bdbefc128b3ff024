#include "topology/routing.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <unordered_map>

#include "sim/error.hpp"
#include "topology/detail/shortest_paths.hpp"

namespace trainsim::topology {

using sim::config::Json;

namespace {

constexpr const char* kModeNames[] = {"ecmp", "spray", "dimension_order", "shortest"};
// Vertices and links held by cached path DAGs (about 16 bytes each, 64 MiB in all); past this it starts
// over (results never depend on it).
constexpr size_t kMaxCachedEntries = size_t{1} << 22;

// SplitMix64 finalizer: a fixed, platform-independent mixing function.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform double in [0, 1) from a hash.
double unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace

const char* to_string(RoutingParams::Mode m) { return kModeNames[static_cast<size_t>(m)]; }

const sim::config::Schema<RoutingParams>& routing_schema() {
  static const sim::config::Schema<RoutingParams> schema = [] {
    sim::config::Schema<RoutingParams> s("routing", "How connections between GPUs are routed over the topology.");
    s.custom("mode", "one of ecmp|spray|dimension_order|shortest", std::string("\"ecmp\""),
             "ecmp: hashed equal-cost paths per sub-flow; spray: even split over every equal-cost path; "
             "dimension_order: tori only; shortest: one fixed path.",
             [](RoutingParams& r, const Json& j, const std::string& p) {
               const std::string m = sim::config::read_enum(j, p, {"ecmp", "spray", "dimension_order", "shortest"});
               for (size_t i = 0; i < std::size(kModeNames); ++i)
                 if (m == kModeNames[i]) r.mode = static_cast<RoutingParams::Mode>(i);
             })
        .custom("flows_per_connection", "integer in [1, 1024]", std::string("1"),
                "Sub-flows (queue pairs) per connection, each hashed to its own path (Llama 3: 16).",
                [](RoutingParams& r, const Json& j, const std::string& p) {
                  r.flows_per_connection = static_cast<int32_t>(sim::config::read_int(j, p, 1, 1024));
                })
        .custom("seed", "integer >= 0", std::string("0"), "Seed of the ECMP hash.",
                [](RoutingParams& r, const Json& j, const std::string& p) {
                  r.seed = static_cast<uint64_t>(sim::config::read_int(j, p, 0, sim::config::kUnboundedInt));
                })
        .custom("max_spray_paths", "integer in [1, 4096]", std::string("64"),
                "Most paths one sprayed flow is split over (beyond: a deterministic uniform sample).",
                [](RoutingParams& r, const Json& j, const std::string& p) {
                  r.max_spray_paths = static_cast<int32_t>(sim::config::read_int(j, p, 1, 4096));
                })
        .custom("pxn", "boolean", std::string("true"),
                "NCCL PXN: cross-rail connections take NVLink to the destination's rail inside the source "
                "server first, when that is a minimum-cost path.",
                [](RoutingParams& r, const Json& j, const std::string& p) { r.pxn = sim::config::read_bool(j, p); });
    return s;
  }();
  return schema;
}

RoutingParams parse_routing(const Json& j, const Topology& t, const std::string& path) {
  RoutingParams r;
  routing_schema().parse(j, path, r);
  if (r.mode == RoutingParams::Mode::kDimensionOrder && t.torus_shape().empty()) {
    std::string msg = "dimension_order routing needs a torus, got \"";
    msg += t.builder();
    msg += "\"";
    throw ConfigError(path + ".mode", msg, "use ecmp, spray or shortest");
  }
  return r;
}

struct Router::Impl {
  explicit Impl(const Topology& t) : adj(t), finder(adj) {}
  static uint64_t key(Vertex s, Vertex d) { return (static_cast<uint64_t>(s) << 32) | d; }
  // What a cached DAG counts against kMaxCachedEntries.
  static size_t entries_of(const detail::PathDag& g) { return g.vertex_count() + g.link_count() + 1; }
  const detail::PathDag& dag(Vertex s, Vertex d) {
    const uint64_t k = key(s, d);
    if (const auto it = cache.find(k); it != cache.end()) return it->second;
    detail::PathDag g = finder.find(s, d);
    const size_t entries = entries_of(g);
    if (cached_entries + entries > kMaxCachedEntries) {
      cache.clear();
      cached_entries = 0;
    }
    cached_entries += entries;
    return cache.emplace(k, std::move(g)).first->second;
  }
  // Caches a DAG found ahead of its use, unless the cache would hold more than `limit` entries
  // (false then).
  bool keep(uint64_t k, detail::PathDag g, size_t limit) {
    const size_t entries = entries_of(g);
    if (cached_entries + entries > limit) return false;
    cached_entries += entries;
    cache.emplace(k, std::move(g));
    return true;
  }
  // Per DAG vertex (by index): paths to the destination, and fewest links on one.
  void count_paths(const detail::PathDag& g, Vertex v, Vertex dst) {
    const size_t i = g.index(v);
    if (v == dst || i == detail::PathDag::npos || paths[i] >= 0) return;
    double n = 0;
    int32_t fewest = -1;
    for (const LinkId l : g.next_links_at(i)) {
      const Vertex w = adj.dst(l);
      count_paths(g, w, dst);
      const size_t k = g.index(w);
      n += w == dst ? 1.0 : paths[k];
      const int32_t h = 1 + (w == dst ? 0 : links[k]);
      fewest = fewest < 0 ? h : std::min(fewest, h);
    }
    paths[i] = n;
    links[i] = fewest;
  }
  void prepare_counts(const detail::PathDag& g, Vertex s, Vertex d) {
    paths.assign(g.vertex_count(), -1.0);
    links.assign(g.vertex_count(), 0);
    count_paths(g, s, d);
  }

  detail::Adjacency adj;
  detail::DagFinder finder;
  std::unordered_map<uint64_t, detail::PathDag> cache;
  size_t cached_entries = 0;
  std::vector<double> paths;
  std::vector<int32_t> links;
};

Router::Router(const Topology& t, RoutingParams params) : t_(t), params_(params), impl_(std::make_unique<Impl>(t)) {
  TRAINSIM_ASSERT(params_.flows_per_connection >= 1, "flows_per_connection must be at least 1");
  TRAINSIM_ASSERT(params_.max_spray_paths >= 1, "max_spray_paths must be at least 1");
  TRAINSIM_ASSERT(params_.mode != RoutingParams::Mode::kDimensionOrder || !t.torus_shape().empty(),
                  "dimension_order routing on a topology that is not a torus");
}

Router::~Router() = default;
Router::Router(Router&&) noexcept = default;

int32_t Router::hops(uint32_t src, uint32_t dst) const {
  if (src == dst) return 0;
  const Vertex s = t_.gpu_node(src), d = t_.gpu_node(dst);
  const detail::PathDag& g = impl_->dag(s, d);
  if (!g.reachable()) return -1;
  impl_->prepare_counts(g, s, d);
  return impl_->links[g.index(s)];
}

double Router::path_count(uint32_t src, uint32_t dst) const {
  if (src == dst) return 1.0;
  const Vertex s = t_.gpu_node(src), d = t_.gpu_node(dst);
  const detail::PathDag& g = impl_->dag(s, d);
  if (!g.reachable()) return 0.0;
  impl_->prepare_counts(g, s, d);
  return impl_->paths[g.index(s)];
}

int64_t Router::pxn_mid(uint32_t src, uint32_t dst) const {
  const int32_t ss = t_.server_of(src), ds = t_.server_of(dst);
  const int32_t ls = t_.node(t_.gpu_node(src)).local, ld = t_.node(t_.gpu_node(dst)).local;
  const int64_t mid = static_cast<int64_t>(src) - ls + ld;  // GPUs are numbered server-major
  if (ss != ds && ss >= 0 && ls != ld && ls >= 0 && ld >= 0 && mid >= 0 && static_cast<size_t>(mid) < t_.gpu_count() &&
      t_.server_of(static_cast<size_t>(mid)) == ss && t_.node(t_.gpu_node(static_cast<size_t>(mid))).local == ld)
    return mid;
  return -1;
}

void Router::prefetch(std::span<const std::pair<uint32_t, uint32_t>> pairs, int threads) const {
  if (params_.mode == RoutingParams::Mode::kDimensionOrder) return;  // its routes need no search
  // The (source, destination) vertices routes() will search between, once each, not yet cached.
  std::vector<uint64_t> keys;
  const auto add = [&](size_t a, size_t b) {
    if (a != b) keys.push_back(Impl::key(t_.gpu_node(a), t_.gpu_node(b)));
  };
  for (const auto& [src, dst] : pairs) {
    add(src, dst);
    if (const int64_t mid = params_.pxn ? pxn_mid(src, dst) : -1; mid >= 0) {
      add(src, static_cast<size_t>(mid));
      add(static_cast<size_t>(mid), dst);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::erase_if(keys, [&](uint64_t k) { return impl_->cache.contains(k); });
  // In chunks, so that only a chunk's paths wait outside the cache, until the cache is three
  // quarters full (the rest for what routes() finds on demand: a full cache starts over). Each
  // worker has its own search scratch space; the adjacency is only read.
  constexpr size_t kChunk = size_t{1} << 14, kBatch = 64;
  std::vector<detail::PathDag> found;
  for (size_t from = 0; from < keys.size(); from += kChunk) {
    const size_t count = std::min(kChunk, keys.size() - from);
    found.assign(count, detail::PathDag());
    std::atomic<size_t> next{0};
    const auto work = [&](detail::DagFinder& finder) {
      for (size_t b = next.fetch_add(kBatch); b < count; b = next.fetch_add(kBatch))
        for (size_t i = b; i < std::min(count, b + kBatch); ++i) {
          const uint64_t k = keys[from + i];
          found[i] = finder.find(static_cast<Vertex>(k >> 32), static_cast<Vertex>(k & 0xffffffffU));
        }
    };
    const auto helpers = static_cast<size_t>(
        std::clamp<int64_t>(std::min<int64_t>(threads, static_cast<int64_t>(count / (4 * kBatch))) - 1, 0, 63));
    std::vector<std::thread> pool;
    pool.reserve(helpers);
    for (size_t h = 0; h < helpers; ++h)
      pool.emplace_back([&] {
        detail::DagFinder finder(impl_->adj);
        work(finder);
      });
    work(impl_->finder);
    for (auto& th : pool) th.join();
    for (size_t i = 0; i < count; ++i)
      if (!impl_->keep(keys[from + i], std::move(found[i]), kMaxCachedEntries / 4 * 3)) return;
  }
}

std::vector<Route> Router::routes(uint32_t src, uint32_t dst, uint64_t flow_id) const {
  std::vector<Route> out;
  routes(src, dst, flow_id, out);
  return out;
}

namespace {

// Walks the DAG from `s` to `d`, choosing among next links with `pick(vertex, choices)`.
template <typename Pick>
void walk(const detail::PathDag& g, const detail::Adjacency& adj, Vertex s, Vertex d, Pick&& pick,
          std::vector<LinkId>& out) {
  for (Vertex at = s; at != d;) {
    const auto choices = g.next_links(at);
    TRAINSIM_ASSERT(!choices.empty(), "vertex ", at, " is off the shortest-path DAG");
    const LinkId l = choices[pick(at, choices)];
    out.push_back(l);
    at = adj.dst(l);
  }
}

// The dimension-order route on a torus, or false when one of its links has failed.
bool dimension_order(const Topology& t, const detail::Adjacency& adj, uint32_t src, uint32_t dst,
                     std::vector<LinkId>& out) {
  const auto& shape = t.torus_shape();
  std::vector<int64_t> at(shape.size()), to(shape.size());
  for (size_t k = 0, a = src, b = dst; k < shape.size(); ++k) {
    at[k] = static_cast<int64_t>(a) % shape[k];
    to[k] = static_cast<int64_t>(b) % shape[k];
    a /= static_cast<size_t>(shape[k]);
    b /= static_cast<size_t>(shape[k]);
  }
  auto index = [&] {
    int64_t i = 0;
    for (size_t k = shape.size(); k-- > 0;) i = i * shape[k] + at[k];
    return static_cast<size_t>(i);
  };
  for (size_t k = 0; k < shape.size(); ++k) {
    const int64_t n = shape[k], ahead = ((to[k] - at[k]) % n + n) % n;
    const int64_t step = ahead <= n - ahead ? 1 : -1;
    for (int64_t left = std::min(ahead, n - ahead); left > 0; --left) {
      const Vertex from = t.gpu_node(index());
      at[k] = ((at[k] + step) % n + n) % n;
      const Vertex next = t.gpu_node(index());
      const auto links = adj.out_links(from);
      const auto it = std::find_if(links.begin(), links.end(), [&](LinkId l) { return adj.dst(l) == next; });
      if (it == links.end()) return false;
      out.push_back(*it);
    }
  }
  return true;
}

}  // namespace

void Router::routes(uint32_t src, uint32_t dst, uint64_t flow_id, std::vector<Route>& out) const {
  TRAINSIM_ASSERT(src < t_.gpu_count() && dst < t_.gpu_count(), "GPU ", src, " or ", dst, " out of range");
  if (src == dst) return;
  const Vertex s = t_.gpu_node(src), d = t_.gpu_node(dst);
  const auto k = static_cast<size_t>(params_.flows_per_connection);
  using Mode = RoutingParams::Mode;

  if (params_.mode == Mode::kDimensionOrder) {
    Route r;
    if (dimension_order(t_, impl_->adj, src, dst, r.links)) {
      r.fraction = 1.0 / static_cast<double>(k);
      for (size_t i = 0; i < k; ++i) out.push_back(r);
      return;
    }
  }
  if (params_.pxn && params_.mode != Mode::kDimensionOrder) {
    if (const int64_t mid = pxn_mid(src, dst); mid >= 0) {
      const Vertex m = t_.gpu_node(static_cast<size_t>(mid));
      // One DAG reference at a time: a lookup may evict the cache.
      const int32_t direct = impl_->dag(s, d).cost(), rail = impl_->dag(m, d).cost();
      const detail::PathDag& head = impl_->dag(s, m);
      if (direct >= 0 && rail >= 0 && head.reachable() && head.cost() + rail == direct) {
        std::vector<LinkId> first;
        walk(
            head, impl_->adj, s, m, [](Vertex, std::span<const LinkId>) { return size_t{0}; }, first);
        const size_t from = out.size();
        routes(static_cast<uint32_t>(mid), dst, flow_id, out);  // same rail: no PXN again
        for (size_t i = from; i < out.size(); ++i)
          out[i].links.insert(out[i].links.begin(), first.begin(), first.end());
        return;
      }
    }
  }
  const detail::PathDag& g = impl_->dag(s, d);
  TRAINSIM_ASSERT(g.reachable(), "no working route from GPU ", src, " to GPU ", dst);

  if (params_.mode == Mode::kSpray) {
    impl_->prepare_counts(g, s, d);
    const double total = impl_->paths[g.index(s)];
    const size_t first = out.size();
    if (total <= static_cast<double>(params_.max_spray_paths)) {
      // Every equal-cost path, depth first in link-id order.
      std::vector<std::pair<Vertex, size_t>> stack{{s, 0}};
      std::vector<LinkId> path;
      while (!stack.empty()) {
        auto& [v, next] = stack.back();
        const auto choices = g.next_links(v);
        if (v == d || next == choices.size()) {
          if (v == d) out.push_back(Route{path, 1.0 / total});
          stack.pop_back();
          if (!path.empty()) path.pop_back();
          continue;
        }
        const LinkId l = choices[next++];
        path.push_back(l);
        stack.emplace_back(impl_->adj.dst(l), 0);
      }
    } else {
      // Uniform sample of paths: at each vertex, a next link with probability proportional to
      // the paths through it. Identical samples merge.
      const auto m = static_cast<size_t>(params_.max_spray_paths);
      for (size_t j = 0; j < m; ++j) {
        Route r{{}, 1.0 / static_cast<double>(m)};
        const uint64_t h = mix(params_.seed ^ mix(((static_cast<uint64_t>(src) << 32) | dst) ^ mix(j)));
        walk(
            g, impl_->adj, s, d,
            [&](Vertex at, std::span<const LinkId> choices) {
              double x = unit(mix(h ^ at)) * impl_->paths[g.index(at)];
              for (size_t c = 0; c + 1 < choices.size(); ++c) {
                const Vertex w = impl_->adj.dst(choices[c]);
                x -= w == d ? 1.0 : impl_->paths[g.index(w)];
                if (x < 0) return c;
              }
              return choices.size() - 1;
            },
            r.links);
        out.push_back(std::move(r));
      }
      std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                [](const Route& a, const Route& b) { return a.links < b.links; });
      size_t w = first;
      for (size_t i = first; i < out.size(); ++i) {
        if (w > first && out[w - 1].links == out[i].links) {
          out[w - 1].fraction += out[i].fraction;
        } else {
          if (w != i) out[w] = std::move(out[i]);
          ++w;
        }
      }
      out.resize(w);
    }
    return;
  }

  const double fraction = 1.0 / static_cast<double>(k);
  for (size_t sub = 0; sub < k; ++sub) {
    Route r{{}, fraction};
    if (params_.mode == Mode::kShortest) {
      walk(
          g, impl_->adj, s, d, [](Vertex, std::span<const LinkId>) { return size_t{0}; }, r.links);
    } else {  // ECMP, also the fallback of dimension order around failed links
      const uint64_t h =
          mix(params_.seed ^
              mix(flow_id ^ mix(static_cast<uint64_t>(sub) ^ mix((static_cast<uint64_t>(src) << 32) | dst))));
      walk(
          g, impl_->adj, s, d,
          [&](Vertex at, std::span<const LinkId> choices) {
            return static_cast<size_t>(mix(h ^ (static_cast<uint64_t>(at) * 0xD6E8FEB86659FD93ULL)) % choices.size());
          },
          r.links);
    }
    out.push_back(std::move(r));
  }
}

}  // namespace trainsim::topology
