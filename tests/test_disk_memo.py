"""The accountants' conversion cache on disk (``_disk_memo``; docs/privacy.md, Conversion
cache): what a process computed, a later one reads back bit for bit; what fails its check, or a
cache that cannot be used, is computed as without it."""

import json
import math
import sqlite3

import pytest

import dpboost._accounting as accounting_module
from dpboost import _disk_memo
from dpboost._accounting import compose
from dpboost._budget import plan_budget


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory, as a new process sees it."""
    monkeypatch.setenv("DPBOOST_CACHE_DIR", str(tmp_path / "cache"))
    _new_process()
    yield tmp_path / "cache"
    _disk_memo.close()


def _new_process():
    """Forget what this process holds: its plans, memos and connection."""
    from dpboost import _pld

    _disk_memo.close()
    plan_budget.cache_clear()
    accounting_module._DIVERGENCES.clear()
    _pld._EPSILONS.clear()


def _plan():
    return plan_budget(epsilon=1.0, n_estimators=50, max_depth=4, learning_rate=0.1,
                       l2_regularization=1.0, budget_allocation="uniform", trees_per_ensemble=50,
                       leaf_clipping=True, delta=1e-5, leaf_noise="gaussian",
                       split_selection="random", subsample=0.3, accounting="auto")


def _spy(monkeypatch):
    """Count dp-accounting's Renyi conversions."""
    calls = []
    divergences = accounting_module._divergences
    monkeypatch.setattr(accounting_module, "_divergences",
                        lambda orders, event: calls.append(1) or divergences(orders, event))
    return calls


def test_a_later_process_reads_the_conversions_back_bit_for_bit(cache, monkeypatch):
    calls = _spy(monkeypatch)
    first = _plan()
    assert calls
    assert len(list(cache.glob("conversions-*-dp_accounting-*.sqlite3"))) == 1
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    _new_process()
    calls.clear()
    second = _plan()
    assert not calls  # every conversion read back
    assert second.entries == first.entries and second.epsilon == first.epsilon
    assert [e.noise_multiplier for e in second.entries] == [e.noise_multiplier
                                                            for e in first.entries]
    assert compose(second.entries, 1e-5) == compose(first.entries, 1e-5)


@pytest.mark.parametrize("stored", ["[NaN]", "[1.0]", '"text"', "not json", '[1.0, "x"]'])
def test_a_value_that_fails_its_check_is_computed_again(cache, monkeypatch, stored):
    calls = _spy(monkeypatch)
    first = _plan()
    [path] = cache.glob("*.sqlite3")
    _new_process()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE divergences SET value = ?", (stored,))
    calls.clear()
    assert _plan().entries == first.entries
    assert calls  # every divergence was computed again


def test_the_checks_accept_what_the_conversions_return():
    key = ("event", (2, 3, 4))
    assert _disk_memo.TABLES["divergences"](key, [0.1, 0.2, math.inf])
    assert not _disk_memo.TABLES["divergences"](key, [0.1, 0.2])
    assert _disk_memo.TABLES["epsilons"](key, 0.5) and _disk_memo.TABLES["epsilons"](key, math.inf)
    assert not _disk_memo.TABLES["epsilons"](key, -0.5)
    assert json.loads(json.dumps([math.inf])) == [math.inf]  # inf survives the file


def test_an_empty_directory_setting_turns_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBOOST_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    _new_process()
    calls = _spy(monkeypatch)
    _plan()
    _new_process()
    count = len(calls)
    _plan()
    assert len(calls) == 2 * count and not list(tmp_path.iterdir())
    _disk_memo.close()


def test_a_cache_that_cannot_be_written_is_left_out(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the directory would be")
    monkeypatch.setenv("DPBOOST_CACHE_DIR", str(blocker / "cache"))
    _new_process()
    expected = _plan().entries
    _new_process()
    assert _plan().entries == expected
    _disk_memo.close()
