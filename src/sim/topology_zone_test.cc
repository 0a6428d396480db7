// TopologyZone: SimGrid routes equal src/placement's link for link (torus with Blue Gene/Q
// order and tie rule, fat tree, dragonfly with Valiant routing), and flows on them share
// bandwidth as directed links.
#include "sim/topology_zone.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <simgrid/s4u.hpp>

#include "placement/topology_spec.h"

namespace iorelay::sim {
namespace {

namespace sg4 = simgrid::s4u;

constexpr LinkParams kLinks{1e9, 1e-6};

// One SimGrid engine per process: the zones of every test hang off one root zone.
class Platform {
 public:
  static Platform& Get() {
    static Platform* p = new Platform();
    return *p;
  }
  TopologyZone* Add(const std::string& spec, const TopologyZone::Pairs* talking = nullptr) {
    auto t = placement::ParseTopology(spec);
    EXPECT_TRUE(t.ok()) << spec;
    topologies_.push_back(std::move(*t));
    return TopologyZone::Create(spec, root_, *topologies_.back(), kLinks, 1e9, talking);
  }
  sg4::Engine& engine() { return *engine_; }

 private:
  Platform() {
    int argc = 1;
    static char name[] = "topology_zone_test";
    char* argv[] = {name, nullptr};
    engine_ = std::make_unique<sg4::Engine>(&argc, argv);
    // CM02 without cross-traffic: bandwidth and latency as given (no TCP correction factors, no
    // acknowledgement traffic on the reverse route), so times can be computed by hand.
    engine_->set_config("network/model:CM02");
    engine_->set_config("network/crosstraffic:0");
    // Actors on threads rather than SimGrid's own stack switching, which AddressSanitizer
    // cannot follow (false reports); these tests have a handful of actors.
    engine_->set_config("contexts/factory:thread");
    root_ = sg4::create_full_zone("root");
  }
  std::unique_ptr<sg4::Engine> engine_;
  sg4::NetZone* root_;
  std::vector<std::unique_ptr<placement::Topology>> topologies_;
};

void ExpectSameRoutes(const std::string& spec, TopologyZone* zone) {
  const placement::Topology& t = zone->topology();
  std::mt19937 rng(7);
  std::uniform_int_distribution<placement::VertexId> pick(0, t.num_nodes() - 1);
  for (int i = 0; i < 300; ++i) {
    const placement::VertexId a = pick(rng), b = pick(rng);
    std::vector<sg4::Link*> sg_route;
    double latency = 0;
    zone->host(a)->route_to(zone->host(b), sg_route, &latency);
    if (a == b) {  // no topology link: the zone's loopback
      ASSERT_EQ(sg_route.size(), 1u);
      EXPECT_EQ(sg_route[0]->get_name(), spec + "/loopback");
      continue;
    }
    std::vector<placement::LinkId> ours;
    t.Route(a, b, &ours);
    ASSERT_EQ(sg_route.size(), ours.size()) << spec << " " << a << "->" << b;
    for (size_t k = 0; k < ours.size(); ++k) {
      ASSERT_EQ(sg_route[k]->get_name(), spec + "/" + t.LinkName(ours[k]))
          << spec << " " << a << "->" << b << " hop " << k;
    }
    EXPECT_DOUBLE_EQ(latency, kLinks.latency_s * static_cast<double>(ours.size()));
  }
}

TEST(TopologyZoneTest, RoutesAreThePlacementRoutes) {
  Platform& p = Platform::Get();
  for (const char* spec : {"torus:8x8x8", "torus:4x4x4x4x2:order=EDCBA", "fattree:4x8x3",
                           "dragonfly:9x4x2x2:routing=valiant"}) {
    ExpectSameRoutes(spec, p.Add(spec));
  }
}

// With the talking pairs given, the zone makes the links of their routes, both ways, and no
// other; those routes are still the placement routes.
TEST(TopologyZoneTest, TalkingPairsGetTheirRoutesAndNoOtherLinks) {
  Platform& p = Platform::Get();
  const std::string spec = "torus:4x4:order=BA";
  const TopologyZone::Pairs talking = {{0, 10}, {3, 3}};
  TopologyZone* zone = p.Add(spec, &talking);
  const placement::Topology& t = zone->topology();
  std::vector<placement::LinkId> wanted;
  t.Route(0, 10, &wanted);
  t.Route(10, 0, &wanted);
  for (placement::LinkId l = 0; l < t.num_links(); ++l) {
    const bool on_route = std::find(wanted.begin(), wanted.end(), l) != wanted.end();
    EXPECT_EQ(zone->link(l) != nullptr, on_route) << t.LinkName(l);
  }
  for (auto [a, b] : {std::pair{0, 10}, std::pair{10, 0}}) {
    std::vector<sg4::Link*> sg_route;
    double latency = 0;
    zone->host(a)->route_to(zone->host(b), sg_route, &latency);
    std::vector<placement::LinkId> ours;
    t.Route(a, b, &ours);
    ASSERT_EQ(sg_route.size(), ours.size());
    for (size_t k = 0; k < ours.size(); ++k) EXPECT_EQ(sg_route[k], zone->link(ours[k]));
  }
  std::vector<sg4::Link*> self;  // a pair of one node: the loopback, no topology link
  double latency = 0;
  zone->host(3)->route_to(zone->host(3), self, &latency);
  ASSERT_EQ(self.size(), 1u);
  EXPECT_EQ(self[0]->get_name(), spec + "/loopback");
}

// A rank on an I/O node's bridge node talks to its own host: SimGrid needs a link for that.
TEST(TopologyZoneTest, SelfRouteIsTheLoopback) {
  TopologyZone* zone = Platform::Get().Add("torus:2x3");
  std::vector<sg4::Link*> route;
  double latency = 0;
  zone->host(4)->route_to(zone->host(4), route, &latency);
  ASSERT_EQ(route.size(), 1u);
  EXPECT_EQ(route[0]->get_name(), "torus:2x3/loopback");
  EXPECT_EQ(latency, 0);
}

TEST(TopologyZoneTest, OppositeFlowsDoNotShareAndSameWayFlowsDo) {
  Platform& p = Platform::Get();
  TopologyZone* z = p.Add("torus:4x4");
  const double bytes = 1e8;
  // Runs the flows (from, to) together; returns each one's duration.
  auto run = [&](std::vector<std::pair<placement::VertexId, placement::VertexId>> flows) {
    std::vector<double> took(flows.size(), 0);
    const double start = sg4::Engine::get_clock();
    for (size_t i = 0; i < flows.size(); ++i) {
      const std::string box = z->get_iface()->get_name() + "/flow" + std::to_string(i);
      sg4::Actor::create("recv", z->host(flows[i].second), [&took, i, box, start] {
        delete sg4::Mailbox::by_name(box)->get<int>();
        took[i] = sg4::Engine::get_clock() - start;
      });
      sg4::Actor::create("send", z->host(flows[i].first),
                         [box, bytes] { sg4::Mailbox::by_name(box)->put(new int(0), bytes); });
    }
    p.engine().run();
    return took;
  };
  const double one_hop = bytes / kLinks.bandwidth_Bps + kLinks.latency_s;
  // Neighbours 0 and 1 (ids a*4+b): 0->1 and 1->0 use the two directed links between them.
  std::vector<double> opposite = run({{0, 1}, {1, 0}});
  EXPECT_NEAR(opposite[0], one_hop, 1e-9);
  EXPECT_NEAR(opposite[1], one_hop, 1e-9);
  // 0->2 is half a ring of 4: an even coordinate goes +, through 1, so it shares link 0->1.
  // The link is then the bottleneck of both: the later flow ends when the link has carried both
  // flows' bytes, and the other was slowed down. (CM02 shares in proportion to the inverse of
  // each flow's latency, as TCP does with round-trip times, so the one-hop flow gets 2/3.)
  std::vector<placement::LinkId> r02;
  z->topology().Route(0, 2, &r02);
  ASSERT_EQ(r02.size(), 2u);
  std::vector<double> shared = run({{0, 1}, {0, 2}});
  EXPECT_NEAR(shared[0], bytes / (2.0 / 3.0 * kLinks.bandwidth_Bps), 3 * kLinks.latency_s);
  EXPECT_NEAR(shared[1], 2 * bytes / kLinks.bandwidth_Bps, 3 * kLinks.latency_s);
}

}  // namespace
}  // namespace iorelay::sim
