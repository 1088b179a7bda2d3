#include "sap/data.hpp"

#include <stdexcept>

namespace sap {

State::State(const Model& m, int nworld, Backend b) : nworld_(nworld), backend_(b) {
  if (nworld <= 0) throw std::runtime_error("State: nworld must be positive, got " + std::to_string(nworld));
  qpos.allocate(b, nworld, static_cast<std::size_t>(m.nq));
  qvel.allocate(b, nworld, static_cast<std::size_t>(m.nv));
  act.allocate(b, nworld, static_cast<std::size_t>(m.na));
  reset(m);
}

void State::reset(const Model& m) {
  std::vector<double> q(static_cast<std::size_t>(m.nq) * static_cast<std::size_t>(nworld_));
  for (int w = 0; w < nworld_; ++w)
    for (int i = 0; i < m.nq; ++i)
      q[static_cast<std::size_t>(w) * static_cast<std::size_t>(m.nq) + static_cast<std::size_t>(i)] =
          m.qpos0[static_cast<std::size_t>(i)];
  qpos.buffer().upload(q);
  qvel.buffer().zero();
  act.buffer().zero();
}

void State::copy_from(const State& o) {
  qpos.buffer().copy_from(o.qpos.buffer());
  qvel.buffer().copy_from(o.qvel.buffer());
  act.buffer().copy_from(o.act.buffer());
}

Control::Control(const Model& m, int nworld, Backend b) {
  ctrl.allocate(b, nworld, static_cast<std::size_t>(m.nu));
  ctrl_vel.allocate(b, nworld, static_cast<std::size_t>(m.nu));
  ctrl_ff.allocate(b, nworld, static_cast<std::size_t>(m.nu));
  qfrc_applied.allocate(b, nworld, static_cast<std::size_t>(m.nv));
}

Data::Data(const Model& model, int nworld, Backend b, const DataLayout& layout) : nworld_(nworld), layout_(layout) {
  const DataSizes s = DataSizes::of(model.view());
  const int nbody = s.nbody, njnt = s.njnt, nv = s.nv, nv_pad = s.nv_pad, ntendata = s.ntendata,
            nqfrc_extra = s.nqfrc_extra, nten_A = s.nten_A, nuact = s.nuact, na = s.na;
  (void)njnt;
#define SAP_X(name, type, count) name.allocate(b, nworld, static_cast<std::size_t>(count));
  SAP_DATA_ARRAYS(SAP_X)
#undef SAP_X
  if (layout.mass_matrix_in_A) M.allocate(b, nworld, 0);
  if (layout.A_fp32) {
    if (!layout.mass_matrix_in_A) throw std::invalid_argument("DataLayout: A_fp32 needs mass_matrix_in_A");
    A.allocate(b, nworld, 0);
    A32.allocate(b, nworld, static_cast<std::size_t>(nv_pad) * static_cast<std::size_t>(nv_pad));
  }
  if (layout.chol_fp32) {  // nv_pad (nv_pad + 1) floats, in whole doubles
    const std::size_t nf = static_cast<std::size_t>(nv_pad) * static_cast<std::size_t>(nv_pad + 1);
    chol.allocate(b, nworld, (nf + 1) / 2);
  }
  if (layout.free_motion_on_chip)
    for (BatchedArray<double>* a : {&cdof_dot, &crb, &cvel, &cacc, &cfrc, &qfrc_bias, &qfrc_spring, &scratch_nv})
      a->allocate(b, nworld, 0);
  if (layout.chol_on_chip) {
    chol.allocate(b, nworld, 0);
    chol_first.allocate(b, nworld, 0);
  }
  if (layout.scratch.ptr && layout.scratch_size > 0 && !layout.free_motion_on_chip) {
    long long used = 0;
    auto place = [&](BatchedArray<double>& a, long long& off) {
      const long long n = static_cast<long long>(a.per_world());
      if (n == 0 || used + n > layout.scratch_size) return;
      off = used;
      used += n;
      a.allocate(b, nworld, 0);
    };
    place(cdof_dot, off_cdof_dot_);
    place(crb, off_crb_);
    place(cvel, off_cvel_);
    place(cacc, off_cacc_);
    place(cfrc, off_cfrc_);
    place(qfrc_bias, off_qfrc_bias_);
    place(qfrc_spring, off_qfrc_spring_);
    place(scratch_nv, off_scratch_nv_);
  }
}

std::vector<double> Data::A_to_host() const {
  if (!layout_.A_fp32) return A.buffer().to_host();
  const std::vector<float> a = A32.buffer().to_host();
  return std::vector<double>(a.begin(), a.end());
}

DataView Data::view() {
  DataView v;
#define SAP_X(name, type, count) v.name = name.slab();
  SAP_DATA_ARRAYS(SAP_X)
#undef SAP_X
  if (layout_.mass_matrix_in_A) v.M = A.slab();
  v.A_f32 = layout_.A_fp32 ? 1 : 0;
  auto carve = [&](Slab<double>& slab, long long off) {
    if (off >= 0) slab = {layout_.scratch.ptr + off, layout_.scratch.stride};
  };
  carve(v.cdof_dot, off_cdof_dot_);
  carve(v.crb, off_crb_);
  carve(v.cvel, off_cvel_);
  carve(v.cacc, off_cacc_);
  carve(v.cfrc, off_cfrc_);
  carve(v.qfrc_bias, off_qfrc_bias_);
  carve(v.qfrc_spring, off_qfrc_spring_);
  carve(v.scratch_nv, off_scratch_nv_);
  return v;
}

}  // namespace sap
