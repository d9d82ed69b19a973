"""The regressor's preset against DP-EBM on every shared regression dataset, and where its error
comes from.

Default run: abalone, california, house_16H, pol and nycflights (the regression sets of
../shared/datasets) on the folds of ``_loaders.splits`` (5-fold CV, seed 0; nycflights: its first
2 folds, 30,000 training and 10,000 test rows drawn with seed 0, to stay within ten minutes) at
epsilon 0.1, 1 and 4, delta 1e-5: ``DPGBRegressor`` as shipped, the previous default
(:data:`PREVIOUS_DEFAULT`), DP-EBM (InterpretML's ``DPExplainableBoostingRegressor``, its
defaults, the same bounds and delta) and scikit-learn's HGB (non-private ceiling); RMSE in the
target's units. Writes results/regression.csv.

``--decompose``: the error decomposition and the preset's tuning data. Every number comes from
the *tuning split*: an inner 75 / 25 split (seed 0) of the training part of fold 0 (at most
20,000 / 5,000 rows); fold 0's test rows are never read. Variants of the previous default isolate
one cause each: leaf noise (the same fit with exact leaf releases, and an exact Hessian sketch, through the
``bench_ablation.ExactLeaves`` noise source, ``min_child_weight=0``, which otherwise zeroes the
exact leaves below 200 / epsilon records), gradient filtering (GDF off: gradients clipped to g*
instead), clipping (g* = 4 with exact leaves: no residual reaches it), target scaling (the
targets' 1 % and 99 % quantiles as bounds: a non-private diagnostic) and tree shape (one feature
per tree); then the new default with and without noise, and DP-EBM on the same split. 2 seeds.
Writes results/regression_decomposition.csv.

Run: ``python benchmarks/bench_regression.py [--decompose] [--quick]`` (``--quick``: 1 fold, or 1
seed).
"""

import math

import _harness
import _loaders
import numpy as np
from bench_ablation import ExactLeaves
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split

from dpboost import DPGBRegressor

try:
    from interpret.privacy import DPExplainableBoostingRegressor
except ImportError:  # an optional peer
    DPExplainableBoostingRegressor = None

DATASETS = ("abalone", "california", "house_16H", "pol", "nycflights")
EPSILONS = (0.1, 1.0, 4.0)
DELTA = 1e-5
#: nycflights (327,346 rows): folds and rows kept so that the run stays within ten minutes.
LARGE = {"nycflights": {"n_folds": 2, "max_train": 30_000, "max_test": 10_000}}
#: The regressor's default before its additive preset (the one this benchmark chose against).
PREVIOUS_DEFAULT = {"n_estimators": 100, "max_depth": 6, "gradient_filtering": True,
                    "interaction_cst": None, "split_selection": "random"}


def dp_ebm(data, epsilon, seed):
    """DP-EBM with its defaults, the dataset's bounds and delta :data:`DELTA`."""
    low, high = data["target_bounds"]
    return DPExplainableBoostingRegressor(
        epsilon=epsilon, delta=DELTA, random_state=seed, n_jobs=1,
        privacy_bounds={j: (float(lo), float(hi)) for j, (lo, hi) in enumerate(data["bounds"])},
        feature_types=["continuous"] * len(data["bounds"]),
        privacy_target_min=low, privacy_target_max=high)


def dpboost(data, epsilon, seed, **params):
    return DPGBRegressor(epsilon=epsilon, delta=DELTA, feature_bounds=data["bounds"],
                         target_bounds=data["target_bounds"], random_state=seed, **params)


def cells(data, fold):
    seed = fold.fold
    yield {"method": "HGB (non-private)", "epsilon": math.inf}, \
        HistGradientBoostingRegressor(random_state=seed)
    for epsilon in EPSILONS:
        yield {"method": "dpboost default", "epsilon": epsilon}, dpboost(data, epsilon, seed)
        yield ({"method": "previous default", "epsilon": epsilon},
               dpboost(data, epsilon, seed, **PREVIOUS_DEFAULT))
        if DPExplainableBoostingRegressor is not None:
            yield {"method": "DP-EBM", "epsilon": epsilon}, dp_ebm(data, epsilon, seed)


def benchmark(quick):
    rows = []
    for name in _loaders.available(DATASETS):
        large = LARGE.get(name, {})
        n_folds = 1 if quick else large.get("n_folds", 5)

        def splits(data, n, large=large, **_):
            return _loaders.splits(data, n, max_train=large.get("max_train"),
                                   max_test=large.get("max_test"))

        rows += _harness.run_grid([name], cells, n_folds, splits=splits)
    return rows


# --- the decomposition on the tuning split -----------------------------------------------------

def tuning_split(data, max_train=20_000):
    """Inner 75 / 25 split (seed 0) of fold 0's training part, capped at ``max_train`` /
    ``max_train // 4`` rows (seed 0): the only data the preset was chosen on."""
    _, X, y, _, _ = next(_loaders.splits(data, 1, seed=0))
    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.25, random_state=0)
    rng = np.random.default_rng(0)
    if len(y_fit) > max_train:
        keep = rng.choice(len(y_fit), max_train, replace=False)
        X_fit, y_fit = X_fit[keep], y_fit[keep]
        keep = rng.choice(len(y_val), max_train // 4, replace=False)
        X_val, y_val = X_val[keep], y_val[keep]
    return X_fit, y_fit, X_val, y_val


def variants(y_fit):
    """name -> (parameters, exact leaves?): each isolates one cause of the previous default's
    error, then the new default with and without noise."""
    exact = {"min_child_weight": 0.0}
    no_gdf = {**PREVIOUS_DEFAULT, "gradient_filtering": False}
    tight = tuple(float(q) for q in np.quantile(y_fit, [0.01, 0.99]))
    return {
        "previous default": (PREVIOUS_DEFAULT, False),
        "previous, exact leaves": ({**PREVIOUS_DEFAULT, **exact}, True),
        "previous, no GDF": (no_gdf, False),
        "previous, no GDF, exact leaves": ({**no_gdf, **exact}, True),
        "previous, no GDF, g*=4, exact leaves": ({**no_gdf, **exact, "gradient_bound": 4.0}, True),
        "previous, no GDF, tight target bounds": ({**no_gdf, "target_bounds": tight}, False),
        "previous, no GDF, one feature per tree": (
            {**no_gdf, "interaction_cst": "no_interactions"}, False),
        "default": ({}, False),
        "default, exact leaves": (exact, True),
    }


def decompose(quick):
    rows = []
    seeds = 1 if quick else 2
    for name in _loaders.available(DATASETS):
        data = _loaders.load(name)
        X_fit, y_fit, X_val, y_val = tuning_split(data)
        fold = _harness.Fold(0, X_fit, y_fit, X_val, y_val)
        for epsilon in EPSILONS:
            for variant, (params, exact) in variants(y_fit).items():
                for seed in range(seeds):
                    state = ExactLeaves(np.random.default_rng(seed)) if exact else seed
                    params = {"target_bounds": data["target_bounds"], **params}
                    model = DPGBRegressor(epsilon=epsilon, delta=DELTA,
                                          feature_bounds=data["bounds"], random_state=state,
                                          **params)
                    seconds = _harness.timed_fit(model, X_fit, y_fit)
                    rows.append({"dataset": name, "variant": variant, "epsilon": epsilon,
                                 "seed": seed, **_harness.scores(data, model, fold),
                                 "fit_s": seconds})
            if DPExplainableBoostingRegressor is not None:
                model = dp_ebm(data, epsilon, 0)
                seconds = _harness.timed_fit(model, X_fit, y_fit)
                rows.append({"dataset": name, "variant": "DP-EBM", "epsilon": epsilon,
                             "seed": 0, **_harness.scores(data, model, fold), "fit_s": seconds})
        print(f"{name} done", flush=True)
    return rows


def main():
    parser = _harness.parser(__doc__)
    parser.add_argument("--decompose", action="store_true",
                        help="the error decomposition on the tuning split")
    args = parser.parse_args()
    if DPExplainableBoostingRegressor is None:
        print("skipping DP-EBM: interpret-core is not installed (pip install -e '.[bench]')")
    if args.decompose:
        rows = decompose(args.quick)
        name = _harness.result_name("regression_decomposition", args)
        keys = ["dataset", "variant", "epsilon"]
    else:
        rows = benchmark(args.quick)
        name = _harness.result_name("regression", args)
        keys = ["dataset", "method", "epsilon"]
    _harness.write_results(name, rows)
    _harness.print_table(_harness.summarise(rows, keys, {"rmse": "rmse"}))


if __name__ == "__main__":
    main()
