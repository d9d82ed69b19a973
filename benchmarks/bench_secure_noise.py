"""Cost of secure noise: fit time with OpenDP's exact samplers (``random_state=None``) against
numpy's floating-point samplers (an integer ``random_state``), in one run.

DPBoost's setting at epsilon 1 (50 trees, depth 6, 32 bins, EoE) on make_classification (80k x
20) and Adult; both fits timed interleaved, best of 3, after a warm-up fit; also the floor of the
secure path, OpenDP's noisy-max call per node.

Run: ``python benchmarks/bench_secure_noise.py [--quick]``; writes results/secure_noise.csv.
``--quick``: one repeat.
"""

import _harness
import _loaders
import numpy as np

from dpboost import DPGBClassifier
from dpboost._mechanisms import SecureNoise


def _datasets():
    yield "make_classification_100k_20", _loaders.synthetic(100_000, 20)
    if _loaders.available(["adult"]):
        yield "adult", _loaders.load("adult")


def main():
    args = _harness.parser(__doc__).parse_args()
    repeats = 1 if args.quick else 3
    rows = []
    for name, data in _datasets():
        X, y = data["X"], data["y"]

        def fit(random_state, X=X, y=y, bounds=data["bounds"]):
            return lambda: DPGBClassifier.dpboost_paper(
                epsilon=1.0, feature_bounds=bounds, classes=[0, 1],
                random_state=random_state).fit(X, y)

        best = _harness.best_of({"numpy": fit(0), "secure": fit(None)}, repeats,
                                warmup=fit(0)).seconds
        # The floor of the secure path: one exact OpenDP noisy-max call per node (2**6 - 1 per
        # tree) over every (feature, bin, missing side) candidate; OpenDP has no batched form.
        n_candidates = X.shape[1] * 31 * 2
        utilities = np.random.default_rng(0).normal(size=(200, n_candidates))
        noise = SecureNoise()
        call_ms = 1e3 * _harness.best_of(lambda: noise.exponential(utilities, 1.0),
                                         warmup=lambda: noise.exponential(utilities[:1], 1.0)
                                         ).seconds / len(utilities)
        rows.append({"dataset": name, "n_samples": X.shape[0], "n_features": X.shape[1],
                     "trees": 50, "depth": 6, "bins": 32, "epsilon": 1.0,
                     "numpy_fit_s": best["numpy"], "secure_fit_s": best["secure"],
                     "secure_over_numpy": best["secure"] / best["numpy"],
                     "opendp_ms_per_node": call_ms, "nodes": 50 * 63,
                     "noisy_max_floor_s": 50 * 63 * call_ms / 1e3})
    _harness.print_table(rows)
    _harness.write_results(_harness.result_name("secure_noise", args), rows)


if __name__ == "__main__":
    main()
