// Spatial tendons (MuJoCo's <tendon><spatial>): length and moment arms of a path through sites
// that wraps around spheres and cylinders and splits at pulleys. Written once for host and
// device, templated on the scalar S; one tendon of one world per call.
//
// Path (MuJoCo's semantics, mj_tendon): elements [adr, adr + num) of the wrap arrays, each a
// site, a wrapping geom (sphere or cylinder, optionally with a sidesite) between two sites, or a
// pulley. The length is the sum over consecutive site pairs (s_a, s_b) of
//   |s_b - s_a|                                   no geom between them, or the geom not touched,
//   |t_0 - s_a| + arc(t_0, t_1) + |s_b - t_1|     the straight pieces tangent to the geom,
// each divided by the divisor of the last pulley before it (1 before any pulley).
//
// Moment arms (MuJoCo's ten_moment, J_t = dL/dq): for every straight piece from point p_a fixed
// to body a to point p_b fixed to body b (a != b), with unit direction u = (p_b - p_a)/|p_b - p_a|
// and divisor D,
//   J_t += u^T (J_b(p_b) - J_a(p_a)) / D,
// J_x(p) the world-frame point Jacobian. A tangent point counts as fixed to the geom's body:
// pieces between two points of one body (the arc) add nothing. This is dL/dq exactly: the
// tangency makes the derivative of the wrapped length w.r.t. the tangent points vanish
// (tests/test_spatial_tendon.cpp checks it by finite differences).
#pragma once

#include "kernels/scalar_math.hpp"
#include "sap/math/quat.hpp"
#include "sap/math/spatial.hpp"
#include "sap/model.hpp"

namespace sap {

// The model arrays a spatial tendon's path reads (ids in the path are ids into these arrays).
struct SpatialPathView {
  const int* wrap_type = nullptr;     // WrapType per path element
  const int* wrap_objid = nullptr;    // site id (kWrapSite) or geom id (kWrapSphere/Cylinder)
  const double* wrap_prm = nullptr;   // pulley: divisor; geom: sidesite id, -1 for none
  const int* site_bodyid = nullptr;
  const double* site_pos = nullptr;   // site position in its body's frame
  const int* geom_bodyid = nullptr;
  const double* geom_pos = nullptr;   // geom frame in its body's frame
  const double* geom_quat = nullptr;
  const double* geom_size = nullptr;  // size[0]: the wrapping radius
};

// The model's spatial-path arrays.
SAP_HDI SpatialPathView spatial_path_view(const ModelView& m) {
  SpatialPathView p;
  p.wrap_type = m.wrap_type;
  p.wrap_objid = m.wrap_objid;
  p.wrap_prm = m.wrap_prm;
  p.site_bodyid = m.site_bodyid;
  p.site_pos = m.site_pos;
  p.geom_bodyid = m.geom_bodyid;
  p.geom_pos = m.geom_pos;
  p.geom_quat = m.geom_quat;
  p.geom_size = m.geom_size;
  return p;
}

namespace wrap_detail {

// MuJoCo's normalisation: a vector shorter than kMjMinVal becomes the first unit vector.
template <class S>
SAP_HDI S normalize2(S* v) {
  const S n = sqrt_(v[0] * v[0] + v[1] * v[1]);
  if (n < S(kMjMinVal)) {
    v[0] = S(1);
    v[1] = S(0);
  } else {
    v[0] /= n;
    v[1] /= n;
  }
  return n;
}
template <class S>
SAP_HDI Vec3<S> normalized_or_x(const Vec3<S>& v, S* norm_out = nullptr) {
  const S n = norm(v);
  if (norm_out) *norm_out = n;
  return n < S(kMjMinVal) ? Vec3<S>::unit(0) : v / n;
}

// Do the 2D segments p1-p2 and p3-p4 intersect? Parallel segments do not.
template <class S>
SAP_HDI bool segments_intersect(const S* p1, const S* p2, const S* p3, const S* p4) {
  const S det = (p4[1] - p3[1]) * (p2[0] - p1[0]) - (p4[0] - p3[0]) * (p2[1] - p1[1]);
  if (abs_(det) < S(kMjMinVal)) return false;
  const S a = ((p4[0] - p3[0]) * (p1[1] - p3[1]) - (p4[1] - p3[1]) * (p1[0] - p3[0])) / det;
  const S b = ((p2[0] - p1[0]) * (p1[1] - p3[1]) - (p2[1] - p1[1]) * (p1[0] - p3[0])) / det;
  return a >= S(0) && a <= S(1) && b >= S(0) && b <= S(1);
}

// Arc length on the circle of radius r from p0 to p1: r times the angle between them in
// [0, pi], or 2 pi minus it when the turn from p0 to p1 goes against the solution's sense
// (second solution: counter-clockwise, first: clockwise).
template <class S>
SAP_HDI S arc_length(const S* p0, const S* p1, bool second, S r) {
  S a[2] = {p0[0], p0[1]}, b[2] = {p1[0], p1[1]};
  normalize2(a);
  normalize2(b);
  S angle = acos_(clamp_(a[0] * b[0] + a[1] * b[1], S(-1), S(1)));
  const S turn = p0[1] * p1[0] - p0[0] * p1[1];
  if ((turn > S(0) && second) || (turn < S(0) && !second)) angle = S(2 * kPi) - angle;
  return r * angle;
}

// Wrap of the 2D segment end[0..1] - end[2..3] around the circle of radius r at the origin:
// the two tangent points in pnt and the arc length between them, or -1 when the segment does
// not wrap (an end inside the circle, the segment clear of the circle on the sidesite's side,
// or the tangent lines crossing). side (unit * r, or null): the sidesite's direction; the wrap
// goes round its side, else the shorter way.
template <class S>
SAP_HDI S wrap_circle(S* pnt, const S* end, const S* side, S r) {
  const S sq0 = end[0] * end[0] + end[1] * end[1], sq1 = end[2] * end[2] + end[3] * end[3], r2 = r * r;
  if (sq0 < r2 || sq1 < r2 || r < S(kMjMinVal)) return S(-1);
  const S dif[2] = {end[2] - end[0], end[3] - end[1]};
  const S dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (dd < S(kMjMinVal)) return S(-1);
  // Point of the segment nearest the centre: clear of the circle (on the sidesite's side) -> no wrap.
  const S a = clamp_(-(dif[0] * end[0] + dif[1] * end[1]) / dd, S(0), S(1));
  const S near[2] = {a * dif[0] + end[0], a * dif[1] + end[1]};
  if (near[0] * near[0] + near[1] * near[1] > r2 && (!side || side[0] * near[0] + side[1] * near[1] >= S(0)))
    return S(-1);
  const S root0 = sqrt_(sq0 - r2), root1 = sqrt_(sq1 - r2);
  // Tangent points from each end: sgn +1 (i = 0) and -1 (i = 1).
  S sol[2][4], good[2];
  for (int i = 0; i < 2; ++i) {
    const S sgn = i == 0 ? S(1) : S(-1);
    sol[i][0] = (end[0] * r2 + sgn * r * end[1] * root0) / sq0;
    sol[i][1] = (end[1] * r2 - sgn * r * end[0] * root0) / sq0;
    sol[i][2] = (end[2] * r2 - sgn * r * end[3] * root1) / sq1;
    sol[i][3] = (end[3] * r2 + sgn * r * end[2] * root1) / sq1;
    if (side) {  // closest to the sidesite
      S mid[2] = {sol[i][0] + sol[i][2], sol[i][1] + sol[i][3]};
      normalize2(mid);
      good[i] = mid[0] * side[0] + mid[1] * side[1];
    } else {  // shorter chord
      const S c0 = sol[i][0] - sol[i][2], c1 = sol[i][1] - sol[i][3];
      good[i] = -(c0 * c0 + c1 * c1);
    }
    if (segments_intersect(end, sol[i], end + 2, sol[i] + 2)) good[i] = S(-10000);
  }
  const int i = good[0] > good[1] ? 0 : 1;
  for (int k = 0; k < 4; ++k) pnt[k] = sol[i][k];
  if (segments_intersect(end, pnt, end + 2, pnt + 2)) return S(-1);
  return arc_length(sol[i], sol[i] + 2, i == 1, r);
}

// Inside wrap (sidesite inside the geom): the path from end[0..1] to end[2..3] touches the
// circle at one point t (returned twice in pnt) where the two straight pieces make equal
// angles with the radius (the shortest path via the circle seen from inside). With A = r/|e0|,
// B = r/|e1| and G the angle between e0 and e1, z = sin of the angle at t solves
//   asin(A z) + asin(B z) - 2 asin(z) + G = 0,
// by Newton from z = 1 - 1e-7 (20 iterations, tolerance 1e-6). Returns 0 (a wrap of zero arc
// length) or -1 (no wrap: an end inside the circle, or the segment crossing it); numerical
// failure keeps the fallback point r (e0 + e1)/|e0 + e1|.
template <class S>
SAP_HDI S wrap_inside(S* pnt, const S* end, S r) {
  const S len0 = sqrt_(end[0] * end[0] + end[1] * end[1]), len1 = sqrt_(end[2] * end[2] + end[3] * end[3]);
  const S dif[2] = {end[2] - end[0], end[3] - end[1]};
  const S dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (len0 <= r || len1 <= r || r < S(kMjMinVal) || len0 < S(kMjMinVal) || len1 < S(kMjMinVal)) return S(-1);
  if (dd > S(kMjMinVal)) {  // the segment crosses the circle: no wrap
    const S a = -(dif[0] * end[0] + dif[1] * end[1]) / dd;
    if (a > S(0) && a < S(1)) {
      const S x = end[0] + a * dif[0], y = end[1] + a * dif[1];
      if (sqrt_(x * x + y * y) <= r) return S(-1);
    }
  }
  S mid[2] = {S(0.5) * (end[0] + end[2]), S(0.5) * (end[1] + end[3])};
  normalize2(mid);
  pnt[0] = pnt[2] = r * mid[0];
  pnt[1] = pnt[3] = r * mid[1];
  const S A = r / len0, B = r / len1;
  const S cosG = (len0 * len0 + len1 * len1 - dd) / (S(2) * len0 * len1);
  if (cosG < S(-1) + S(kMjMinVal)) return S(-1);
  if (cosG > S(1) - S(kMjMinVal)) return S(0);
  const S G = acos_(cosG);
  auto f_of = [&](S z) { return asin_(A * z) + asin_(B * z) - S(2) * asin_(z) + G; };
  S z = S(1) - S(1e-7);
  S f = f_of(z);
  if (f > S(0)) return S(0);
  int iter = 0;
  for (; iter < 20 && abs_(f) > S(1e-6); ++iter) {
    const S df = A / max_(S(kMjMinVal), sqrt_(S(1) - z * z * A * A)) + B / max_(S(kMjMinVal), sqrt_(S(1) - z * z * B * B)) -
                 S(2) / max_(S(kMjMinVal), sqrt_(S(1) - z * z));
    if (df > -S(kMjMinVal)) return S(0);
    const S z1 = z - f / df;
    if (z1 > z) return S(0);
    z = z1;
    f = f_of(z);
    if (f > S(1e-6)) return S(0);
  }
  if (iter >= 20) return S(0);
  // Rotate the end whose turn to the other is positive by asin(z) - asin(A z) (or B).
  S v[2];
  S ang;
  if (end[0] * end[3] - end[1] * end[2] > S(0)) {
    v[0] = end[0];
    v[1] = end[1];
    ang = asin_(z) - asin_(A * z);
  } else {
    v[0] = end[2];
    v[1] = end[3];
    ang = asin_(z) - asin_(B * z);
  }
  normalize2(v);
  pnt[0] = pnt[2] = r * (cos_(ang) * v[0] - sin_(ang) * v[1]);
  pnt[1] = pnt[3] = r * (sin_(ang) * v[0] + cos_(ang) * v[1]);
  return S(0);
}

}  // namespace wrap_detail

// Wrap of the straight segment x0 - x1 (world) around a sphere or cylinder (kWrapSphere,
// kWrapCylinder; radius r, frame (gpos, gmat) world; a cylinder's axis is its local z): the
// tangent points t0, t1 (world) and the wrapped length between them, or -1 when the segment
// does not wrap. side (world, or null): the sidesite; inside the geom it selects the inside
// wrap. The 3D problem becomes a circle problem in a plane: for a sphere the plane of x0, x1
// and the centre, for a cylinder its cross-section (the path then climbs linearly in z along
// the straight pieces and the arc, and the arc's length includes the climb).
template <class S>
SAP_HD S wrap_geom(const Vec3<S>& x0, const Vec3<S>& x1, const Vec3<S>& gpos, const Mat3<S>& gmat, S r, int type,
                   const Vec3<S>* side, Vec3<S>& t0, Vec3<S>& t1) {
  using namespace wrap_detail;
  const Vec3<S> p0 = mul_transpose(gmat, x0 - gpos), p1 = mul_transpose(gmat, x1 - gpos);
  if (norm(p0) < S(kMjMinVal) || norm(p1) < S(kMjMinVal)) return S(-1);
  Vec3<S> axis0, axis1;
  if (type == kWrapSphere) {
    axis0 = normalized_or_x(p0);
    S nrm;
    Vec3<S> normal = normalized_or_x(cross(p0, p1), &nrm);
    if (nrm < S(kMjMinVal)) {  // x0, x1 and the centre on one line: any plane through them
      int i = 0;
      if (abs_(axis0[1]) > abs_(axis0[0]) && abs_(axis0[1]) > abs_(axis0[2])) i = 1;
      if (abs_(axis0[2]) > abs_(axis0[0]) && abs_(axis0[2]) > abs_(axis0[1])) i = 2;
      Vec3<S> other{{S(1), S(1), S(1)}};
      other[i] = S(0);
      normal = normalized_or_x(cross(axis0, other));
    }
    axis1 = normalized_or_x(cross(normal, axis0));
  } else {
    axis0 = Vec3<S>::unit(0);
    axis1 = Vec3<S>::unit(1);
  }
  const S d[4] = {dot(p0, axis0), dot(p0, axis1), dot(p1, axis0), dot(p1, axis1)};
  S pnt[4];
  S wlen;
  if (side) {
    const Vec3<S> s = mul_transpose(gmat, *side - gpos);
    S sd[2] = {dot(s, axis0), dot(s, axis1)};
    normalize2(sd);
    sd[0] *= r;
    sd[1] *= r;
    if (norm(s) < r) {  // fp64 in both precisions: asin near 1 leaves fp32 no correct digit of t
      double pnt64[4];
      const double d64[4] = {double(d[0]), double(d[1]), double(d[2]), double(d[3])};
      wlen = S(wrap_inside<double>(pnt64, d64, double(r)));
      for (int k = 0; k < 4; ++k) pnt[k] = S(pnt64[k]);
    } else {
      wlen = wrap_circle(pnt, d, sd, r);
    }
  } else {
    wlen = wrap_circle(pnt, d, static_cast<const S*>(nullptr), r);
  }
  if (wlen < S(0)) return S(-1);
  Vec3<S> res0 = pnt[0] * axis0 + pnt[1] * axis1, res1 = pnt[2] * axis0 + pnt[3] * axis1;
  if (type == kWrapCylinder) {  // heights by the fraction of the planar path length
    const S L0 = sqrt_(sqr_(p0[0] - res0[0]) + sqr_(p0[1] - res0[1]));
    const S L1 = sqrt_(sqr_(p1[0] - res1[0]) + sqr_(p1[1] - res1[1]));
    const S total = L0 + wlen + L1;
    res0[2] = p0[2] + (p1[2] - p0[2]) * L0 / total;
    res1[2] = p0[2] + (p1[2] - p0[2]) * (L0 + wlen) / total;
    const S height = abs_(res1[2] - res0[2]);
    wlen = sqrt_(wlen * wlen + height * height);
  }
  t0 = gmat * res0 + gpos;
  t1 = gmat * res1 + gpos;
  return wlen;
}

// A point fixed to a body (the body id and its world position): a site, or a tangent point
// (fixed to the wrapping geom's body).
template <class S>
struct PathPoint {
  int body;
  Vec3<S> x;
};

// World position of site s from its body's pose (xpos, xmat of all bodies, row-major 3x3).
template <class S>
SAP_HDI PathPoint<S> site_point(const SpatialPathView& p, const double* xpos, const double* xmat, int s) {
  const int b = p.site_bodyid[s];
  return {b, Mat3<S>::load(xmat + 9 * b) * Vec3<S>::load(p.site_pos + 3 * s) + Vec3<S>::load(xpos + 3 * b)};
}

// Walks the path of one spatial tendon (elements [adr, adr + num)), calling
// piece(a, b, u, inv_divisor) for every straight piece between points a and b of different
// bodies (u the unit direction a -> b, MuJoCo's normalisation), and returns the tendon length.
template <class S, class Piece>
SAP_HD S spatial_tendon_path(const SpatialPathView& p, int adr, int num, const double* xpos, const double* xmat,
                             Piece&& piece) {
  using namespace wrap_detail;
  S length = S(0), inv_divisor = S(1);
  int j = 0;
  while (j < num - 1) {
    const int type0 = p.wrap_type[adr + j], type1 = p.wrap_type[adr + j + 1];
    if (type0 == kWrapPulley || type1 == kWrapPulley) {
      if (type0 == kWrapPulley) inv_divisor = S(1) / S(p.wrap_prm[adr + j]);
      ++j;
      continue;
    }
    PathPoint<S> pts[4];
    pts[0] = site_point<S>(p, xpos, xmat, p.wrap_objid[adr + j]);
    S wlen = S(-1);
    int last = adr + j + 1;  // the site that ends this stretch
    const bool geom = type1 == kWrapSphere || type1 == kWrapCylinder;
    if (geom) {
      last = adr + j + 2;
      const int g = p.wrap_objid[adr + j + 1], gb = p.geom_bodyid[g];
      const Mat3<S> bmat = Mat3<S>::load(xmat + 9 * gb);
      const Vec3<S> gpos = bmat * Vec3<S>::load(p.geom_pos + 3 * g) + Vec3<S>::load(xpos + 3 * gb);
      const Mat3<S> gmat = bmat * to_matrix(Quat<S>::load(p.geom_quat + 4 * g));
      const PathPoint<S> end = site_point<S>(p, xpos, xmat, p.wrap_objid[last]);
      const int sideid = static_cast<int>(p.wrap_prm[adr + j + 1] + (p.wrap_prm[adr + j + 1] >= 0 ? 0.5 : -0.5));
      Vec3<S> side;
      if (sideid >= 0) side = site_point<S>(p, xpos, xmat, sideid).x;
      wlen = wrap_geom<S>(pts[0].x, end.x, gpos, gmat, S(p.geom_size[3 * g]), type1, sideid >= 0 ? &side : nullptr,
                          pts[1].x, pts[2].x);
      pts[1].body = pts[2].body = gb;
      pts[3] = end;
    }
    int npts;
    if (wlen < S(0)) {
      pts[1] = site_point<S>(p, xpos, xmat, p.wrap_objid[last]);
      length += norm(pts[1].x - pts[0].x) * inv_divisor;
      npts = 2;
    } else {
      length += (norm(pts[1].x - pts[0].x) + wlen + norm(pts[3].x - pts[2].x)) * inv_divisor;
      npts = 4;
    }
    for (int k = 0; k + 1 < npts; ++k)
      if (pts[k].body != pts[k + 1].body) piece(pts[k], pts[k + 1], normalized_or_x(pts[k + 1].x - pts[k].x), inv_divisor);
    j += geom ? 2 : 1;
  }
  return length;
}

// Last dof on the path from body b to the root (-1 when b is welded to the world).
SAP_HDI int tendon_body_last_dof(const ModelView& m, int b) {
  while (b > 0 && m.body_dofnum[b] == 0) b = m.body_parentid[b];
  return b > 0 ? m.body_dofadr[b] + m.body_dofnum[b] - 1 : -1;
}

// moment += scale u^T (J_b(x_b) - J_a(x_a)) over the dofs of the two bodies' paths, with the
// com-based dof subspaces cdof (point velocity cdof.lin + cdof.ang x (x - P), P the tree's
// reference point: the world position of its root body). moment has m.nv entries.
template <class S>
SAP_HD void add_piece_moment(const ModelView& m, const double* xpos, const double* cdof, const PathPoint<S>& a,
                             const PathPoint<S>& b, const Vec3<S>& u, S scale, double* moment) {
  const Vec3<S> ra = a.x - Vec3<S>::load(xpos + 3 * m.body_rootid[a.body]);
  const Vec3<S> rb = b.x - Vec3<S>::load(xpos + 3 * m.body_rootid[b.body]);
  int da = tendon_body_last_dof(m, a.body), db = tendon_body_last_dof(m, b.body);
  while (da >= 0 || db >= 0) {
    const int dof = da > db ? da : db;
    const Vec6<S> s = Vec6<S>::load(cdof + 6 * dof);
    S v = S(0);
    if (dof == db) {
      v += dot(u, point_velocity(s, rb));
      db = m.dof_parentid[db];
    }
    if (dof == da) {
      v -= dot(u, point_velocity(s, ra));
      da = m.dof_parentid[da];
    }
    moment[dof] = double(S(moment[dof]) + scale * v);
  }
}

// Length of one spatial tendon and its moment arms dL/dq (moment: m.nv entries, overwritten)
// at the poses xpos, xmat and dof subspaces cdof of one world.
template <class S>
SAP_HD S spatial_tendon_length_moment(const ModelView& m, const SpatialPathView& p, int adr, int num,
                                      const double* xpos, const double* xmat, const double* cdof, double* moment) {
  for (int i = 0; i < m.nv; ++i) moment[i] = 0;
  return spatial_tendon_path<S>(p, adr, num, xpos, xmat,
                                [&](const PathPoint<S>& a, const PathPoint<S>& b, const Vec3<S>& u, S inv_divisor) {
                                  add_piece_moment<S>(m, xpos, cdof, a, b, u, inv_divisor, moment);
                                });
}

}  // namespace sap

namespace sap {

// ---------------------------------------------------------------- tendons of one world
// A fixed tendon's length and moment arms follow from q and its joints' coefficients; a spatial
// tendon's are the world's per-world data ten_length[t], ten_moment[t * nv ..] (tendon_kinematics).

SAP_HDI bool tendon_is_spatial(const ModelView& m, int t) { return m.wrap_type[m.tendon_adr[t]] != kWrapJoint; }

template <class S>
SAP_HDI S tendon_length(const ModelView& m, int t, const double* qpos, const double* ten_length) {
  if (tendon_is_spatial(m, t)) return S(ten_length[t]);
  S L = S(0);
  for (int k = m.tendon_adr[t]; k < m.tendon_adr[t] + m.tendon_num[t]; ++k)
    L += S(m.wrap_prm[k]) * S(qpos[m.jnt_qposadr[m.wrap_objid[k]]]);
  return L;
}

// f(dof, dL/dq_dof) over the non-zero moment arms of tendon t.
template <class F>
SAP_HDI void for_each_tendon_dof(const ModelView& m, int t, const double* ten_moment, F&& f) {
  if (tendon_is_spatial(m, t)) {
    const double* row = ten_moment + static_cast<long long>(t) * m.nv;
    for (int dof = 0; dof < m.nv; ++dof)
      if (row[dof] != 0) f(dof, row[dof]);
    return;
  }
  for (int k = m.tendon_adr[t]; k < m.tendon_adr[t] + m.tendon_num[t]; ++k) f(m.jnt_dofadr[m.wrap_objid[k]], m.wrap_prm[k]);
}

// f(dof, coefficient) over a fixed tendon's joints; nothing for a spatial tendon (whose forces
// stage 1b applies: kernels/actuation.hpp), so the free-motion kernel carries no dense loop.
template <class F>
SAP_HDI void for_each_fixed_tendon_dof(const ModelView& m, int t, F&& f) {
  if (tendon_is_spatial(m, t)) return;
  for (int k = m.tendon_adr[t]; k < m.tendon_adr[t] + m.tendon_num[t]; ++k) f(m.jnt_dofadr[m.wrap_objid[k]], m.wrap_prm[k]);
}

// Most non-zero moment arms tendon t can have (the rows' capacity).
SAP_HDI int tendon_max_dofs(const ModelView& m, int t) { return tendon_is_spatial(m, t) ? m.nv : m.tendon_num[t]; }

// Lengths and moment arms of the spatial tendons of one world, strided over the team (poses
// and cdof of the world computed). The caller syncs afterwards.
template <class S, class Team>
SAP_HD void tendon_kinematics(Team& team, const ModelView& m, const double* xpos, const double* xmat,
                              const double* cdof, double* ten_length, double* ten_moment) {
  if (m.ntendata == 0) return;
  const SpatialPathView p = spatial_path_view(m);
  for (int t = team.rank(); t < m.ntendon; t += team.size()) {
    if (!tendon_is_spatial(m, t)) continue;
    ten_length[t] = double(spatial_tendon_length_moment<S>(m, p, m.tendon_adr[t], m.tendon_num[t], xpos, xmat, cdof,
                                                           ten_moment + static_cast<long long>(t) * m.nv));
  }
}

}  // namespace sap
