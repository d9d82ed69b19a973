"""What a Renyi filter costs: how many default classifier fits of epsilon 1 a
``PrivacyAccountant(epsilon=8, delta=1e-5)`` admits before it refuses one, with ``order=None``
(the fits composed as a sequence fixed in advance: the best Renyi order or the PLD) and as a
filter at one order (``"auto"`` and 6 / 8 / 12), with the row count the classifier releases
by default (its three plans reserved as alternatives) and without one (``n_samples_hint=None``).

Each fit: 1,000 rows of 5 standard-normal features, a label from the first, public bounds
(-4, 4) and classes, ``random_state=0`` (seeded noise: the spend does not depend on it). The
fits stop at the first ``BudgetExceededError`` (raised before any record is read).

Run: ``python benchmarks/bench_accountant_filter.py [--quick]`` (about 1 min; ``--quick``: the
orders None and "auto" only, results/accountant_filter_quick.csv); results in
results/accountant_filter.csv (``order`` asked, ``filter_order`` resolved, ``row_count``,
``fits`` admitted, ``spent``).
"""

import warnings

import _harness
import numpy as np

from dpboost import BudgetExceededError, DPGBClassifier, PrivacyAccountant

TOTAL, DELTA = 8.0, 1e-5
ORDERS = (None, "auto", 6, 8, 12)


def admitted(order, row_count, X, y):
    """Fits of epsilon 1 an accountant of :data:`TOTAL` with ``order`` takes, and its spend."""
    accountant = PrivacyAccountant(TOTAL, DELTA, order=order)
    fits = 0
    while True:
        try:
            DPGBClassifier(epsilon=1.0, feature_bounds=(-4.0, 4.0), classes=[0, 1],
                           n_samples_hint=row_count, accountant=accountant,
                           random_state=0).fit(X, y)
        except BudgetExceededError:
            return accountant, fits
        fits += 1


def main():
    args = _harness.parser(__doc__).parse_args()
    warnings.simplefilter("ignore")
    X = np.random.default_rng(0).normal(size=(1000, 5))
    y = (X[:, 0] > 0).astype(int)
    rows = []
    for row_count in ("private", None):
        for order in ORDERS[:2] if args.quick else ORDERS:
            accountant, fits = admitted(order, row_count, X, y)
            rows.append({"order": str(order), "filter_order": accountant.order,
                         "row_count": str(row_count), "fits": fits,
                         "spent": round(accountant.spent(), 4)})
            print(rows[-1], flush=True)
    _harness.write_results(_harness.result_name("accountant_filter", args), rows)


if __name__ == "__main__":
    main()
