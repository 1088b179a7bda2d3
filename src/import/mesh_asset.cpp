// Mesh and heightfield assets: file reading (Assimp), convex hulls (Qhull), MuJoCo's mesh mass
// properties and principal frame, PNG heightfields (libpng). See include/sap/mesh_asset.hpp.
#include "sap/mesh_asset.hpp"
#include "sap/errors.hpp"

#include <png.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <sys/stat.h>

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

namespace sap {
namespace {

using V3 = std::array<double, 3>;
using Q4 = std::array<double, 4>;

V3 sub(const V3& a, const V3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
V3 cross(const V3& a, const V3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const V3& a, const V3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

Q4 quat_mul(const Q4& a, const Q4& b) {
  return {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
          a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
}
Q4 quat_normalized(Q4 q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0)
    for (double& x : q) x /= n;
  return q;
}
// Row-major rotation matrix of a unit quaternion.
std::array<double, 9> quat_to_mat(const Q4& q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  return {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
          2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
          2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
}
V3 mat_vec(const std::array<double, 9>& m, const V3& v) {
  return {m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
          m[6] * v[0] + m[7] * v[1] + m[8] * v[2]};
}
V3 mat_t_vec(const std::array<double, 9>& m, const V3& v) {
  return {m[0] * v[0] + m[3] * v[1] + m[6] * v[2], m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
          m[2] * v[0] + m[5] * v[1] + m[8] * v[2]};
}

// Area, unit normal and centre of a triangle; area 0 (normal untouched) below 1e-15 (mjMINVAL).
double triangle(const V3& a, const V3& b, const V3& c, V3* normal, V3* center) {
  if (center)
    for (int k = 0; k < 3; ++k) (*center)[static_cast<std::size_t>(k)] = (a[k] + b[k] + c[k]) / 3;
  V3 n = cross(sub(b, a), sub(c, a));
  const double len = std::sqrt(dot(n, n));
  if (len < 1e-15) return 0;
  if (normal) *normal = {n[0] / len, n[1] / len, n[2] / len};
  return len / 2;
}

// Eigen-decomposition of a symmetric 3x3 matrix by Jacobi rotations accumulated in a quaternion
// q (columns of R(q) are the eigenvectors), eigenvalues sorted in decreasing order by quarter
// turns of the frame: the same frame MuJoCo's compiler picks, so that compiled geom
// orientations agree with MuJoCo's and not only up to a symmetry of the inertia.
void eig3(const std::array<double, 9>& a, V3& eigval, Q4& q) {
  constexpr double eps = 1e-12;
  q = {1, 0, 0, 0};
  for (int iter = 0; iter < 500; ++iter) {
    const auto r = quat_to_mat(q);
    std::array<double, 9> d{};  // R' A R
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double s = 0;
        for (int k = 0; k < 3; ++k)
          for (int l = 0; l < 3; ++l) s += r[3 * k + i] * a[3 * k + l] * r[3 * l + j];
        d[3 * i + j] = s;
      }
    eigval = {d[0], d[4], d[8]};
    int rk, ck, axis;  // largest off-diagonal entry (rk, ck), rotation about the third axis
    if (std::abs(d[1]) > std::abs(d[2]) && std::abs(d[1]) > std::abs(d[5])) {
      rk = 0, ck = 1, axis = 2;
    } else if (std::abs(d[2]) > std::abs(d[5])) {
      rk = 0, ck = 2, axis = 1;
    } else {
      rk = 1, ck = 2, axis = 0;
    }
    if (std::abs(d[3 * rk + ck]) < eps) break;
    // Rotation angle that zeroes d[rk][ck]: tan(theta) = t, the smaller root of
    // t^2 + 2 tau t - 1 = 0 with tau = (d_cc - d_rr) / (2 d_rc).
    const double tau = (d[4 * ck] - d[4 * rk]) / (2 * d[3 * rk + ck]);
    const double t = tau >= 0 ? 1 / (tau + std::sqrt(1 + tau * tau)) : -1 / (-tau + std::sqrt(1 + tau * tau));
    const double c = 1 / std::sqrt(1 + t * t);
    if (c > 1 - eps) break;
    Q4 rot{0, 0, 0, 0};
    double s = std::sqrt(0.5 - 0.5 * c);  // sin(theta / 2)
    if (tau >= 0) s = -s;
    if (axis == 1) s = -s;  // the (x, z) plane is oriented the other way round the y axis
    rot[static_cast<std::size_t>(axis + 1)] = s;
    rot[0] = std::sqrt(1 - s * s);
    q = quat_normalized(quat_mul(q, quat_normalized(rot)));
  }
  // Bubble sort (pairs 0-1, 1-2, 0-1) into decreasing order; each swap is a quarter turn.
  for (int j = 0; j < 3; ++j) {
    const int j1 = j % 2;
    if (eigval[static_cast<std::size_t>(j1)] + eps < eigval[static_cast<std::size_t>(j1 + 1)]) {
      std::swap(eigval[static_cast<std::size_t>(j1)], eigval[static_cast<std::size_t>(j1 + 1)]);
      Q4 rot{std::sqrt(0.5), 0, 0, 0};
      rot[static_cast<std::size_t>((j1 + 2) % 3 + 1)] = std::sqrt(0.5);
      q = quat_normalized(quat_mul(q, rot));
    }
  }
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

TriangleMesh read_mesh_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw FileNotFoundError(path + ": cannot open mesh file (no such file)", path);
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + ": mesh file is not a regular file");
  Assimp::Importer importer;
  // Keep the file's axes: URDF and MJCF mean the coordinates as written (COLLADA's up_axis
  // would otherwise rotate Z-up files to Y-up). COLLADA's <unit meter> is still applied.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const aiScene* scene = importer.ReadFile(
      path, aiProcess_Triangulate | aiProcess_PreTransformVertices | aiProcess_SortByPType | aiProcess_FindDegenerates);
  if (!scene) throw std::runtime_error(path + ": cannot read mesh (" + importer.GetErrorString() + ")");
  TriangleMesh out;
  std::map<V3, int> index;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const aiMesh* mesh = scene->mMeshes[m];
    std::vector<int> id(mesh->mNumVertices);
    for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
      const aiVector3D& p = mesh->mVertices[v];
      const V3 x{p.x, p.y, p.z};
      if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2]))
        throw std::runtime_error(path + ": vertex " + std::to_string(v) + " is not finite");
      auto it = index.emplace(x, static_cast<int>(out.vert.size()));
      if (it.second) out.vert.push_back(x);
      id[v] = it.first->second;
    }
    for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
      const aiFace& face = mesh->mFaces[f];
      if (face.mNumIndices != 3) continue;  // points and lines (removed above) carry no surface
      out.face.push_back({id[face.mIndices[0]], id[face.mIndices[1]], id[face.mIndices[2]]});
    }
  }
  if (out.face.empty()) throw std::runtime_error(path + ": the mesh file has no triangles");
  return out;
}

void scale_mesh(TriangleMesh& mesh, const std::array<double, 3>& scale, const std::string& who) {
  for (double s : scale)
    if (!(std::isfinite(s) && s != 0)) throw std::runtime_error(who + ": mesh scale entries must be finite and nonzero");
  for (auto& v : mesh.vert)
    for (int k = 0; k < 3; ++k) v[static_cast<std::size_t>(k)] *= scale[static_cast<std::size_t>(k)];
  if (scale[0] * scale[1] * scale[2] < 0)
    for (auto& f : mesh.face) std::swap(f[1], f[2]);
}

TriangleMesh convex_hull(const std::vector<std::array<double, 3>>& points, const std::string& who) {
  if (points.size() < 4)
    throw std::runtime_error(who + ": a convex mesh needs at least 4 vertices, got " + std::to_string(points.size()));
  std::vector<coordT> coords;
  coords.reserve(3 * points.size());
  for (const auto& p : points) coords.insert(coords.end(), p.begin(), p.end());
  // Qhull reports through FILE*: its error text is captured for our message.
  char* err_text = nullptr;
  std::size_t err_size = 0;
  FILE* err = open_memstream(&err_text, &err_size);
  qhT qh_storage;
  qhT* qh = &qh_storage;
  qh_zero(qh, err);
  char options[] = "qhull Qt";
  const int code = qh_new_qhull(qh, 3, static_cast<int>(points.size()), coords.data(), False, options, nullptr, err);
  TriangleMesh hull;
  if (code == 0) {
    qh_triangulate(qh);
    std::map<int, int> local;  // point id -> hull vertex id
    facetT* facet;
    vertexT* vertex;
    vertexT** vertexp;
    FORALLfacets {
      std::array<int, 3> tri{};
      int n = 0;
      FOREACHvertex_(facet->vertices) {
        if (n < 3) {
          const int pid = qh_pointid(qh, vertex->point);
          auto it = local.emplace(pid, static_cast<int>(hull.vert.size()));
          if (it.second) hull.vert.push_back(points[static_cast<std::size_t>(pid)]);
          tri[static_cast<std::size_t>(n)] = it.first->second;
        }
        ++n;
      }
      if (n != 3) continue;  // cannot happen after triangulation
      // Orient counter-clockwise around Qhull's outward facet normal.
      const V3& a = hull.vert[static_cast<std::size_t>(tri[0])];
      const V3 nrm = cross(sub(hull.vert[static_cast<std::size_t>(tri[1])], a), sub(hull.vert[static_cast<std::size_t>(tri[2])], a));
      if (nrm[0] * facet->normal[0] + nrm[1] * facet->normal[1] + nrm[2] * facet->normal[2] < 0) std::swap(tri[1], tri[2]);
      hull.face.push_back(tri);
    }
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong = 0, totlong = 0;
  qh_memfreeshort(qh, &curlong, &totlong);
  std::fclose(err);
  std::string reason = err_text ? err_text : "";
  std::free(err_text);
  if (code != 0) {
    // First line of Qhull's report, e.g. "QH6154 Qhull precision error: initial simplex is flat".
    reason = reason.substr(0, reason.find('\n'));
    throw std::runtime_error(who + ": the mesh spans no volume (all vertices on a plane or a line?), Qhull: " + reason);
  }
  if (hull.vert.size() < 4 || hull.face.size() < 4)
    throw std::runtime_error(who + ": the convex hull is degenerate (" + std::to_string(hull.vert.size()) + " vertices)");
  return hull;
}

MeshInertia parse_mesh_inertia(const std::string& s) {
  if (s == "convex") return MeshInertia::kConvex;
  if (s == "exact") return MeshInertia::kExact;
  if (s == "legacy") return MeshInertia::kLegacy;
  if (s == "shell") return MeshInertia::kShell;
  throw std::invalid_argument("expected convex, exact, legacy or shell, got '" + s + "'");
}

MeshMassProperties mesh_mass_properties(const TriangleMesh& mesh, const TriangleMesh& hull, MeshInertia type,
                                        const std::string& who) {
  const bool shell = type == MeshInertia::kShell, legacy = type == MeshInertia::kLegacy;
  const TriangleMesh& solid = type == MeshInertia::kConvex ? hull : mesh;
  auto vertex = [](const TriangleMesh& m, int i) -> const V3& { return m.vert[static_cast<std::size_t>(i)]; };
  // Area-weighted centroid of the surface (of the mesh, for every type).
  V3 s{0, 0, 0};
  double area_total = 0;
  for (const auto& f : mesh.face) {
    V3 c;
    const double a = triangle(vertex(mesh, f[0]), vertex(mesh, f[1]), vertex(mesh, f[2]), nullptr, &c);
    for (int k = 0; k < 3; ++k) s[static_cast<std::size_t>(k)] += a * c[static_cast<std::size_t>(k)];
    area_total += a;
  }
  if (area_total < 1e-15) throw std::runtime_error(who + ": mesh surface area is too small");
  for (double& x : s) x /= area_total;
  // Volume (area) and centre of mass.
  const TriangleMesh& carrier = shell ? mesh : solid;
  V3 com{0, 0, 0};
  double measure = 0;
  for (const auto& f : carrier.face) {
    V3 n{0, 0, 0}, c;
    const double a = triangle(vertex(carrier, f[0]), vertex(carrier, f[1]), vertex(carrier, f[2]), &n, &c);
    double w = shell ? a : dot(sub(c, s), n) * a / 3;
    if (legacy) w = std::abs(w);
    measure += w;
    for (int k = 0; k < 3; ++k)
      com[static_cast<std::size_t>(k)] += w * (0.75 * c[static_cast<std::size_t>(k)] + 0.25 * s[static_cast<std::size_t>(k)]);
  }
  if (measure < 1e-15) {
    if (measure < 0) throw std::runtime_error(who + ": mesh volume is negative (triangles oriented inwards)");
    throw std::runtime_error(who + ": mesh volume is too small (a flat or open mesh? use inertia=\"shell\")");
  }
  for (double& x : com) x /= measure;
  // Second moments about the centre of mass; the volume (area) is summed again about it.
  std::array<double, 6> p{0, 0, 0, 0, 0, 0};  // xx yy zz xy xz yz
  static const int kk[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  double measure2 = 0;
  for (const auto& f : carrier.face) {
    const V3 d = sub(vertex(carrier, f[0]), com), e = sub(vertex(carrier, f[1]), com), g = sub(vertex(carrier, f[2]), com);
    V3 n{0, 0, 0}, c;
    const double a = triangle(d, e, g, &n, &c);
    double w = shell ? a : dot(c, n) * a / 3;
    if (legacy) w = std::abs(w);
    measure2 += w;
    const double div = shell ? 12 : 20;
    for (int j = 0; j < 6; ++j) {
      const int i0 = kk[j][0], i1 = kk[j][1];
      p[static_cast<std::size_t>(j)] +=
          w / div *
          (2 * (d[i0] * d[i1] + e[i0] * e[i1] + g[i0] * g[i1]) + d[i0] * e[i1] + d[i1] * e[i0] + d[i0] * g[i1] +
           d[i1] * g[i0] + e[i0] * g[i1] + e[i1] * g[i0]);
    }
  }
  const std::array<double, 9> inertia{p[1] + p[2], -p[3], -p[4], -p[3], p[0] + p[2], -p[5], -p[4], -p[5], p[0] + p[1]};
  MeshMassProperties out;
  out.measure = measure2;
  out.com = com;
  eig3(inertia, out.inertia, out.quat);
  const V3& e = out.inertia;
  if (!(e[2] > 0)) throw std::runtime_error(who + ": mesh inertia has a non-positive principal moment");
  constexpr double rtol = 1e-6, atol = 1e-9;
  if (e[0] + e[1] < e[2] * (1 - rtol) - atol || e[0] + e[2] < e[1] * (1 - rtol) - atol ||
      e[1] + e[2] < e[0] * (1 - rtol) - atol)
    throw std::runtime_error(who + ": mesh principal moments violate the triangle inequality A + B >= C");
  const double v = out.measure;
  out.box = {0.5 * std::sqrt(std::max(0.0, 6 * (e[1] + e[2] - e[0]) / v)),
             0.5 * std::sqrt(std::max(0.0, 6 * (e[0] + e[2] - e[1]) / v)),
             0.5 * std::sqrt(std::max(0.0, 6 * (e[0] + e[1] - e[2]) / v))};
  return out;
}

MeshAsset compile_mesh(const std::string& name, TriangleMesh mesh, const std::array<double, 3>& scale,
                       MeshInertia type, const std::string& who) {
  scale_mesh(mesh, scale, who);
  const TriangleMesh hull = convex_hull(mesh.vert, who);
  MeshAsset out;
  out.mesh_vertices = static_cast<int>(mesh.vert.size());
  out.mesh_faces = static_cast<int>(mesh.face.size());
  // A mesh without triangles (MJCF inline vertex only) is its hull, as in MuJoCo.
  out.mass = mesh_mass_properties(mesh.face.empty() ? hull : mesh, hull, type, who);
  const auto r = quat_to_mat(out.mass.quat);
  out.hull.name = name;
  out.hull.face = hull.face;
  out.hull.volume = out.mass.measure;
  out.hull.inertia = out.mass.inertia;
  V3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  for (const auto& v : hull.vert) {
    out.hull.vert.push_back(mat_t_vec(r, sub(v, out.mass.com)));
    for (int k = 0; k < 3; ++k) {
      lo[static_cast<std::size_t>(k)] = std::min(lo[static_cast<std::size_t>(k)], out.hull.vert.back()[static_cast<std::size_t>(k)]);
      hi[static_cast<std::size_t>(k)] = std::max(hi[static_cast<std::size_t>(k)], out.hull.vert.back()[static_cast<std::size_t>(k)]);
    }
  }
  for (int k = 0; k < 3; ++k)
    out.half_extent[static_cast<std::size_t>(k)] = std::max(-lo[static_cast<std::size_t>(k)], hi[static_cast<std::size_t>(k)]);
  return out;
}

void mesh_geom_pose(const MeshMassProperties& mass, std::array<double, 3>& pos, std::array<double, 4>& quat) {
  const V3 offset = mat_vec(quat_to_mat(quat_normalized(quat)), mass.com);
  for (int k = 0; k < 3; ++k) pos[static_cast<std::size_t>(k)] += offset[static_cast<std::size_t>(k)];
  quat = quat_normalized(quat_mul(quat_normalized(quat), mass.quat));
}

GreyImage read_png_grey(const std::string& path) {
  if (!file_exists(path)) throw FileNotFoundError(path + ": cannot open heightfield image (no such file)", path);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    throw std::runtime_error(path + ": cannot read PNG (" + image.message + ")");
  image.format = PNG_FORMAT_GRAY;
  std::vector<png_byte> buffer(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, buffer.data(), 0, nullptr)) {
    const std::string msg = image.message;
    png_image_free(&image);
    throw std::runtime_error(path + ": cannot decode PNG (" + msg + ")");
  }
  GreyImage out;
  out.nrow = static_cast<int>(image.height);
  out.ncol = static_cast<int>(image.width);
  out.data.resize(buffer.size());
  for (std::size_t i = 0; i < buffer.size(); ++i) out.data[i] = buffer[i] / 255.0;
  return out;
}

std::vector<double> normalize_elevation(std::vector<double> data) {
  if (data.empty()) return data;
  const auto mm = std::minmax_element(data.begin(), data.end());
  const double lo = *mm.first, hi = *mm.second;
  for (double& z : data) z = hi - lo > 1e-15 ? (z - lo) / (hi - lo) : 0.0;
  return data;
}

}  // namespace sap
