#include "sap/contacts.hpp"

namespace sap {

Contacts::Contacts(int nworld, int capacity, Backend b) : nworld_(nworld), capacity_(capacity), backend_(b) {
  count.allocate(b, static_cast<std::size_t>(nworld));
  dropped.allocate(b, static_cast<std::size_t>(nworld));
#define SAP_X(name, type, dim) name.allocate(b, nworld, static_cast<std::size_t>(capacity) * (dim));
  SAP_CONTACT_ARRAYS(SAP_X)
#undef SAP_X
}

ContactsView Contacts::view() {
  ContactsView v;
  v.capacity = capacity_;
  v.count = count.data();
  v.dropped = dropped.data();
#define SAP_X(name, type, dim) v.name = name.slab();
  SAP_CONTACT_ARRAYS(SAP_X)
#undef SAP_X
  return v;
}

void Contacts::clear() {
  count.zero();
  dropped.zero();
}

long long Contacts::total_dropped() const {
  long long s = 0;
  for (int d : dropped_host()) s += d;
  return s;
}

}  // namespace sap
