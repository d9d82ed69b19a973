"""A sweep for the regressor's default as a rule of public inputs, on the tuning split only.

Every number comes from ``bench_regression.tuning_split`` (an inner 75 / 25 split, seed 0, of fold
0's training part, at most 20,000 / 5,000 rows): fold 0's test rows are never read. Each setting
of :data:`RULES` is a function of the public inputs only -- the number of features ``p`` and
epsilon -- never of the rows; it is fitted on the five regression sets at epsilon 0.1, 1 and 4
(delta 1e-5) with 2 seeds (``random_state=seed``), and its validation RMSE recorded. DP-EBM
(its defaults, 1 seed) on the same split is the reference. Coordinate descent from the shipped
default: first the number of trees per feature, then, around 25 trees per feature, one
parameter at a time (learning rate, depth, l2, subsample, gradient bound, split candidates), and
the classifier's style (subsample 0.3, learning rate 0.2); then the candidate rules
(:func:`recommended` and variants) with 4 seeds, and at epsilon 0.3 and 2 as well.

Resumable: rows already in results/regression_sweep.csv (same dataset, rule, epsilon, seed) are
kept and not refitted; ``--rules``, ``--datasets``, ``--epsilons`` and ``--seeds`` restrict a run.
The committed CSV was made by these runs, in order (NUMBA_NUM_THREADS=1, n_jobs=1, about 20
minutes on one shared core)::

    --rules default T=10p T=25p T=50p T=100p                      # trees per feature (+ DP-EBM)
    --rules "T=25p lr0.05" "T=25p lr0.2" "k10 c2.5" "k50 c2.5" "T=25p d3" "T=25p d5" \
            "T=25p l2=10" "T=25p ss0.3" "T=25p gb0.5" "T=25p uniform" "ss0.3 lr0.2"
    --rules T=15p T=35p
    --rules rule "rule k50" default --seeds 0 1 2 3 --no-ebm      # the candidates, 4 seeds
    --rules rule default --epsilons 0.3 2                         # between the grid's epsilons
    --rules "rule ramp2" --epsilons 0.1 1 --seeds 0 1 2 3 --no-ebm --datasets house_16H pol nycflights
    --rules "rule ramp2" --epsilons 0.3 --no-ebm --datasets house_16H pol nycflights
    --rules shipped "mcw x0.25" "mcw x0.5" "mcw x2" "mcw x4" --no-ebm   # stage 3

(with p = 8, abalone and california get 200 trees from every ``rule*``: the shipped default).

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_regression_sweep.py [--rules NAME ...]``;
``--report`` prints the table (mean validation RMSE per cell; geometric mean and worst ratio to
the default) from the CSV only.
"""

import argparse
import math
from collections import defaultdict

import _harness
import _loaders
from bench_regression import (
    DATASETS,
    EPSILONS,
    DPExplainableBoostingRegressor,
    dp_ebm,
    dpboost,
    tuning_split,
)

SEEDS = (0, 1)
NAME = "regression_sweep"


def trees(k, floor=200):
    """``n_estimators = max(floor, k * p)``: k trees per feature (one feature per tree)."""
    return lambda p, eps: {"n_estimators": max(floor, int(k * p))}


def with_(base, **extra):
    """The rule ``base`` with fixed ``extra`` parameters (callables get ``(p, eps)``)."""
    def rule(p, eps):
        out = dict(base(p, eps))
        out.update({k: (v(p, eps) if callable(v) else v) for k, v in extra.items()})
        return out
    return rule


def recommended(p, eps):
    """The recommendation: k(eps) = 25 min(1, eps)^0.4 trees per feature (10 at eps 0.1, 25 from
    eps 1 on), at least 200 trees; everything else as shipped."""
    return {"n_estimators": max(200, round(25 * min(1.0, eps) ** 0.4 * p))}


def recommended_k50(p, eps):
    """As :func:`recommended` but growing on above eps 1: k = min(50, 25 eps^0.4) (43.5 at 4)."""
    return {"n_estimators": max(200, round(min(50.0, 25 * eps ** 0.4) * p))}


def recommended_ramp2(p, eps):
    """As :func:`recommended` but reaching 25 trees per feature at eps 2: k = 25 min(1, eps / 2)^0.4
    (7.5 at eps 0.1, 18.9 at 1)."""
    return {"n_estimators": max(200, round(25 * min(1.0, eps / 2) ** 0.4 * p))}


#: name -> rule (p, epsilon) -> parameters of DPGBRegressor (besides the shipped default).
RULES = {
    # the shipped default when the sweep ran (200 trees); "rule ramp2" became n_estimators="auto"
    "default": lambda p, eps: {"n_estimators": 200},
    "rule": recommended,
    "rule k50": recommended_k50,
    "rule ramp2": recommended_ramp2,
    # stage 1: trees per feature
    "T=10p": trees(10),
    "T=25p": trees(25),
    "T=50p": trees(50),
    "T=100p": trees(100),
    "T=15p": trees(15),
    "T=35p": trees(35),
    # stage 2: one parameter at a time around T=25p
    "T=25p lr0.05": with_(trees(25), learning_rate=0.05),
    "T=25p lr0.2": with_(trees(25), learning_rate=0.2),
    "T=25p d2": with_(trees(25), max_depth=2),
    "T=25p d3": with_(trees(25), max_depth=3),
    "T=25p d5": with_(trees(25), max_depth=5),
    "T=25p l2=0.1": with_(trees(25), l2_regularization=0.1),
    "T=25p l2=10": with_(trees(25), l2_regularization=10.0),
    "T=25p ss0.3": with_(trees(25), subsample=0.3),
    "T=25p ss0.1": with_(trees(25), subsample=0.1),
    "T=25p gb0.5": with_(trees(25), gradient_bound=0.5),
    "T=25p gb2": with_(trees(25), gradient_bound=2.0),
    # c = learning_rate * n_estimators / p, the shrinkage each feature gets, at k trees per
    # feature: n_estimators = k p, learning_rate = c / k
    "k10 c2.5": lambda p, eps: {"n_estimators": 10 * p, "learning_rate": 0.25},
    "k50 c2.5": lambda p, eps: {"n_estimators": 50 * p, "learning_rate": 0.05},
    "k10 c1": lambda p, eps: {"n_estimators": 10 * p, "learning_rate": 0.1},
    "T=25p uniform": with_(trees(25), split_candidates="uniform"),
    # the classifier's style on the default's trees
    "ss0.3 lr0.2": lambda p, eps: {"subsample": 0.3, "learning_rate": 0.2},
    "ss0.1 lr0.1": lambda p, eps: {"subsample": 0.1},
    # stage 3, after the leaves' 90 % gradient share (a noisier Hessian sum): the shipped
    # default as it stands, and its min_child_weight="auto" (200 / epsilon) times m
    "shipped": lambda p, eps: {},
    **{f"mcw x{m:g}": (lambda m: lambda p, eps: {"min_child_weight": m * 200.0 / eps})(m)
       for m in (0.25, 0.5, 2.0, 4.0)},
}


def rule_params(rule, p, eps):
    return RULES[rule](p, eps)


def key(row):
    return (row["dataset"], row["rule"], float(row["epsilon"]), int(row["seed"]))


def sweep(rules, datasets, epsilons=EPSILONS, seeds=SEEDS, ebm=True):
    old = _harness.read_results(NAME)
    done = {key(r) for r in old}
    rows = list(old)
    for name in _loaders.available(datasets):
        data = _loaders.load(name)
        X_fit, y_fit, X_val, y_val = tuning_split(data)
        fold = _harness.Fold(0, X_fit, y_fit, X_val, y_val)
        p = X_fit.shape[1]
        for epsilon in epsilons:
            todo = [(r, s) for r in rules for s in seeds] + ([("DP-EBM", 0)] if ebm else [])
            for rule, seed in todo:
                if (name, rule, epsilon, seed) in done:
                    continue
                if rule == "DP-EBM":
                    if DPExplainableBoostingRegressor is None:
                        continue
                    params, model = {}, dp_ebm(data, epsilon, seed)
                else:
                    params = rule_params(rule, p, epsilon)
                    model = dpboost(data, epsilon, seed, n_jobs=1, **params)
                seconds = _harness.timed_fit(model, X_fit, y_fit)
                rows.append({"dataset": name, "n_features": p, "rule": rule,
                             "epsilon": epsilon, "seed": seed,
                             "params": " ".join(f"{k}={v}" for k, v in sorted(params.items())),
                             **_harness.scores(data, model, fold), "fit_s": round(seconds, 3)})
                done.add((name, rule, epsilon, seed))
                print(f"{name} eps={epsilon} {rule} seed={seed}: rmse {rows[-1]['rmse']:.4g} "
                      f"({seconds:.1f} s)", flush=True)
            _harness.write_results(NAME, rows)  # after every (dataset, epsilon): resumable
    return rows


def report(rows):
    """Mean validation RMSE per (dataset, epsilon) and rule, relative to DP-EBM's; and the mean
    over the 15 cells of RMSE / default's RMSE."""
    mean = defaultdict(list)
    for r in rows:
        mean[(r["dataset"], float(r["epsilon"]), r["rule"])].append(float(r["rmse"]))
    mean = {k: sum(v) / len(v) for k, v in mean.items()}
    cells = sorted({(d, e) for d, e, _ in mean}, key=lambda c: (DATASETS.index(c[0]), c[1]))
    rules = list(dict.fromkeys(r for _, _, r in mean))
    print(f"{'rule':24s}" + "".join(f"{d[:6]}@{e:g}".rjust(11) for d, e in cells)
          + "  geo/def  worst/def")
    for rule in rules:
        vals, ratios = [], []
        for d, e in cells:
            v = mean.get((d, e, rule))
            vals.append(f"{v:11.4g}" if v is not None else " " * 11)
            if v is not None and (d, e, "default") in mean and rule != "DP-EBM":
                ratios.append(v / mean[(d, e, "default")])
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else math.nan
        worst = max(ratios) if ratios else math.nan
        print(f"{rule:24s}" + "".join(vals) + f"  {geo:7.3f}  {worst:7.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", nargs="+", choices=list(RULES), default=list(RULES))
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS), default=list(DATASETS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--no-ebm", action="store_true", help="skip DP-EBM")
    parser.add_argument("--report", action="store_true", help="print the tables only")
    args = parser.parse_args()
    rows = (_harness.read_results(NAME) if args.report
            else sweep(args.rules, args.datasets, args.epsilons, args.seeds, not args.no_ebm))
    report(rows)


if __name__ == "__main__":
    main()
