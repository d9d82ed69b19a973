"""Cost of secure noise: the samplers one by one, and whole fits with the secure
(``random_state=None``) and the numpy (integer ``random_state``) noise side by side, in one run.

Samplers (results/secure_samplers.csv): microseconds per released value (per row for the exponential
mechanism) of every option considered for the secure path, on the shapes a fit releases: a Hessian
sketch (5,100 values), a tree's leaves (64 x 2), an exponential-mechanism row (20 features x 31
boundaries x 2 = 1,240 candidates, flat and peaked utilities). Options: dpboost's exact samplers
(``SecureNoise``: discrete Gaussian / Laplace and the exponential mechanism on a lattice, Numba,
``os.urandom``), OpenDP's float samplers (the previous secure path), OpenDP's integer samplers
(vector calls), Google's DP library (``python-dp``, when installed: Laplace and Gaussian per call,
no exponential mechanism), and numpy's floating-point samplers (not safe; the floor).

Fits (results/secure_noise.csv): the default estimator (100 trees, depth 6, 32 bins, Gaussian
leaves, Hessian sketch) on make_classification 100k x 20 and 1M x 20 (80 % train), secure and
numpy noise, beside scikit-learn's HGB with the same number of trees, depth and bins; DPBoost's
setting (epsilon 1, 50 trees, depth 6, 32 bins, exponential splits) on make_classification 100k x
20 and Adult. 2 threads, best of 3 (2 at 1M), interleaved, after a warm-up fit.

Run: ``python benchmarks/bench_secure_noise.py [--quick]``; ``--quick``: 100k rows only, one
repeat (results/*_quick.csv).
"""

import time
import warnings

import _harness
import _loaders
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from dpboost import DPGBClassifier
from dpboost._noise import NumpyNoise, SecureNoise

THREADS = 2


def _per_call(call, n_values, repeats=5):
    """Microseconds per released value of ``call``, best of ``repeats`` after one warm-up."""
    return 1e6 * _harness.best_of(call, repeats, warmup=call).seconds / n_values


def _opendp_float(kind, size, scale):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)
    if kind == "noisy_max":
        return dp.m.make_noisy_max(domain, dp.linf_distance(T=float),
                                   dp.zero_concentrated_divergence(), scale=scale)
    if kind == "laplace":
        return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale)
    return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)


def _opendp_integer(kind, size, scale):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=int), size=size)
    if kind == "laplace":
        return dp.m.make_laplace(domain, dp.l1_distance(T=int), scale=scale)
    return dp.m.make_gaussian(domain, dp.l2_distance(T=int), scale=scale)


def _python_dp(kind, scale):
    """A per-value call of Google's DP library, or None when python-dp is not installed."""
    try:
        from pydp.algorithms.numerical_mechanisms import GaussianMechanism, LaplaceMechanism
    except ImportError:
        return None
    if kind == "laplace":
        mechanism = LaplaceMechanism(epsilon=1.0, sensitivity=scale)
    else:
        mechanism = GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    return mechanism.add_noise


def sampler_rows():
    rows = []
    secure, fast = SecureNoise(), NumpyNoise(np.random.default_rng(0))
    for kind, shape in [("gaussian", (1, 5100)), ("gaussian", (64, 2)), ("laplace", (1, 5100)),
                        ("laplace", (64, 2))]:
        values = np.zeros(shape)
        draw = getattr(secure, kind)
        options = {"dpboost exact (Numba, os.urandom)": lambda: draw(values, 3.0, 1.0),
                   "numpy float (not safe)": lambda: getattr(fast, kind)(values, 3.0, 1.0)}
        flat = values.ravel().tolist()
        opendp_float = _opendp_float(kind, values.size, 3.0)
        options["OpenDP float, one vector call"] = lambda: opendp_float(values.ravel())
        opendp_int = _opendp_integer(kind, values.size, 3.0)
        zeros = [0] * values.size
        options["OpenDP integer, one vector call"] = lambda: opendp_int(zeros)
        pydp = _python_dp(kind, 3.0)
        if pydp is not None:
            options["python-dp, one call per value"] = lambda: [pydp(v) for v in flat]
        for option, call in options.items():
            rows.append({"release": f"{kind} {shape[0]}x{shape[1]}", "option": option,
                         "us_per_value": _per_call(call, values.size)})
    utilities = {"flat": np.random.default_rng(0).normal(size=(64, 1240)) * 0.1,
                 "peaked": np.random.default_rng(0).normal(size=(64, 1240)) * 30}
    for shape_name, u in utilities.items():
        noisy_max = _opendp_float("noisy_max", u.shape[1], 1.0)
        options = {"dpboost exact (Numba, os.urandom)": lambda: secure.exponential(u, 1.0, 0.5),
                   "numpy float (not safe)": lambda: fast.exponential(u, 1.0, 0.5),
                   "OpenDP float noisy max, one call per row":
                       lambda: [noisy_max(row) for row in u]}
        for option, call in options.items():
            rows.append({"release": f"exponential {shape_name} 1240 candidates",
                         "option": option, "us_per_value": _per_call(call, u.shape[0])})
    return rows


def _default(random_state):
    return DPGBClassifier(epsilon=1.0, classes=[0, 1], feature_bounds=(-8.0, 8.0),
                          random_state=random_state, n_jobs=THREADS)


def _paper(random_state, bounds):
    return DPGBClassifier.dpboost_paper(epsilon=1.0, max_bins=32, feature_bounds=bounds,
                                        classes=[0, 1], random_state=random_state,
                                        n_jobs=THREADS)


def _hgb(model):
    return HistGradientBoostingClassifier(
        max_iter=model.n_estimators, max_depth=model.max_depth, max_bins=model.max_bins,
        max_leaf_nodes=None, early_stopping=False, random_state=0)


def fit_rows(quick):
    rows = []
    repeats = 1 if quick else 3
    sizes = [100_000] if quick else [100_000, 1_000_000]
    cases = [("default", n, _loaders.synthetic(n, 20)) for n in sizes]
    cases.append(("dpboost_paper", 100_000, _loaders.synthetic(100_000, 20)))
    if _loaders.available(["adult"]):
        cases.append(("dpboost_paper", "adult", _loaders.load("adult")))
    for setting, size, data in cases:
        X, y = data["X"], data["y"]
        if setting == "default":
            models = {"numpy": _default(0), "secure": _default(None)}
            models["hgb"] = _hgb(models["numpy"])
        else:
            models = {"numpy": _paper(0, data["bounds"]), "secure": _paper(None, data["bounds"])}
        calls = {name: (lambda m=m: m.fit(X, y)) for name, m in models.items()}
        warm = {name: (lambda m=m: m.fit(X[:2000], y[:2000])) for name, m in models.items()}
        with warnings.catch_warnings(), threadpool_limits(THREADS):
            warnings.simplefilter("ignore")
            best = _harness.best_of(calls, repeats if size != 1_000_000 else min(repeats, 2),
                                    warmup=warm).seconds
        row = {"setting": setting, "data": (f"make_classification {size // 1000}k x 20"
                                            if size != "adult" else "adult"),
               "n_train": X.shape[0], "numpy_fit_s": best["numpy"],
               "secure_fit_s": best["secure"], "secure_over_numpy": best["secure"] / best["numpy"]}
        if "hgb" in best:
            row.update(hgb_fit_s=best["hgb"], secure_over_hgb=best["secure"] / best["hgb"])
        rows.append(row)
    return rows


def main():
    args = _harness.parser(__doc__).parse_args()
    start = time.perf_counter()
    samplers = sampler_rows()
    _harness.print_table(samplers)
    _harness.write_results(_harness.result_name("secure_samplers", args), samplers)
    fits = fit_rows(args.quick)
    _harness.print_table(fits)
    _harness.write_results(_harness.result_name("secure_noise", args), fits)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
