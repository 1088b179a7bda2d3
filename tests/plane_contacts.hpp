// Analytic contacts of sphere and box geoms against one plane, for solver tests that must not
// depend on the collision pipeline. Geom 0 is the plane (world), geom 1 the body's geom.
#pragma once

#include <Eigen/Dense>
#include <limits>
#include <vector>

#include "sap/contacts.hpp"
#include "sap/dynamics.hpp"

namespace sap::testing {

struct PlaneContactParams {
  Eigen::Vector3d normal{0, 0, 1};  // unit, pointing out of the half-space
  double offset = 0;                // plane: normal . x = offset
  double stiffness = 1e5;           // combined k (the plane is rigid: k0 = inf, k1 = k)
  double dissipation = 0.0;         // combined tau_d
  double hc_dissipation = 10.0;     // combined Hunt-Crossley d (s/m)
  double friction = 0.5;            // combined mu
  double margin = 1e-3;             // contacts while phi < margin
};

struct HostContact {
  int geom[2], body[2];
  Eigen::Vector3d x0, x1, n;
  double phi;
};

// Contacts between the plane and every sphere/box geom of moving bodies at configuration qpos.
inline std::vector<HostContact> plane_contacts(const Model& m, DynamicsEvaluator& ev, const double* qpos,
                                               const PlaneContactParams& p, int plane_geom) {
  ev.compute(qpos, nullptr);
  std::vector<HostContact> out;
  const Eigen::Vector3d n = p.normal.normalized();
  auto add = [&](int g, int b, const Eigen::Vector3d& surface_point) {
    const double phi = n.dot(surface_point) - p.offset;
    if (phi >= p.margin) return;
    HostContact c;
    c.geom[0] = plane_geom;
    c.geom[1] = g;
    c.body[0] = m.geom_bodyid[static_cast<std::size_t>(plane_geom)];
    c.body[1] = b;
    c.x1 = surface_point;
    c.x0 = surface_point - phi * n;
    c.n = n;
    c.phi = phi;
    out.push_back(c);
  };
  for (int g = 0; g < m.ngeom; ++g) {
    const int b = m.geom_bodyid[static_cast<std::size_t>(g)];
    if (b == 0) continue;
    const Eigen::Vector3d gp(&m.geom_pos[3 * static_cast<std::size_t>(g)]);
    const double* gq = &m.geom_quat[4 * static_cast<std::size_t>(g)];
    const Eigen::Matrix3d R = ev.body_rot(b) * Eigen::Quaterniond(gq[0], gq[1], gq[2], gq[3]).toRotationMatrix();
    const Eigen::Vector3d c = ev.body_pos(b) + ev.body_rot(b) * gp;
    const double* s = &m.geom_size[3 * static_cast<std::size_t>(g)];
    if (m.geom_type[static_cast<std::size_t>(g)] == kGeomSphere) {
      add(g, b, c - s[0] * n);
    } else if (m.geom_type[static_cast<std::size_t>(g)] == kGeomBox) {
      for (int k = 0; k < 8; ++k) {
        const Eigen::Vector3d corner((k & 1 ? 1 : -1) * s[0], (k & 2 ? 1 : -1) * s[1], (k & 4 ? 1 : -1) * s[2]);
        add(g, b, c + R * corner);
      }
    }
  }
  return out;
}

// Writes host contacts of world w into `contacts` (CPU backend), truncating at capacity.
inline void upload_contacts(Contacts& contacts, int w, const std::vector<HostContact>& cs,
                            const PlaneContactParams& p) {
  const int cap = contacts.capacity();
  const int n = std::min<int>(cap, static_cast<int>(cs.size()));
  ContactsView v = contacts.view();
  v.count[w] = n;
  v.dropped[w] = static_cast<int>(cs.size()) - n;
  for (int c = 0; c < n; ++c) {
    const HostContact& h = cs[static_cast<std::size_t>(c)];
    for (int k = 0; k < 2; ++k) {
      v.geom(w)[2 * c + k] = h.geom[k];
      v.body(w)[2 * c + k] = h.body[k];
    }
    for (int k = 0; k < 3; ++k) {
      v.x0(w)[3 * c + k] = h.x0[k];
      v.x1(w)[3 * c + k] = h.x1[k];
      v.normal(w)[3 * c + k] = h.n[k];
    }
    v.phi(w)[c] = h.phi;
    v.stiffness(w)[3 * c] = p.stiffness;
    v.stiffness(w)[3 * c + 1] = std::numeric_limits<double>::infinity();
    v.stiffness(w)[3 * c + 2] = p.stiffness;
    v.dissipation(w)[c] = p.dissipation;
    v.hc_dissipation(w)[c] = p.hc_dissipation;
    v.friction(w)[c] = p.friction;
  }
}

}  // namespace sap::testing
