"""Multiclass on covtype_kaggle15k (7 balanced classes): accuracy at epsilon 1, 4, inf.

dpboost's DPBoost setting (pure DP, one-vs-rest) and its recommended preset
(``DPGBClassifier.recommended``, delta = 1e-5; the multinomial loss, ``loss="softmax"``), and the
preset with one-vs-rest logistic losses instead; either way 7 trees per round, composed
sequentially. Next to scikit-learn's
HistGradientBoosting (non-private). DP-EBM has no multiclass. Feature bounds are the
constants of ``_loaders.BOUNDS``. 5-fold CV. Writes results/multiclass.csv.

Run: ``python benchmarks/bench_multiclass.py [--quick]`` (``--quick``: one fold, written to
results/multiclass_quick.csv).
"""

import math

import _harness
import _loaders
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import StratifiedKFold

from dpboost import DPGBClassifier

CLASSES = list(range(1, 8))
METHODS = {
    "DPBoost setting": lambda e, s, b: DPGBClassifier.dpboost_paper(
        epsilon=e, feature_bounds=b, classes=CLASSES, random_state=s),
    "recommended preset": lambda e, s, b: DPGBClassifier(
        epsilon=e, feature_bounds=b, classes=CLASSES, random_state=s),
    "recommended preset, one-vs-rest logistic": lambda e, s, b: DPGBClassifier(
        epsilon=e, loss="logistic", feature_bounds=b, classes=CLASSES, random_state=s),
    "HGB (non-private)": lambda e, s, b: HistGradientBoostingClassifier(random_state=s),
}


def load(name):
    return _loaders.load(name, multiclass=True)


def splits(data, n_folds):
    """The first ``n_folds`` of a stratified, shuffled 5-fold CV."""
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(data["X"], data["y"])
    for fold, (train, test) in zip(range(n_folds), folds):
        yield fold, data["X"][train], data["y"][train], data["X"][test], data["y"][test]


def cells(data, fold):
    """Every method at epsilon 1, 4 and inf (HGB once), seeded by the fold."""
    return [({"method": name, "epsilon": epsilon}, make(epsilon, fold.fold, data["bounds"]))
            for name, make in METHODS.items()
            for epsilon in ([math.inf] if name.startswith("HGB") else [1.0, 4.0, math.inf])]


def accuracy(data, model, fold):
    return {"accuracy": float(np.mean(model.predict(fold.X_test) == fold.y_test))}


def main():
    args = _harness.parser(__doc__).parse_args()
    rows = _harness.run_grid(["covtype15k"], cells, 1 if args.quick else 5, load=load,
                             splits=splits, describe=accuracy)
    _harness.write_results(_harness.result_name("multiclass", args), rows)
    _harness.print_table(_harness.group_stats(rows, ["method", "epsilon"], "accuracy"))


if __name__ == "__main__":
    main()
