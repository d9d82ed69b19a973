"""Planning time of extreme public values: every case plans quickly or is refused before any
record is read.

A fit plans its budget from public values only (``_boosting.plan_fit`` ->
``_budget.plan_budget``), before it reads a record. Each case times ``fit`` up to that first
read: parameter validation, the "auto" policy, the plan (``plan_budget``'s memo cleared first)
and the reservation of the planned ledger; the record set's constructor is replaced by a stop,
so nothing after it runs (no kernel compiles, no noise is drawn). A case ends "planned" (at
the stop), "refused" (a ValueError before it, its message recorded) or "timeout" (still
planning after ``--limit`` seconds).

The cases, one public value changed at a time in three settings: the default classifier and
regressor (Renyi accounting, delta 1e-5) and DPBoost's setting (``dpboost_paper()``, pure DP),
each with public classes / target bounds and feature bounds on 10 records of 2 features:
epsilon, delta, subsample, n_estimators and max_depth over :data:`VALUES`; then values that
matter together (:data:`COMBINED_CASES`), the individual Renyi filter (:data:`FILTER_CASES`)
and private category lists (:data:`CATEGORY_CASES`, one categorical column).

Results: results/plan_time.csv (``estimator``, ``setting``, ``outcome``, ``seconds`` (wall),
``cpu_seconds`` (this process's: what a quiet machine would take, where others share it),
``epsilon_planned``, ``message``) and the machine facts beside it (the load average among
them). Run: ``python benchmarks/bench_plan_time.py [--quick] [--limit S]`` (about 20 s;
``--quick``: the first, a middle and the last value of each list,
results/plan_time_quick.csv).
"""

import math
import signal
import time
import warnings
from unittest import mock

import _harness
import numpy as np
import pandas as pd

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._boosting import plan_fit
from dpboost._budget import plan_budget

#: The public values swept, one parameter at a time.
VALUES = {
    "epsilon": [1e-6, 1e-3, 0.01, 0.1, 1.0, 10.0, 100.0, 1e6, 1e300, math.inf],
    "delta": [1e-300, 1e-12, 1e-5, 0.1, 0.5, 0.999999],
    "subsample": [1.0, 0.5, 0.3, 0.1, 1e-3, 1e-6, 1e-300, 5e-324],
    "n_estimators": [1, 200, 1000, 10_000, 100_000],
    "max_depth": list(range(1, 11)),
}

#: Values that matter together: small sampling rates at small epsilon, where the accountant's
#: epsilon jumps from 0 past the target (no per-tree budget meets it within 1e-3), also at the
#: smallest delta; the most trees at a small epsilon and at the greatest depth.
COMBINED_CASES = [{"subsample": subsample, "epsilon": epsilon}
                  for subsample in (1e-6, 5e-324) for epsilon in (0.01, 0.1)]
COMBINED_CASES += [{"subsample": 1e-6, "epsilon": 0.01, "delta": 1e-300},
                   {"n_estimators": 10_000, "epsilon": 0.01},
                   {"n_estimators": 10_000, "max_depth": 10}]

#: The individual Renyi filter (default classifier and regressor): its share of the trees at a
#: small, the default and a large epsilon, and with many trees.
FILTER_CASES = [{"renyi_filter": share, "epsilon": epsilon}
                for share in (1e-3, 0.5, 1.0) for epsilon in (0.01, 1.0, 100.0)]
FILTER_CASES += [{"renyi_filter": 0.5, "n_estimators": n} for n in (1000, 10_000)]

#: Private category lists of one categorical column (every setting; DPBoost's is pure DP, which
#: they cannot be: refused).
CATEGORY_CASES = [{"categories": "private", "epsilon": epsilon}
                  for epsilon in (1e-6, 0.01, 1.0, 100.0, 1e300, math.inf)]
CATEGORY_CASES += [{"categories": "private", "delta": delta} for delta in (1e-300, 0.999999)]
CATEGORY_CASES += [{"categories": "private", "n_estimators": 10_000}]

#: The settings: public inputs that let each plan before any record is read.
SETTINGS = {
    "classifier": lambda **p: DPGBClassifier(**{"classes": [0, 1], **p}),
    "regressor": lambda **p: DPGBRegressor(**{"target_bounds": (-1.0, 1.0), **p}),
    "dpboost_paper": lambda **p: DPGBClassifier.dpboost_paper(**{"classes": [0, 1], **p}),
}


class _Stop(Exception):
    """Raised where the fit would first read a record."""


class _TimedOut(Exception):
    """Raised by the alarm of a case still planning after the limit."""


def _stop(self, *args, **kwargs):
    raise _Stop


def _alarm(signum, frame):
    raise _TimedOut


def records(categorical):
    """10 records of 2 features (the second a categorical column when ``categorical``) in the
    bounds (-1, 1), with labels 0 and 1: the record set the fit stops before."""
    x = np.linspace(-1.0, 1.0, 10)
    if categorical:
        return pd.DataFrame({"x": x, "c": pd.Categorical(["a", "b"] * 5)}), np.arange(10) % 2
    return np.column_stack([x, -x]), np.arange(10) % 2


def plan_time(setting, params, limit=60.0):
    """Time one case: ``fit`` of ``SETTINGS[setting](**params)`` up to its first read of a
    record.

    Returns
    -------
    row : dict
        ``outcome`` ("planned", "refused" or "timeout"), ``seconds`` (wall time),
        ``cpu_seconds`` (this process's), the plan's epsilon (the accountant's, of its ledger)
        and the refusal's message.
    """
    categorical = params.get("categories") == "private"
    X, y = records(categorical)
    bounds = [(-1.0, 1.0)] if categorical else (-1.0, 1.0)
    model = SETTINGS[setting](**{"feature_bounds": bounds, **params})
    plans = []
    outcome, message = "planned", ""
    plan_budget.cache_clear()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        with warnings.catch_warnings(), \
                mock.patch.object(type(model), "_records", _stop), \
                mock.patch("dpboost._estimators.plan_fit",
                           lambda *a: plans.append(plan_fit(*a)) or plans[-1]):
            warnings.simplefilter("ignore")
            model.fit(X, y)
        raise AssertionError("the fit read no record")
    except _Stop:
        pass
    except ValueError as error:
        outcome, message = "refused", str(error).splitlines()[0]
    except _TimedOut:
        outcome = "timeout"
    finally:
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return {"estimator": setting, "setting": ", ".join(f"{k}={v!r}" for k, v in params.items()),
            "outcome": outcome, "seconds": round(seconds, 4), "cpu_seconds": round(cpu, 4),
            "epsilon_planned": plans[0].epsilon if outcome == "planned" else "",
            "message": message}


def cases(quick=False):
    """Every (setting, params) pair, in order; ``quick``: the first, a middle and the last
    value of each list."""
    def pick(values):
        return [values[0], values[len(values) // 2], values[-1]] if quick else values

    out = []
    for setting in SETTINGS:
        for name, values in VALUES.items():
            out += [(setting, {name: v}) for v in pick(values)]
        out += [(setting, params) for params in pick(COMBINED_CASES)]
        if setting != "dpboost_paper":
            out += [(setting, params) for params in pick(FILTER_CASES)]
        out += [(setting, params) for params in pick(CATEGORY_CASES)]
    return out


def main():
    parser = _harness.parser(__doc__)
    parser.add_argument("--limit", type=float, default=60.0,
                        help="seconds after which a case counts as a timeout")
    args = parser.parse_args()
    plan_time("classifier", {})  # imports dp-accounting and scipy, outside every case
    rows = []
    for setting, params in cases(args.quick):
        rows.append(plan_time(setting, params, args.limit))
        row = rows[-1]
        print(f"{row['estimator']:14s} {row['setting']:42s} {row['outcome']:8s} "
              f"{row['seconds']:8.3f}  {row['message'][:70]}", flush=True)
    _harness.write_results(_harness.result_name("plan_time", args), rows)
    slowest = max(rows, key=lambda r: r["seconds"])
    print(f"slowest: {slowest['estimator']} {slowest['setting']} {slowest['seconds']:.3f} s")


if __name__ == "__main__":
    main()
