"""What private feature bounds cost (privacy across the workflow): the default estimator on Adult
with the documented public bounds against ``feature_bounds="private"`` at the same total epsilon.

Adult (official split) read with ``pd.read_csv``; the category lists are the public schema's in
both settings, only the six numeric columns' bounds differ: the schema's documented bounds, or
released by the fit (10 % of epsilon, docs/privacy.md, Private feature bounds). Secure noise, 5
fits per cell.

Run: ``python benchmarks/bench_private_bounds.py [--quick]``; writes results/private_bounds.csv
(mean and std per cell). ``--quick``: 2 fits per cell.
"""

import _harness

from dpboost import DPGBClassifier


def cells(data, fold):
    for epsilon in (0.5, 1.0, 2.0):
        yield ({"bounds": "documented", "epsilon": epsilon},
               DPGBClassifier(epsilon=epsilon, **data["params"]))
        yield ({"bounds": "private", "epsilon": epsilon},
               DPGBClassifier(epsilon=epsilon, **{**data["params"], "feature_bounds": "private"}))


def main():
    args, _, table = _harness.run_public(__doc__, cells, ["bounds", "epsilon"])
    _harness.print_table(table)
    _harness.write_results(_harness.result_name("private_bounds", args), table)


if __name__ == "__main__":
    main()
