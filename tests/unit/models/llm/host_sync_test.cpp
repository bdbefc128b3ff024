#include "models/llm/host_sync.hpp"

#include <gtest/gtest.h>

namespace trainsim::models::llm {
namespace {

using sim::Time;

TEST(HostSync, LongKernelsLetTheHostCatchUpAfterTheLatency) {
  // Host 10 us per kernel, 20 us latency; kernels of 1 ms: only the first launch waits.
  const std::vector<IssueStep> steps(5, IssueStep{1, Time::ms(1)});
  EXPECT_EQ(host_sync_stall(steps, Time::us(10), Time::us(20)), Time::us(30));
}

TEST(HostSync, ShortKernelsAreHostBound) {
  // Kernels of 2 us behind 10 us of host each: the GPU waits 8 us for every kernel after the first.
  const std::vector<IssueStep> steps(10, IssueStep{1, Time::us(2)});
  EXPECT_EQ(host_sync_stall(steps, Time::us(10), Time::zero()), Time::us(10 + 9 * 8));
  // Without host cost, nothing is lost.
  EXPECT_EQ(host_sync_stall(steps, Time::zero(), Time::zero()), Time::zero());
}

TEST(HostSync, GroupedExpertsWaitForEveryExpertsHostWork) {
  // The dispatch, then a grouped GEMM whose launch follows the host work of 2 GEMMs per local
  // expert: more local experts, a longer wait.
  MoeBlockCosts moe;
  moe.experts_fwd.time = Time::us(100);
  moe.experts_fwd.kernels = 3;
  const LayerCosts next;
  const auto stall = [&](int64_t experts) {
    return host_sync_stall(moe_sync_steps(moe, next, Time::us(50), Time::us(50), Time::zero(), experts), Time::us(10),
                           Time::us(20));
  };
  EXPECT_EQ(stall(1), Time::us(30));  // the host is ahead by the time the dispatch ends
  EXPECT_GT(stall(16), stall(4));
  EXPECT_EQ(stall(16), Time::us(30) + Time::us(10 * 33) - Time::us(50));  // 32 GEMMs + 1 kernel after it
}

TEST(HostSync, AGraphedAttentionIsOneLaunch) {
  // After the combine the host issues the next layer's attention: 20 kernels of 2 us eagerly
  // (host-bound), or one graph launch when the attention is captured (Time::us(40) of GPU work).
  MoeBlockCosts moe;
  LayerCosts next;
  next.attn.main_fwd.time = Time::us(40);
  next.attn.main_fwd.kernels = 20;
  const auto stall = [&](bool graphed) {
    return host_sync_stall(moe_sync_steps(moe, next, Time::us(5), Time::us(5), Time::zero(), 1, graphed, false),
                           Time::us(10), Time::zero());
  };
  EXPECT_GT(stall(false), stall(true) + Time::us(100));
  // Graphed: the dispatch's launch (10), 2 GEMMs of host work before the experts (20 less the
  // dispatch's 5), the combine (10), then one launch for the whole attention (10 less the
  // combine's 5).
  EXPECT_EQ(stall(true), Time::us(10) + Time::us(20 - 5) + Time::us(10) + Time::us(10 - 5));
}

}  // namespace
}  // namespace trainsim::models::llm
