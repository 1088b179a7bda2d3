// Batched rigid contacts: a fixed capacity per world, a count per world, deterministic slot
// order, and a per-world count of contacts dropped because the capacity was exceeded.
// Produced by CollisionPipeline::collide, consumed by SolverSAP::step.
#pragma once

#include "sap/data.hpp"

namespace sap {

// Per contact slot (world-major, capacity slots per world):
//   geom[2], body[2]   the two geoms and their bodies; the normal points from 0 to 1
//   x0[3], x1[3]       witness points on geom 0 and geom 1 (world)
//   normal[3]          unit normal from geom 0 to geom 1 (world)
//   phi                signed distance (negative = overlap), phi = (x1 - x0) . normal
//   stiffness[3]       combined k (series: k0 k1 / (k0 + k1)), then k0 and k1
//   dissipation        combined dissipation time scale tau_d = tau0 + tau1
//   hc_dissipation     combined Hunt-Crossley dissipation d (s/m), combine_hc_dissipation
//   friction           combined mu
// clang-format off
#define SAP_CONTACT_ARRAYS(X) \
  X(geom, int, 2)             \
  X(body, int, 2)             \
  X(x0, double, 3)            \
  X(x1, double, 3)            \
  X(normal, double, 3)        \
  X(phi, double, 1)           \
  X(stiffness, double, 3)     \
  X(dissipation, double, 1)   \
  X(hc_dissipation, double, 1) \
  X(friction, double, 1)
// clang-format on

// The slabs of a Contacts: ContactsView (the collision's output: writable) and
// ConstContactsView (the solver's input). A ContactsView converts to a ConstContactsView.
template <bool kConst>
struct ContactsViewOf {
  template <class T>
  using Of = std::conditional_t<kConst, const T, T>;
  int capacity = 0;
  Of<int>* count = nullptr;    // per world
  Of<int>* dropped = nullptr;  // per world: contacts found beyond capacity (the shallowest are dropped)
#define SAP_X(name, type, dim) Slab<Of<type>> name;
  SAP_CONTACT_ARRAYS(SAP_X)
#undef SAP_X

  ContactsViewOf() = default;
  template <bool kOther, class = std::enable_if_t<kConst && !kOther>>
  SAP_HDI ContactsViewOf(const ContactsViewOf<kOther>& o) : capacity(o.capacity), count(o.count), dropped(o.dropped) {
#define SAP_X(name, type, dim) this->name = {o.name.ptr, o.name.stride};
    SAP_CONTACT_ARRAYS(SAP_X)
#undef SAP_X
  }
};
using ContactsView = ContactsViewOf<false>;
using ConstContactsView = ContactsViewOf<true>;

class Contacts {
 public:
  Contacts() = default;
  Contacts(int nworld, int capacity, Backend b);
  int nworld() const { return nworld_; }
  int capacity() const { return capacity_; }
  Backend backend() const { return backend_; }
  ContactsView view();
  ConstContactsView view() const { return const_cast<Contacts*>(this)->view(); }

  Buffer<int> count, dropped;
#define SAP_X(name, type, dim) BatchedArray<type> name;
  SAP_CONTACT_ARRAYS(SAP_X)
#undef SAP_X

  void clear();  // all counts to zero
  std::vector<int> counts_host() const { return count.to_host(); }
  std::vector<int> dropped_host() const { return dropped.to_host(); }
  long long total_dropped() const;

 private:
  int nworld_ = 0, capacity_ = 0;
  Backend backend_ = Backend::CPU;
};

}  // namespace sap
