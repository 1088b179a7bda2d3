// Python module sap._sap (nanobind): the C++ API mirrored (docs/python.md). Scenes and models
// load through the C++ loaders (their errors become Python exceptions carrying the C++ message:
// file, JSON pointer, XML line), Simulator wraps sap::Simulator, and every state/control buffer
// is exported without a copy through the simulator's own ArrayView::to_dlpack (DLPack) and the
// array protocols (__array_interface__ on the CPU, __cuda_array_interface__ on CUDA).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>

#include <dlpack/dlpack.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sap/sap.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// ---- zero-copy views -------------------------------------------------------------------------

// The DLPack tensor handed to a consumer: the simulator's own DLManagedTensor (from
// ArrayView::to_dlpack) wrapped so that its deleter also releases a reference to the Python
// object that owns the simulator; the memory stays valid as long as any consumer holds it.
// Consumers that announce DLPack >= 1.0 (numpy 2, torch 2.4+) get the versioned struct, whose
// flags say the tensor is writable (numpy marks unversioned imports read-only). Debian's
// libdlpack-dev is 0.6, so the 1.0 struct is declared here (its layout is fixed by the spec).
struct DLPackVersion1 {
  uint32_t major, minor;
};
struct DLManagedTensorVersioned1 {
  DLPackVersion1 version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned1*);
  uint64_t flags;  // bit 0: read only, bit 1: is copied
  DLTensor dl_tensor;
};

struct OwnedTensor {
  DLManagedTensor legacy;
  DLManagedTensorVersioned1 versioned;
  DLManagedTensor* inner;
  PyObject* owner;
};

void release_owned(OwnedTensor* o) {
  o->inner->deleter(o->inner);
  if (Py_IsInitialized()) {
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(o->owner);
    PyGILState_Release(s);
  }
  delete o;
}
void legacy_deleter(DLManagedTensor* t) { release_owned(static_cast<OwnedTensor*>(t->manager_ctx)); }
void versioned_deleter(DLManagedTensorVersioned1* t) { release_owned(static_cast<OwnedTensor*>(t->manager_ctx)); }

// A capsule still carrying its original name was never consumed: we still own the tensor.
void legacy_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (t && t->deleter) t->deleter(t);
  }
  PyErr_Clear();
}
void versioned_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    auto* t = static_cast<DLManagedTensorVersioned1*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
    if (t && t->deleter) t->deleter(t);
  }
  PyErr_Clear();
}

const char* typestr(sap::DType t) { return t == sap::DType::F64 ? "<f8" : t == sap::DType::F32 ? "<f4" : "<i4"; }
int itemsize(sap::DType t) { return t == sap::DType::F64 ? 8 : 4; }

// One simulator buffer as a Python object: numpy.asarray / torch.from_dlpack / jax.dlpack wrap
// it without a copy. `owner` keeps the simulator alive.
struct View {
  sap::ArrayView v;
  nb::object owner;
  bool writable = true;
  std::string name;

  nb::tuple shape() const {
    nb::list l;
    for (int i = 0; i < v.ndim; ++i) l.append(v.shape[static_cast<size_t>(i)]);
    return nb::tuple(l);
  }
  nb::tuple strides_bytes() const {
    nb::list l;
    for (int i = 0; i < v.ndim; ++i) l.append(v.strides[static_cast<size_t>(i)] * itemsize(v.dtype));
    return nb::tuple(l);
  }
  nb::object dlpack(nb::handle max_version) const {
    bool versioned = false;
    if (!max_version.is_none()) versioned = nb::cast<int>(max_version[0]) >= 1;
    auto* o = new OwnedTensor{};
    o->inner = v.to_dlpack();
    o->owner = owner.ptr();
    Py_INCREF(o->owner);
    PyObject* cap;
    if (versioned) {
      o->versioned.version = {1, 0};
      o->versioned.manager_ctx = o;
      o->versioned.deleter = versioned_deleter;
      o->versioned.flags = 0;  // writable; observations are read-only by contract (docs/python.md)
      o->versioned.dl_tensor = o->inner->dl_tensor;
      cap = PyCapsule_New(&o->versioned, "dltensor_versioned", versioned_capsule_destructor);
    } else {
      o->legacy.dl_tensor = o->inner->dl_tensor;
      o->legacy.manager_ctx = o;
      o->legacy.deleter = legacy_deleter;
      cap = PyCapsule_New(&o->legacy, "dltensor", legacy_capsule_destructor);
    }
    if (!cap) {
      release_owned(o);
      throw nb::python_error();
    }
    return nb::steal(cap);
  }
  nb::tuple dlpack_device() const {
    return nb::make_tuple(v.backend == sap::Backend::CUDA ? int(kDLCUDA) : int(kDLCPU),
                          v.device_id());
  }
  nb::dict interface(bool cuda) const {
    if ((v.backend == sap::Backend::CUDA) != cuda)
      throw nb::attribute_error(cuda ? "host memory: use __array_interface__ or __dlpack__"
                                     : "device memory: use __cuda_array_interface__ or __dlpack__");
    nb::dict d;
    d["shape"] = shape();
    d["typestr"] = typestr(v.dtype);
    d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(v.data), !writable);
    d["strides"] = strides_bytes();
    d["version"] = 3;
    if (cuda) d["stream"] = nb::none();  // the library stream; synchronise before reading (docs)
    return d;
  }
};

// ---- simulator -------------------------------------------------------------------------------

struct PySimulator {
  std::unique_ptr<sap::Simulator> sim;
  int device = 0;
};

sap::WorldSelection selection(nb::handle worlds, std::vector<int>& storage, int nworld) {
  if (worlds.is_none()) return sap::WorldSelection::all();
  // A boolean mask of nworld entries or a list of indices (any integer sequence / array).
  nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(worlds);
  const std::string kind = nb::cast<std::string>(a.attr("dtype").attr("kind"));
  if (kind == "b") {
    if (nb::cast<long long>(a.attr("size")) != nworld)
      throw nb::value_error(("world mask: expected " + std::to_string(nworld) + " entries").c_str());
    storage = nb::cast<std::vector<int>>(a.attr("astype")("int32").attr("ravel")().attr("tolist")());
    return sap::WorldSelection::mask(storage.data(), nworld);
  }
  if (kind != "i" && kind != "u") throw nb::type_error("worlds: expected a boolean mask or integer indices");
  storage = nb::cast<std::vector<int>>(a.attr("astype")("int32").attr("ravel")().attr("tolist")());
  for (int w : storage)
    if (w < 0 || w >= nworld)
      throw nb::index_error(("world index " + std::to_string(w) + " out of range [0, " + std::to_string(nworld) + ")").c_str());
  return sap::WorldSelection::indices(storage.data(), static_cast<int>(storage.size()));
}

// A host, C-contiguous fp64 copy of an array-like (numpy does the conversion).
std::vector<double> host_f64(nb::handle a, long long expected, const char* what) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object arr = np.attr("ascontiguousarray")(a, "dtype"_a = "float64").attr("ravel")();
  std::vector<double> out = nb::cast<std::vector<double>>(arr.attr("tolist")());
  if (expected >= 0 && static_cast<long long>(out.size()) != expected)
    throw nb::value_error((std::string(what) + ": expected " + std::to_string(expected) + " values, got " +
                           std::to_string(out.size()))
                              .c_str());
  return out;
}

View make_view(nb::handle self, sap::ArrayView v, bool writable, const char* name) {
  return View{v, nb::borrow(self), writable, name};
}

}  // namespace

// The Simulator's own keyword parameters (its solver options come after them).
constexpr const char* kSimulatorParams[] = {"scene", "nworld", "backend", "device", "threads", "preset",
                                            "max_rigid_contact", "scene_controls", "retry_depth",
                                            "retry_auto_reset", "cuda_graphs"};

NB_MODULE(_sap, m) {
  // Arrays that alias a simulator and live in module globals are released after nanobind's
  // leak check at interpreter exit; the report would be noise in every user script.
  nb::set_leak_warnings(false);
  m.doc() = "sap: batched articulated-body simulation with SAP contact (C++ core; docs/python.md)";

  // A missing file is FileNotFoundError (an OSError) with `filename` set, as Python's own open()
  // raises it; the message keeps the loader's location (file, JSON pointer or XML line).
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const sap::FileNotFoundError& e) {
      // FileNotFoundError(errno, strerror, filename), as OSError's own constructor takes them.
      nb::object err = nb::steal(PyObject_CallFunction(PyExc_FileNotFoundError, "iss", ENOENT, e.what(),
                                                       e.path().c_str()));
      if (!err.is_valid()) return;  // the call set its own error
      PyErr_SetObject(PyExc_FileNotFoundError, err.ptr());
    }
  });

  m.def("cuda_compiled", &sap::cuda_compiled, "True when the extension was built with the CUDA backend.");
  m.def("cuda_device_count", &sap::cuda_device_count, "Number of CUDA devices visible (0 without CUDA).");
  m.def("solver_option_names", &sap::solver_option_names, "Names accepted as solver keyword arguments.");

  nb::class_<View>(m, "ArrayView",
                   "Zero-copy view of a simulator buffer. numpy.asarray(v), torch.from_dlpack(v) and "
                   "jax.dlpack.from_dlpack(v) alias the simulator's memory; valid while the simulator lives "
                   "(the wrappers keep it alive).")
      .def_prop_ro("shape", &View::shape)
      .def_prop_ro("dtype", [](const View& s) { return std::string(typestr(s.v.dtype)); })
      .def_prop_ro("data_ptr", [](const View& s) { return reinterpret_cast<std::uintptr_t>(s.v.data); },
                   "Address of element (0, ...), for identity checks.")
      .def_prop_ro("device", [](const View& s) { return std::string(s.v.backend == sap::Backend::CUDA ? "cuda" : "cpu"); })
      .def_prop_ro("writable", [](const View& s) { return s.writable; })
      .def_prop_ro("name", [](const View& s) { return s.name; })
      .def("__dlpack__", [](const View& s, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             // CPU: no stream. CUDA: the data is ordered on the library stream; the caller
             // synchronises (sim.synchronize()) before using it on another stream (docs/python.md).
             (void)stream;
             if (!copy.is_none() && nb::cast<bool>(copy)) throw nb::buffer_error("sap.ArrayView: copy=True is not supported (zero copy only)");
             (void)dl_device;
             return s.dlpack(max_version);
           },
           "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(), "copy"_a = nb::none(),
           "DLPack capsule aliasing the buffer (ArrayView::to_dlpack).")
      .def("__dlpack_device__", &View::dlpack_device)
      .def_prop_ro("__array_interface__", [](const View& s) { return s.interface(false); })
      .def_prop_ro("__cuda_array_interface__", [](const View& s) { return s.interface(true); })
      // numpy.asarray tries __array_interface__ first; a device view has none, so numpy would
      // fall back to __array__: raise there instead of making a 0-d object array.
      .def("__array__", [](nb::handle self, nb::handle dtype, nb::handle copy) {
             const View& s = nb::cast<const View&>(self);
             if (s.v.backend == sap::Backend::CUDA)
               throw nb::type_error("sap.ArrayView: device memory; use torch.from_dlpack / cupy.from_dlpack or copy to the host");
             nb::module_ np = nb::module_::import_("numpy");
             nb::object a = np.attr("from_dlpack")(self);
             if (!dtype.is_none()) a = a.attr("astype")(dtype);
             if (!copy.is_none() && nb::cast<bool>(copy)) a = a.attr("copy")();
             return a;
           }, "dtype"_a = nb::none(), "copy"_a = nb::none())
      .def("numpy", [](nb::handle self) { return nb::module_::import_("numpy").attr("asarray")(self); },
           "numpy.asarray(self): a numpy array over the simulator's memory (CPU backend).")
      .def("__repr__", [](const View& s) {
        return "sap.ArrayView(" + s.name + ", shape=" + nb::cast<std::string>(nb::repr(s.shape())) + ", " +
               typestr(s.v.dtype) + ", " + (s.v.backend == sap::Backend::CUDA ? "cuda" : "cpu") + ")";
      });

  nb::class_<sap::Scene>(m, "Scene", "A model plus time step, worlds, solver options, initial state and controls.")
      .def_ro("name", &sap::Scene::name)
      .def_ro("source", &sap::Scene::source)
      .def_rw("dt", &sap::Scene::dt)
      .def_rw("num_worlds", &sap::Scene::num_worlds)
      .def_rw("max_rigid_contact", &sap::Scene::max_rigid_contact)
      .def_ro("warnings", &sap::Scene::warnings)
      .def_prop_ro("nq", [](const sap::Scene& s) { return s.model.nq; })
      .def_prop_ro("nv", [](const sap::Scene& s) { return s.model.nv; })
      .def_prop_ro("nu", [](const sap::Scene& s) { return s.model.nu; })
      .def_prop_ro("nbody", [](const sap::Scene& s) { return s.model.nbody; })
      .def_prop_ro("ngeom", [](const sap::Scene& s) { return s.model.ngeom; })
      .def_prop_ro("body_mass", [](const sap::Scene& s) { return s.model.body_mass; })
      .def_prop_ro("body_names", [](const sap::Scene& s) { return s.model.body_names; })
      .def_prop_ro("joint_names", [](const sap::Scene& s) { return s.model.jnt_names; })
      .def_prop_ro("actuator_names", [](const sap::Scene& s) { return s.model.actuator_names; })
      .def_prop_ro("gravity", [](const sap::Scene& s) { return std::vector<double>(s.model.gravity.begin(), s.model.gravity.end()); })
      .def_prop_rw("qpos0", [](const sap::Scene& s) { return s.qpos0; },
                   [](sap::Scene& s, const std::vector<double>& q) {
                     if (static_cast<int>(q.size()) != s.model.nq) throw nb::value_error("qpos0: expected nq values");
                     s.qpos0 = q;
                   })
      .def("body_id", [](const sap::Scene& s, const std::string& n) { return s.model.body_id(n); }, "-1 when absent")
      .def("actuator_id", [](const sap::Scene& s, const std::string& n) { return s.model.actuator_id(n); })
      .def("actuator_ctrlrange", [](const sap::Scene& s) {
        return std::make_pair(s.model.actuator_ctrllimited, s.model.actuator_ctrlrange);
      }, "(ctrllimited[nu], ctrlrange[2 nu])")
      // Geometry for viewers: copies of the model arrays (numpy).
      .def("geoms", [](const sap::Scene& s) {
        const sap::Model& md = s.model;
        nb::dict d;
        d["type"] = md.geom_type;
        d["bodyid"] = md.geom_bodyid;
        d["pos"] = md.geom_pos;
        d["quat"] = md.geom_quat;
        d["size"] = md.geom_size;
        std::vector<std::string> names;
        for (int i = 0; i < md.ngeom; ++i) names.push_back(sap::geom_type_name(md.geom_type[static_cast<size_t>(i)]));
        d["type_name"] = names;
        return d;
      }, "Geometry arrays (lists): type, type_name, bodyid, pos (3 per geom), quat (w x y z), size.");

  m.def("load_scene", &sap::load_scene, "path"_a,
        "Loads a JSON scene (docs/scene-format.md). Errors raise RuntimeError/ValueError with "
        "'<file>: <json pointer>: <what was expected>'.");
  m.def("parse_scene", &sap::parse_scene, "json_text"_a, "source"_a = "<string>", "base_dir"_a = ".");
  m.def("load_mjcf", [](const std::string& path) { return sap::load_mjcf(path); }, "path"_a,
        "Loads an MJCF file as a one-world Scene (the file's time step and qpos0, zero controls).");
  m.def("load_urdf", [](const std::string& path) { return sap::load_urdf(path); }, "path"_a,
        "Loads a URDF file as a one-world Scene.");

  nb::class_<sap::Snapshot>(m, "Snapshot", "Saved state of all worlds (on the simulator's backend).")
      .def_prop_ro("empty", &sap::Snapshot::empty)
      .def_prop_ro("time", &sap::Snapshot::time);

  nb::class_<PySimulator>(m, "Simulator",
                          "All worlds of a scene stepped in lock-step (sap::Simulator). Solver options are keyword "
                          "arguments by name (see solver_option_names()); values may be numbers, bools or strings.")
      .def("__init__",
           [](PySimulator* self, const sap::Scene& scene, int nworld, const std::string& backend, int device, int threads,
              std::optional<std::string> preset, int max_rigid_contact, bool scene_controls, int retry_depth,
              bool retry_auto_reset, bool cuda_graphs, nb::kwargs solver) {
             sap::SimulatorOptions o;
             o.nworld = nworld;
             o.backend = sap::parse_backend(backend);
             o.threads = threads;
             o.max_rigid_contact = max_rigid_contact;
             o.scene_controls = scene_controls;
             o.retry.depth = retry_depth;
             o.retry.auto_reset = retry_auto_reset;
             o.cuda_graphs = cuda_graphs;
             if (device != 0 && sap::resolve_backend(o.backend) != sap::Backend::CUDA)
               throw nb::value_error("device: only device 0 exists on the CPU backend");
             o.device = device;  // one Simulator per CUDA device in one process
             // A keyword that is neither a parameter above nor a solver option is a caller's
             // mistake in the call, as Python reports it for any function: TypeError.
             for (auto [k, v] : solver) {
               const std::string key = nb::cast<std::string>(k);
               const auto& names = sap::solver_option_names();
               if (std::find(names.begin(), names.end(), key) != names.end()) continue;
               std::string valid;
               for (const char* p : kSimulatorParams) valid += std::string(valid.empty() ? "" : ", ") + p;
               for (const auto& n : names) valid += ", " + n;
               throw nb::type_error(("Simulator() got an unexpected keyword argument '" + key +
                                     "'; valid keywords: " + valid).c_str());
             }
             if (preset || solver.size() > 0) {
               o.override_solver = true;
               o.solver = scene.solver;
               if (preset) sap::set_solver_option(o.solver, "contact_preset_variant", *preset);
               for (auto [k, v] : solver) {
                 std::string value;
                 if (nb::isinstance<bool>(v)) value = nb::cast<bool>(v) ? "true" : "false";
                 else value = nb::cast<std::string>(nb::str(v));
                 sap::set_solver_option(o.solver, nb::cast<std::string>(k), value);
               }
               o.solver.resolve();  // range checks now, with the option's name
             }
             new (self) PySimulator{std::make_unique<sap::Simulator>(scene, o), device};
           },
           "scene"_a, "nworld"_a = 0, "backend"_a = "auto", "device"_a = 0, "threads"_a = 0, "preset"_a = nb::none(),
           "max_rigid_contact"_a = 0, "scene_controls"_a = true, "retry_depth"_a = 0, "retry_auto_reset"_a = false,
           "cuda_graphs"_a = true, "solver"_a)
      .def_prop_ro("nworld", [](PySimulator& s) { return s.sim->nworld(); })
      .def_prop_ro("nq", [](PySimulator& s) { return s.sim->scene().model.nq; })
      .def_prop_ro("nv", [](PySimulator& s) { return s.sim->scene().model.nv; })
      .def_prop_ro("nu", [](PySimulator& s) { return s.sim->scene().model.nu; })
      .def_prop_ro("nbody", [](PySimulator& s) { return s.sim->scene().model.nbody; })
      .def_prop_ro("dt", [](PySimulator& s) { return s.sim->scene().dt; })
      .def_prop_ro("backend", [](PySimulator& s) {
        return std::string(s.sim->context().backend() == sap::Backend::CUDA ? "cuda" : "cpu");
      })
      .def_prop_ro("device", [](PySimulator& s) { return s.device; })
      .def_prop_ro("scene", [](PySimulator& s) { return s.sim->scene(); }, "A copy of the simulator's scene.")
      .def_prop_rw("time", [](PySimulator& s) { return s.sim->time(); }, [](PySimulator& s, double t) { s.sim->set_time(t); })
      .def("step", [](PySimulator& s, int n) {
             if (n < 1) throw nb::value_error("step: n must be >= 1");
             nb::gil_scoped_release r;
             if (n == 1) s.sim->step();
             else s.sim->step(n);
           }, "n"_a = 1, "n physics steps with the controls held (releases the GIL).")
      .def("synchronize", [](PySimulator& s) {
             nb::gil_scoped_release r;
             s.sim->context().synchronize();
           }, "Waits for the library stream (CUDA); a no-op on the CPU. Call before reading views on another stream.")
      .def_prop_ro("cuda_stream", [](PySimulator& s) { return reinterpret_cast<std::uintptr_t>(s.sim->context().cuda_stream()); },
                   "The library's cudaStream_t as an integer (0 on the CPU), e.g. for torch.cuda.ExternalStream.")
      .def("set_control", [](PySimulator& s, nb::handle ctrl) {
             const auto& md = s.sim->scene().model;
             std::vector<double> c = host_f64(ctrl, static_cast<long long>(s.sim->nworld()) * md.nu, "set_control");
             s.sim->set_control(c.data(), sap::DType::F64, sap::Memory::Host, 0);
           }, "ctrl"_a, "Controls (nworld, nu) from any array-like (copied). Disables the scene schedules. "
                         "For zero copy write into sim.ctrl instead.")
      .def_prop_ro("ctrl", [](nb::handle self) {
        auto& s = nb::cast<PySimulator&>(self);
        return make_view(self, s.sim->control_view(), true, "ctrl");
      }, "Writable zero-copy view of the controls (nworld, nu) fp64. Reading it disables the scene schedules.")
      .def_prop_ro("qpos", [](nb::handle self) { return make_view(self, nb::cast<PySimulator&>(self).sim->qpos_view(), false, "qpos"); },
                   "(nworld, nq) fp64, zero copy, read-only by contract (use reset(source='states') to set).")
      .def_prop_ro("qvel", [](nb::handle self) { return make_view(self, nb::cast<PySimulator&>(self).sim->qvel_view(), false, "qvel"); })
      .def_prop_ro("act", [](nb::handle self) { return make_view(self, nb::cast<PySimulator&>(self).sim->act_view(), false, "act"); })
      .def_prop_ro("body_pos", [](nb::handle self) { return make_view(self, nb::cast<PySimulator&>(self).sim->body_pos_view(), false, "body_pos"); },
                   "(nworld, nbody, 3) body frame origins, world frame.")
      .def_prop_ro("body_quat", [](nb::handle self) { return make_view(self, nb::cast<PySimulator&>(self).sim->body_quat_view(), false, "body_quat"); },
                   "(nworld, nbody, 4) body orientations (w, x, y, z).")
      .def_prop_ro("contact_force", [](nb::handle self) { return make_view(self, nb::cast<PySimulator&>(self).sim->contact_force_view(), false, "contact_force"); },
                   "(nworld, nbody, 3) sum of the last step's contact forces on each body (N).")
      .def_prop_ro("contact_flag", [](nb::handle self) { return make_view(self, nb::cast<PySimulator&>(self).sim->contact_flag_view(), false, "contact_flag"); },
                   "(nworld, nbody) int32: 1 when a contact of the body carried a normal impulse.")
      .def("reset", [](PySimulator& s, nb::handle worlds, const std::string& source, int keyframe, nb::handle qpos,
                       nb::handle qvel, double qpos_noise, double qvel_noise, std::uint64_t seed) {
             const int nw = s.sim->nworld();
             const auto& md = s.sim->scene().model;
             sap::ResetOptions o;
             std::vector<double> q, v;
             if (source == "initial") o.source = sap::ResetOptions::Source::Initial;
             else if (source == "keyframe") { o.source = sap::ResetOptions::Source::Keyframe; o.keyframe = keyframe; }
             else if (source == "states") {
               o.source = sap::ResetOptions::Source::States;
               q = host_f64(qpos, static_cast<long long>(nw) * md.nq, "reset qpos");
               v = qvel.is_none() ? std::vector<double>(static_cast<size_t>(nw) * md.nv, 0.0)
                                  : host_f64(qvel, static_cast<long long>(nw) * md.nv, "reset qvel");
               o.qpos = q.data();
               o.qvel = v.data();
             } else throw nb::value_error(("reset: source '" + source + "': expected initial, keyframe or states").c_str());
             o.qpos_noise = qpos_noise;
             o.qvel_noise = qvel_noise;
             o.seed = seed;
             if (worlds.is_none() && source == "initial" && qpos_noise == 0 && qvel_noise == 0) {
               s.sim->reset();  // also sets t = 0
               return;
             }
             std::vector<int> storage;
             sap::WorldSelection sel = selection(worlds, storage, nw);
             s.sim->reset(sel, o);
           },
           "worlds"_a = nb::none(), "source"_a = "initial", "keyframe"_a = 0, "qpos"_a = nb::none(), "qvel"_a = nb::none(),
           "qpos_noise"_a = 0.0, "qvel_noise"_a = 0.0, "seed"_a = 0,
           "Resets the selected worlds (None: all, and t = 0; a bool mask or indices). source: 'initial', "
           "'keyframe' (index from add_keyframe) or 'states' (qpos (nworld, nq), qvel (nworld, nv)); seeded "
           "Gaussian noise on top.")
      .def("add_keyframe", [](PySimulator& s, nb::handle qpos, nb::handle qvel) {
             const auto& md = s.sim->scene().model;
             std::vector<double> q = host_f64(qpos, md.nq, "add_keyframe qpos");
             std::vector<double> v = qvel.is_none() ? std::vector<double>{} : host_f64(qvel, md.nv, "add_keyframe qvel");
             return s.sim->add_keyframe(q, v);
           }, "qpos"_a, "qvel"_a = nb::none())
      .def("save", [](PySimulator& s, nb::handle worlds) {
             std::vector<int> storage;
             return s.sim->save(selection(worlds, storage, s.sim->nworld()));
           }, "worlds"_a = nb::none(), "Snapshot of the selected worlds (None: all).")
      .def("save_into", [](PySimulator& s, sap::Snapshot& snap, nb::handle worlds) {
             std::vector<int> storage;
             s.sim->save(snap, selection(worlds, storage, s.sim->nworld()));
           }, "snapshot"_a, "worlds"_a = nb::none())
      .def("restore", [](PySimulator& s, const sap::Snapshot& snap, nb::handle worlds) {
             std::vector<int> storage;
             s.sim->restore(snap, selection(worlds, storage, s.sim->nworld()));
           }, "snapshot"_a, "worlds"_a = nb::none())
      .def("counters", [](PySimulator& s) {
             sap::WorldCounters c = s.sim->counters();
             nb::dict d;
             d["failures"] = c.failures;
             d["retries"] = c.retries;
             d["rescued"] = c.rescued;
             return d;
           }, "Per-world counters since each world's last reset: failures, retries, rescued.")
      .def("fp64_retry_counters", [](PySimulator& s) {
             const sap::SolverSAP& solver = s.sim->solver();
             nb::dict d;
             d["steps"] = solver.fp64_retries();
             d["rescued"] = solver.fp64_rescued();
             d["overflow"] = solver.fp64_retry_overflow();
             d["capacity"] = solver.fp64_retry_capacity();
             return d;
           }, "The fp64 retry of failed fp32 steps (solver option fp64_retry), per world since construction "
              "(host lists): steps repeated in fp64, rescued (the fp64 step succeeded), overflow (needed the "
              "repeat inside a CUDA graph but found no slot); capacity: worlds repeated at once.")
      .def("diagnostics", [](PySimulator& s) {
             sap::StepDiagnostics d = s.sim->solver().diagnostics();
             nb::dict o;
             o["status"] = d.status;
             o["newton_iterations"] = d.newton_iterations;
             o["line_search_iterations"] = d.line_search_iterations;
             o["truncated_contacts"] = d.truncated_contacts;
             o["contacts"] = d.contacts;
             o["cost"] = d.cost;
             o["residual"] = d.residual;
             o["exit_reason"] = d.exit_reason;
             return o;
           }, "Per-world solver diagnostics of the last step (host lists): status (WorldStatusBits: 1 converged, "
              "2 iteration limit, 4 line search failed, 8 non-finite, 16 factorisation failed, 32 not descent, "
              "64 skipped, 128 repeated in fp64), newton_iterations, "
              "line_search_iterations, truncated_contacts, contacts, cost, residual, exit_reason.")
      .def("failed_worlds", [](PySimulator& s) { return s.sim->failed_worlds(); })
      .def("failed_worlds_since_reset", [](PySimulator& s) { return s.sim->failed_worlds_since_reset(); })
      .def("energy", [](PySimulator& s) {
             std::vector<sap::WorldEnergy> e = s.sim->energy();
             std::vector<double> k, g, sp;
             for (auto& x : e) { k.push_back(x.kinetic); g.push_back(x.gravity); sp.push_back(x.spring); }
             nb::dict d;
             d["kinetic"] = k;
             d["gravity"] = g;
             d["spring"] = sp;
             return d;
           }, "Per-world energy (J): kinetic, gravity, spring.")
      .def("set_world_params", [](PySimulator& s, const std::string& kind, nb::handle values) {
             sap::WorldParam k;
             if (kind == "contact_scale") k = sap::WorldParam::ContactScale;
             else if (kind == "mass_scale") k = sap::WorldParam::MassScale;
             else if (kind == "actuator_gain_scale") k = sap::WorldParam::ActuatorGainScale;
             else if (kind == "gravity") k = sap::WorldParam::Gravity;
             else throw nb::value_error(("set_world_params: kind '" + kind +
                                         "': expected contact_scale, mass_scale, actuator_gain_scale or gravity").c_str());
             std::vector<double> v = host_f64(values, static_cast<long long>(s.sim->nworld()) * sap::world_param_count(k),
                                              ("set_world_params " + kind).c_str());
             s.sim->set_world_params(k, v.data());
           }, "kind"_a, "values"_a,
           "Per-world parameters: contact_scale (nworld, 3), mass_scale (nworld,), actuator_gain_scale (nworld, 3), "
           "gravity (nworld, 3).")
      .def("clear_world_params", [](PySimulator& s) { s.sim->clear_world_params(); })
      .def_prop_ro("world_param_slots", [](PySimulator& s) { return s.sim->world_param_slots(); })
      .def("last_step_times", [](PySimulator& s) {
             sap::StepTimes t = s.sim->last_step_times();
             nb::dict d;
             d["collide"] = t.collide;
             d["free_motion"] = t.solver.free_motion;
             d["contact_setup"] = t.solver.contact_setup;
             d["solve"] = t.solver.solve;
             d["integrate"] = t.solver.integrate;
             d["total"] = t.total();
             return d;
           }, "Stage timings of the last step (ms).")
      .def("contacts", [](PySimulator& s, int world) {
             // Contacts of the last step of one world (host copies): the solver's contact c is the
             // collision pipeline's slot c (the pairing of Simulator's contact observations).
             if (world < 0 || world >= s.sim->nworld()) throw nb::index_error("contacts: world out of range");
             std::vector<sap::ContactImpulse> imp = s.sim->solver().contact_impulses(world);
             const std::vector<double> x0 = s.sim->contacts().x0.world_to_host(world);
             const std::vector<double> x1 = s.sim->contacts().x1.world_to_host(world);
             const std::vector<int> body = s.sim->contacts().body.world_to_host(world);
             const double inv_dt = 1.0 / s.sim->scene().dt;
             std::vector<double> point, normal, force;
             std::vector<int> bodies;
             for (size_t c = 0; c < imp.size(); ++c) {
               const double* R = imp[c].frame;
               for (int i = 0; i < 3; ++i) {
                 point.push_back(0.5 * (x0[3 * c + i] + x1[3 * c + i]));
                 normal.push_back(R[3 * i + 2]);
                 force.push_back((R[3 * i] * imp[c].gamma[0] + R[3 * i + 1] * imp[c].gamma[1] + R[3 * i + 2] * imp[c].gamma[2]) * inv_dt);
               }
               bodies.push_back(body[2 * c]);
               bodies.push_back(body[2 * c + 1]);
             }
             nb::dict d;
             d["point"] = point;
             d["normal"] = normal;
             d["force"] = force;
             d["body"] = bodies;
             return d;
           }, "world"_a,
           "Contacts of one world's last step (lists, 3 per contact): point (midpoint of the two witness "
           "points), normal, force on the second body (N), body pairs (2 per contact).")
      .def("body_poses", [](PySimulator& s, int world) {
             if (world < 0 || world >= s.sim->nworld()) throw nb::index_error("body_poses: world out of range");
             return std::make_pair(s.sim->body_pos(world), s.sim->body_quat(world));
           }, "world"_a, "Host copies (lists) of one world's body positions (nbody*3) and quaternions (nbody*4).");
}
