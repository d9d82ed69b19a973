"""What private feature bounds cost (privacy across the workflow), in two parts.

``adult`` (the default): the default classifier on Adult with the documented public bounds
against ``feature_bounds="private"`` at the same total epsilon. Adult (official split) read with
``pd.read_csv``; the category lists are the public schema's in both settings, only the six
numeric columns' bounds differ: the schema's documented bounds, or released by the fit (10 % of
epsilon, docs/privacy.md, Private feature bounds). Secure noise, 5 fits per cell; writes
results/private_bounds.csv (mean and std per cell). ``--quick``: 2 fits per cell.

``--regression [--fits N]``: the goal of the private bounds on every shared regression set
(abalone, california, house_16H, pol, nycflights; ``_loaders``: the benchmarks' documented
bounds and target ranges, string categoricals hashed into 32 public codes), one shuffled 70/30
split (seed 0; nycflights' training rows capped at 20,000 and its test rows at 5,000, for time).
Per fit: the default ``DPGBRegressor`` with the documented bounds and with
``feature_bounds="private", target_bounds="private"`` (numpy noise seeded per fit, each
setting its own seeds), the test RMSE of both, and every released range against the training
data's range (min to max of its finite values; constant columns left out), with the columns the
fit warned it could not locate. Epsilon 1 (N fits, default 200) and 0.1 (N / 4 fits). Writes
results/private_bounds_regression.csv (one row per fit) and
results/private_bounds_regression_summary.csv.

Run: ``python benchmarks/bench_private_bounds.py [--quick]`` or
``python benchmarks/bench_private_bounds.py --regression [--fits 200]``.
"""

import re
import sys
import time
import warnings

import _harness
import _loaders
import numpy as np

from dpboost import DPGBClassifier, DPGBRegressor

REGRESSION = ("abalone", "california", "house_16H", "pol", "nycflights")
MAX_TRAIN, MAX_TEST = 20_000, 5_000


def cells(data, fold):
    for epsilon in (0.5, 1.0, 2.0):
        yield ({"bounds": "documented", "epsilon": epsilon},
               DPGBClassifier(epsilon=epsilon, **data["params"]))
        yield ({"bounds": "private", "epsilon": epsilon},
               DPGBClassifier(epsilon=epsilon, **{**data["params"], "feature_bounds": "private"}))


def _split(name):
    data = _loaders.load(name)
    X, y = data["X"], data["y"]
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(0.7 * len(y))
    train, test = order[:cut][:MAX_TRAIN], order[cut:][:MAX_TEST]
    categorical = [j for j in range(X.shape[1]) if tuple(data["bounds"][j]) == (
        -0.5, _loaders.N_HASH_BUCKETS - 0.5)]
    numeric = [j for j in range(X.shape[1]) if j not in categorical]
    public = dict(categorical_features=categorical or None,
                  categories={j: list(range(_loaders.N_HASH_BUCKETS)) for j in categorical} or None)
    documented = dict(feature_bounds={j: tuple(data["bounds"][j]) for j in numeric},
                      target_bounds=data["target_bounds"])
    return X[train], y[train], X[test], y[test], numeric, public, documented


def _rmse(model, X, y):
    return float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))


def regression_fits(name, epsilon, n_fits):
    """One row per fit (see the module docstring)."""
    X, y, X_test, y_test, numeric, public, documented = _split(name)
    columns = np.column_stack([X[:, numeric], y])
    finite = np.where(np.isfinite(columns), columns, np.nan)
    true_width = np.nanmax(finite, axis=0) - np.nanmin(finite, axis=0)
    labels = [f"column {j}" for j in numeric] + ["the target"]
    rows = []
    for seed in range(n_fits):
        doc = DPGBRegressor(epsilon=epsilon, random_state=10_000 + seed, **public,
                            **documented).fit(X, y)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            private = DPGBRegressor(epsilon=epsilon, random_state=20_000 + seed,
                                    feature_bounds="private", target_bounds="private",
                                    **public).fit(X, y)
            seconds = time.perf_counter() - start
        unlocated = {m.group(1) for w in caught
                     if (m := re.search(r"bounds of (column \d+|the target) ", str(w.message)))}
        released = np.vstack([private.feature_bounds_[numeric], private.target_bounds_])
        ratio = (released[:, 1] - released[:, 0]) / np.where(true_width > 0, true_width, 1.0)
        varying = true_width > 0
        located = np.array([label not in unlocated for label in labels])
        rows.append({
            "dataset": name, "epsilon": epsilon, "seed": seed, "n_train": len(y),
            "rmse_documented": _rmse(doc, X_test, y_test),
            "rmse_private": _rmse(private, X_test, y_test),
            "max_range_ratio": float(ratio[varying].max()),
            "max_range_ratio_located": float(ratio[varying & located].max(initial=0.0)),
            "wide_unwarned": int(((ratio > 10) & varying & located).sum()),
            "unlocated": len(unlocated), "target_unlocated": int("the target" in unlocated),
            "planned_warning": int(any("this budget locates" in str(w.message)
                                       for w in caught)),
            "fit_s": seconds,
        })
    return rows


def summarise(rows):
    out = []
    for (name, epsilon) in dict.fromkeys((r["dataset"], r["epsilon"]) for r in rows):
        cell = [r for r in rows if (r["dataset"], r["epsilon"]) == (name, epsilon)]
        documented = np.median([r["rmse_documented"] for r in cell])
        private = np.array([r["rmse_private"] for r in cell])
        out.append({
            "dataset": name, "epsilon": epsilon, "fits": len(cell), "n_train": cell[0]["n_train"],
            "rmse_documented_median": documented,
            "rmse_ratio_median": float(np.median(private) / documented),
            "rmse_ratio_worst": float(private.max() / documented),
            "max_range_ratio": max(r["max_range_ratio"] for r in cell),
            "max_range_ratio_located": max(r["max_range_ratio_located"] for r in cell),
            "fits_wider_than_10x": sum(r["max_range_ratio"] > 10 for r in cell),
            "wide_unwarned_columns": sum(r["wide_unwarned"] for r in cell),
            "fits_warning_unlocated": sum(r["unlocated"] > 0 for r in cell),
            "fits_target_unlocated": sum(r["target_unlocated"] for r in cell),
            "fits_planned_warning": sum(r["planned_warning"] for r in cell),
        })
    return out


def main():
    if "--regression" in sys.argv:
        n_fits = int(sys.argv[sys.argv.index("--fits") + 1]) if "--fits" in sys.argv else 200
        _harness.warm_up()
        rows = []
        for name in REGRESSION:
            for epsilon, n in ((1.0, n_fits), (0.1, max(n_fits // 4, 1))):
                rows += regression_fits(name, epsilon, n)
                print(summarise([r for r in rows if r["dataset"] == name
                                 and r["epsilon"] == epsilon])[0], flush=True)
        _harness.write_results("private_bounds_regression", rows)
        _harness.write_results("private_bounds_regression_summary", summarise(rows))
        return
    args, _, table = _harness.run_public(__doc__, cells, ["bounds", "epsilon"])
    _harness.print_table(table)
    _harness.write_results(_harness.result_name("private_bounds", args), table)


if __name__ == "__main__":
    main()
