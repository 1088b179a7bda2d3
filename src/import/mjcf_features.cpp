// The MJCF importer's feature table (import_features.hpp): every element and attribute the
// importer knows, in the order of MuJoCo's XML reference, with what the import does and MuJoCo's
// meaning. check_attributes (mjcf_document.cpp) and the asset readers (mjcf_assets.cpp) take
// their known attributes from here; tests/test_import_features.cpp loads each `example`.
#include "import/import_features.hpp"

namespace sap::import {
namespace {

constexpr Support S = Support::kSupported, A = Support::kApproximated, I = Support::kIgnored, W = Support::kWarned,
                  R = Support::kRejected;

// A MuJoCo attribute no code reads: reported as not recognized (a note; for assets an error).
AttributeFeature noted(const char* name, Support status, const char* theirs, const char* example,
                       const char* variant = nullptr) {
  return {name, status, "not read: noted as not recognized", theirs, example, variant, true};
}

// The orientation alternatives of MuJoCo's frames (at most one per element), spliced into the
// attribute lists of the elements that have them.
// clang-format off
#define SAP_MJCF_ORIENTATION(what)                                                                              \
  {"quat", S, "unit quaternion (w, x, y, z), normalised", "orientation of the " what " as a quaternion",        \
   "0 0 0 1"},                                                                                                  \
  {"axisangle", S, "angle in <compiler angle> units", "orientation as axis and angle", "0 0 1 90"},             \
  {"xyaxes", S, "y made orthogonal to x", "orientation from the frame's x and y axes", "0 1 0 -1 0 0"},         \
  {"zaxis", S, "minimal rotation taking z to it", "orientation from the frame's z axis", "1 0 0"},              \
  {"euler", S, "in <compiler eulerseq> order and <compiler angle> units", "orientation as Euler angles", "0 0 90"}
// clang-format on

std::vector<ElementFeature> make_mjcf_features() {
  std::vector<ElementFeature> t;
  // ------------------------------------------------------------------------------ document
  t.push_back({"include",
               "`<include>`",
               S,
               "anywhere, nested; the file's root `<mujoco>` or `<mujocoinclude>` (Adroit, Franka kitchen), its "
               "children spliced in; recursion is an error",
               "inserts the children of another file's root",
               {{"file", S, "relative to the including file, then to the main file (MuJoCo: the main file's directory)",
                 "path of the included file", "inc.xml"}},
               /*checked=*/false});
  t.push_back(
      {"compiler",
       "`<compiler>`",
       S,
       "read wherever it appears, before the bodies",
       "compiler settings",
       {{"angle", S, "", "units of angles in the file (degree, radian)", "radian"},
        {"eulerseq", S, "", "axis sequence of `euler` (lowercase: moving axes, uppercase: fixed)", "zyx"},
        {"autolimits", S, "defaults to true (MuJoCo >= 2.3.3)", "a range given implies limited", "false"},
        {"inertiafromgeom", S, "false, true, auto", "body mass properties from the geoms", "true"},
        {"inertiagrouprange", S, "", "geom groups whose geoms count for inertia from geoms", "0 3"},
        {"boundmass", S, "", "lower bound of every body's mass", "0.001"},
        {"boundinertia", S, "on the principal moments", "lower bound of every body's principal moments", "1e-6"},
        {"settotalmass", S, "scales masses and inertias", "rescales the model to this total mass", "5"},
        {"balanceinertia", S, "moments violating the triangle inequality set to their mean",
         "repairs principal moments violating the triangle inequality", "true"},
        {"meshdir", S, "relative to the main file unless absolute", "directory of mesh and height-field files",
         "meshes"},
        {"texturedir", I, "textures are not read", "directory of texture files", "textures"},
        {"assetdir", S, "used when meshdir is not given", "directory of all asset files", "assets"},
        {"strippath", S, "", "drop directories of asset file names", "true"},
        {"discardvisual", I, "visual geoms are not added to the model anyway", "discard visual-only geoms", "true"},
        {"fusestatic", W, "warned when true: static bodies kept (same dynamics)",
         "fuse jointless bodies into their parents", "true"},
        {"coordinate", R, "only `local`", "legacy global coordinates (removed in MuJoCo 2)", "global"},
        {"usethread", I, "", "multi-threaded compilation", "false"},
        {"exactmeshinertia", R, "an error, as in MuJoCo 4.0 (the mesh's `inertia` replaces it)",
         "not in MuJoCo 4.0 (unrecognized attribute); formerly exact mesh inertia", "true"},
        {"convexhull", R, "an error, as in MuJoCo 4.0 (colliding meshes are always hulled)",
         "not in MuJoCo 4.0 (unrecognized attribute); formerly whether to compute hulls", "false"},
        {"alignfree", W, "warned when true: free bodies keep their frames (qpos differs)",
         "align free bodies' frames with their principal axes", "true"},
        {"saveinertial", I, "", "write explicit inertials when saving", "true"},
        {"maxhullvert", R, "an error, as in MuJoCo 4.0 (the `<mesh>` attribute of that name is rejected too)",
         "not in MuJoCo 4.0 as a compiler attribute (unrecognized attribute)", "10"},
        {"fitaabb", R, "only false: primitives are fitted to the mesh's inertia box",
         "fit primitives to a mesh's bounding box instead of its inertia box", "true"},
        noted("conflict", W, "policy for name conflicts of attached models", "error"),
        noted("passthrough", W, "skip the compiler's processing of the model", "true"),
        noted("savecanonical", W, "save the model in canonical form", "true"),
        noted("savecompiled", W, "save the compiled model", "true")}});
  t.push_back(
      {"option",
       "`<option>`",
       S,
       "read wherever it appears; MuJoCo's solver settings do not apply to SAP",
       "simulation options",
       {{"timestep", S, "", "integration time step (s)", "0.001"},
        {"gravity", S, "", "gravitational acceleration", "0 0 -5"},
        {"density", S, "MuJoCo's fluid forces (inertia-box and ellipsoid models)", "density of the medium", "1.2"},
        {"viscosity", S, "MuJoCo's fluid forces", "viscosity of the medium", "0.00002"},
        {"wind", S, "MuJoCo's fluid forces", "velocity of the medium", "1 0 0"},
        {"magnetic", I, "no magnetometers", "magnetic flux (magnetometer sensors)", "0 0.5 0"},
        {"integrator", W, "SAP's implicit step", "integrator (Euler, RK4, implicit, implicitfast)", "RK4"},
        {"cone", W, "SAP's cone is elliptic", "friction cone (pyramidal, elliptic)", "pyramidal"},
        {"impratio", W, "", "ratio of frictional to normal impedance", "10"},
        {"solver", W, "SAP's Newton solver (SolverOptions)", "constraint solver (PGS, CG, Newton)", "CG"},
        {"iterations", W, "SolverOptions::max_iterations", "solver iterations", "50"},
        {"tolerance", W, "SolverOptions", "solver tolerance", "1e-10"},
        {"ls_iterations", W, "SolverOptions", "line-search iterations", "20"},
        {"ls_tolerance", W, "SolverOptions", "line-search tolerance", "0.001"},
        {"noslip_iterations", W, "", "no-slip solver iterations", "5"},
        {"noslip_tolerance", W, "", "no-slip solver tolerance", "1e-6"},
        {"ccd_iterations", W, "", "convex collision iterations", "50"},
        {"ccd_tolerance", W, "", "convex collision tolerance", "1e-6"},
        {"sdf_iterations", W, "", "SDF collision iterations", "10"},
        {"sdf_initpoints", W, "", "SDF collision starting points", "40"},
        {"jacobian", W, "", "dense or sparse constraint Jacobian", "sparse"},
        {"o_margin", W, "the override flag is rejected", "contact margin under the override flag", "0.01"},
        {"o_solref", W, "the override flag is rejected", "contact solref under the override flag", "0.02 1"},
        {"o_solimp", W, "the override flag is rejected", "contact solimp under the override flag",
         "0.9 0.95 0.001 0.5 2"},
        {"o_friction", W, "the override flag is rejected", "contact friction under the override flag",
         "1 1 0.005 0.0001 0.0001"},
        {"actuatorgroupdisable", W, "", "actuator groups disabled at load", "1"},
        {"sleep_tolerance", W, "", "velocity below which bodies sleep", "1e-4"}}});
  t.push_back(
      {"option/flag",
       "`<option><flag>`",
       S,
       "each attribute is a flag: `enable` or `disable`, else an error",
       "enables or disables pipeline stages",
       {{"gravity", S, "disable: zero gravity", "gravity", "disable"},
        {"contact", S, "disable: no collisions", "collision detection and contact constraints", "disable"},
        {"constraint", S, "disable: no contacts, limits, equalities or friction loss", "all constraints",
         "disable"},
        {"limit", S, "disable: no joint or tendon limits", "joint and tendon limits", "disable"},
        {"spring", S, "disable: no joint or tendon springs", "passive springs", "disable"},
        {"damper", S, "disable: no joint or tendon dampers", "passive dampers", "disable"},
        {"filterparent", S, "disable: parent-child pairs collide", "filtering of parent-child body pairs", "disable"},
        {"equality", S, "disable: no equality constraints (still read and checked)", "equality constraints",
         "disable"},
        {"frictionloss", S, "disable: no joint or tendon friction loss", "joint and tendon friction loss", "disable"},
        {"actuation", R, "disable is rejected: actuator forces cannot be switched off (dropped under "
                         "drop_unsupported: the actuators act)",
         "actuator forces", "disable"},
        {"clampctrl", S, "disable: actuators have no ctrlrange (ctrl used as given)",
         "clamping of controls to ctrlrange", "disable"},
        {"warmstart", W, "a MuJoCo solver setting: SAP's Newton iteration is its own (SolverOptions)",
         "solver warm start", "disable"},
        {"refsafe", W, "SAP does not use solref time constants for limits and equalities",
         "solref time constant at least 2 timesteps", "disable"},
        {"sensor", W, "no sensors are imported", "sensors", "disable"},
        {"midphase", W, "same contacts: the mid-phase only prunes pairs", "BVH mid-phase collision", "disable"},
        {"eulerdamp", W, "SAP's step is implicit in damping whatever the flag (MuJoCo's Euler with eulerdamp "
                         "disabled is explicit: trajectories differ)",
         "implicit damping in the Euler integrator", "disable"},
        {"autoreset", W, "failed worlds are flagged, not reset", "reset on numerical instability", "disable"},
        {"nativeccd", W, "our own convex collision whatever the flag", "MuJoCo's native convex collision", "disable"},
        {"island", W, "solver setting", "constraint island discovery", "enable"},
        {"energy", W, "no energy output", "energy computation", "enable"},
        {"fwdinv", W, "no inverse dynamics comparison", "forward/inverse comparison", "enable"},
        {"invdiscrete", W, "no inverse dynamics", "discrete-time inverse dynamics", "enable"},
        {"multiccd", W, "our convex contact sets whatever the flag (contact counts may differ from MuJoCo's)",
         "multiple contacts per convex pair", "enable"},
        {"diagexact", W, "solver setting", "exact diagonal of the constraint matrix", "enable"},
        {"ipc", W, "SAP's own contact model (the flag's IPC is not used)", "incremental potential contact", "enable"},
        {"sleep", W, "every body is simulated at every step (MuJoCo freezes sleeping bodies)",
         "sleeping of resting bodies", "enable"},
        {"speculative", W, "contacts within the margin only (MuJoCo adds speculative contacts)",
         "speculative contacts", "enable"},
        {"override", R, "enable is rejected (dropped under drop_unsupported)", "contact parameters from `<option o_*>`",
         "enable"}},
       /*checked=*/false});
  t.push_back({"size", "`<size>`", W, "", "memory sizes", {}});
  t.push_back({"visual", "`<visual>`", W, "", "rendering settings", {}});
  t.push_back({"statistic", "`<statistic>`", W, "", "model statistics for rendering", {}});
  t.push_back({"custom", "`<custom>`", W, "", "user numeric and text data", {}});
  t.push_back({"extension", "`<extension>`", R, "dropped under drop_unsupported", "engine plugins", {}});
  t.push_back({"deformable", "`<deformable>`", R, "dropped under drop_unsupported", "flexes and skins", {}});
  t.push_back({"sensor", "`<sensor>`", W, "every sensor warned: sensors do not change the dynamics", "sensors", {}});
  t.push_back({"default",
               "`<default>`",
               S,
               "nested classes; joint, geom, tendon, equality, pair, mesh and actuator defaults apply in class order "
               "root to leaf, then the element; site, camera, light and material defaults skipped; others warned",
               "default attribute values by class",
               {{"class", S, "the top level is `main`", "name of the class", "c"}},
               /*checked=*/false});
  // ------------------------------------------------------------------------------ bodies
  t.push_back({"body",
               "`<body>`",
               S,
               "bodies numbered depth first in document order, as MuJoCo",
               "a rigid body and its subtree",
               {{"name", S, "", "name", "b9"},
                {"childclass", S, "", "default class of the elements inside", "main"},
                {"mocap", W, "a static body at its initial pose (must be a jointless child of the world)",
                 "a body moved by the user (mocap_pos, mocap_quat)", "true"},
                {"pos", S, "", "position in the parent frame", "0 0 1"},
                SAP_MJCF_ORIENTATION("body"),
                {"gravcomp", S, "the force -gravcomp m g at the body's centre of mass", "gravity compensation", "1"},
                {"user", I, "", "user data", "1 2"},
                {"sleep", I, "no effect: bodies never sleep here (`<flag sleep>` is warned)", "sleeping policy",
                 "never"},
                noted("fuse", W, "fuse this body into its parent (per-body fusestatic)", "true"),
                noted("simple", W, "treat the body as simple (no kinematic processing)", "true")}});
  t.push_back({"frame",
               "`<frame>`",
               S,
               "composes with the bodies, geoms, joints and sites inside",
               "a coordinate frame without a body",
               {{"name", I, "", "name", "f"},
                {"childclass", S, "", "default class of the elements inside", "main"},
                {"pos", S, "", "position", "0 0 1"},
                SAP_MJCF_ORIENTATION("frame")}});
  t.push_back({"inertial",
               "`<inertial>`",
               S,
               "stored as the full tensor about the com in body axes",
               "mass properties of the body",
               {{"pos", S, "", "centre of mass", "0 0 0.1"},
                SAP_MJCF_ORIENTATION("inertial frame"),
                {"mass", S, "", "mass (kg)", "2"},
                {"diaginertia", S, "", "principal moments in the inertial frame", "0.2 0.2 0.2"},
                {"fullinertia", S, "(ixx iyy izz ixy ixz iyz); no orientation with it", "full inertia tensor",
                 "0.2 0.2 0.2 0 0 0"}}});
  t.push_back({"joint",
               "`<joint>`",
               S,
               "free joints only on children of the world",
               "a degree of freedom of its body",
               {{"name", S, "", "name", "j9"},
                {"class", S, "", "default class", "main"},
                {"type", S, "hinge, slide, ball, free", "joint type", "slide"},
                {"group", I, "", "visualisation group", "2"},
                {"pos", S, "", "anchor in the body frame", "0 0 0.1"},
                {"axis", S, "normalised", "axis of a hinge or slide", "1 0 0"},
                {"springdamper", S, "MuJoCo's compiler: stiffness and damping from M(qpos0)",
                 "spring and damper from time constant and damping ratio", "0.1 1"},
                {"limited", S, "true, false, auto", "whether range applies", "false"},
                {"actuatorfrclimited", S, "", "whether actuatorfrcrange applies", "false"},
                {"solreflimit", W, "when limited: SAP limit rows have their own stiffness", "limit softness (solref)",
                 "0.01 1"},
                {"solimplimit", W, "when limited", "limit impedance (solimp)", "0.8 0.9 0.01"},
                {"solreffriction", W, "SAP's friction-loss box row has its own regularization (docs/sap-math.md §13)",
                 "friction-loss softness (solref)", "0.01 1"},
                {"solimpfriction", W, "as solreffriction", "friction-loss impedance (solimp)", "0.8 0.9 0.01"},
                {"stiffness", S, "ball and free joints toward qpos0", "spring stiffness", "10"},
                {"range", S, "hinge ranges in <compiler angle> units; ball limits dropped with a warning",
                 "joint limits", "-1 1"},
                {"actuatorfrcrange", S, "one clamp with the actuator's forcerange; several actuators rejected",
                 "clamp of the total actuator force on the joint", "-1 1"},
                {"actuatorgravcomp", S, "as body gravcomp; inside actuatorfrcrange rejected",
                 "gravity compensation counted as actuator force", "true"},
                {"margin", W, "when limited", "limit activation distance", "0.01"},
                {"ref", S, "qpos0", "reference position", "0.1"},
                {"springref", S, "", "spring rest position", "0.1"},
                {"armature", S, "", "rotor inertia added to the mass matrix", "0.1"},
                {"damping", S, "implicit, as MuJoCo's implicitfast", "viscous damping", "0.5"},
                {"frictionloss", S, "a SAP box row (docs/sap-math.md §13)", "dry friction", "0.5"},
                {"user", I, "", "user data", "1 2"},
                noted("springyield", W, "yield of the joint spring (MuJoCo 4.0)", "1")}});
  t.push_back({"freejoint",
               "`<freejoint>`",
               S,
               "only on children of the world",
               "a free joint",
               {{"name", S, "", "name", "j9"},
                {"group", I, "", "visualisation group", "2"},
                {"align", W, "warned when true: the body keeps its frame (qpos differs; same dynamics)",
                 "align the body frame with its principal axes", "true"}}});
  t.push_back(
      {"geom",
       "`<geom>`",
       S,
       "plane, sphere, capsule, box, cylinder, ellipsoid, mesh (hulled), hfield; sdf only visual and massless; "
       "planes only on static bodies; visual-only geoms (contype = conaffinity = 0) are not added",
       "a collision and mass shape",
       {{"name", S, "", "name", "g9"},
        {"class", S, "", "default class", "main"},
        {"type", S, "sdf geoms that collide or carry mass are rejected", "shape", "cylinder"},
        {"contype", S, "", "collision type bits", "2"},
        {"conaffinity", S, "", "collision affinity bits", "2"},
        {"condim", S, "1, 3, 4, 6 (4 and 6: CPU backend only)", "contact dimensionality", "1"},
        {"group", S, "selects geoms for inertia (inertiagrouprange)", "group", "2"},
        {"priority", S, "the higher geom's parameters win, as MuJoCo", "contact priority", "1"},
        {"size", S, "fewer values keep the inherited rest", "shape size", "0.1 0.2"},
        {"material", I, "", "visual material", "mat"},
        {"friction", S, "sliding, torsional, rolling; combined as MuJoCo (max or priority)", "friction coefficients",
         "0.5 0.01 0.001"},
        {"mass", S, "density = mass / volume", "mass of the geom", "2"},
        {"density", S, "", "density for the geom's mass", "500"},
        {"shellinertia", R, "on primitives; on meshes set the mesh's inertia=\"shell\" (an error, as MuJoCo)",
         "mass on the surface", "true"},
        {"solmix", S, "weights the two geoms' solref", "mixing weight of contact parameters", "0.5"},
        {"solref", A, "a spring-damper oscillator on the trees' reduced mass (\"Contact parameters\")",
         "contact softness (time constant, damping ratio)", "0.01 1"},
        {"solimp", W, "on colliding geoms: SAP contact has no impedance profile", "contact impedance", "0.8 0.9 0.01"},
        {"margin", S, "contacts while dist < margin + gap, phi = dist - margin", "contact activation distance", "0.01"},
        {"gap", S, "a gap-band contact is a contact at phi > 0 (MuJoCo excludes it from the solver)",
         "contact generated but inactive within gap", "0.005"},
        {"fromto", S, "capsule, cylinder: half-length; box, ellipsoid: square section; z from `to` to `from`",
         "geom placed between two points", "0 0 0 0 0 0.2"},
        {"pos", S, "", "position", "0 0 0.1"},
        SAP_MJCF_ORIENTATION("geom"),
        {"hfield", S, "", "height-field asset of an hfield geom", "h", "hfield"},
        {"mesh", S, "its convex hull; on a primitive, the primitive fitted to the mesh's inertia box",
         "mesh asset of a mesh geom", "m", "mesh"},
        {"fitscale", S, "", "scale of a primitive fitted to a mesh", "1.1"},
        {"rgba", I, "", "colour", "1 0 0 1"},
        {"fluidshape", S, "ellipsoid: MuJoCo's ellipsoid fluid model; on non-primitives rejected",
         "fluid interaction model", "ellipsoid"},
        {"fluidcoef", S, "", "ellipsoid fluid-model coefficients", "0.5 0.25 1.5 1 1"},
        {"user", I, "", "user data", "1 2"},
        noted("adhesion", W, "adhesion of the geom's contacts (MuJoCo 4.0)", "1"),
        noted("castshadow", W, "whether the geom casts shadows (rendering)", "false"),
        noted("surfacevel", W, "tangential surface velocity (a conveyor)", "1 0 0")}});
  t.push_back({"site",
               "`<site>`",
               S,
               "the points of spatial tendons; size and looks do not matter (type: only where fromto needs it)",
               "a point (and frame) of a body",
               {{"name", S, "", "name", "s9"},
                {"class", S, "site defaults: only `type` is read (fromto needs it)", "default class", "main"},
                {"type", S, "checked where fromto is given; otherwise looks only", "shape", "box"},
                {"group", I, "", "visualisation group", "2"},
                {"pos", S, "in its body, through frames", "position", "0 0 0.1"},
                SAP_MJCF_ORIENTATION("site"),
                {"size", I, "", "size (visual)", "0.1"},
                {"fromto", S, "at the midpoint, z from `to` to `from` (the geoms' code); capsule, cylinder, box, "
                              "ellipsoid only, else an error",
                 "site placed between two points (at the midpoint)", "0 0 0 0 0 0.2"},
                {"mesh", I, "", "mesh of a mesh site (visual)", "m"},
                {"material", I, "", "visual material", "mat"},
                {"rgba", I, "", "colour", "1 0 0 1"},
                {"user", I, "", "user data", "1 2"}},
               /*checked=*/false});
  t.push_back({"camera", "`<camera>`", W, "", "a camera", {}});
  t.push_back({"light", "`<light>`", W, "", "a light", {}});
  t.push_back({"composite", "`<composite>`", R, "dropped under drop_unsupported", "procedural bodies", {}});
  t.push_back({"flexcomp", "`<flexcomp>`", R, "dropped under drop_unsupported", "procedural flex", {}});
  t.push_back({"replicate", "`<replicate>`", R, "dropped under drop_unsupported", "repeated subtrees", {}});
  t.push_back({"attach", "`<attach>`", R, "dropped under drop_unsupported", "a subtree from another model", {}});
  t.push_back({"plugin", "`<plugin>` in a body", R, "dropped under drop_unsupported", "an engine plugin", {}});
  // ------------------------------------------------------------------------------ assets
  t.push_back(
      {"asset/mesh",
       "`<asset><mesh>`",
       S,
       "read on first use by a geom that collides or carries mass (\"Mesh and height-field assets\"); an unknown "
       "attribute (such as `builtin`, `params`) is an error",
       "a triangle mesh",
       {{"name", S, "default: the file's stem", "name", "m9"},
        {"class", S, "`<default><mesh>`", "default class", "main"},
        {"file", S, "OBJ, STL, DAE, ... (Assimp), MuJoCo's .msh", "mesh file", "m.obj"},
        {"scale", S, "a mirror reverses the triangles", "vertex scale per axis", "2 2 2"},
        {"vertex", S, "", "inline vertices", "0 0 0 1 0 0 0 1 0 0 0 1"},
        {"face", S, "", "inline triangles", "0 2 1 0 1 3 0 3 2 1 2 3"},
        {"inertia", S, "convex, exact, legacy, shell (MuJoCo's rules)", "how the mesh's mass properties are computed",
         "shell"},
        {"refpos", S, "", "reference position of the vertices", "0 0 0.1"},
        {"refquat", S, "", "reference orientation of the vertices", "0 0 0 1"},
        {"maxhullvert", R, "other than -1: the full hull is used", "vertex limit of the convex hull", "8"},
        {"normal", I, "", "vertex normals", "0 0 1"},
        {"texcoord", I, "", "texture coordinates", "0 0"},
        {"smoothnormal", I, "", "normal smoothing", "true"},
        {"content_type", I, "", "file type", "model/obj"},
        {"material", I, "", "visual material", "mat"},
        noted("builtin", R, "a procedurally generated mesh", "sphere"),
        noted("params", R, "parameters of a builtin mesh", "1")}});
  t.push_back({"asset/hfield",
               "`<asset><hfield>`",
               S,
               "rows stored bottom-up and elevations normalised to [0, 1] as MuJoCo; an unknown attribute is an error",
               "a height field",
               {{"name", S, "default: the file's stem", "name", "h9"},
                {"file", S, "PNG (libpng, grey)", "image of the elevations", "h.png"},
                {"nrow", S, "", "rows of inline elevation", "3"},
                {"ncol", S, "", "columns of inline elevation", "3"},
                {"size", S, "(x, y, top, base)", "half-extents, elevation and base depth", "2 2 0.5 0.1"},
                {"elevation", S, "first row written = far edge", "inline elevations", "0 0 0 0 1 0 0 0 0"},
                {"content_type", I, "", "file type", "image/png"}}});
  t.push_back({"asset/texture", "`<asset><texture>`", W, "", "a texture", {}});
  t.push_back({"asset/material", "`<asset><material>`", W, "", "a visual material", {}});
  t.push_back({"asset/skin", "`<asset><skin>`", W, "", "a skinned mesh (visual)", {}});
  t.push_back({"asset/model", "`<asset><model>`", W, "", "a model to attach", {}});
  // ------------------------------------------------------------------------------ contact
  t.push_back({"contact/pair",
               "`<contact><pair>`",
               S,
               "an explicit pair tested whatever contype/conaffinity and exclusions say; its values from the pair, "
               "its class chain, else MuJoCo's pair defaults, never from its geoms (as MuJoCo)",
               "an explicit contact pair",
               {{"name", I, "", "name", "p"},
                {"class", S, "`<default><pair>`", "default class", "main"},
                {"geom1", S, "", "first geom", "g1"},
                {"geom2", S, "", "second geom", "w"},
                {"condim", S, "1, 3, 4, 6", "contact dimensionality", "1"},
                {"friction", S, "5 coefficients", "friction (2 sliding, torsional, 2 rolling)", "0.5 0.5 0.01 0 0"},
                {"margin", S, "", "activation distance", "0.01"},
                {"gap", S, "", "inactive band", "0.005"},
                {"solref", A, "the oscillator of \"Contact parameters\"", "contact softness", "0.01 1"},
                {"solimp", W, "", "contact impedance", "0.8 0.9 0.01"},
                {"solreffriction", W, "", "softness of the friction rows", "0.01 1"},
                noted("adhesion", W, "adhesion of the pair's contacts (MuJoCo 4.0)", "1")}});
  t.push_back({"contact/exclude",
               "`<contact><exclude>`",
               S,
               "",
               "a body pair that never collides",
               {{"name", I, "", "name", "e"},
                {"body1", S, "`world` is the world", "first body", "world"},
                {"body2", S, "", "second body", "b"}}});
  // ------------------------------------------------------------------------------ tendons
  auto tendon_attributes = [](bool spatial) {
    std::vector<AttributeFeature> a = {
        {"name", S, "", "name", "t9"},
        {"class", S, "", "default class", "main"},
        {"group", I, "", "visualisation group", "2"},
        {"limited", S, "true, false, auto", "whether range applies", "false"},
        {"actuatorfrclimited", S, "", "whether actuatorfrcrange applies", "false"},
        {"range", S, "SAP limit rows on the length, as joint limits", "length limits", "-1 1"},
        {"actuatorfrcrange", S, "one clamp with the actuator's forcerange; several actuators rejected",
         "clamp of the total actuator force on the tendon", "-1 1"},
        {"solreflimit", W, "SAP limit rows have their own stiffness (docs/sap-math.md §12)", "limit softness",
         "0.01 1"},
        {"solimplimit", W, "as solreflimit", "limit impedance", "0.8 0.9 0.01"},
        {"solreffriction", W, "SAP's friction-loss box row has its own regularization (docs/sap-math.md §13)",
         "friction-loss softness", "0.01 1"},
        {"solimpfriction", W, "as solreffriction", "friction-loss impedance", "0.8 0.9 0.01"},
        {"frictionloss", S, "a SAP box row on dL/dt", "dry friction", "0.5"},
        {"springlength", S, "one value or a dead band; -1: the length at springref", "spring rest length", "0.1"},
        {"stiffness", S, "", "spring stiffness", "10"},
        {"damping", S, "implicit", "viscous damping", "0.5"},
        spatial ? AttributeFeature{"armature", A,
                                   "the inertia a J^T J; MuJoCo's velocity-product bias of a moving path is not "
                                   "applied (warned)",
                                   "inertia of the tendon", "0.1"}
                : AttributeFeature{"armature", S, "a J^T J in the mass matrix", "inertia of the tendon", "0.1"},
        {"margin", W, "SAP limit rows act at the limit itself (MuJoCo's activate within the margin)",
         "limit activation distance", "0.01"},
        {"rgba", I, "", spatial ? "colour" : "not in MuJoCo 4.0 for fixed tendons (an error there); colour", "1 0 0 1"},
        {"user", I, "", "user data", "1 2"},
        noted("springyield", W, "yield of the tendon spring (MuJoCo 4.0)", "1")};
    if (spatial) {
      a.push_back({"material", I, "", "visual material", "mat"});
      a.push_back({"width", I, "", "visual width", "0.01"});
    }
    return a;
  };
  t.push_back({"tendon/fixed", "`<tendon><fixed>`", S, "length L = sum coef q over hinge/slide joints",
               "a linear combination of joint positions", tendon_attributes(false)});
  t.push_back({"tendon/fixed/joint",
               "`<tendon><fixed><joint>`",
               S,
               "a hinge or slide joint",
               "a term of the tendon",
               {{"joint", S, "", "the joint", "j"}, {"coef", S, "", "its coefficient", "2"}},
               /*checked=*/false});
  t.push_back({"tendon/spatial", "`<tendon><spatial>`", S,
               "MuJoCo's path of sites, sphere and cylinder wraps and pulleys (\"Spatial tendons\")",
               "a tendon along a path in space", tendon_attributes(true)});
  t.push_back({"tendon/spatial/site",
               "`<tendon><spatial><site>`",
               S,
               "",
               "a point of the path",
               {{"site", S, "", "the site", "s2"}},
               /*checked=*/false});
  t.push_back({"tendon/spatial/geom",
               "`<tendon><spatial><geom>`",
               S,
               "sphere or cylinder, between two sites",
               "a wrapping obstacle",
               {{"geom", S, "", "the geom", "w"}, {"sidesite", S, "", "the side of the wrap", "s2"}},
               /*checked=*/false});
  t.push_back({"tendon/spatial/pulley",
               "`<tendon><spatial><pulley>`",
               S,
               "after a site",
               "starts a branch",
               {{"divisor", S, "", "divides the branch's length", "2"}},
               /*checked=*/false});
  // ------------------------------------------------------------------------------ equality
  t.push_back(
      {"equality",
       "`<equality>` `<joint>` `<tendon>` `<connect>` `<weld>`",
       S,
       "SAP holonomic constraints (\"Tendons and equalities\"); `<flex>` and `<distance>` rejected",
       "equality constraints",
       {{"name", S, "", "name", "e9"},
        {"class", S, "", "default class", "main"},
        {"active", S, "false: no rows (a model constant here)", "initially active", "false"},
        {"solref", A, "a spring-damper from solref and the row's effective mass", "constraint softness", "0.01 1"},
        {"solimp", W, "SAP's equality rows have no impedance profile (solref sets their softness)",
         "constraint impedance", "0.8 0.9 0.01"},
        {"joint1", S, "hinge or slide", "the coupled joint", "j2", "joint"},
        {"joint2", S, "", "the driving joint", "j", "joint"},
        {"polycoef", S, "q1 - q1_0 = p(q2 - q2_0)", "coupling polynomial", "0 2 0 0 0", "joint"},
        {"body1", S, "", "first body", "b", "connect"},
        {"body2", S, "default: the world", "second body", "world", "connect"},
        {"site1", R, "sites are not constrained (give bodies)", "first site", "s", "connect"},
        {"site2", R, "", "second site", "s", "connect"},
        {"anchor", S, "connect: a point of body1; weld: a point of body2", "anchor point", "0 0 0.1", "connect"},
        {"relpose", S, "", "pose of body2 in body1", "0 0 0.1 1 0 0 0", "weld"},
        {"torquescale", R, "other than 1", "weight of the rotational rows", "0.5", "weld"},
        {"tendon1", S, "", "the coupled tendon", "t", "tendon"},
        {"tendon2", S, "", "the driving tendon", "t2", "tendon"}}});
  t.push_back({"equality/flex",
               "`<equality><flex>` `<distance>`",
               R,
               "dropped under drop_unsupported",
               "flex and legacy distance equalities",
               {}});
  t.push_back({"equality/flexstrain", "`<equality><flexstrain>`", W, "", "strain of a flex", {}});
  // ------------------------------------------------------------------------------ actuators
  t.push_back({"actuator/other",
               "`<intvelocity>` `<damper>` `<cylinder>` `<adhesion>` `<dcmotor>` `<pid>` "
               "`<orientation>` `<plugin>` in `<actuator>`",
               R,
               "dropped under drop_unsupported",
               "other actuator shortcuts",
               {}});
  t.push_back(
      {"actuator",
       "`<actuator>` `<motor>` `<position>` `<velocity>` `<general>` `<muscle>`",
       S,
       "on a hinge/slide joint or a tendon; mapped exactly onto our motor/servo (\"Actuators\"); the shortcuts "
       "apply in class order as MuJoCo's",
       "actuators",
       {{"name", S, "", "name", "a9"},
        {"class", S, "", "default class", "main"},
        {"group", I, "", "group", "2"},
        {"ctrllimited", S, "", "whether ctrlrange applies", "false"},
        {"forcelimited", S, "", "whether forcerange applies", "false"},
        {"actlimited", S, "", "whether actrange applies", "false"},
        {"ctrlrange", S, "in the file's control units", "control limits", "-1 1"},
        {"forcerange", S, "must contain 0", "force limits", "-1 1"},
        {"actrange", S, "", "activation limits", "-1 1"},
        {"lengthrange", S, "muscles need it (MuJoCo's compiler finds it by simulation)", "actuator length range",
         "0 1"},
        {"gear", S, "the first value (joint or tendon transmissions)", "transmission gear", "2"},
        {"cranklength", I, "slider-crank transmissions are rejected", "crank length", "0.1"},
        {"user", I, "", "user data", "1 2"},
        {"joint", S, "hinge or slide", "joint transmission", "j"},
        {"jointinparent", R, "", "joint transmission in the parent frame", "j"},
        {"site", R, "", "site transmission", "s"},
        {"refsite", I, "site transmissions are rejected", "reference site of a site transmission", "s"},
        {"tendon", S, "", "tendon transmission", "t"},
        {"cranksite", R, "", "slider-crank transmission", "s"},
        {"slidersite", I, "slider-crank transmissions are rejected", "slider of a slider-crank", "s"},
        {"body", R, "", "body (adhesion) transmission", "b"},
        {"actdim", I, "no effect: MuJoCo accepts only 1 with stateful built-in dynamics (other values are errors "
                       "there, not checked here)",
         "activation dimension", "1"},
        {"dyntype", S, "none, integrator, filter, filterexact, muscle; user rejected", "activation dynamics",
         "integrator", "general"},
        {"gaintype", S, "fixed, muscle; others rejected", "gain type", "fixed", "general"},
        {"biastype", S, "none, affine (b0 = 0), muscle; others rejected", "bias type", "affine", "general"},
        {"dynprm", S, "", "dynamics parameters", "0.1", "general"},
        {"gainprm", S, "", "gain parameters", "5", "general"},
        {"biasprm", S, "b0 != 0 rejected, b1 or b2 > 0 an error", "bias parameters", "0 -5 -1", "general"},
        {"actearly", S, "", "act on the next activation", "true"},
        {"kp", S, "", "position gain", "50", "position"},
        {"kv", S, "", "velocity gain", "5", "position"},
        {"dampratio", R, "needs MuJoCo's reflected inertia; give kv", "damping as a ratio of critical", "1",
         "position"},
        {"timeconst", S, "position: the target filtered (filterexact); muscle: activation time constants",
         "activation time constant", "0.1", "position"},
        {"inheritrange", S, "joints only", "ctrlrange from the joint's range", "1", "position"},
        {"nsample", I, "no effect without `delay` (a history buffer only)", "samples of delayed control", "2"},
        {"interp", I, "no effect without `delay`", "interpolation of delayed control", "linear"},
        {"delay", R, "above 0 rejected: controls act without delay (dropped under drop_unsupported)",
         "control delay", "0.01"},
        {"gain", I, "a `<cylinder>`/`<adhesion>` attribute (those are rejected)", "cylinder or adhesion gain", "1"},
        {"area", I, "a `<cylinder>` attribute", "cylinder area", "1"},
        {"diameter", I, "a `<cylinder>` attribute", "cylinder diameter", "1"},
        {"bias", I, "a `<cylinder>` attribute", "cylinder bias", "0 0 0"},
        {"range", S, "MuJoCo's muscle model, an explicit force", "operating length range", "0.75 1.05", "muscle"},
        {"force", S, "", "peak force", "100", "muscle"},
        {"scale", S, "", "force scale", "200", "muscle"},
        {"lmin", S, "", "lower length of the force-length curve", "0.5", "muscle"},
        {"lmax", S, "", "upper length of the force-length curve", "1.6", "muscle"},
        {"vmax", S, "", "shortening velocity of zero force", "1.5", "muscle"},
        {"fpmax", S, "", "passive force at lmax", "1.3", "muscle"},
        {"fvmax", S, "", "active force at lengthening", "1.2", "muscle"},
        {"tausmooth", S, "", "smoothing of the activation time constant", "0.1", "muscle"},
        {"plugin", I, "plugin actuators are rejected", "actuator plugin", "p"},
        {"instance", I, "plugin actuators are rejected", "plugin instance", "p"},
        noted("armature", W, "rotor inertia reflected through the transmission (MuJoCo 4.0)", "0.1"),
        noted("damping", W, "damping of the actuator (MuJoCo 4.0)", "0.1"),
        noted("ffrange", W, "range of the feed-forward input (MuJoCo 4.0)", "-1 1"),
        noted("input", W, "the actuator's input (MuJoCo 4.0)", "ctrl"),
        noted("velrange", W, "velocity range (MuJoCo 4.0)", "-1 1")}});
  // ------------------------------------------------------------------------------ keyframes
  t.push_back({"keyframe/key",
               "`<keyframe><key>`",
               S,
               "ImportReport::keyframes, over the joints and actuators of the imported file",
               "a stored state",
               {{"name", S, "", "name", "k"},
                {"time", I, "", "simulation time", "1"},
                {"qpos", S, "free/ball quaternions normalised; absent: qpos0", "positions", "0.5 0.5"},
                {"qvel", W, "", "velocities", "1"},
                {"act", W, "", "activations", "1"},
                {"mpos", W, "", "mocap positions", "0 0 1"},
                {"mquat", W, "", "mocap orientations", "1 0 0 0"},
                {"ctrl", S, "absent: zeros", "controls", "0.5"},
                noted("plastic", W, "plastic state (MuJoCo 4.0)", "0")}});
  return t;
}
#undef SAP_MJCF_ORIENTATION

}  // namespace

const std::vector<ElementFeature>& mjcf_features() {
  static const std::vector<ElementFeature> table = make_mjcf_features();
  return table;
}

}  // namespace sap::import
