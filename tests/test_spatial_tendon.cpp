// Spatial tendons (kernels/spatial_tendon.hpp, issue 30) against MuJoCo and against themselves:
//   * lengths and moment arms equal MuJoCo's ten_length / ten_moment (tools/reference/mujoco_model_reference.py,
//     tests/data/mujoco/spatial_tendons.xml: site paths, sphere and cylinder wraps with and without
//     sidesite, the inside wrap, pulleys, hinge/slide/ball/free joints) at 40 random states to 1e-10;
//   * moment arms are the derivatives of the length (central differences on the manifold);
//   * the wrap geometry matches closed forms: a sphere between two points seen at angle pi, a
//     cylinder whose wrapped path unrolls into a straight line;
//   * fp32 follows fp64.
#include <gtest/gtest.h>

#include <cmath>

#include "mujoco_model_oracle.hpp"

namespace {

using sap_test::FixturePaths;
using sap_test::HostKinematics;
using sap_test::json;

struct Oracle {
  json ref = sap_test::load_mujoco_fixture("spatial_tendons");
  sap::Model model = sap_test::load_oracle_model(ref);
  FixturePaths paths{ref};
};

template <class S>
double tendon_length(const Oracle& o, HostKinematics& k, int t, std::vector<double>* moment) {
  std::vector<double> scratch(o.model.nv);
  return sap::spatial_tendon_length_moment<S>(k.m, o.paths.view(), o.paths.tendon_adr[t], o.paths.tendon_num[t],
                                              k.xpos.data(), k.xmat.data(), k.cdof.data(),
                                              moment ? moment->data() : scratch.data());
}

TEST(SpatialTendon, LengthsAndMomentsMatchMuJoCo) {
  Oracle o;
  HostKinematics k(o.model);
  const int ntendon = o.ref["ntendon"].get<int>(), nv = o.model.nv;
  double max_len = 0, max_mom = 0;
  int nwrapped = 0;
  for (const json& s : o.ref["samples"]) {
    const std::vector<double> qpos = sap_test::vec_of<double>(s["qpos"]);
    const std::vector<double> L = sap_test::vec_of<double>(s["ten_length"]);
    const std::vector<double> J = sap_test::vec_of<double>(s["ten_moment"]);
    k.compute(qpos.data());
    for (int t = 0; t < ntendon; ++t) {
      ASSERT_TRUE(o.paths.spatial(t));
      std::vector<double> moment(nv);
      const double len = tendon_length<double>(o, k, t, &moment);
      max_len = std::max(max_len, std::abs(len - L[t]));
      EXPECT_NEAR(len, L[t], 1e-10) << o.ref["tendon_names"][t];
      for (int i = 0; i < nv; ++i) {
        max_mom = std::max(max_mom, std::abs(moment[i] - J[t * nv + i]));
        EXPECT_NEAR(moment[i], J[t * nv + i], 1e-10) << o.ref["tendon_names"][t] << " dof " << i;
      }
      for (int w = 0; w < s["ten_wrapnum"][t].get<int>(); ++w)
        if (s["wrap_obj"][s["ten_wrapadr"][t].get<int>() + w].get<int>() >= 0) {
          ++nwrapped;
          break;
        }
    }
  }
  // The fixture exercises wraps (about half the tendon states are wrapped).
  EXPECT_GT(nwrapped, 100);
  std::printf("max |L - L_mujoco| = %.2e, max |J - J_mujoco| = %.2e over %zu states x %d tendons\n", max_len, max_mom,
              o.ref["samples"].size(), ntendon);
}

// J_t = dL/dq: central differences with eps = 1e-6 (error ~ eps^2 L''' + 1e-16 L / eps). A state
// where the wrap switches sides within +-eps (MuJoCo's sidesite rule is discontinuous where the
// segment's nearest point crosses the sidesite's half-plane) shows as disagreeing one-sided
// differences and is skipped; they must stay rare.
TEST(SpatialTendon, MomentsAreLengthDerivatives) {
  Oracle o;
  HostKinematics k(o.model);
  const int ntendon = o.ref["ntendon"].get<int>(), nv = o.model.nv;
  const double eps = 1e-6;
  int checked = 0, skipped = 0;
  double worst = 0;
  for (const json& s : o.ref["samples"]) {
    const std::vector<double> qpos = sap_test::vec_of<double>(s["qpos"]);
    k.compute(qpos.data());
    std::vector<std::vector<double>> J(ntendon, std::vector<double>(nv));
    std::vector<double> L0(ntendon);
    for (int t = 0; t < ntendon; ++t) L0[t] = tendon_length<double>(o, k, t, &J[t]);
    for (int i = 0; i < nv; ++i) {
      std::vector<double> Lp(ntendon), Lm(ntendon);
      k.compute(sap_test::perturbed(k.m, qpos, i, eps).data());
      for (int t = 0; t < ntendon; ++t) Lp[t] = tendon_length<double>(o, k, t, nullptr);
      k.compute(sap_test::perturbed(k.m, qpos, i, -eps).data());
      for (int t = 0; t < ntendon; ++t) Lm[t] = tendon_length<double>(o, k, t, nullptr);
      for (int t = 0; t < ntendon; ++t) {
        const double fwd = (Lp[t] - L0[t]) / eps, bwd = (L0[t] - Lm[t]) / eps;
        if (std::abs(fwd - bwd) > 1e-3) {
          ++skipped;
          continue;
        }
        const double fd = (Lp[t] - Lm[t]) / (2 * eps);
        worst = std::max(worst, std::abs(fd - J[t][i]));
        EXPECT_NEAR(J[t][i], fd, 2e-8) << o.ref["tendon_names"][t] << " dof " << i;
        ++checked;
      }
    }
  }
  EXPECT_LE(skipped, checked / 200);
  std::printf("moment vs central difference: worst %.2e over %d entries (%d skipped at a switch)\n", worst, checked,
              skipped);
}

TEST(SpatialTendon, Fp32FollowsFp64) {
  Oracle o;
  HostKinematics k(o.model);
  const int ntendon = o.ref["ntendon"].get<int>(), nv = o.model.nv;
  for (const json& s : o.ref["samples"]) {
    const std::vector<double> qpos = sap_test::vec_of<double>(s["qpos"]);
    k.compute(qpos.data());
    for (int t = 0; t < ntendon; ++t) {
      std::vector<double> J64(nv), J32(nv);
      const double L64 = tendon_length<double>(o, k, t, &J64), L32 = tendon_length<float>(o, k, t, &J32);
      // fp32 rounding of world positions of magnitude ~1 m over a few dozen operations.
      EXPECT_NEAR(L32, L64, 1e-6) << o.ref["tendon_names"][t];
      for (int i = 0; i < nv; ++i) EXPECT_NEAR(J32[i], J64[i], 2e-5) << o.ref["tendon_names"][t];
    }
  }
}

// Two points at distance d from a sphere's centre, seen from it at angle pi (through the centre,
// on a line): the wrapped path is two tangents and a half great circle less the tangents' arcs,
//   L = 2 sqrt(d^2 - r^2) + r (pi - 2 acos(r/d)).
TEST(SpatialTendonWrap, SphereClosedForm) {
  const double r = 0.3, d = 1.0;
  const sap::Mat3<double> R = sap::to_matrix(sap::normalized(sap::Quat<double>{0.9, 0.2, -0.3, 0.1}));
  const sap::Vec3<double> c{{0.5, -0.2, 1.0}};
  // The points are collinear with the centre: the wrap plane is MuJoCo's fallback plane.
  const sap::Vec3<double> x0 = c + R * sap::Vec3<double>{{-d, 0, 0}}, x1 = c + R * sap::Vec3<double>{{d, 0, 0}};
  sap::Vec3<double> t0, t1;
  const double arc = sap::wrap_geom<double>(x0, x1, c, R, r, sap::kWrapSphere, nullptr, t0, t1);
  ASSERT_GE(arc, 0);
  const double L = sap::norm(t0 - x0) + arc + sap::norm(x1 - t1);
  EXPECT_NEAR(L, 2 * std::sqrt(d * d - r * r) + r * (sap::kPi - 2 * std::acos(r / d)), 1e-9);
  EXPECT_NEAR(sap::norm(t0 - c), r, 1e-12);  // tangent points on the sphere,
  EXPECT_NEAR(sap::dot(t0 - c, x0 - t0), 0, 1e-12);  // the straight pieces tangent there
  EXPECT_NEAR(sap::dot(t1 - c, x1 - t1), 0, 1e-12);
}

// A cylinder's wrapped path climbs linearly along its planar length P, so its 3D length is
// sqrt(P^2 + dz^2), P from the planar closed form; a sidesite picks the side: the other side's
// path is its mirror image (same length), and the tangent points swap half-planes.
TEST(SpatialTendonWrap, CylinderUnrollsToAStraightLine) {
  const double r = 0.2, d = 0.7, dz = 0.45;
  const sap::Mat3<double> R = sap::Mat3<double>::identity();
  const sap::Vec3<double> c{{0, 0, 0}};
  const sap::Vec3<double> x0{{-d, 0.01, -0.2}}, x1{{d, 0.01, -0.2 + dz}};
  for (double side_y : {1.0, -1.0}) {
    const sap::Vec3<double> side{{0, side_y, 0}};
    sap::Vec3<double> t0, t1;
    const double wlen = sap::wrap_geom<double>(x0, x1, c, R, r, sap::kWrapCylinder, &side, t0, t1);
    ASSERT_GE(wlen, 0);
    EXPECT_GT(t0[1] * side_y, 0);
    const double L = sap::norm(t0 - x0) + wlen + sap::norm(x1 - t1);
    const sap::Vec3<double> a{{x0[0], x0[1], 0}}, b{{x1[0], x1[1], 0}};
    const double da = sap::norm(a), db = sap::norm(b);
    const double angle = std::acos(sap::dot(a, b) / (da * db));
    const double side_angle = side_y * x0[1] > 0 ? angle : 2 * sap::kPi - angle;  // the arc runs round the sidesite
    const double P = std::sqrt(da * da - r * r) + std::sqrt(db * db - r * r) +
                     r * (side_angle - std::acos(r / da) - std::acos(r / db));
    EXPECT_NEAR(L, std::sqrt(P * P + dz * dz), 1e-9) << "side " << side_y;
  }
}

// A segment clear of the geom does not wrap (without a sidesite, or with one on its side).
TEST(SpatialTendonWrap, ClearSegmentDoesNotWrap) {
  const sap::Mat3<double> R = sap::Mat3<double>::identity();
  const sap::Vec3<double> c{{0, 0, 0}}, x0{{-1, 0.5, 0}}, x1{{1, 0.5, 0}}, side{{0, 1, 0}};
  sap::Vec3<double> t0, t1;
  for (int type : {sap::kWrapSphere, sap::kWrapCylinder}) {
    EXPECT_LT(sap::wrap_geom<double>(x0, x1, c, R, 0.3, type, nullptr, t0, t1), 0);
    EXPECT_LT(sap::wrap_geom<double>(x0, x1, c, R, 0.3, type, &side, t0, t1), 0);
    // The sidesite on the far side forces the wrap round it.
    const sap::Vec3<double> far{{0, -1, 0}};
    EXPECT_GT(sap::wrap_geom<double>(x0, x1, c, R, 0.3, type, &far, t0, t1), 0);
  }
}

}  // namespace

#include "sap/solver_sap.hpp"

namespace {

// The importer reads sites and spatial tendons (strict: nothing dropped); the per-world tendon
// pass (tendon_kinematics, run by the kinematics stage) on our model's arrays gives MuJoCo's
// lengths and moments.
TEST(SpatialTendon, ImportedModelMatchesMuJoCo) {
  const json ref = sap_test::load_mujoco_fixture("spatial_tendons");
  const sap::Model model = sap::load_mjcf(std::string(SAP_SOURCE_DIR) + "/" + ref["model"].get<std::string>()).model;
  ASSERT_EQ(model.ntendon, ref["ntendon"].get<int>());
  ASSERT_EQ(model.ntendata, model.ntendon);
  EXPECT_EQ(model.tendon_names, sap_test::vec_of<std::string>(ref["tendon_names"]));
  HostKinematics k(model);
  std::vector<double> L(model.ntendon), J(static_cast<std::size_t>(model.ntendon) * model.nv);
  for (const json& s : ref["samples"]) {
    const std::vector<double> qpos = sap_test::vec_of<double>(s["qpos"]);
    k.compute(qpos.data());
    sap::SerialTeam one;
    sap::tendon_kinematics<double>(one, k.m, k.xpos.data(), k.xmat.data(), k.cdof.data(), L.data(), J.data());
    for (int t = 0; t < model.ntendon; ++t) {
      EXPECT_NEAR(L[t], s["ten_length"][t].get<double>(), 1e-12) << model.tendon_names[t];
      for (int i = 0; i < model.nv; ++i) EXPECT_NEAR(J[t * model.nv + i], s["ten_moment"][t * model.nv + i].get<double>(), 1e-12);
    }
  }
}

// A ball on a string (a limited spatial tendon, as dm_control's ball_in_cup): released 0.1 m
// below its anchor, it falls until the string is taut and hangs at the string's length.
TEST(SpatialTendon, SolverHoldsAStringLimit) {
  const std::string xml = R"(<mujoco>
  <worldbody>
    <site name="anchor" pos="0 0 1"/>
    <body name="ball" pos="0 0 0.9">
      <freejoint/>
      <geom type="sphere" size="0.02" mass="0.1" contype="0" conaffinity="0"/>
      <site name="ball" pos="0 0 0.02"/>
    </body>
  </worldbody>
  <tendon><spatial name="string" limited="true" range="0 0.3"><site site="anchor"/><site site="ball"/></spatial></tendon>
</mujoco>)";
  const sap::Model m = sap::load_mjcf_string(xml, "string.xml").model;
  ASSERT_EQ(m.ntendon, 1);
  sap::Context ctx(sap::Backend::CPU, 1);
  sap::SolverSAP solver(m, ctx, 1, sap::SolverOptions{});
  sap::State a(m, 1, sap::Backend::CPU), b(m, 1, sap::Backend::CPU);
  sap::Control control(m, 1, sap::Backend::CPU);
  sap::Contacts none(1, 0, sap::Backend::CPU);
  a.qpos.world_from_host(0, m.qpos0.data());
  double longest = 0;
  for (int k = 0; k < 2000; ++k) {
    solver.step(a, b, control, none, 1e-3);
    std::swap(a, b);
    const std::vector<double> q = a.qpos.world_to_host(0);
    const double len = std::sqrt(q[0] * q[0] + q[1] * q[1] + (q[2] + 0.02 - 1) * (q[2] + 0.02 - 1));
    longest = std::max(longest, len);
  }
  const std::vector<double> q = a.qpos.world_to_host(0), v = a.qvel.world_to_host(0);
  const double len = std::sqrt(q[0] * q[0] + q[1] * q[1] + (q[2] + 0.02 - 1) * (q[2] + 0.02 - 1));
  std::printf("string: length after 2 s %.5f m (range 0.3), longest %.5f m, speed %.2e m/s\n", len, longest,
              std::hypot(v[0], v[1], v[2]));
  EXPECT_GT(len, 0.29);  // fell until taut
  EXPECT_LT(longest, 0.3 + 2e-3);  // and the string held (limit rows' compliance)
  EXPECT_LT(q[2], 0.75);  // hanging below the anchor
}

}  // namespace
