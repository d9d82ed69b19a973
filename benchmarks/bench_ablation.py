"""DPBoost paper, Appendix B: GDF's filtered fraction (Table 3) and RMSE with and without GLC (Fig. 4).

DPBoost (one ensemble of 50 trees, depth 6) on every dataset: the fraction of each tree's records
removed by gradient-based data filtering (``diagnostics=True``: an exact statistic, not private, for
this study only), averaged over trees and folds. On the regression sets: RMSE of DPBoost, of
DPBoost without geometric leaf clipping, and without GDF (gradients clipped to [-1, 1] instead).

Where the error comes from (a diagnostic, not private): DPBoost with exact splits and with exact
leaves, everything else (plan, data partition, GDF, GLC, the other kind of release) unchanged. The
estimator's ``random_state`` is a noise source (:class:`ExactSplits`, :class:`ExactLeaves`) that
answers one kind of draw without noise: the exponential mechanism's by the argmax of the
utilities, the Laplace / Gaussian releases by their exact input. Such a draw takes no random
number, so the other releases get the same noise as with the plain seed. The ledger, and so
``privacy_spent_``, still records the planned epsilon of the releases made exact: the model is
not private, and its ledger does not say so: fine for a diagnostic. (Until this harness the script
patched the planner to epsilon = inf for one kind of release instead, and the ledger said inf; on
abalone and Adult, 2 folds, epsilon 1 and 10, both give identical predictions. They could differ in
a near tie of gains: with epsilon = inf the grower builds a sibling's histogram by subtraction, so
its gains differ in the last bits.)
Writes results/ablation.csv and results/ablation.png.

Run: ``python benchmarks/bench_ablation.py [--quick]``. ``--quick``: adult and three regression
sets, epsilon 1/4/10, two folds, at most 20,000 training rows.
"""

import warnings

import _harness
import _loaders
import _paper
import numpy as np

from dpboost import PrivacyLeakWarning
from dpboost._noise import NumpyNoise

VARIANTS = {"DPBoost": {}, "no GLC": {"leaf_clipping": False},
            "no GDF": {"gradient_filtering": False}}


class ExactSplits(NumpyNoise):
    """Seeded numpy noise, but the exponential mechanism returns the first maximiser (no draw)."""

    def exponential(self, utilities, scale, sensitivity):
        return np.argmax(utilities, axis=1)


class ExactLeaves(NumpyNoise):
    """Seeded numpy noise, but Laplace and Gaussian releases return their input (no draw): the
    leaves, and in other settings than DPBoost's the private sketches too."""

    def laplace(self, values, scale, sensitivity):
        return np.array(values, dtype=np.float64)

    def gaussian(self, values, scale, sensitivity):
        return np.array(values, dtype=np.float64)


EXACT = {"exact splits": ExactSplits, "exact leaves": ExactLeaves}


def cells(epsilons):
    """Every variant at every epsilon (no GLC / no GDF on the regression sets only)."""
    def at_fold(data, fold):
        variants = list(VARIANTS if data["task"] == "regression" else ["DPBoost"]) + list(EXACT)
        for epsilon in epsilons:
            for variant in variants:
                params = dict(VARIANTS.get(variant, {}))
                if variant in EXACT:
                    params["random_state"] = EXACT[variant](np.random.default_rng(fold.fold))
                yield ({"variant": variant, "epsilon": epsilon},
                       _paper.make_model(data, "DPBoost", epsilon, seed=fold.fold,
                                         diagnostics=True, **params))
    return at_fold


def describe(data, model, fold):
    """The main metric as ``value``, and the mean GDF filtered fraction of the trees."""
    measured = _harness.scores(data, model, fold)
    return {**measured, "value": measured[measured["metric"]],
            "filtered_fraction": float(np.mean(model.filtered_fraction_))}


def main():
    args = _harness.parser(__doc__, _loaders.DATASETS).parse_args()
    quick = args.quick
    names = ("adult", "abalone", "california", "house_16H") if quick else tuple(_loaders.DATASETS)
    epsilons = (1.0, 4.0, 10.0) if quick else (1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
    rows = _harness.run_grid(args.datasets or names, cells(epsilons), 2 if quick else 5,
                             max_rows=20_000 if quick else None, describe=describe)
    name = _harness.result_name("ablation", args)
    _harness.write_results(name, rows)
    table = _harness.group_stats(rows, ["dataset", "variant", "epsilon", "metric"], "value")
    fractions = _harness.group_stats(rows, ["dataset", "variant", "epsilon"], "filtered_fraction")
    _harness.print_table([{**t, "filtered_fraction": f["mean"]}
                          for t, f in zip(table, fractions)])
    _harness.plot_panels([r for r in rows if r["metric"] == "rmse"],
                         _harness.RESULTS / f"{name}.png", y="value", hue="variant",
                         ylabel="RMSE")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # diagnostics=True, on purpose
        main()
