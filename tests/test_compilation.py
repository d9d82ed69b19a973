"""Numba compilation (``_compilation``, the kernels' ``cache=True``), each in fresh processes with
a temporary ``NUMBA_CACHE_DIR``: a fresh install, then the same installation again.

The notice appears once in a process that compiles dpboost's kernels (a cold cache), never in
one that loads them from the cache, and never for another library's jitted function; every
kernel a fit and a prediction use is cached (a second process compiles nothing).
"""

import json
import os
import subprocess
import sys

import pytest

from dpboost._compilation import NOTICE

#: Another library's jitted function, then two of dpboost's kernels.
KERNELS = """
import numpy as np
from numba import njit

import dpboost
from dpboost._splitting import range_sums


@njit
def other(x):
    return x + 1


other(1)
range_sums(np.ones(4, dtype=np.float32), np.array([0, 2, 4], dtype=np.int64))
dpboost._splitting._node_of(np.array([0, 2, 4], dtype=np.int64), 3)
"""

#: Fits and predictions through every path (serial and parallel, private and not), and the
#: number of dpboost kernels they compiled.
FITS = """
import json
import warnings

import numpy as np
from numba.core import event

compiled = []


class Recorder(event.Listener):
    def on_start(self, ev):
        if ev.data["dispatcher"].py_func.__module__.startswith("dpboost."):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass


event.register("numba:compile", Recorder())
from dpboost import DPGBClassifier, DPGBRegressor

warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(70_000, 6))
X[rng.random(X.shape) < 0.01] = np.nan
y = (np.nan_to_num(X[:, 0]) > 0).astype(int)
common = {"feature_bounds": (-4, 4), "n_estimators": 2, "random_state": 0}
for n in (500, 70_000):
    for model in (DPGBClassifier(classes=[0, 1], **common),
                  DPGBClassifier.dpboost_paper(classes=[0, 1], **common),
                  DPGBClassifier.dpboost_paper(epsilon=np.inf, max_bins=255, classes=[0, 1],
                                               **common),
                  DPGBClassifier(classes=[0, 1], split_candidates="sketch",
                                 split_selection="cyclical", **common),
                  DPGBRegressor(target_bounds=(-4, 4), **common)):
        model.fit(X[:n], np.nan_to_num(X[:n, 0]) if isinstance(model, DPGBRegressor) else y[:n])
        model.predict(X[:n])
        model.predict(np.asfortranarray(X[:n]))
print(json.dumps(compiled))
"""


def _run(code, cache):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={**os.environ, "NUMBA_CACHE_DIR": str(cache)})
    return done.stdout, done.stderr


def test_notice_exactly_when_kernels_compile(tmp_path):
    _, cold = _run(KERNELS, tmp_path)
    assert cold.count(NOTICE) == 1  # two kernels compiled, one notice
    _, warm = _run(KERNELS, tmp_path)
    assert NOTICE not in warm


@pytest.mark.slow
def test_every_kernel_is_cached(tmp_path):
    out, cold = _run(FITS, tmp_path)
    compiled = json.loads(out)
    assert compiled and cold.count(NOTICE) == 1
    # the parallel kernels were exercised too
    assert {"_parallel_tasks", "_partition_parallel", "_predict_parallel",
            "_update_by_code_chunks", "_update_chunks"} <= set(compiled)
    out, warm = _run(FITS, tmp_path)
    assert json.loads(out) == [] and NOTICE not in warm
