"""dpboost next to its peers at the same epsilon, on the same splits (the DPBoost paper
reproduction's comparison with peers).

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

import _harness
import _loaders
import _paper
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


def cells(epsilons):
    """HGB once, then dpboost (two settings) and DP-EBM when installed at every epsilon."""
    def at_fold(data, fold):
        seed = fold.fold
        yield {"method": "HGB (non-private)", "epsilon": math.inf}, _hgb(data, seed)
        for epsilon in epsilons:
            yield ({"method": "dpboost DPBoost", "epsilon": epsilon},
                   _paper.make_model(data, "DPBoost", epsilon, seed=seed))
            yield ({"method": "dpboost DP-XGB blocks", "epsilon": epsilon},
                   _paper.make_model(data, "DP-XGB", epsilon, seed=seed))
            if DPExplainableBoostingClassifier is not None:
                yield {"method": "DP-EBM", "epsilon": epsilon}, _dp_ebm(data, epsilon, seed)
    return at_fold


def main():
    args = _harness.parser(__doc__, _loaders.DATASETS).parse_args()
    quick = args.quick
    names = ("adult", "abalone", "california") if quick else tuple(_loaders.DATASETS)
    if DPExplainableBoostingClassifier is None:
        print("skipping DP-EBM: interpret-core is not installed (pip install -e '.[bench]')")
    rows = _harness.run_grid(args.datasets or names,
                             cells((1.0, 4.0) if quick else (1.0, 2.0, 4.0, 10.0)),
                             1 if quick else 5, max_rows=20_000 if quick else None)
    _harness.write_results(_harness.result_name("peers", args), rows)
    _harness.print_table(rows)


if __name__ == "__main__":
    main()
