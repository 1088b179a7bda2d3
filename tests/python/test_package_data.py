"""The package carries its scenes and models (sap.data_dir()), loads bundled scenes by name from
any working directory, raises Python's exceptions for missing files and wrong keywords, and runs
the README's Python snippet as written."""
import os
import re

import numpy as np
import pytest

import sap
from conftest import ROOT


def test_bundled_scenes_are_the_repositorys_scenes():
    assert sap.scenes() == sorted(p.stem for p in (ROOT / "scenes").glob("*.json"))
    assert {"humanoid", "box_stack_5", "franka_cube", "g1_rough_terrain"} <= set(sap.scenes())


def test_every_model_folder_carries_its_license_and_source_note():
    models = sap.data_dir() / "models"
    folders = [d for d in models.iterdir() if d.is_dir()]
    assert len(folders) >= 3
    for d in folders:
        assert (d / "LICENSE").is_file(), d
        assert (d / "SOURCE.md").is_file(), d


@pytest.mark.parametrize("name", ["humanoid", "franka_cube", "g1_rough_terrain", "box_stack_5"])
def test_bundled_scene_by_name_from_another_directory(name, tmp_path, monkeypatch):
    by_path = sap.load_scene(str(ROOT / "scenes" / f"{name}.json"))
    monkeypatch.chdir(tmp_path)  # nothing of the repository is reachable by a relative path
    for arg in (name, f"{name}.json"):
        s = sap.load_scene(arg)
        assert (s.nq, s.nv, s.nu, s.nbody, s.dt) == (by_path.nq, by_path.nv, by_path.nu, by_path.nbody, by_path.dt)
        assert s.qpos0 == by_path.qpos0
    sim = sap.Simulator(s, nworld=2, backend="cpu", threads=1)
    q0 = np.asarray(sim.qpos).copy()
    sim.step(3)
    q = np.asarray(sim.qpos)
    assert np.all(np.isfinite(q)) and not np.array_equal(q, q0)


def test_an_existing_path_wins_over_a_bundled_name(tmp_path, monkeypatch):
    text = (ROOT / "scenes" / "pendulum.json").read_text()
    (tmp_path / "humanoid.json").write_text(text)  # a local file named like a bundled scene
    monkeypatch.chdir(tmp_path)
    assert sap.load_scene("humanoid.json").nv == sap.load_scene("pendulum").nv


def test_missing_files_raise_file_not_found_naming_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="bundled: .*humanoid") as e:
        sap.load_scene("no_such_scene")
    assert e.value.filename == "no_such_scene"
    missing = tmp_path / "none.xml"
    for load in (sap.load_mjcf, sap.load_urdf):
        with pytest.raises(FileNotFoundError, match="none.xml") as e:
            load(missing)
        assert e.value.filename == str(missing)
    # A file that a scene names: the message locates it (file and JSON pointer).
    scene = tmp_path / "s.json"
    scene.write_text('{"schema_version": 1, "name": "s", "simulation": {"dt": 0.01, "num_worlds": 1},'
                     ' "assets": [{"id": "a", "type": "mjcf", "path": "gone.xml"}]}')
    with pytest.raises(FileNotFoundError, match=r"s\.json: /assets/0/path: file not found: .*gone\.xml") as e:
        sap.load_scene(scene)
    assert e.value.filename.endswith("gone.xml")
    # An MJCF include: the message names the including file and line.
    top = tmp_path / "top.xml"
    top.write_text('<mujoco>\n  <include file="part.xml"/>\n</mujoco>\n')
    with pytest.raises(FileNotFoundError, match=r"top\.xml:2: cannot open file .*part\.xml"):
        sap.load_mjcf(top)


def test_wrong_keyword_is_a_type_error_and_a_wrong_value_a_value_error():
    s = sap.load_scene("pendulum")
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'nworlds'.*valid keywords: scene, nworld"):
        sap.Simulator(s, nworlds=4)
    with pytest.raises(ValueError, match="line_search_variant"):
        sap.Simulator(s, nworld=1, backend="cpu", line_search_variant="no_such_search")


def readme_block(lang):
    text = (ROOT / "README.md").read_text()
    m = re.search(r"```" + lang + r"\n(.*?)```", text, re.S)
    assert m, f"README.md has no {lang} block"
    return m.group(1)


def test_readme_python_snippet_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the snippet loads a bundled scene: no repository path needed
    ns = {}
    exec(compile(readme_block("python"), "README.md", "exec"), ns)
    sim, q = ns["sim"], ns["q"]
    assert q.shape == (sim.nworld, sim.nq)
    assert np.all(np.asarray(sim.ctrl) == 0.1)  # "writes reach the simulator"
    q0 = np.asarray(sim.scene.qpos0)
    assert np.all(np.isfinite(q)) and not np.allclose(q, q0)  # "q now shows the new state"
    assert sim.time == pytest.approx(4 * sim.dt)
