// MuJoCo's binary .msh mesh files (see mesh_msh.hpp for the layout).
#include "import/mesh_msh.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

namespace sap {

TriangleMesh parse_msh(const std::vector<std::uint8_t>& bytes, const std::string& who) {
  constexpr std::size_t kHeader = 4 * sizeof(std::int32_t);
  if (bytes.size() < kHeader)
    throw std::runtime_error(who + ": MSH file of " + std::to_string(bytes.size()) +
                             " bytes is shorter than its 16-byte header (nvertex, nnormal, ntexcoord, nface)");
  std::int32_t count[4];
  std::memcpy(count, bytes.data(), kHeader);
  const char* names[4] = {"nvertex", "nnormal", "ntexcoord", "nface"};
  for (int k = 0; k < 4; ++k)
    if (count[k] < 0)
      throw std::runtime_error(who + ": MSH header " + names[k] + " = " + std::to_string(count[k]) + " is negative");
  const std::uint64_t nv = count[0], nn = count[1], nt = count[2], nf = count[3];
  const std::uint64_t expected = kHeader + 4 * (3 * nv + 3 * nn + 2 * nt + 3 * nf);
  if (bytes.size() != expected)
    throw std::runtime_error(who + ": MSH file size " + std::to_string(bytes.size()) + " bytes does not match its header (nvertex " +
                             std::to_string(nv) + ", nnormal " + std::to_string(nn) + ", ntexcoord " + std::to_string(nt) +
                             ", nface " + std::to_string(nf) + ": expected " + std::to_string(expected) + " bytes)");
  if (nv < 4)
    throw std::runtime_error(who + ": MSH file has " + std::to_string(nv) + " vertices; a mesh needs at least 4");
  const std::uint8_t* p = bytes.data() + kHeader;
  TriangleMesh out;
  std::map<std::array<double, 3>, int> index;  // vertices at the same position merged, as read_mesh_file
  std::vector<int> id(nv);
  for (std::uint64_t v = 0; v < nv; ++v) {
    float x[3];
    std::memcpy(x, p + 12 * v, 12);
    if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2]))
      throw std::runtime_error(who + ": MSH vertex " + std::to_string(v) + " is not finite");
    const std::array<double, 3> xd{x[0], x[1], x[2]};
    auto it = index.emplace(xd, static_cast<int>(out.vert.size()));
    if (it.second) out.vert.push_back(xd);
    id[v] = it.first->second;
  }
  p += 4 * (3 * nv + 3 * nn + 2 * nt);  // normals and texture coordinates: not used
  out.face.reserve(nf);
  for (std::uint64_t f = 0; f < nf; ++f) {
    std::int32_t tri[3];
    std::memcpy(tri, p + 12 * f, 12);
    for (int k = 0; k < 3; ++k)
      if (tri[k] < 0 || static_cast<std::uint64_t>(tri[k]) >= nv)
        throw std::runtime_error(who + ": MSH face " + std::to_string(f) + " has vertex id " + std::to_string(tri[k]) +
                                 " outside [0, " + std::to_string(nv) + ")");
    out.face.push_back({id[tri[0]], id[tri[1]], id[tri[2]]});
  }
  return out;
}

TriangleMesh read_msh_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open mesh file");
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_msh(bytes, path);
}

}  // namespace sap
