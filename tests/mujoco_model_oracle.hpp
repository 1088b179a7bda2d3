// Helpers of the MuJoCo-model oracle tests (issue 30: test_spatial_tendon, test_actuator_dynamics,
// test_fluid_forces, test_passive_forces): the fixtures of tools/reference/mujoco_model_reference.py, the
// oracle model imported with its bodies and joints, and host kinematics of one configuration
// with the solver's own functions (poses, com-based dof subspaces, body velocities).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/dynamics.hpp"
#include "kernels/integrate.hpp"
#include "kernels/kinematics.hpp"
#include "kernels/spatial_tendon.hpp"
#include "sap/mjcf.hpp"
#include "sap/model.hpp"

namespace sap_test {

using nlohmann::json;

inline json load_mujoco_fixture(const std::string& name) {
  const std::string path = std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/" + name + ".json";
  std::ifstream f(path);
  if (!f) throw std::runtime_error(path + ": missing (tools/reference/mujoco_model_reference.py writes it)");
  return json::parse(f);
}

template <class T>
std::vector<T> vec_of(const json& j) {
  return j.get<std::vector<T>>();
}

// The fixture's model as our importer reads its bodies, joints, masses and geoms (what these
// tests need of it): the <tendon>, <equality> and <actuator> sections are cut out of the text
// (the tests take them from the fixture) and anything else unsupported is dropped. Body and
// joint names must come out in MuJoCo's order.
inline sap::Model load_oracle_model(const json& ref) {
  const std::string path = std::string(SAP_SOURCE_DIR) + "/" + ref["model"].get<std::string>();
  std::ifstream f(path);
  std::string xml((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const std::string tag : {"tendon", "equality", "actuator"}) {
    const std::size_t a = xml.find("<" + tag + ">"), b = xml.find("</" + tag + ">");
    if (a != std::string::npos && b != std::string::npos) xml.erase(a, b + tag.size() + 3 - a);
  }
  sap::ImportReport report;
  sap::ImportOptions opt;
  opt.drop_unsupported = true;
  sap::Model m = sap::load_mjcf_string(xml, path, &report, opt).model;
  EXPECT_EQ(m.body_names, vec_of<std::string>(ref["body_names"]));
  EXPECT_EQ(m.jnt_names, vec_of<std::string>(ref["jnt_names"]));
  EXPECT_EQ(m.nq, ref["nq"].get<int>());
  EXPECT_EQ(m.nv, ref["nv"].get<int>());
  return m;
}

// Kinematics of one configuration with the solver's functions, in fp64.
struct HostKinematics {
  const sap::Model& model;
  sap::ModelView m;
  std::vector<double> xpos, xquat, xmat, xipos, xanchor, xaxis, cinert, cdof, cvel, cdof_dot;
  explicit HostKinematics(const sap::Model& model_)
      : model(model_),
        m(model_.view()),
        xpos(3 * m.nbody),
        xquat(4 * m.nbody),
        xmat(9 * m.nbody),
        xipos(3 * m.nbody),
        xanchor(3 * m.njnt),
        xaxis(3 * m.njnt),
        cinert(10 * m.nbody),
        cdof(6 * m.nv),
        cvel(6 * m.nbody),
        cdof_dot(6 * m.nv) {}
  void compute(const double* qpos, const double* qvel = nullptr) {
    sap::forward_kinematics<double>(m, qpos, xpos.data(), xquat.data(), xmat.data(), xipos.data(), xanchor.data(),
                                    xaxis.data());
    sap::com_quantities<double>(m, xpos.data(), xmat.data(), xipos.data(), xanchor.data(), xaxis.data(),
                                cinert.data(), cdof.data());
    if (qvel) sap::body_velocities<double>(m, qvel, cdof.data(), cvel.data(), cdof_dot.data());
  }
};

// qpos moved by eps along unit velocity direction `dof` (quaternions on the manifold: the
// perturbation of dq = eps e_dof integrated over unit time, as MuJoCo's mj_integratePos).
inline std::vector<double> perturbed(const sap::ModelView& m, const std::vector<double>& qpos, int dof, double eps) {
  std::vector<double> v(m.nv, 0.0), out(m.nq);
  v[dof] = eps;
  sap::integrate_positions(m, qpos.data(), v.data(), v.data(), sap::PositionIntegrationMode::SapEuler, 1.0,
                           out.data());
  return out;
}

// The fixture's site, geom and wrap arrays (MuJoCo's ids) as a path view.
struct FixturePaths {
  std::vector<int> wrap_type, wrap_objid, site_bodyid, geom_bodyid, tendon_adr, tendon_num;
  std::vector<double> wrap_prm, site_pos, geom_pos, geom_quat, geom_size;
  explicit FixturePaths(const json& ref)
      : wrap_type(vec_of<int>(ref["wrap_type"])),
        wrap_objid(vec_of<int>(ref["wrap_objid"])),
        site_bodyid(vec_of<int>(ref["site_bodyid"])),
        geom_bodyid(vec_of<int>(ref["geom_bodyid"])),
        tendon_adr(vec_of<int>(ref["tendon_adr"])),
        tendon_num(vec_of<int>(ref["tendon_num"])),
        wrap_prm(vec_of<double>(ref["wrap_prm"])),
        site_pos(vec_of<double>(ref["site_pos"])),
        geom_pos(vec_of<double>(ref["geom_pos"])),
        geom_quat(vec_of<double>(ref["geom_quat"])),
        geom_size(vec_of<double>(ref["geom_size"])) {}
  sap::SpatialPathView view() const {
    sap::SpatialPathView p;
    p.wrap_type = wrap_type.data();
    p.wrap_objid = wrap_objid.data();
    p.wrap_prm = wrap_prm.data();
    p.site_bodyid = site_bodyid.data();
    p.site_pos = site_pos.data();
    p.geom_bodyid = geom_bodyid.data();
    p.geom_pos = geom_pos.data();
    p.geom_quat = geom_quat.data();
    p.geom_size = geom_size.data();
    return p;
  }
  bool spatial(int t) const { return wrap_type[tendon_adr[t]] != sap::kWrapJoint; }
};

}  // namespace sap_test
