#include "sap/solver_sap.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/free_motion.hpp"
#include "kernels/integrate.hpp"
#include "model/contact_pairs.hpp"
#include "model/solve_data.hpp"
#include "launch/launches.hpp"

namespace sap {

namespace {
enum ClockPoint { kStart, kAfterFreeMotion, kAfterSetup, kAfterSolve, kAfterIntegrate, kNumPoints };
}

namespace {
// Last dof on the path from body b to the root (-1 for bodies welded to the world), as the
// Jacobian kernels walk it (kernels/constraint_setup.hpp, body_last_dof).
int last_dof(const Model& m, int b) {
  while (b > 0 && m.body_dofnum[static_cast<std::size_t>(b)] == 0) b = m.body_parentid[static_cast<std::size_t>(b)];
  return b > 0 ? m.body_dofadr[static_cast<std::size_t>(b)] + m.body_dofnum[static_cast<std::size_t>(b)] - 1 : -1;
}
}  // namespace

// Entries of the longest merged Jacobian row of any body pair: |path(a) U path(b)| over all
// bodies a, b (the world included), where path(b) is b's dofs back to its root. The contact
// and equality Jacobians merge exactly these two paths (one entry per dof of the union), so
// this bounds every row whatever bodies the contacts name; it is smaller than twice the
// deepest path whenever the two deepest branches share dofs (humanoid: 21 instead of 30).
int max_body_pair_dofs(const Model& m) {
  // The union of two paths is decided by their leaves: a body whose last dof is an ancestor
  // dof of another body's adds nothing, so only the distinct last dofs matter.
  std::vector<int> leaves;
  for (int b = 0; b < m.nbody; ++b) leaves.push_back(last_dof(m, b));
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  int best = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i)
    for (std::size_t j = i; j < leaves.size(); ++j) {
      int d0 = leaves[i], d1 = leaves[j], n = 0;
      while (d0 >= 0 || d1 >= 0) {  // the kernels' merge walk (decreasing dofs)
        const int dof = d0 > d1 ? d0 : d1;
        if (dof == d0) d0 = m.dof_parentid[static_cast<std::size_t>(d0)];
        if (dof == d1) d1 = m.dof_parentid[static_cast<std::size_t>(d1)];
        ++n;
      }
      best = std::max(best, n);
    }
  return best;
}

namespace {
// Sizes of the constraint buffers for a model and contact capacity.
SolveSizes solve_sizes(const Model& m, int max_rigid_contact, const SolverConfig& config) {
  SolveSizes s;
  s.ntrace = config.record_cost_trace ? config.max_iterations + 1 : 0;
  // The SAP cone reads R_t, R_n, v_hat_n and mu; the Hunt-Crossley slots follow them.
  s.ncp = config.contact_approximation == ContactApproximation::Sap ? kConHcStiffness : kNumContactParams;
  s.nv = m.nv;
  s.nv_pad = m.nv_pad;
  s.ncmax = max_rigid_contact;
  s.nacon = max_pair_condim(m) > 3 ? max_rigid_contact : 0;  // torsional or rolling friction
  s.njac = std::max(max_body_pair_dofs(m), 1);
  for (int j = 0; j < m.njnt; ++j) {
    const int t = m.jnt_type[static_cast<std::size_t>(j)];
    if (m.jnt_limited[static_cast<std::size_t>(j)] && (t == kJointHinge || t == kJointSlide)) s.nlim += 2;
  }
  for (int u = 0; u < m.nu; ++u)
    s.npd += actuator_is_servo(m.actuator_type[static_cast<std::size_t>(u)]) &&
             m.actuator_tendonid[static_cast<std::size_t>(u)] < 0;
  // Holonomic rows: two per limited tendon, then the rows of every active equality.
  const ModelView mv = m.view();
  s.nhjac = s.njac;
  for (int t = 0; t < m.ntendon; ++t) {
    if (m.tendon_limited[static_cast<std::size_t>(t)]) s.nhol += 2;
    s.nhjac = std::max(s.nhjac, tendon_max_dofs(mv, t));
  }
  for (int e = 0; e < m.neq; ++e) {
    const std::size_t ue = static_cast<std::size_t>(e);
    if (!m.eq_active[ue]) continue;
    s.nhol += equality_rows(m.eq_type[ue]);
    if (m.eq_type[ue] == kEqTendon) {  // the two tendons' dofs (a shared dof counts once)
      const int t1 = m.eq_obj1id[ue], t2 = m.eq_obj2id[ue];
      const int n = tendon_max_dofs(mv, t1) + (t2 >= 0 ? tendon_max_dofs(mv, t2) : 0);
      s.nhjac = std::max(s.nhjac, std::min(n, m.nv));
    }
  }
  for (int i = 0; i < m.nv; ++i) s.nhol += m.dof_frictionloss[static_cast<std::size_t>(i)] > 0;  // dry friction
  for (int t = 0; t < m.ntendon; ++t) s.nhol += m.tendon_frictionloss[static_cast<std::size_t>(t)] > 0;
  for (int u = 0; u < m.nu; ++u)  // servos on tendons
    s.nhol += actuator_is_servo(m.actuator_type[static_cast<std::size_t>(u)]) &&
              m.actuator_tendonid[static_cast<std::size_t>(u)] >= 0;
  return s;
}
}  // namespace

SolverSAP::SolverSAP(const Model& model, Context& ctx, int nworld, const SolverOptions& options, int max_rigid_contact)
    : model_(model),
      ctx_(ctx),
      nworld_(nworld),
      config_(options.resolve()),
      max_rigid_contact_(max_rigid_contact),
      options_(options) {
  if (max_rigid_contact < 0)
    throw std::invalid_argument("SolverSAP: max_rigid_contact must be >= 0, got " + std::to_string(max_rigid_contact));
  if (nworld <= 0) throw std::invalid_argument("SolverSAP: nworld must be positive, got " + std::to_string(nworld));
  // nv = 0 (arenas, tables, props): every stage runs over empty dof ranges; time advances.
  if (model.nv > kMaxJacDof)
    throw std::invalid_argument("SolverSAP: the model has " + std::to_string(model.nv) + " degrees of freedom, at most " +
                                std::to_string(kMaxJacDof) + " are supported (16-bit Jacobian dof indices)");
  model_.compute_A_sparsity();  // from this copy's tendons, whatever the caller changed since the build
  model_.validate();
  storage_ = ModelStorage(model_, ctx.backend());
  DataLayout layout;  // storage by need; values unchanged (DataLayout, docs/gpu.md)
  layout.mass_matrix_in_A = true;
  layout.A_fp32 = config_.free_motion_solve_precision == Precision::F32;  // A's entries are fp32 values
  layout.chol_fp32 = config_.free_motion_solve_precision == Precision::F32 &&
                     config_.contact_linear_solve_precision == Precision::F32;
  // Working sets on chip (team shared memory) when they fit config_.on_chip_bytes: the
  // free-motion scratch and factor of A, and the fused Newton solve's H and factor. Values are
  // unchanged; the per-world arrays they replace are not allocated (docs/gpu.md).
  const std::size_t free_motion_bytes = static_cast<std::size_t>(
      FreeMotionOnChip::layout(model_.nv, model_.nbody, model_.nv_pad,
                               config_.free_motion_solve_precision == Precision::F32)
          .bytes());
  SolveSizes sizes = solve_sizes(model_, max_rigid_contact, config_);
  const bool linear_f32 = config_.contact_linear_solve_precision == Precision::F32;
  auto newton_bytes = [&](bool rows) {
    return static_cast<std::size_t>(
        NewtonOnChip::layout(model_.nv_pad, linear_f32, rows, sizes.nrow(), sizes.nG(), sizes.njac).bytes());
  };
  const std::size_t budget = static_cast<std::size_t>(config_.on_chip_bytes);
  const bool free_motion_on_chip = free_motion_bytes <= budget;
  const bool fused = config_.linear_solver == LinearSolver::Cholesky;
  const bool newton_on_chip = fused && newton_bytes(false) <= budget;
  const bool rows_on_chip = fused && newton_bytes(true) <= budget;
  layout.free_motion_on_chip = free_motion_on_chip;
  layout.chol_on_chip = free_motion_on_chip && newton_on_chip;
  sizes.nH = newton_on_chip ? 0 : model_.nv_pad * model_.nv_pad;
  sizes.rows_global = rows_on_chip ? 0 : 1;
  // Stage 2 in fp32: its contact Jacobian is stored as cast64(fl32(J)) like the weights.
  sizes.jac_f32 = config_.sap_contact_weight_precision == Precision::F32 ? 1 : 0;
  solve_ = std::make_unique<SolveData>(sizes, nworld, ctx.backend());
  // Free-motion scratch inside the Newton Hessian H: H is written only by the Newton stage
  // (after constraint setup) and the free-motion scratch is dead after free motion.
  layout.scratch = solve_->H.slab();
  layout.scratch_size = static_cast<long long>(solve_->H.per_world());
  data_ = Data(model_, nworld, ctx.backend(), layout);
  status_.allocate(ctx.backend(), static_cast<std::size_t>(nworld));
  solve_ok_.allocate(ctx.backend(), static_cast<std::size_t>(nworld));
  launch_ = make_solver_launch(ctx);
  launch_->free_motion_on_chip = free_motion_on_chip;
  launch_->newton_system_on_chip = newton_on_chip;
  launch_->newton_rows_on_chip = rows_on_chip;
  free_motion_on_chip_bytes_ = free_motion_on_chip ? static_cast<long long>(free_motion_bytes) : 0;
  newton_on_chip_bytes_ = newton_on_chip ? static_cast<long long>(newton_bytes(rows_on_chip)) : 0;
  clock_ = ctx.make_clock(kNumPoints);
  rollout_ = make_rollout_launch(ctx);
  const int auto_capacity = nworld <= 64 ? nworld : std::max(64, nworld / 16);
  retry_capacity_ = std::min(nworld, config_.fp64_retry_capacity > 0 ? config_.fp64_retry_capacity : auto_capacity);
}

SolverSAP::~SolverSAP() = default;

std::vector<std::pair<std::string, long long>> SolverSAP::buffer_bytes_per_world() const {
  std::vector<std::pair<std::string, long long>> out;
#define SAP_X(name, type, count) \
  out.emplace_back("data." #name, static_cast<long long>(data_.name.per_world() * sizeof(type)));
  SAP_DATA_ARRAYS(SAP_X)
#undef SAP_X
#define SAP_X(name, type, count) \
  out.emplace_back("solve." #name, static_cast<long long>(solve_->name.per_world() * sizeof(type)));
  SAP_SOLVE_ARRAYS(SAP_X)
#undef SAP_X
  out.emplace_back("solver.status", static_cast<long long>(sizeof(int)));
  out.emplace_back("solver.solve_ok", static_cast<long long>(sizeof(int)));
  // fp64 retry (allocated on first use or by prepare_fp64_retry): the step-start copy and the
  // per-world counters; the compact solver and its slot buffers serve retry_capacity_ worlds and
  // are listed per slot x slots / worlds (exact when every world has a slot).
  const long long state_bytes = static_cast<long long>((model_.nq + model_.nv) * sizeof(double));
  if (start64_) out.emplace_back("solver.fp64_start_state", state_bytes);
  if (retry_counters_.size()) out.emplace_back("solver.fp64_retry_counters", static_cast<long long>(3 * sizeof(int)));
  if (solver64_) {
    auto per_world = [&](long long per_slot) { return per_slot * retry_capacity_ / nworld_; };
    const long long control_bytes = static_cast<long long>((3 * model_.nu + model_.nv) * sizeof(double));
    long long contact_bytes = 2 * static_cast<long long>(sizeof(int));
#define SAP_X(name, type, dim) contact_bytes += static_cast<long long>(slot_contacts_->name.per_world() * sizeof(type));
    SAP_CONTACT_ARRAYS(SAP_X)
    SAP_CONTACT_ANGULAR_ARRAYS(SAP_X)
#undef SAP_X
    out.emplace_back("fp64_retry.slot_states", per_world(2 * state_bytes));
    out.emplace_back("fp64_retry.slot_control", per_world(control_bytes));
    out.emplace_back("fp64_retry.slot_contacts", per_world(contact_bytes));
    out.emplace_back("fp64_retry.slot_maps", per_world(3 * static_cast<long long>(sizeof(int))));
    for (const auto& [name, bytes] : solver64_->buffer_bytes_per_world())
      out.emplace_back("fp64_retry." + name, per_world(bytes));
  }
  return out;
}

std::vector<std::pair<std::string, long long>> SolverSAP::on_chip_bytes_per_world() const {
  return {{"free_motion", free_motion_on_chip_bytes_}, {"newton", newton_on_chip_bytes_}};
}

bool SolverSAP::fp64_retry_active() const {
  const SolverConfig& c = config_;
  const bool any_f32 = c.free_motion_solve_precision == Precision::F32 ||
                       c.contact_solve_precision == Precision::F32 ||
                       c.contact_linear_solve_precision == Precision::F32 ||
                       c.sap_contact_weight_precision == Precision::F32 || !c.use_f64_boundary_pose;
  return c.fp64_retry && any_f32;
}

void SolverSAP::step(const State& in, State& out, const Control& control, const Contacts& contacts, double dt) {
  if (!(dt > 0)) throw std::invalid_argument("SolverSAP::step: dt must be positive, got " + std::to_string(dt));
  if (in.nworld() != nworld_ || out.nworld() != nworld_)
    throw std::invalid_argument("SolverSAP::step: state has " + std::to_string(in.nworld()) + " worlds, solver " +
                                std::to_string(nworld_));
  if (in.backend() != ctx_.backend() || out.backend() != ctx_.backend())
    throw std::invalid_argument("SolverSAP::step: state lives on another backend than the solver");
  if (control.ctrl.nworld() != nworld_ && model_.nu > 0)
    throw std::invalid_argument("SolverSAP::step: control has the wrong number of worlds");
  if (contacts.capacity() > max_rigid_contact_)
    throw std::invalid_argument(
        "SolverSAP::step: contacts have capacity " + std::to_string(contacts.capacity()) +
        " per world, the solver was built for max_rigid_contact = " + std::to_string(max_rigid_contact_));
  if (contacts.capacity() > 0 && (contacts.nworld() != nworld_ || contacts.backend() != ctx_.backend()))
    throw std::invalid_argument("SolverSAP::step: contacts have another world count or backend than the solver");
  if (contacts.capacity() > 0 && contacts.angular() != (solve_->size().nacon > 0))
    throw std::invalid_argument(std::string("SolverSAP::step: the model ") +
                                (solve_->size().nacon > 0 ? "has" : "has no") +
                                " torsional or rolling friction (a pair of condim 4 or 6) and the contacts " +
                                (contacts.angular() ? "carry" : "do not carry") +
                                " their arrays (Contacts(..., angular = CollisionPipeline::angular_friction()))");
  if (!fp64_retry_active()) {
    step_once(in, out, control, contacts, dt);
    return;
  }
  // The fp64 repeat needs the step's inputs: keep a copy when the step is in place.
  const State* start = &in;
  if (&in == &out) {
    if (!start64_) start64_ = std::make_unique<State>(model_, nworld_, ctx_.backend());
    start64_->copy_from(in);
    start = start64_.get();
  }
  step_once(*start, out, control, contacts, dt);
  retry_in_fp64(*start, out, control, contacts, dt);
}

// fp32 stages fail where the Newton system's condition number exceeds ~1/eps32 (a light link
// in near-rigid contact: w ~ 1/m_link, R ~ beta^2 w / (4 pi^2), H = A + J^T R^-1 J). Such a
// world repeats the same step (same state, controls, contacts and dt) with every stage in fp64;
// its outcome replaces the fp32 one, with kStatusFp64Retry added to its status. The other
// worlds are untouched. The repeat runs in a compact fp64 solver whose slots hold the failed
// worlds in world order (a world's arithmetic does not depend on its slot, so the outcome is the
// one a full fp64 solver would give).
void SolverSAP::prepare_fp64_retry(int contact_capacity) {
  if (!fp64_retry_active()) return;
  const Backend b = ctx_.backend();
  allocate_retry_scan();
  if (!retry_counters_.size()) retry_counters_.allocate(b, 3 * static_cast<std::size_t>(nworld_));
  if (!start64_) start64_ = std::make_unique<State>(model_, nworld_, b);
  if (retry_ready(contact_capacity)) return;
  SolverOptions o = options_;
  for (const char* k : {"free_motion_solve_precision", "contact_solve_precision", "contact_linear_solve_precision",
                        "sap_contact_weight_precision"})
    set_solver_option(o, k, "fp64");
  set_solver_option(o, "use_f64_boundary_pose", "true");
  set_solver_option(o, "fp64_retry", "false");
  const int k = retry_capacity_;
  solver64_ = std::make_unique<SolverSAP>(model_, ctx_, k, o, max_rigid_contact_);
  solver64_->set_timing(false);
  slot_in_ = std::make_unique<State>(model_, k, b);
  slot_out_ = std::make_unique<State>(model_, k, b);
  slot_control_ = std::make_unique<Control>(model_, k, b);
  slot_contacts_ = std::make_unique<Contacts>(k, contact_capacity, b, solve_->size().nacon > 0);
  for (Buffer<int>* buf : {&slot_world_, &slot_active_, &slot_model_}) buf->allocate(b, static_cast<std::size_t>(k));
}

// The slot scan's buffers (per chunk of worlds, not per world): all a step with no failed world
// needs.
void SolverSAP::allocate_retry_scan() {
  if (retry_chunk_count_.size()) return;
  retry_chunk_count_.allocate(ctx_.backend(), static_cast<std::size_t>((nworld_ + kRetryChunk - 1) / kRetryChunk));
}

// The compact solver and its slots exist for contacts of this capacity.
bool SolverSAP::retry_ready(int contact_capacity) const {
  return solver64_ && slot_contacts_->capacity() == contact_capacity;
}

std::vector<int> SolverSAP::retry_counter(int which) const {
  std::vector<int> out(static_cast<std::size_t>(nworld_), 0);
  if (retry_counters_.size())
    retry_counters_.download(out.data(), out.size(), static_cast<std::size_t>(which) * out.size());
  return out;
}

void SolverSAP::retry_in_fp64(const State& in, State& out, const Control& control, const Contacts& contacts,
                              double dt) {
  if (fp64_retry_in_graph_ && !retry_ready(contacts.capacity()))
    throw std::logic_error("SolverSAP: the fp64 retry in a CUDA graph needs prepare_fp64_retry() before the capture");
  allocate_retry_scan();  // the rest on the first world to repeat (prepare_fp64_retry)
  const int nchunk = static_cast<int>(retry_chunk_count_.size()), k = retry_capacity_;
  for (;;) {
    // One round: the slots, the inputs gathered into them, the fp64 step, the merge.
    rollout_->retry_chunk_counts(nchunk, RetryChunkCountKernel{status_.data(), nworld_, retry_chunk_count_.data()});
    int total = 0;
    if (!fp64_retry_in_graph_) {  // host read: nothing (more) to do when no world needs it
      for (int c : retry_chunk_count_.to_host()) total += c;
      if (total == 0) return;
      prepare_fp64_retry(contacts.capacity());
    }
    int* counters = retry_counters_.data();
    rollout_->retry_slots(nchunk, RetrySlotKernel{status_.data(), nworld_, nchunk, retry_chunk_count_.data(), k,
                                                  slot_world_.data(), slot_active_.data(),
                                                  fp64_retry_in_graph_ ? counters + 2 * nworld_ : nullptr});
    const ConstContactsView cin = contacts.view();
    const ContactsView cslot = slot_contacts_->view();
    const int* slot_world = slot_world_.data();
    auto gather = [&](int n, auto dst, auto src) { rollout_->gather(k, n, dst, src, slot_world); };
    gather(model_.nq, slot_in_->qpos.slab(), in.qpos.slab());
    gather(model_.nv, slot_in_->qvel.slab(), in.qvel.slab());
    if (model_.na > 0) gather(model_.na, slot_in_->act.slab(), in.act.slab());
    if (model_.nu > 0) {
      gather(model_.nu, slot_control_->ctrl.slab(), control.ctrl.slab());
      gather(model_.nu, slot_control_->ctrl_vel.slab(), control.ctrl_vel.slab());
      gather(model_.nu, slot_control_->ctrl_ff.slab(), control.ctrl_ff.slab());
    }
    gather(model_.nv, slot_control_->qfrc_applied.slab(), control.qfrc_applied.slab());
    if (cin.capacity > 0) {
      gather(1, Slab<int>{cslot.count, 1}, Slab<const int>{cin.count, 1});
      gather(1, Slab<int>{cslot.dropped, 1}, Slab<const int>{cin.dropped, 1});
#define SAP_X(name, type, dim) \
  gather(static_cast<int>(cin.name.stride), cslot.name, Slab<const type>{cin.name.ptr, cin.name.stride});
      SAP_CONTACT_ARRAYS(SAP_X)
      if (cin.angular()) {
        SAP_CONTACT_ANGULAR_ARRAYS(SAP_X)
      }
#undef SAP_X
    }
    WorldModelView wm = world_model_;
    if (wm.slot) {
      gather(1, Slab<int>{slot_model_.data(), 1}, Slab<const int>{wm.slot, 1});
      wm.slot = slot_model_.data();
    }
    solver64_->set_world_model(wm);
    solver64_->set_active_worlds(slot_active_.data());
    solver64_->step(*slot_in_, *slot_out_, *slot_control_, *slot_contacts_, dt);
    const State& trial = *slot_out_;
    rollout_->retry_merge(k, RetryMergeKernel{slot_world, model_.nq, model_.nv, trial.view(), solver64_->status_data(),
                                              out.view(), status_.data(), counters, counters + nworld_,
                                              model_.na});
    if (fp64_retry_in_graph_ || total <= k) return;
  }
}

void SolverSAP::step_once(const State& in, State& out, const Control& control, const Contacts& contacts,
                          double dt) {
  const ModelView m = storage_.view();
  const DataView d = data_.view();
  status_.zero();
  if (active_) rollout_->mark_skipped(nworld_, active_, status_.data());
  auto mark = [this](int p) {
    if (timing_) clock_->mark(p);
  };
  mark(kStart);
  // The time step: dt in the host API, h in the stages (the papers' symbol; StepParams::h).
  const double h = dt;
  const Precision pose = config_.use_f64_boundary_pose ? Precision::F64 : Precision::F32;
  launch_->kinematics(pose, poses_given_ == Precision::F64, nworld_, m, in.qpos.slab(), d, status_.data());
  if (m.ntendata > 0 || m.na > 0 || m.nqfrc_extra > 0 || m.nten_A > 0)  // stage 1b (kernels/actuation.hpp)
    launch_->actuation(config_.free_motion_solve_precision, nworld_, m, in.view(), control.view(), d, h,
                       status_.data());
  const int coriolis_passes = config_.coriolis == CoriolisMode::Midpoint ? config_.coriolis_iterations : 0;
  launch_->free_motion(config_.free_motion_solve_precision, nworld_, m, in.view(), control.view(), d, h,
                       coriolis_passes, status_.data());
  mark(kAfterFreeMotion);
  const SolveView sv = solve_->view();
  const StepParams params{h, config_};
  launch_->constraint_setup(config_.sap_contact_weight_precision, nworld_, m, in.view(), control.view(), d,
                            contacts.view(), sv, params, status_.data());
  mark(kAfterSetup);
  const bool linear_solve_f32 = config_.contact_linear_solve_precision == Precision::F32;
  const Precision obj = config_.contact_solve_precision;
  if (config_.linear_solver == LinearSolver::Cholesky) {
    launch_->newton_solve(obj, nworld_, m, in.view(), d, sv, params, status_.data());
  } else {
    // Split loop: each Newton iteration is a head launch (cost, tests, H), a library solve of
    // the worlds still iterating, and a tail launch (line search, update); it ends when no
    // world needs a direction. Same phases, same arithmetic outside the factorisation.
    launch_->newton_begin(obj, nworld_, m, in.view(), d, sv, params, status_.data());
    for (int k = 0; k <= config_.max_iterations; ++k) {
      launch_->newton_head(obj, nworld_, m, in.view(), d, sv, params, status_.data());
      if (launch_->reference_linear_solve(linear_solve_f32, nworld_, m, d, sv, solve_ok_.data()) == 0) break;
      launch_->newton_tail(obj, nworld_, m, in.view(), d, sv, params, status_.data(), solve_ok_.data());
    }
    launch_->newton_finish(obj, nworld_, m, in.view(), d, sv, params, status_.data());
  }
  Slab<const double> v_new{sv.v.ptr, sv.v.stride};
  mark(kAfterSolve);
  launch_->integrate(nworld_, m, in.view(), v_new, Slab<const double>{d.act_next.ptr, d.act_next.stride}, out.view(),
                     config_.position_integration, h,
                     status_.data());
  mark(kAfterIntegrate);
  timed_ = timing_;
}

void SolverSAP::set_world_model(const WorldModelView& wm) {
  world_model_ = wm;
  launch_->world_model = wm;
}

StageTimes SolverSAP::last_stage_times() {
  StageTimes t;
  if (!timed_) return t;
  t.free_motion = clock_->elapsed_ms(kStart, kAfterFreeMotion);
  t.contact_setup = clock_->elapsed_ms(kAfterFreeMotion, kAfterSetup);
  t.solve = clock_->elapsed_ms(kAfterSetup, kAfterSolve);
  t.integrate = clock_->elapsed_ms(kAfterSolve, kAfterIntegrate);
  return t;
}

std::vector<int> SolverSAP::world_status() const { return status_.to_host(); }

StepDiagnostics SolverSAP::diagnostics() const {
  StepDiagnostics g;
  g.status = world_status();
  const std::vector<int> st = solve_->stats.buffer().to_host();
  const std::vector<double> cost = solve_->cost.buffer().to_host();
  const std::vector<int> ncon = solve_->con_count.buffer().to_host();
  for (int w = 0; w < nworld_; ++w) {
    const int* stats = st.data() + std::size_t(kNumSolveStats) * static_cast<std::size_t>(w);
    const double* costs = cost.data() + std::size_t(kNumSolveCosts) * static_cast<std::size_t>(w);
    g.newton_iterations.push_back(stats[kStatNewtonIterations]);
    g.line_search_iterations.push_back(stats[kStatLineSearchIterations]);
    g.truncated_contacts.push_back(stats[kStatTruncatedContacts]);
    g.exit_reason.push_back(stats[kStatExitReason]);
    g.contacts.push_back(ncon[static_cast<std::size_t>(w)]);
    g.cost.push_back(costs[kCostFinal]);
    g.residual.push_back(costs[kCostResidualRatio]);
    g.optimality.push_back(costs[kCostOptimality]);
  }
  const std::vector<double> trace = solve_->cost_trace.buffer().to_host();
  const std::size_t nt = solve_->cost_trace.per_world();
  for (int w = 0; w < nworld_; ++w) {
    const std::size_t n =
        std::min<std::size_t>(nt, static_cast<std::size_t>(g.newton_iterations[static_cast<std::size_t>(w)]) + 1);
    g.cost_trace.emplace_back(trace.begin() + static_cast<long>(nt * static_cast<std::size_t>(w)),
                              trace.begin() + static_cast<long>(nt * static_cast<std::size_t>(w) + n));
  }
  return g;
}

int SolverSAP::last_newton_iterations() const {
  int n = 0;
  for (int k : diagnostics().newton_iterations) n = std::max(n, k);
  return n;
}

int SolverSAP::last_line_search_iterations() const {
  int n = 0;
  for (int k : diagnostics().line_search_iterations) n += k;
  return n;
}

long long SolverSAP::last_truncated_contact_count() const {
  long long n = 0;
  for (int k : diagnostics().truncated_contacts) n += k;
  return n;
}

std::vector<ContactImpulse> SolverSAP::contact_impulses(int world) const {
  const int n = solve_->con_count.world_to_host(world)[0];
  const std::vector<double> gamma = solve_->gamma.world_to_host(world);
  const std::vector<double> frame = solve_->con_frame.world_to_host(world);
  std::vector<ContactImpulse> out(static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) {
    for (int k = 0; k < 3; ++k)
      out[static_cast<std::size_t>(c)].gamma[k] = gamma[3 * static_cast<std::size_t>(c) + static_cast<std::size_t>(k)];
    for (int k = 0; k < 9; ++k)
      out[static_cast<std::size_t>(c)].frame[k] = frame[9 * static_cast<std::size_t>(c) + static_cast<std::size_t>(k)];
  }
  return out;
}

std::vector<double> SolverSAP::solved_velocity(int world) const { return solve_->v.world_to_host(world); }

int SolverSAP::failed_world_count() const {
  int n = 0;
  for (int s : world_status()) n += (s & kStatusFailureMask) ? 1 : 0;
  return n;
}

}  // namespace sap
