"""dpboost next to its peers at the same epsilon, on the same splits (issue 3, experiment 5).

Peers: InterpretML's DPExplainableBoostingClassifier / Regressor (DP-EBM, package interpret-core,
Nori et al. 2021; its defaults: 300 rounds, GDP composition, delta = 1e-5 — dpboost is pure DP with
delta = 0) given the same feature and target bounds; scikit-learn's HistGradientBoosting with its
defaults as the non-private ceiling. dpboost: the DPBoost setting of the paper (50 trees, one
ensemble, depth 6), and its ``recommended()`` preset of DP-XGB building blocks at delta = 1e-5.
A peer that is not installed is skipped with a message (``pip install -e ".[bench]"`` installs
them). Writes results/peers.csv.

Run: ``python benchmarks/bench_peers.py [--quick]``. ``--quick``: adult, abalone and california,
epsilon 1/4, one fold, at most 20,000 training rows.
"""

import math
import time
import warnings

import _loaders
import _paper
from _common import paper_parser, print_table, result_name, write_results
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

try:
    from interpret.privacy import (
        DPExplainableBoostingClassifier,
        DPExplainableBoostingRegressor,
    )
except ImportError:  # an optional peer
    DPExplainableBoostingClassifier = DPExplainableBoostingRegressor = None


def _dp_ebm(data, epsilon, seed):
    bounds = {j: (float(lo), float(hi)) for j, (lo, hi) in enumerate(data["bounds"])}
    common = {"epsilon": epsilon, "delta": 1e-5, "privacy_bounds": bounds, "random_state": seed,
              "feature_types": ["continuous"] * len(bounds), "n_jobs": 1}
    if data["task"] == "regression":
        low, high = data["target_bounds"]
        return DPExplainableBoostingRegressor(privacy_target_min=low, privacy_target_max=high,
                                              **common)
    return DPExplainableBoostingClassifier(**common)


def _hgb(data, seed):
    if data["task"] == "regression":
        return HistGradientBoostingRegressor(random_state=seed)
    return HistGradientBoostingClassifier(random_state=seed)


def run(names, epsilons, n_folds, max_rows):
    if DPExplainableBoostingClassifier is None:
        print("skipping DP-EBM: interpret-core is not installed (pip install -e '.[bench]')")
    rows = []
    for name in _loaders.available(names):
        data = _loaders.load(name)
        for fold, X, y, X_test, y_test in _loaders.splits(data, n_folds, max_train=max_rows,
                                                           max_test=max_rows):
            runs = [("HGB (non-private)", math.inf, lambda data=data, fold=fold: _hgb(data, fold))]
            for epsilon in epsilons:
                runs.append(("dpboost DPBoost", epsilon,
                             lambda e=epsilon, data=data, fold=fold:
                             _paper.make_model(data, "DPBoost", e, seed=fold)))
                runs.append(("dpboost DP-XGB blocks", epsilon,
                             lambda e=epsilon, data=data, fold=fold:
                             _paper.make_model(data, "DP-XGB", e, seed=fold)))
                if DPExplainableBoostingClassifier is not None:
                    runs.append(("DP-EBM", epsilon, lambda e=epsilon, data=data, fold=fold:
                                 _dp_ebm(data, e, fold)))
            for method, epsilon, make in runs:
                model = make()
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X, y)
                    seconds = time.perf_counter() - start
                    metrics = _paper.score(data, model, X_test, y_test)
                rows.append({"dataset": name, "method": method, "epsilon": epsilon,
                             "fold": fold, "metric": _paper.metric_name(data), **metrics,
                             "fit_s": seconds})
        print(f"{name} done", flush=True)
    return rows


def main():
    args = paper_parser(__doc__, _loaders.DATASETS).parse_args()
    quick = args.quick
    names = ("adult", "abalone", "california") if quick else tuple(_loaders.DATASETS)
    rows = run(args.datasets or names, (1.0, 4.0) if quick else (1.0, 2.0, 4.0, 10.0),
               1 if quick else 5, 20_000 if quick else None)
    name = result_name("peers", args)
    write_results(name, rows)
    print_table(rows)


if __name__ == "__main__":
    main()
