"""The README's Python blocks run as written, in order, in one namespace (as a reader pastes them)."""

import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SHARED = ROOT.parent / "shared" / "datasets"


@pytest.mark.slow
def test_readme_python_blocks_run_in_order(monkeypatch, capsys):
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
