"""The default estimator against the bar set for it, as a new user gets it.

Adult (official split) read with ``pd.read_csv`` and the public schema of ``dpboost.datasets``;
``DPGBClassifier(epsilon=...)`` with nothing else set, secure noise (``random_state=None``,
OpenDP's samplers), 5 fits per epsilon; DPBoost's setting (``dpboost_paper``) beside it. The bar:
at epsilon 1, ROC AUC >= 0.89 and test error <= 0.16; at epsilon 0.5, below the majority class's
error.

Run: ``python benchmarks/bench_safe_defaults.py [--quick]``; writes results/safe_defaults.csv (one
row per setting x epsilon: mean and std over the fits). ``--quick``: 2 fits per cell.
"""

import _harness
import _loaders
import numpy as np

from dpboost import DPGBClassifier

SETTINGS = {"default": DPGBClassifier, "dpboost_paper": DPGBClassifier.dpboost_paper}


def cells(data, fold):
    """Both settings at every epsilon, with the public schema's parameters only."""
    return [({"setting": name, "epsilon": epsilon}, make(epsilon=epsilon, **data["params"]))
            for name, make in SETTINGS.items() for epsilon in (0.5, 1.0, 2.0)]


def main():
    args, _, table = _harness.run_public(__doc__, cells, ["setting", "epsilon"])
    y_test = _loaders.load_public("adult")["y_test"]
    majority = float(min(np.mean(y_test), 1 - np.mean(y_test)))
    table = [{**t, "majority_error": majority} for t in table]
    _harness.print_table(table)
    _harness.write_results(_harness.result_name("safe_defaults", args), table)


if __name__ == "__main__":
    main()
