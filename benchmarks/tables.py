"""Markdown summary tables of the paper-reproduction results, for benchmarks/README.md.

Run: ``python benchmarks/tables.py [--quick]`` after the bench_* scripts; reads results/*.csv.
"""

import argparse
import csv
from collections import defaultdict

import numpy as np
from _common import RESULTS


def _read(name):
    """Rows of results/<name>.csv, else of <name>_subset.csv (a --datasets run)."""
    path = RESULTS / f"{name}.csv"
    if not path.exists():
        path = RESULTS / f"{name}_subset.csv"
    if not path.exists():
        print(f"({name}.csv not found: run its script first)\n")
        return []
    with open(path) as fh:
        return list(csv.DictReader(fh))


def _cell(values, metric):
    digits = 3 if metric in ("error", "auc") else 4
    mean, std = float(np.mean(values)), float(np.std(values))
    return f"{mean:.{digits}g} ± {std:.2g}"


def _grid(rows, row_keys, value_key, title):
    """Table: one line per row_keys tuple, one column per epsilon, mean ± std over folds."""
    groups = defaultdict(list)
    for r in rows:
        groups[(tuple(r[k] for k in row_keys), float(r["epsilon"]))].append(float(r[value_key]))
    epsilons = sorted({e for _, e in groups})
    lines = dict.fromkeys(k for k, _ in groups)
    print(f"**{title}**\n")
    print("| " + " | ".join(row_keys) + " | " + " | ".join(f"eps {e:g}" for e in epsilons) + " |")
    print("|" + "---|" * (len(row_keys) + len(epsilons)))
    for key in lines:
        cells = [_cell(groups[(key, e)], value_key) if (key, e) in groups else ""
                 for e in epsilons]
        print("| " + " | ".join(key) + " | " + " | ".join(cells) + " |")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="read the *_quick results")
    suffix = "_quick" if parser.parse_args().quick else ""
    rows = _read("error_vs_epsilon" + suffix)
    for metric in ("error", "auc", "rmse"):
        sel = [r for r in rows if r.get(metric)]
        if sel:
            _grid(sel, ["dataset", "method"], metric, f"Test {metric} (mean ± std over folds)")
    rows = _read("peers" + suffix)
    for metric in ("error", "auc", "rmse"):
        sel = [r for r in rows if r.get(metric)]
        if sel:
            _grid(sel, ["dataset", "method"], metric, f"Peers: test {metric}")
    rows = _read("ablation" + suffix)
    if rows:
        _grid(rows, ["dataset", "variant", "metric"], "value", "Ablation (metric per row)")
        _grid([r for r in rows if r["variant"] == "DPBoost"], ["dataset"], "filtered_fraction",
              "GDF filtered fraction of each tree's records (non-private diagnostic)")
    rows = _read("convergence" + suffix)
    if rows:
        trees = sorted({int(r["trees"]) for r in rows})
        shown = [t for t in trees if t in (50, 100, 200, 500, 1000)]
        print("**Test error after t trees**\n")
        print("| dataset | method | " + " | ".join(f"{t} trees" for t in shown) + " |")
        print("|" + "---|" * (2 + len(shown)))
        for key in dict.fromkeys((r["dataset"], r["method"]) for r in rows):
            err = {int(r["trees"]): float(r["error"]) for r in rows
                   if (r["dataset"], r["method"]) == key}
            print(f"| {key[0]} | {key[1]} | " + " | ".join(f"{err[t]:.3f}" for t in shown) + " |")
        print()


if __name__ == "__main__":
    main()
