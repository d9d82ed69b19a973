"""What private category lists cost (privacy across the workflow): the default estimator on Adult
with the documented category lists of ``dpboost.datasets`` against ``categories="private"`` at the
same total epsilon (and with every public input released: ``feature_bounds="private"`` too).

Adult (official split) read with ``pd.read_csv``; the numeric columns' bounds are the public
schema's except in the last setting. ``categories="private"`` releases the 8 lists by
thresholded Gaussian counts (10 % of epsilon for the noise, half of delta for the threshold;
docs/privacy.md, Private category lists); values below the threshold join the missing bin.
Secure noise, 5 fits per cell.

Run: ``python benchmarks/bench_private_categories.py [--quick]``; writes
results/private_categories.csv (mean and std per cell). ``--quick``: 2 fits per cell.
"""

import _harness

from dpboost import DPGBClassifier

SETTINGS = {"documented": {}, "private": {"categories": "private"},
            "private_bounds_and_lists": {"categories": "private", "feature_bounds": "private"}}


def cells(data, fold):
    for epsilon in (0.5, 1.0, 2.0):
        for name, change in SETTINGS.items():
            yield ({"lists": name, "epsilon": epsilon},
                   DPGBClassifier(epsilon=epsilon, **{**data["params"], **change}))


def main():
    args, _, table = _harness.run_public(__doc__, cells, ["lists", "epsilon"])
    _harness.print_table(table)
    _harness.write_results(_harness.result_name("private_categories", args), table)


if __name__ == "__main__":
    main()
