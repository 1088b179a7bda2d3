// Mesh and heightfield assets (host only): reading mesh files (Assimp: STL, OBJ, DAE, ...),
// convex hulls (Qhull, as MuJoCo), the mass properties of a mesh as MuJoCo's compiler computes
// them (volume, centre of mass, principal inertia and axes; solid or shell), and heightfield
// images (PNG). The importers (MJCF, URDF, JSON scenes) turn these into ModelBuilder meshes
// (MeshSpec: the hull in the geom frame) and mass parts. docs/model-import.md, "Mesh assets".
#pragma once

#include <array>
#include <string>
#include <vector>

#include "sap/model_builder.hpp"

namespace sap {

// A triangle soup with shared vertices: triangles are vertex ids, counter-clockwise seen from
// outside for a well-formed closed mesh.
struct TriangleMesh {
  std::vector<std::array<double, 3>> vert;
  std::vector<std::array<int, 3>> face;
};

// Reads every triangle of every mesh in the file, node transforms and (COLLADA) unit applied,
// the file's own axes kept (no Y-up conversion). Vertices at the same position are merged.
// Throws std::runtime_error("<path>: ...") for a missing file, a format Assimp cannot read, or a
// file without triangles.
TriangleMesh read_mesh_file(const std::string& path);

// Scales the vertices per axis; a scale with negative determinant (a mirror) reverses every
// triangle so that they stay counter-clockwise from outside. Throws for a zero scale entry.
void scale_mesh(TriangleMesh& mesh, const std::array<double, 3>& scale, const std::string& who);

// Convex hull of the points (Qhull "Qt": triangulated facets). Returns the hull vertices (a
// subset of the points, renumbered) and outward counter-clockwise triangles. Throws
// std::runtime_error("<who>: ...") for fewer than 4 points or points that span no volume
// (all on a plane or a line), with Qhull's reason.
TriangleMesh convex_hull(const std::vector<std::array<double, 3>>& points, const std::string& who);

// MuJoCo's <mesh inertia=...>: which surface carries the mass.
enum class MeshInertia {
  kConvex = 0,  // solid convex hull
  kExact = 1,   // solid mesh, signed tetrahedra (needs a closed, consistently oriented mesh)
  kLegacy = 2,  // solid mesh, unsigned tetrahedra from the surface centroid (MuJoCo's default)
  kShell = 3,   // mass on the surface (area instead of volume)
};
// "convex", "exact", "legacy", "shell"; throws std::invalid_argument otherwise.
MeshInertia parse_mesh_inertia(const std::string& s);

// Mass properties per unit density (MuJoCo, user_mesh.cc): the volume (area for shells) is the
// sum over triangles of the tetrahedra (c - s) . n A / 3 with apex at the area-weighted surface
// centroid s (triangle centre c, unit normal n, area A); the centre of mass is the
// volume-weighted mean of the tetrahedra centroids (3 c + s) / 4. The inertia about the centre
// of mass sums, per tetrahedron with apex at the centre of mass and vertices D, E, F,
// V/20 (2 (DD' + EE' + FF') + DE' + ED' + DF' + FD' + EF' + FE') (solid; shell: A/12 with the
// same bracket), converted to moments; its eigen-decomposition (Jacobi on a quaternion,
// eigenvalues in decreasing order, as MuJoCo's mjuu_eig3) gives the principal axes.
struct MeshMassProperties {
  double measure = 0;                    // volume (solid) or area (shell)
  std::array<double, 3> com{0, 0, 0};    // centre of mass in the mesh file's frame (scaled)
  std::array<double, 3> inertia{0, 0, 0};  // principal moments per unit density, decreasing
  std::array<double, 4> quat{1, 0, 0, 0};  // principal axes: columns of R(quat), file frame
  std::array<double, 3> box{0, 0, 0};    // half-sizes of the box with the same inertia
};
// `hull` is used for kConvex. Throws std::runtime_error("<who>: ...") for a mesh whose volume
// (area) is too small or negative (misoriented triangles), or whose inertia is not physical.
MeshMassProperties mesh_mass_properties(const TriangleMesh& mesh, const TriangleMesh& hull, MeshInertia type,
                                        const std::string& who);

// A mesh asset compiled as MuJoCo does: scaled, its convex hull, its mass properties, and the
// hull re-centred at the centre of mass and rotated to the principal axes (the frame MuJoCo
// stores the mesh in; a geom using it is offset by (com, quat): see mesh_geom_pose).
struct MeshAsset {
  MeshMassProperties mass;
  MeshSpec hull;  // hull in the principal frame, ready for ModelBuilder::add_mesh
  // Largest |coordinate| of the hull per principal axis: the half-sizes of the smallest box
  // centred at the centre of mass that holds the mesh (MuJoCo's geom_size of a mesh geom).
  std::array<double, 3> half_extent{0, 0, 0};
  int mesh_vertices = 0, mesh_faces = 0;  // of the (merged) source mesh
  // Non-empty: the mesh has no convex hull (flat or degenerate; the hull's error), `hull` is
  // empty and only geoms that cannot collide may use the asset (compile_mesh, need_hull false).
  std::string hull_error;
};
// Scaled mesh, its hull (in the principal frame) and mass properties. need_hull false (a mesh
// only geoms that cannot collide use, for their mass): a mesh with triangles whose hull fails
// (flat: MuJoCo's visual shell plates) keeps its mass properties and reports the hull's error in
// hull_error instead of throwing (MuJoCo hulls only meshes that collide).
MeshAsset compile_mesh(const std::string& name, TriangleMesh mesh, const std::array<double, 3>& scale,
                       MeshInertia type, const std::string& who, bool need_hull = true);

// The pose of a mesh geom: the geom frame as written composed with the mesh's principal frame,
// pos + R(quat) com and quat * mesh_quat (MuJoCo's compiled geom_pos / geom_quat).
void mesh_geom_pose(const MeshMassProperties& mass, std::array<double, 3>& pos, std::array<double, 4>& quat);

// A PNG image as grey levels in [0, 1] (colour converted by libpng's luminance rule, alpha
// dropped), row 0 first as stored in the file. Throws std::runtime_error("<path>: ...").
struct GreyImage {
  int nrow = 0, ncol = 0;
  std::vector<double> data;  // row-major
};
GreyImage read_png_grey(const std::string& path);

// Heightfield elevation as MuJoCo stores it: rows flipped for images (image row 0 is the far
// edge, +y) and the data normalised to [0, 1] by (z - min) / (max - min) (all zero when flat).
std::vector<double> normalize_elevation(std::vector<double> data);

}  // namespace sap
