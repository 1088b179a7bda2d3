#!/usr/bin/env python3
"""Write MuJoCo's MJCF schema (elements and their attributes) as a fixture (issue 29, item 8).

The MJCF importer's feature table (src/import/mjcf_features.cpp, docs/model-import.md "Feature
table") must list every attribute MuJoCo knows for the elements it covers, and nothing MuJoCo does
not know (except legacy attributes it marks so). tests/test_import_features.cpp checks that against
this fixture: MuJoCo's own schema, from mujoco.mj_printSchema, as
  tests/data/mujoco/mjcf_schema.json  {"mujoco": version, "elements": {"mujoco/body/geom": [attrs]}}
Paths are element names from the root; the world body and bodies share "body" (MuJoCo prints
"(world)body").

Run: python3 tools/reference/mujoco_schema.py   (PyPI mujoco; 4.0.0 wrote the committed fixture)
"""
import json
import os
import re

import mujoco


def schema_elements():
    elements, stack, current = {}, [], None
    for line in mujoco.mj_printSchema(False, False).splitlines():
        if not line.strip():
            continue
        m = re.match(r'^( *)([A-Za-z_()]+) \((.)\)\s*(.*)$', line)
        if m:  # "<indent>name (multiplicity)  attributes...", 3 spaces per level
            depth = len(m.group(1)) // 3
            stack = stack[:depth] + [m.group(2).replace('(world)', '')]
            current = '/'.join(stack)
            elements[current] = m.group(4).split()
        else:  # continuation of the attribute list
            elements[current] += line.split()
    return {k: sorted(v) for k, v in elements.items()}


def main():
    out = os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'data', 'mujoco', 'mjcf_schema.json')
    with open(out, 'w') as f:
        json.dump({'mujoco': mujoco.__version__, 'elements': schema_elements()}, f, indent=1, sort_keys=True)
        f.write('\n')
    print('wrote', os.path.normpath(out))


if __name__ == '__main__':
    main()
