"""Compilation and start-up ("a fast first run"): Numba compile time of every kernel,
the first fit after a fresh install, and ``import dpboost`` + a fit with a warm cache.

Every measurement is a fresh process (``python -c``) whose Numba cache and dpboost's conversion
cache are a new temporary directory (``NUMBA_CACHE_DIR``, ``DPBOOST_CACHE_DIR``): its first run is
a fresh install (a cold cache: every kernel the fit uses compiles, every accountant conversion of
its plans is computed), the next runs in the same directory load them from the caches (warm).
The process times ``import numpy, dpboost``, Numba's own one-time start (the first jitted call of
a process, cached or not, loads Numba's typing and lowering registries: timed apart on a trivial
function), a fit of ``DPGBClassifier`` as a new user makes it (``random_state=None``: secure
noise) with the default parameters or DPBoost's setting (``dpboost_paper()``), epsilon 1, on
normal features in public bounds (-4, 4), and ``predict_proba`` on the training rows. A listener
on Numba's ``"numba:compile"`` event records every kernel compilation (kernel, signature, caller,
seconds with and without the kernels it compiled on the way); a cache hit is no event. The
process's stderr tells whether dpboost's compile notice appeared.

Runs per setting: cold then ``--warm`` warm runs in one cache directory, ``--repeats`` times
(each with a new directory); DPBoost's setting once more in a directory warmed by a default fit
(its own kernels only); a cold fit on 100k rows (the parallel kernels: skipped with ``--quick``).
The floors of a warm start, each alone in a fresh process (best of 3): the interpreter, ``import
numpy``, ``import sklearn.base`` (every scikit-learn estimator), ``import sklearn.ensemble`` (the
reference a warm start is compared with, as a ratio within the run), ``import numba`` + Numba's
start on a trivial function, ``import dp_accounting`` (the Renyi-DP accountant of the default
setting, imported at its first fit).

dpboost's modules are compiled to bytecode first (``compileall``, as ``pip install`` does), so
that no process compiles them from source, which ``PYTHONDONTWRITEBYTECODE`` would otherwise make
every process do (about 0.05 s of each import on the shared machine).

Results: results/compile.csv (one row per process: ``import_s``, ``numba_start_s``, ``fit_s``
(Numba's start included: what the user waits), ``predict_s``, ``compile_s`` (the kernels' compile
time, nested compilations counted once), ``kernels_compiled``, ``notice``),
results/compile_kernels.csv (every compilation of a cold run), results/compile_floors.csv.

Run: ``python benchmarks/bench_compile.py [--quick] [--repeats R] [--warm W]`` (~4 min, quick
~1 min; results/compile_quick*.csv).
"""

import compileall
import json
import os
import subprocess
import sys
import tempfile
import time

import _harness

import dpboost

#: One process: times, compilations and the notice, as one JSON line on stdout.
CHILD = r"""
import json, sys, time
start = time.perf_counter()
from numba.core import event

compiles, stack = [], []


class Recorder(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        stack.append([f"{f.__module__}.{f.__qualname__}", str(ev.data["args"]),
                      time.perf_counter(), 0.0])

    def on_end(self, ev):
        name, signature, begin, nested = stack.pop()
        seconds = time.perf_counter() - begin
        if stack:
            stack[-1][3] += seconds
        compiles.append({"kernel": name, "signature": signature, "depth": len(stack),
                         "caller": stack[-1][0] if stack else "", "seconds": seconds,
                         "own_seconds": seconds - nested})


event.register("numba:compile", Recorder())
import numpy as np
import dpboost
imported = time.perf_counter()
from numba import njit


@njit
def first(x):
    return x + 1


first(1)
started = time.perf_counter()
import warnings
warnings.simplefilter("ignore")
setting, n_rows, n_features = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
X = rng.normal(size=(n_rows, n_features))
y = (X[:, 0] + 0.5 * rng.normal(size=n_rows) > 0).astype(int)
make = {"default": dpboost.DPGBClassifier,
        "dpboost_paper": dpboost.DPGBClassifier.dpboost_paper}[setting]
model = make(epsilon=1.0, feature_bounds=(-4, 4), classes=[0, 1])
model.fit(X, y)
fitted = time.perf_counter()
model.predict_proba(X)
predicted = time.perf_counter()
ours = [c for c in compiles if c["kernel"].startswith("dpboost.")]
print(json.dumps({"import_s": imported - start, "numba_start_s": started - imported,
                  "fit_s": fitted - imported, "predict_s": predicted - fitted,
                  "compile_s": sum(c["seconds"] for c in ours if not
                                   c["caller"].startswith("dpboost.")),
                  "kernels_compiled": len(ours), "compiles": ours}))
"""

#: The floors of a warm start: each statement alone in a fresh process.
FLOORS = {"interpreter (python -c pass)": "pass",
          "import numpy": "import numpy",
          "import sklearn.base": "import sklearn.base",
          "import sklearn.ensemble": "import sklearn.ensemble",
          "import numba + Numba's start (a trivial jitted function)":
              "import numba\n@numba.njit\ndef f(x):\n    return x + 1\nf(1)",
          "import dp_accounting": "import dp_accounting"}

N_FEATURES = 10


def run(setting, n_rows, cache):
    """One process with the Numba cache and dpboost's conversion cache in the directory
    ``cache``: its JSON, and whether the notice appeared."""
    done = subprocess.run([sys.executable, "-c", CHILD, setting, str(n_rows), str(N_FEATURES)],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "NUMBA_CACHE_DIR": cache,
                               "DPBOOST_CACHE_DIR": os.path.join(cache, "dpboost")})
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["notice"] = "compiling its Numba kernels" in done.stderr
    return out


def measure(rows, kernels, setting, n_rows, run_name, repeat, cache):
    result = run(setting, n_rows, cache)
    base = {"setting": setting, "rows": n_rows, "features": N_FEATURES, "run": run_name,
            "repeat": repeat}
    rows.append({**base, **{k: v for k, v in result.items() if k != "compiles"}})
    kernels += [{**base, **c} for c in result["compiles"]]
    print(f"{setting:14s} {n_rows:>7} {run_name:15s} import {result['import_s']:.2f} s, fit "
          f"{result['fit_s']:.2f} s, predict {result['predict_s']:.2f} s, compile "
          f"{result['compile_s']:.2f} s ({result['kernels_compiled']} kernels), notice "
          f"{result['notice']}", flush=True)


def floors(repeats=3):
    """Best of ``repeats`` fresh processes for each floor (the statement's wall time, and the
    interpreter's start for ``pass``)."""
    timer = ("import sys, time\ns = time.perf_counter()\nexec(compile(sys.argv[1], 'floor', "
             "'exec'))\nprint(time.perf_counter() - s)")
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for what, code in FLOORS.items():
            best = float("inf")
            for _ in range(repeats):
                if code == "pass":
                    start = time.perf_counter()
                    subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
                    seconds = time.perf_counter() - start
                else:
                    seconds = float(subprocess.run(
                        [sys.executable, "-c", timer, code], capture_output=True, text=True,
                        check=True, env=env).stdout)
                best = min(best, seconds)
            out.append({"what": what, "seconds": best})
            print(f"{what}: {best:.2f} s", flush=True)
    return out


def main():
    parser = _harness.parser(__doc__)
    parser.add_argument("--repeats", type=int, default=None,
                        help="fresh caches per setting (default 3, quick 1)")
    parser.add_argument("--warm", type=int, default=3, help="warm runs after each cold one")
    args = parser.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    compileall.compile_dir(os.path.dirname(dpboost.__file__), quiet=1)
    rows, kernels = [], []
    for repeat in range(repeats):
        for setting in ("default", "dpboost_paper"):
            with tempfile.TemporaryDirectory() as cache:
                measure(rows, kernels, setting, 2000, "cold", repeat, cache)
                for _ in range(args.warm):
                    measure(rows, kernels, setting, 2000, "warm", repeat, cache)
        with tempfile.TemporaryDirectory() as cache:
            run("default", 2000, cache)
            measure(rows, kernels, "dpboost_paper", 2000, "after default", repeat, cache)
    if not args.quick:
        for setting in ("default", "dpboost_paper"):
            with tempfile.TemporaryDirectory() as cache:
                measure(rows, kernels, setting, 100_000, "cold", 0, cache)
    name = _harness.result_name("compile", args)
    _harness.write_results(name, rows)
    _harness.write_results(name + "_kernels", kernels)
    _harness.write_results(name + "_floors", floors())


if __name__ == "__main__":
    main()
