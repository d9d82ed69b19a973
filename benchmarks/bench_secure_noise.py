"""Cost of secure noise: fit time with OpenDP's exact samplers (``random_state=None``) against
numpy's floating-point samplers (an integer ``random_state``), in one run.

Run: ``python benchmarks/bench_secure_noise.py [--quick]``; writes results/secure_noise.csv.
"""

import argparse
import time

import numpy as np
from _common import SHARED, print_table, write_results
from sklearn.datasets import make_classification

from dpboost import DPGBClassifier
from dpboost.datasets import load_encoded
from dpboost._mechanisms import SecureNoise


def _datasets():
    X, y = make_classification(n_samples=100_000, n_features=20, random_state=0)
    yield "make_classification_100k_20", X[:80_000], y[:80_000], np.tile([-8.0, 8.0], (20, 1))
    if (SHARED / "adult_train.csv.gz").exists():
        X_train, y_train, _, _, bounds, _ = load_encoded("adult", SHARED)
        yield "adult", X_train, y_train, bounds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat instead of three")
    repeats = 1 if parser.parse_args().quick else 3
    rows = []
    for name, X, y, bounds in _datasets():
        def fit(random_state, X=X, y=y, bounds=bounds):
            start = time.perf_counter()
            DPGBClassifier.dpboost_paper(epsilon=1.0, feature_bounds=bounds, classes=[0, 1],
                                         random_state=random_state).fit(X, y)
            return time.perf_counter() - start

        fit(0)  # compile
        numpy_s = min(fit(0) for _ in range(repeats))
        secure_s = min(fit(None) for _ in range(repeats))
        # The floor of the secure path: one exact OpenDP noisy-max call per node (2**6 - 1 per
        # tree) over every (feature, bin, missing side) candidate; OpenDP has no batched form.
        n_candidates = X.shape[1] * 31 * 2
        utilities = np.random.default_rng(0).normal(size=(200, n_candidates))
        noise = SecureNoise()
        noise.exponential(utilities[:1], 1.0)
        start = time.perf_counter()
        noise.exponential(utilities, 1.0)
        call_ms = 1e3 * (time.perf_counter() - start) / len(utilities)
        rows.append({"dataset": name, "n_samples": X.shape[0], "n_features": X.shape[1],
                     "trees": 50, "depth": 6, "bins": 32, "epsilon": 1.0,
                     "numpy_fit_s": numpy_s, "secure_fit_s": secure_s,
                     "secure_over_numpy": secure_s / numpy_s,
                     "opendp_ms_per_node": call_ms, "nodes": 50 * 63,
                     "noisy_max_floor_s": 50 * 63 * call_ms / 1e3})
    print_table(rows)
    write_results("secure_noise", rows)


if __name__ == "__main__":
    main()
