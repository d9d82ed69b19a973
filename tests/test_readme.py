"""The README's code runs as written: its Python blocks in order, in one namespace (as a reader
pastes them), its command-line block in a shell, and its schema file is JSON with the keys the
README documents."""

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import dpboost

ROOT = Path(__file__).parents[1]
SHARED = ROOT.parent / "shared" / "datasets"


@pytest.mark.slow
def test_readme_python_blocks_run_in_order(monkeypatch, capsys, seeded_os_words):
    # The README's fits use the default secure noise: on seeded bytes, the same run every time.
    pytest.importorskip("pandas")
    if not (SHARED / "adult_train.csv.gz").exists():
        pytest.skip(f"the README reads Adult from {SHARED}")
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(ROOT)  # the README's paths are relative to the repository root
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, block in enumerate(blocks):
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
    # The workflow block's claims: 7 fits spend 2.91, and the epsilon-7.5 fit is refused.
    assert namespace["budget"].spent() == pytest.approx(2.91, abs=0.005)
    assert "total would be 8.34" in capsys.readouterr().out


def _section(heading):
    text = (ROOT / "README.md").read_text()
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.slow
def test_readme_command_line_block_runs_as_written(tmp_path):
    pytest.importorskip("pandas")
    if not (SHARED / "adult_train.csv.gz").exists():
        pytest.skip(f"the README reads Adult from {SHARED}")
    block = re.findall(r"```bash\n(.*?)```", _section("Command line"), flags=re.S)[0]
    # A folder where ../shared is the shared one, as from the repository root, and a `dpboost`
    # command that runs this checkout (the installed one may be another's).
    repo, bin_ = tmp_path / "repo", tmp_path / "bin"
    repo.mkdir()
    bin_.mkdir()
    (tmp_path / "shared").symlink_to(SHARED.parent)
    command = bin_ / "dpboost"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dpboost "$@"\n')
    command.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(["bash", "-e", "-c", block], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith(f"dpboost {dpboost.__version__}")
    model = dpboost.DPGBClassifier.from_json((repo / "adult_model.json").read_text())
    predictions = (repo / "pred.csv").read_text().splitlines()
    assert predictions[0] == "proba_0,proba_1" and len(predictions) == 16_281 + 1
    assert model.privacy_spent_ <= 1.0


def test_readme_schema_file_is_json_with_the_documented_keys():
    section = _section("Command line")
    schema = json.loads(re.findall(r"```json\n(.*?)```", section, flags=re.S)[0])
    documented = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))
    assert set(schema) - {"description"} <= documented
    assert documented == {"bounds", "categories", "categorical_features", "classes",
                          "target_bounds"}
