// Send/recv: the group is {sender, receiver}; spec.root names the sender. One step, N bytes.
#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {
namespace {

CollectivePlan plan_send_recv(const CollectiveSpec& spec, const Group&, const AlgorithmParams&, const ChannelInfo&) {
  CollectivePlan p;
  detail::set_chunks(p, spec.bytes, 1);
  detail::add(p, 0, spec.root, 1 - spec.root, 0, false);
  return p;
}

std::string check_send_recv(const CollectiveSpec&, const Group& group, const AlgorithmParams&) {
  return group.size == 2 ? "" : "send_recv runs on a group of 2 ranks {sender, receiver}";
}

TRAINSIM_REGISTER_COLLECTIVE(send_recv, "send_recv", "Point-to-point send/recv: one transfer of N bytes",
                             (CollectiveOp::kSendRecv), plan_send_recv, check_send_recv)

}  // namespace
}  // namespace trainsim::models::collectives
