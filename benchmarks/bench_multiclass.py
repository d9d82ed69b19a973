"""Multiclass on covtype_kaggle15k (7 balanced classes): accuracy at epsilon 1, 4, inf.

dpboost's DPBoost setting (pure DP, one-vs-rest) and its recommended preset
(``DPGBClassifier.recommended``, delta = 1e-5; the multinomial loss, ``loss="softmax"``), and the
preset with one-vs-rest logistic losses instead; either way 7 trees per round, composed
sequentially. Next to scikit-learn's
HistGradientBoosting (non-private). DP-EBM has no multiclass. Feature bounds are the
constants of ``_loaders.BOUNDS``. 5-fold CV. Writes results/multiclass.csv.

Run: ``python benchmarks/bench_multiclass.py [--quick]`` (``--quick``: one fold).
"""

import argparse
import math
import time
import warnings

import _loaders
import numpy as np
import pandas as pd
from _common import SHARED, print_table, write_results
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import StratifiedKFold

from dpboost import DPGBClassifier


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one fold instead of five")
    n_folds = 1 if parser.parse_args().quick else 5
    frame = pd.read_csv(SHARED / "covtype_kaggle15k.csv.gz")
    X = frame.drop(columns="target").to_numpy(dtype=np.float64)
    y = frame["target"].to_numpy()
    bounds = np.array(list(_loaders.BOUNDS["covtype15k"].values()))
    classes = list(range(1, 8))
    methods = {
        "DPBoost setting": lambda e, s: DPGBClassifier.dpboost_paper(
            epsilon=e, feature_bounds=bounds, classes=classes, random_state=s),
        "recommended preset": lambda e, s: DPGBClassifier(
            epsilon=e, feature_bounds=bounds, classes=classes, random_state=s),
        "recommended preset, one-vs-rest logistic": lambda e, s: DPGBClassifier(
            epsilon=e, loss="logistic", feature_bounds=bounds, classes=classes, random_state=s),
        "HGB (non-private)": lambda e, s: HistGradientBoostingClassifier(random_state=s),
    }
    rows = []
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(X, y)
    for fold, (train, test) in zip(range(n_folds), folds):
        for name, make in methods.items():
            for epsilon in ([math.inf] if name.startswith("HGB") else [1.0, 4.0, math.inf]):
                model = make(epsilon, fold)
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X[train], y[train])
                    accuracy = float(np.mean(model.predict(X[test]) == y[test]))
                rows.append({"method": name, "epsilon": epsilon, "fold": fold,
                             "accuracy": accuracy, "fit_s": time.perf_counter() - start})
    write_results("multiclass", rows)
    summary = {}
    for r in rows:
        summary.setdefault((r["method"], r["epsilon"]), []).append(r["accuracy"])
    print_table([{"method": m, "epsilon": e, "accuracy": float(np.mean(v)),
                  "std": float(np.std(v))} for (m, e), v in summary.items()])


if __name__ == "__main__":
    main()
