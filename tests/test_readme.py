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
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, block in enumerate(blocks):
                exec(compile(block, f"README.md python block {i}", "exec"), namespace)
    finally:
        (ROOT / "model.json").unlink(missing_ok=True)  # the inspection block's save_model
    # The workflow block's claims: 7 fits spend 3.20, and the epsilon-7.5 fit is refused.
    assert namespace["budget"].spent() == pytest.approx(3.20, abs=0.005)
    total = re.search(r"total would be ([\d.]+)", capsys.readouterr().out)
    assert total is not None and float(total.group(1)) == pytest.approx(8.81, abs=0.005)


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


# --- the demo's tables: README (Adult) and docs/results.md (Diabetes130US) ------------------------

#: The demo's columns that its seed decides (fit_s and the warm-up line are timings).
DEMO_COLUMNS = ("setting", "epsilon", "delta", "test_error", "roc_auc", "eps_spent", "gdf_filtered")


def demo_rows(text):
    """{(setting, epsilon): {column: cell}} of the demo's table in ``text``."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["setting", "epsilon"])
    names = lines[header].split()
    rows = {}
    for line in lines[header + 1:]:
        cells = line.split()
        if len(cells) != len(names) or cells[0] not in ("default", "paper"):
            break
        row = dict(zip(names, cells))
        rows[row["setting"], row["epsilon"]] = {k: row[k] for k in DEMO_COLUMNS}
    return rows


def demo_table(text, digits):
    """The markdown table the README and docs/results.md show of a demo's output."""
    rows = demo_rows(text)
    epsilons = [e for s, e in rows if s == "default"]
    lines = ["| epsilon | " + " | ".join(f"{float(e):g}" for e in epsilons) + " |",
             "|---" * (len(epsilons) + 1) + "|"]
    for setting in ("default", "paper"):
        for label, column in (("test error", "test_error"), ("ROC AUC", "roc_auc")):
            lines.append(f"| {setting}: {label} | " + " | ".join(
                f"{float(rows[setting, e][column]):.{digits}f}" for e in epsilons) + " |")
    return "\n".join(lines)


@pytest.mark.parametrize("dataset, page, digits", [("adult", "README.md", 3),
                                                   ("diabetes", "docs/results.md", 4)])
def test_the_demo_tables_are_the_recorded_demo_output(dataset, page, digits):
    recorded = (ROOT / "benchmarks" / "results" / f"demo_{dataset}.txt").read_text()
    assert demo_table(recorded, digits) in (ROOT / page).read_text()


@pytest.mark.slow
def test_the_recorded_demo_output_is_what_the_demo_prints():
    """``python -m dpboost demo`` (seeded) prints the recorded table, timings apart."""
    pytest.importorskip("pandas")
    if not (SHARED / "adult_train.csv.gz").exists():
        pytest.skip(f"the demo reads Adult from {SHARED}")
    done = subprocess.run([sys.executable, "-m", "dpboost", "demo", "--shared", str(SHARED)],
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == 0, done.stderr
    recorded = (ROOT / "benchmarks" / "results" / "demo_adult.txt").read_text()
    assert demo_rows(done.stdout) == demo_rows(recorded)


def test_the_readme_shows_the_two_commands_and_a_first_model_early():
    readme = (ROOT / "README.md").read_text()
    head = "\n".join(readme.splitlines()[:60])
    assert 'python -m pip install -e ".[demo]" && python -m dpboost demo' in head
    assert 'python -m pip install -e ".[test]" && python -m pytest -q -n auto' in head
    assert re.search(r"about [\d.]+ minutes? on 2 cores", head)
    assert "clf.fit(X_train, y_train)" in head


def test_no_page_cites_an_issue_number():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "examples").glob("*.py"))]
    for page in pages:
        found = re.findall(r"\bissues? #?\d+", page.read_text(), flags=re.I)
        assert not found, f"{page.relative_to(ROOT)} cites {found}"
