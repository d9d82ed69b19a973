"""The privacy-utility frontier: the default estimator under S-BDT's protocol, beside
S-BDT's published numbers, DP-EBM on the same folds and the non-private ceiling.

Protocol (Peinemann et al., S-BDT, arXiv 2309.12041): Adult's ``adult.data`` (our
``adult_train``) with every row that has a missing value dropped (30,162 rows), 5-fold
cross-validation, delta = 5e-8, ROC AUC; Abalone (4,177 rows) likewise with RMSE in rings. dpboost
is run with its defaults and nothing else but the public inputs (bounds, classes or target bounds),
at 5 folds x 4 seeds (``--quick``: 5 folds x 1 seed); the fold split changes with the seed. S-BDT's
numbers are the best of a grid tuned on the test folds (their Table 4 and the rerun results of
github.com/kirschte/sbdt); dpboost's defaults were chosen on ``adult.test`` (bench_frontier's
exploration, docs in benchmarks/README.md), never on these folds. DP-EBM (InterpretML's
``DPExplainableBoostingClassifier``/``Regressor``, its defaults, the same bounds and delta) runs on
the 5 folds of the first seed when installed; HGB (scikit-learn's defaults) is the non-private
ceiling, and on Abalone the training mean the floor of any constant. "private mean alone" is the
DP constant: the default regressor with the public hint ``n_samples_hint=1``, which puts every
epsilon in its constant regime (the whole budget on the mean target). "previous default" is the classifier's default before its S-BDT-like preset (100
trees, learning rate 0.3, lambda 1, random splits among the Hessian sketch's candidates,
min_child_weight "auto", no subsampling, interactions allowed, gradients bounded by 1 with GDF, no
row count); on Abalone it is the regressor's previous default
(``bench_regression.PREVIOUS_DEFAULT``: 100 trees of depth 6, interactions allowed, GDF), whose
preset was chosen on an inner split of fold 0's training part of ``bench_regression`` (5-fold CV,
seed 0), never on these folds' scores.

Run: ``python benchmarks/bench_frontier.py [--quick] [--seeds N] [--datasets adult abalone]``; writes
results/frontier.csv and results/frontier.png. With ``--datasets`` only those datasets are rerun
and their rows replace theirs in results/frontier.csv (the others are kept).
"""

import math
import time
import warnings

import _harness
import _loaders
import numpy as np
from bench_regression import PREVIOUS_DEFAULT as PREVIOUS_REGRESSOR
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import mean_squared_error, roc_auc_score
from sklearn.model_selection import KFold

from dpboost import DPGBClassifier, DPGBRegressor

try:
    from interpret.privacy import DPExplainableBoostingClassifier, DPExplainableBoostingRegressor
except ImportError:  # an optional peer
    DPExplainableBoostingClassifier = DPExplainableBoostingRegressor = None

EPSILONS = (0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1.0)
DELTA = 5e-8
#: S-BDT's published numbers under this protocol (arXiv 2309.12041).
SBDT = {"adult": {0.01: 0.787, 0.02: 0.831, 0.03: 0.849, 0.1: 0.876, 0.5: 0.893},
        "abalone": {0.1: 2.754, 0.5: 2.582}}
PREVIOUS_DEFAULT = {"n_estimators": 100, "learning_rate": 0.3, "l2_regularization": 1.0,
                    "split_candidates": "hessian", "min_child_weight": "auto", "subsample": 1.0,
                    "interaction_cst": None, "max_depth": 6, "gradient_bound": 1.0,
                    "gradient_filtering": True, "split_selection": "random",
                    "n_samples_hint": None}


def _data(name):
    data = _loaders.load(name)
    X, y = data["X"], data["y"]
    if name == "adult":
        complete = ~np.isnan(X).any(axis=1)
        X, y = X[complete], y[complete]
    return {**data, "X": X, "y": y}


def _models(data, epsilon, seed, first_seed):
    bounds, task = data["bounds"], data["task"]
    if task == "regression":
        common = {"epsilon": epsilon, "delta": DELTA, "feature_bounds": bounds,
                  "target_bounds": data["target_bounds"], "random_state": seed}
        yield "dpboost default", DPGBRegressor(**common)
        yield "previous default", DPGBRegressor(**common, **PREVIOUS_REGRESSOR)
        # The DP constant: a public hint of 1 row puts every epsilon in the constant regime,
        # the whole budget on the mean target (no row count, no tree).
        yield "private mean alone", DPGBRegressor(**common, n_samples_hint=1)
    else:
        common = {"epsilon": epsilon, "delta": DELTA, "feature_bounds": bounds,
                  "classes": [0, 1], "random_state": seed}
        yield "dpboost default", DPGBClassifier(**common)
        yield "previous default", DPGBClassifier(**common, **PREVIOUS_DEFAULT)
    if first_seed and DPExplainableBoostingClassifier is not None:
        ebm = {"epsilon": epsilon, "delta": DELTA, "random_state": seed, "n_jobs": 1,
               "privacy_bounds": {j: (float(lo), float(hi)) for j, (lo, hi) in enumerate(bounds)},
               "feature_types": ["continuous"] * len(bounds)}
        if task == "regression":
            low, high = data["target_bounds"]
            yield "DP-EBM", DPExplainableBoostingRegressor(
                privacy_target_min=low, privacy_target_max=high, **ebm)
        else:
            yield "DP-EBM", DPExplainableBoostingClassifier(**ebm)


def _score(task, model, X, y):
    if task == "regression":
        return "rmse", math.sqrt(mean_squared_error(y, model.predict(X)))
    return "auc", roc_auc_score(y, model.predict_proba(X)[:, 1])


def run(name, seeds):
    data = _data(name)
    X, y, task = data["X"], data["y"], data["task"]
    rows = []
    for seed in range(seeds):
        for fold, (train, test) in enumerate(KFold(5, shuffle=True, random_state=seed).split(X)):
            ceiling = (HistGradientBoostingRegressor if task == "regression"
                       else HistGradientBoostingClassifier)(random_state=seed)
            cells = [("HGB (non-private)", math.inf, ceiling)]
            if task == "regression":
                cells.append(("training mean (non-private)", math.inf, DummyRegressor()))
            cells += [(method, epsilon, model) for epsilon in EPSILONS
                      for method, model in _models(data, epsilon, 100 * seed + fold, seed == 0)]
            for method, epsilon, model in cells:
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X[train], y[train])
                metric, value = _score(task, model, X[test], y[test])
                rows.append({"dataset": name, "n_samples": X.shape[0], "method": method,
                             "epsilon": epsilon, "seed": seed, "fold": fold, metric: value,
                             "fit_s": time.perf_counter() - start})
        print(f"{name}: seed {seed} done", flush=True)
    return rows


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.2))
    for ax, name in zip(np.atleast_1d(axes), names):
        mine = [r for r in rows if r["dataset"] == name]
        metric = "rmse" if name == "abalone" else "auc"
        for method in dict.fromkeys(r["method"] for r in mine):
            stats = _harness.group_stats([r for r in mine if r["method"] == method],
                                         ["epsilon"], metric)
            eps = [float(s["epsilon"]) for s in stats]
            mean = np.array([s["mean"] for s in stats])
            std = np.array([s["std"] for s in stats])
            if math.isinf(eps[0]):
                ax.axhline(mean[0], color="grey", ls=":", label=method)
                continue
            ax.errorbar(eps, mean, yerr=std, marker="o", capsize=3, label=method)
        sbdt = SBDT.get(name, {})
        ax.plot(list(sbdt), list(sbdt.values()), "k*", ms=11, label="S-BDT (published)")
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (delta = 5e-8)")
        ax.set_ylabel("ROC AUC" if metric == "auc" else "RMSE (rings)")
        ax.set_title(f"{name}, 5-fold CV")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = _harness.parser(__doc__, {"adult": None, "abalone": None})
    parser.add_argument("--seeds", type=int, default=4,
                        help="fold splits (5 folds each); DP-EBM runs on the first")
    args = parser.parse_args()
    seeds = 1 if args.quick else args.seeds
    names = args.datasets or ("adult", "abalone")
    # a rerun of some datasets keeps the other datasets' rows of the same results, and their
    # DP-EBM rows where InterpretML is not installed (the peer and its folds unchanged)
    name = "frontier_quick" if args.quick else "frontier"
    rows = [r for r in _harness.read_results(name) if r["dataset"] not in names
            or (r["method"] == "DP-EBM" and DPExplainableBoostingClassifier is None)]
    for dataset in names:
        if _loaders.available([dataset]):
            rows += run(dataset, seeds)
        else:
            print(f"skipping {dataset}: not in ../shared/datasets")
    _harness.write_results(name, rows)
    plot(rows, _harness.RESULTS / f"{name}.png")
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        metric = "rmse" if dataset == "abalone" else "auc"
        _harness.print_table(_harness.summarise([r for r in rows if r["dataset"] == dataset],
                                                ["method", "epsilon"], {metric: metric}))


if __name__ == "__main__":
    main()
