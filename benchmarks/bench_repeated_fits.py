"""Repeated fits of one setting: a grid search's folds, cross-validation, seeds.

A fit plans its budget from public inputs (``_boosting.plan_fit``) and reports
``privacy_spent_``, the composition of the plans its private row count chose among
(``_accountant.choices_epsilon``). Both are memoised within a process: the second fit of a
setting reuses the first one's plans and composition. This script times fits of the default
classifier as shipped against the same fits with both memos bypassed ("replanned": every fit
plans and composes afresh, as each fit did before the memos), interleaved by the harness's
timer (``best_of``: every repeat runs each mode once, in turn).

Cells: ``make_classification`` with 14 features at 2,000 and 30,000 rows (epsilon 1, public
bounds and classes, secure noise, 2 threads; a batch of 10 fits of seeds 0-9 after a warm-up
fit of the setting), and ``GridSearchCV`` over epsilon 0.5 / 1 / 2 x ``max_depth`` 3 / 6 with
5 folds on 3,000 rows (``n_jobs=1``: 30 fits in one process; each search starts with empty
memos, so each of its six settings is planned once). Seconds per fit: the best of
``--repeats`` batches over the batch's fits. Results: results/repeated_fits.csv and the machine
facts beside it. Run: ``python benchmarks/bench_repeated_fits.py [--quick]`` (about 3 minutes
on 2 cores; ``--quick``: 2,000 rows and the grid, one repeat).
"""

import contextlib
import warnings
from unittest import mock

import _harness
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

import dpboost._accountant as accountant_module
import dpboost._boosting as boosting_module
import dpboost._estimators as estimators_module
from dpboost import DPGBClassifier
from dpboost._accountant import Alternatives, compose_fits

#: ``plan_fit``'s memo (the replanned mode patches the module's name with the bare function).
MEMOISED_PLAN = boosting_module._fresh_plan

#: The estimator's public inputs in every cell.
PUBLIC = {"feature_bounds": (-8.0, 8.0), "classes": [0, 1], "n_jobs": 2}


def _composed(planned, delta, scale):
    """``choices_epsilon`` without its memo."""
    return compose_fits([(Alternatives(planned), None)], delta, scale=scale)


@contextlib.contextmanager
def _replanned():
    """Both memos bypassed: every fit plans and composes its choices afresh."""
    with (mock.patch.object(boosting_module, "_fresh_plan", MEMOISED_PLAN.__wrapped__),
          mock.patch.object(estimators_module, "choices_epsilon", _composed)):
        yield


MODES = {"as shipped": contextlib.nullcontext, "replanned": _replanned}


def _fits(X, y, seeds):
    def call():
        for seed in seeds:
            DPGBClassifier(random_state=seed, **PUBLIC).fit(X, y)
    return call


def _grid(X, y):
    def call():
        # A new search: the settings' plans are made once in it, not recalled from the last.
        MEMOISED_PLAN.cache_clear()
        accountant_module._CHOICES_EPSILON.clear()
        GridSearchCV(DPGBClassifier(**PUBLIC), {"epsilon": [0.5, 1.0, 2.0], "max_depth": [3, 6]},
                     cv=5, n_jobs=1).fit(X, y)
    return call


def _in_mode(mode, call):
    def run():
        with MODES[mode]():
            call()
    return run


def main():
    args = _harness.parser(__doc__).parse_args()
    repeats = 1 if args.quick else 3
    cells = [("fits", n, 10, _fits) for n in ((2000,) if args.quick else (2000, 30_000))]
    cells.append(("grid search", 3000, 30, None))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _harness.warm_up()
        for kind, n, n_fits, make in cells:
            X, y = make_classification(n_samples=n, n_features=14, random_state=0)
            call = _fits(X, y, range(n_fits)) if make is not None else _grid(X, y)
            timing = _harness.best_of(
                {mode: _in_mode(mode, call) for mode in MODES}, repeats=repeats,
                warmup=_fits(X, y, [100]) if make is not None else _grid(X[:600], y[:600]))
            for mode, seconds in timing.seconds.items():
                rows.append({"cell": kind, "n_samples": n, "fits": n_fits, "mode": mode,
                             "seconds_per_fit": seconds / n_fits, "batch_s": seconds})
                print(f"{kind} {n}: {mode} {seconds / n_fits:.3f} s a fit", flush=True)
    _harness.write_results(_harness.result_name("repeated_fits", args), rows)


if __name__ == "__main__":
    main()
