// CollisionPipeline: per-pair constants on the host, workspace per world, one launch per call.
#include "sap/collision.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "launch/launches.hpp"
#include "model/contact_pairs.hpp"

namespace sap {

namespace {

std::string geom_label(const Model& m, int g) {
  const std::size_t i = static_cast<std::size_t>(g);
  const std::string name = i < m.geom_names.size() && !m.geom_names[i].empty() ? "'" + m.geom_names[i] + "'"
                                                                               : "#" + std::to_string(g);
  return "geom " + name + " (" + geom_type_name(m.geom_type[i]) + ")";
}

// The body-pair broad phase (CollisionPairsView::nbody_pair): the candidate pairs grouped by
// their geoms' two bodies (unordered), in order of first appearance; each body stood for by its
// collision geom nearest the middle of the others (least max |pos_g - pos_ref| + reach_g). Only
// groups of two or more pairs with a finite bound are tested; the pairs of the others (one pair:
// its own prune is as cheap; a plane: unbounded) are set in `always`.
struct BodyPairs {
  std::vector<int> geom0, geom1, adr{0}, pair;
  std::vector<double> bound;
  std::vector<unsigned long long> always;
};

BodyPairs group_pairs_by_body(const ModelView& m, const std::vector<int>& g0s, const std::vector<int>& g1s,
                              const std::vector<double>& pair_bound) {
  auto at = [](const auto* a, int i) { return a[static_cast<std::size_t>(i)]; };
  auto dist = [&](int a, int b) {
    double s = 0;
    for (int k = 0; k < 3; ++k) {
      const double d = at(m.geom_pos, 3 * a + k) - at(m.geom_pos, 3 * b + k);
      s += d * d;
    }
    return std::sqrt(s);
  };
  std::map<int, std::vector<int>> body_geoms;  // collision geoms per body
  for (std::size_t p = 0; p < g0s.size(); ++p)
    for (int g : {g0s[p], g1s[p]}) {
      auto& v = body_geoms[at(m.geom_bodyid, g)];
      if (std::find(v.begin(), v.end(), g) == v.end()) v.push_back(g);
    }
  std::map<int, int> ref;  // body -> its reference geom
  for (const auto& [b, geoms] : body_geoms) {
    double best = std::numeric_limits<double>::infinity();
    for (int r : geoms) {
      double reach = 0;
      for (int g : geoms) reach = std::max(reach, dist(g, r) + geom_reach(m, g));
      if (reach < best) {
        best = reach;
        ref[b] = r;
      }
    }
  }
  std::map<std::pair<int, int>, std::vector<int>> members;  // (body, body) -> pair indices, ascending
  std::vector<std::pair<int, int>> order;
  for (std::size_t p = 0; p < g0s.size(); ++p) {
    const int b0 = at(m.geom_bodyid, g0s[p]), b1 = at(m.geom_bodyid, g1s[p]);
    const std::pair<int, int> key{std::min(b0, b1), std::max(b0, b1)};
    auto& v = members[key];
    if (v.empty()) order.push_back(key);
    v.push_back(static_cast<int>(p));
  }
  BodyPairs bp;
  bp.always.assign((g0s.size() + 63) / 64, 0);
  for (const auto& key : order) {
    const std::vector<int>& group = members[key];
    const int r0 = ref[key.first], r1 = ref[key.second];
    double bound = 0;
    for (int p : group) {
      const int g0 = g0s[static_cast<std::size_t>(p)], g1 = g1s[static_cast<std::size_t>(p)];
      if (at(m.geom_type, g0) == kGeomPlane || at(m.geom_type, g1) == kGeomPlane) {
        bound = std::numeric_limits<double>::infinity();  // a half-space: no sphere bounds it
        break;
      }
      // Each geom's distance to its own body's reference geom (pairs name the bodies in either order).
      const int a0 = at(m.geom_bodyid, g0) == key.first ? r0 : r1, a1 = a0 == r0 ? r1 : r0;
      bound = std::max(bound, pair_bound[static_cast<std::size_t>(p)] + dist(g0, a0) + dist(g1, a1));
    }
    if (group.size() < 2 || !std::isfinite(bound)) {
      for (int p : group) bp.always[static_cast<std::size_t>(p / 64)] |= 1ULL << (p % 64);
      continue;
    }
    bp.geom0.push_back(r0);
    bp.geom1.push_back(r1);
    bp.bound.push_back(bound * kBodyPairSlack);
    bp.pair.insert(bp.pair.end(), group.begin(), group.end());
    bp.adr.push_back(static_cast<int>(bp.pair.size()));
  }
  return bp;
}

}  // namespace

struct CollisionPipeline::Impl {
  Context& ctx;
  int nworld;
  Precision precision;
  int nq = 0;
  ModelStorage storage;
  Buffer<int> pair_geom0, pair_geom1;
  Buffer<double> pair_margin, pair_shift, pair_stiffness, pair_dissipation, pair_hc_dissipation, pair_friction,
      pair_bound;
  Buffer<int> body_pair_geom0, body_pair_geom1, body_pair_adr, body_pair_pair;  // broad phase
  Buffer<double> body_pair_bound;
  Buffer<unsigned long long> body_pair_always;
  int nbody_pair = 0;
  Buffer<int> pair_condim;           // angular only
  Buffer<double> pair_friction_ext;  // angular only
  bool angular = false;              // some pair has condim 4 or 6 (contacts carry SAP_CONTACT_ANGULAR_ARRAYS)
  int npair = 0;
  int unsupported = 0;
  bool convex_pairs = false;  // some pair needs the convex solvers (not pair_is_analytic)
  std::vector<std::string> warnings;
  BatchedArray<double> xpos, xquat, xmat, xipos, xanchor, xaxis, geom_xpos, geom_xmat;
  BatchedArray<int> seq;
  Data* shared = nullptr;  // share_kinematics_workspace: body kinematics in this Data
  std::unique_ptr<CollisionLaunch> launch;

  Impl(const Model& m, Context& c, int nw, Precision p) : ctx(c), nworld(nw), precision(p), nq(m.nq) {
    const Backend b = ctx.backend();
    storage = ModelStorage(m, b);
    // Pairs with a narrow phase and their constants under the model's contact rule
    // (model/contact_pairs.hpp; docs/model-import.md "Contact parameters").
    angular = max_pair_condim(m) > 3;
    std::vector<int> g0s, g1s, condim;
    std::vector<double> margin, shift, stiffness, dissipation, hc_dissipation, friction, friction_ext, bound;
    const ModelView mv = m.view();
    for (int p = 0; p < m.npair; ++p) {
      const int g0 = m.pair_geom0[static_cast<std::size_t>(p)], g1 = m.pair_geom1[static_cast<std::size_t>(p)];
      const std::size_t i0 = static_cast<std::size_t>(g0), i1 = static_cast<std::size_t>(g1);
      if (pair_max_contacts(m.geom_type[i0], m.geom_type[i1]) == 0) {
        ++unsupported;
        warnings.push_back("collision pair " + geom_label(m, g0) + " - " + geom_label(m, g1) +
                           " is not supported (plane-plane, plane-hfield, hfield-hfield); it never produces contacts");
        continue;
      }
      g0s.push_back(g0);
      g1s.push_back(g1);
      convex_pairs = convex_pairs || !pair_is_analytic(m.geom_type[i0], m.geom_type[i1]);
      const PairContactParams pc = pair_contact_params(m, p);
      margin.push_back(pc.detect);
      bound.push_back(pair_prune_bound<double>(mv, g0, g1, pc.detect));
      shift.push_back(pc.shift);
      stiffness.insert(stiffness.end(), pc.stiffness.begin(), pc.stiffness.end());
      dissipation.push_back(pc.dissipation);
      hc_dissipation.push_back(pc.hc_dissipation);
      friction.push_back(pc.friction[0]);
      if (angular) {
        condim.push_back(pc.condim);
        friction_ext.insert(friction_ext.end(), pc.friction.begin() + 1, pc.friction.end());
      }
    }
    npair = static_cast<int>(g0s.size());
    auto upload = [b](auto& buf, const auto& host) {
      buf.allocate(b, host.size());
      buf.upload(host.data(), host.size());
    };
    upload(pair_geom0, g0s);
    upload(pair_geom1, g1s);
    upload(pair_margin, margin);
    upload(pair_shift, shift);
    upload(pair_condim, condim);
    upload(pair_friction_ext, friction_ext);
    upload(pair_stiffness, stiffness);
    upload(pair_dissipation, dissipation);
    upload(pair_hc_dissipation, hc_dissipation);
    upload(pair_friction, friction);
    upload(pair_bound, bound);
    // The body-pair broad phase where some body pair groups pairs.
    BodyPairs bp = group_pairs_by_body(mv, g0s, g1s, bound);
    nbody_pair = static_cast<int>(bp.geom0.size());
    if (nbody_pair > 0) {
      upload(body_pair_always, bp.always);
      upload(body_pair_geom0, bp.geom0);
      upload(body_pair_geom1, bp.geom1);
      upload(body_pair_bound, bp.bound);
      upload(body_pair_adr, bp.adr);
      upload(body_pair_pair, bp.pair);
    }
    const auto nb = static_cast<std::size_t>(m.nbody), nj = static_cast<std::size_t>(m.njnt),
               ng = static_cast<std::size_t>(m.ngeom);
    xpos.allocate(b, nworld, nb * 3);
    xquat.allocate(b, nworld, nb * 4);
    xmat.allocate(b, nworld, nb * 9);
    xipos.allocate(b, nworld, nb * 3);
    xanchor.allocate(b, nworld, nj * 3);
    xaxis.allocate(b, nworld, nj * 3);
    geom_xpos.allocate(b, nworld, ng * 3);
    geom_xmat.allocate(b, nworld, ng * 9);
    launch = make_collision_launch(ctx);
    if (unsupported > 0)
      std::cerr << "sap: warning: " << unsupported << " candidate collision pair(s) are not supported and will "
                << "never produce contacts; first: " << warnings.front() << "\n";
  }

  CollisionPairsView pairs_view() const {
    CollisionPairsView v;
    v.npair = npair;
    v.geom0 = pair_geom0.data();
    v.geom1 = pair_geom1.data();
    v.margin = pair_margin.data();
    v.shift = pair_shift.data();
    v.condim = angular ? pair_condim.data() : nullptr;
    v.friction_ext = angular ? pair_friction_ext.data() : nullptr;
    v.stiffness = pair_stiffness.data();
    v.dissipation = pair_dissipation.data();
    v.hc_dissipation = pair_hc_dissipation.data();
    v.friction = pair_friction.data();
    v.bound = pair_bound.data();
    v.nbody_pair = nbody_pair;
    if (nbody_pair > 0) {
      v.body_pair_geom0 = body_pair_geom0.data();
      v.body_pair_geom1 = body_pair_geom1.data();
      v.body_pair_bound = body_pair_bound.data();
      v.body_pair_adr = body_pair_adr.data();
      v.body_pair_pair = body_pair_pair.data();
      v.body_pair_always = body_pair_always.data();
    }
    return v;
  }

  CollisionWorkspaceView workspace_view() {
    if (shared)
      return {shared->xpos.slab(),  shared->xquat.slab(), shared->xmat.slab(), shared->xipos.slab(),
              shared->xanchor.slab(), shared->xaxis.slab(), geom_xpos.slab(), geom_xmat.slab(), seq.slab()};
    return {xpos.slab(),  xquat.slab(),     xmat.slab(),      xipos.slab(), xanchor.slab(),
            xaxis.slab(), geom_xpos.slab(), geom_xmat.slab(), seq.slab()};
  }
};

CollisionPipeline::CollisionPipeline(const Model& model, Context& ctx, int nworld, Precision precision) {
  if (nworld <= 0)
    throw std::invalid_argument("CollisionPipeline: nworld must be positive, got " + std::to_string(nworld));
  model.validate();
  impl_ = std::make_unique<Impl>(model, ctx, nworld, precision);
}

CollisionPipeline::~CollisionPipeline() = default;

int CollisionPipeline::unsupported_pair_count() const { return impl_->unsupported; }
const std::vector<std::string>& CollisionPipeline::warnings() const { return impl_->warnings; }
int CollisionPipeline::active_pair_count() const { return impl_->npair; }
int CollisionPipeline::body_pair_group_count() const { return impl_->nbody_pair; }
bool CollisionPipeline::uses_convex_solvers() const { return impl_->convex_pairs; }
bool CollisionPipeline::angular_friction() const { return impl_->angular; }
Precision CollisionPipeline::precision() const { return impl_->precision; }

void CollisionPipeline::collide(const State& state, Contacts& contacts) {
  Impl& im = *impl_;
  const Backend b = im.ctx.backend();
  if (state.nworld() != im.nworld)
    throw std::invalid_argument("CollisionPipeline::collide: state has " + std::to_string(state.nworld()) +
                                " worlds, the pipeline " + std::to_string(im.nworld));
  if (contacts.nworld() != im.nworld)
    throw std::invalid_argument("CollisionPipeline::collide: contacts have " + std::to_string(contacts.nworld()) +
                                " worlds, the pipeline " + std::to_string(im.nworld));
  if (state.backend() != b || contacts.backend() != b)
    throw std::invalid_argument(std::string("CollisionPipeline::collide: state and contacts must live on the ") +
                                backend_name(b) + " backend of the pipeline's context");
  if (contacts.angular() != im.angular)
    throw std::invalid_argument(std::string("CollisionPipeline::collide: the model ") +
                                (im.angular ? "has" : "has no") + " torsional or rolling friction (a pair of condim 4 or 6), "
                                "the contacts " + (contacts.angular() ? "carry" : "do not carry") +
                                " its arrays (Contacts(..., angular = CollisionPipeline::angular_friction()))");
  if (state.qpos.per_world() != static_cast<std::size_t>(im.nq))
    throw std::invalid_argument("CollisionPipeline::collide: state has " + std::to_string(state.qpos.per_world()) +
                                " qpos per world, the model nq = " + std::to_string(im.nq));
  // Generation ranks of the kept contacts (sized by the contacts' capacity on first use: a
  // Simulator's first steps are plain launches, so a CUDA graph capture never allocates here).
  if (im.seq.nworld() != im.nworld || im.seq.per_world() != static_cast<std::size_t>(contacts.capacity()))
    im.seq.allocate(b, im.nworld, static_cast<std::size_t>(contacts.capacity()));
  im.launch->collide(im.precision, im.convex_pairs, im.nworld, im.storage.view(), state.qpos.slab(), im.workspace_view(),
                     im.pairs_view(), contacts.view());
  last_contacts_ = &contacts;  // the total is read on demand: no device sync per collide
}

void CollisionPipeline::share_kinematics_workspace(Data& d) {
  Impl& im = *impl_;
  if (d.nworld() != im.nworld || d.xpos.per_world() != im.xpos.per_world() ||
      d.xanchor.per_world() != im.xanchor.per_world() || d.xpos.buffer().backend() != im.ctx.backend())
    throw std::invalid_argument("CollisionPipeline::share_kinematics_workspace: the Data has another world count, "
                                "model or backend than the pipeline");
  im.shared = &d;
  for (auto* a : {&im.xpos, &im.xquat, &im.xmat, &im.xipos, &im.xanchor, &im.xaxis}) a->allocate(im.ctx.backend(), im.nworld, 0);
}

std::vector<std::pair<std::string, long long>> CollisionPipeline::buffer_bytes_per_world() const {
  const Impl& im = *impl_;
  std::vector<std::pair<std::string, long long>> out;
  auto add = [&](const char* name, const auto& a) {
    using T = typename std::decay_t<decltype(a.buffer())>::value_type;
    if (a.per_world() > 0) out.emplace_back(std::string("collision.") + name, static_cast<long long>(a.per_world() * sizeof(T)));
  };
  add("xpos", im.xpos);
  add("xquat", im.xquat);
  add("xmat", im.xmat);
  add("xipos", im.xipos);
  add("xanchor", im.xanchor);
  add("xaxis", im.xaxis);
  add("geom_xpos", im.geom_xpos);
  add("geom_xmat", im.geom_xmat);
  add("seq", im.seq);
  return out;
}

long long CollisionPipeline::last_dropped_total() const { return last_contacts_ ? last_contacts_->total_dropped() : 0; }

int estimate_contact_capacity(const Model& model, int cap) {
  long long total = 0;
  for (int p = 0; p < model.npair; ++p)
    total +=
        pair_max_contacts(model.geom_type[static_cast<std::size_t>(model.pair_geom0[static_cast<std::size_t>(p)])],
                          model.geom_type[static_cast<std::size_t>(model.pair_geom1[static_cast<std::size_t>(p)])]);
  return static_cast<int>(total < cap ? total : cap);
}

}  // namespace sap
