// One world's contacts read back to the host as records (any backend): for tests that compare
// contact lists (the collision pipeline against its serial order, CUDA against the CPU oracle).
#pragma once

#include <tuple>
#include <vector>

#include "sap/contacts.hpp"

namespace sap::test {

struct HostContact {
  int geom[2], body[2];
  double x0[3], x1[3], normal[3], phi, stiffness[3], dissipation, friction;
  auto key() const { return std::tie(phi); }
};

inline std::vector<HostContact> world_contacts(const Contacts& c, int w) {
  const int n = c.counts_host()[static_cast<std::size_t>(w)];
  const auto geom = c.geom.world_to_host(w), body = c.body.world_to_host(w);
  const auto x0 = c.x0.world_to_host(w), x1 = c.x1.world_to_host(w), nrm = c.normal.world_to_host(w);
  const auto phi = c.phi.world_to_host(w), k = c.stiffness.world_to_host(w);
  const auto tau = c.dissipation.world_to_host(w), mu = c.friction.world_to_host(w);
  std::vector<HostContact> r(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    HostContact& h = r[static_cast<std::size_t>(i)];
    const std::size_t s = static_cast<std::size_t>(i);
    for (int a = 0; a < 2; ++a) h.geom[a] = geom[2 * s + a], h.body[a] = body[2 * s + a];
    for (int a = 0; a < 3; ++a) {
      h.x0[a] = x0[3 * s + a], h.x1[a] = x1[3 * s + a], h.normal[a] = nrm[3 * s + a];
      h.stiffness[a] = k[3 * s + a];
    }
    h.phi = phi[s], h.dissipation = tau[s], h.friction = mu[s];
  }
  return r;
}

}  // namespace sap::test
