// MuJoCo's binary mesh format (.msh), read for <mesh file="*.msh"> (docs/model-import.md,
// "Mesh assets"). Layout, little-endian, no padding:
//   int32 nvertex, nnormal, ntexcoord, nface
//   float32 vertex[3 nvertex], normal[3 nnormal], texcoord[2 ntexcoord]
//   int32   face[3 nface]          (0-based vertex ids)
// The file size must be exactly 16 + 4 (3 nvertex + 3 nnormal + 2 ntexcoord + 3 nface) bytes,
// as MuJoCo's compiler requires. Normals and texture coordinates carry no physics and are
// skipped. A file without faces is a point set (MuJoCo then uses its convex hull).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sap/mesh_asset.hpp"

namespace sap {

// Throws std::runtime_error("<who>: ...") naming what is wrong: a header count that is negative
// or too large, a size that does not match the header, a vertex that is not finite, a face id
// out of range, fewer than 4 vertices (MuJoCo's minimum for a mesh).
TriangleMesh parse_msh(const std::vector<std::uint8_t>& bytes, const std::string& who);

// Reads the file and parses it; the error names the path.
TriangleMesh read_msh_file(const std::string& path);

}  // namespace sap
