"""The results tables of benchmarks/README.md, generated from the CSVs of results/.

``python benchmarks/tables.py --write`` rewrites every table of README.md that stands between
``<!-- table:NAME -->`` and ``<!-- /table:NAME -->`` (NAME: a key of :data:`TABLES`) from the
CSVs, leaving the prose around them as it is, and writes results/tables.md (every dataset, method
and epsilon of the paper-reproduction scripts). Running it twice changes nothing.
``--check``: exit 1 when README.md or results/tables.md differ from what ``--write`` would
write. No option: print results/tables.md; ``--quick``: the same from the ``*_quick`` results.

The tables quote the CSVs; which rows and columns a table shows, their labels and the rounding
are this module's (one function per table). The README's other tables are hand-written from the
results file named beside them (the main job's quote results/demo_*.txt, the output of
``python -m dpboost demo``).
"""

import argparse
import importlib
import math
import re
import sys
from pathlib import Path

import _harness
import bench_blocks_grid
import bench_frontier
import bench_regression
import bench_table1
import numpy as np

README = Path(__file__).resolve().parent / "README.md"
SUMMARY = _harness.RESULTS / "tables.md"


# --- numbers as the README writes them ---------------------------------------------------------

def spread(s):
    """A standard deviation (or a small fraction): 2 significant digits (trailing zeros kept),
    1 below 0.01."""
    digits = 2 if abs(s) >= 0.01 else 1
    r = float(f"{s:.{digits}g}")
    if abs(r) >= 10:
        return f"{r:,.0f}"
    if abs(r) < 1e-4:
        return np.format_float_positional(r, trim="-")
    return f"{s:#.{digits}g}"


def amount(v):
    """An RMSE: hundreds with separators from 1000, one decimal from 10, else two."""
    if abs(v) >= 1000:
        return f"{round(v, -2):,.0f}"
    return f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def exact(v):
    """An RMSE as the peers table writes it: whole units from 1000, else 3 significant digits."""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def value(v, metric):
    """A mean: 3 decimals for error / AUC / accuracy, :func:`amount` for RMSE."""
    return amount(v) if metric == "rmse" else f"{v:.3f}"


def pm(t, digits=3):
    """``mean ± std`` of a :func:`_harness.group_stats` entry, both with ``digits`` decimals."""
    return f"{t['mean']:.{digits}f} ± {t['std']:.{digits}f}"


def bold(text, condition=True):
    return f"**{text}**" if condition else text


def markdown(header, rows, empty="| |"):
    """A markdown table: ``header`` (list of str) and ``rows`` (lists of cells); an empty cell
    is written ``empty`` ("| |", or "|  |" as the peers table has it)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [re.sub(r"\|  (?=\|)", empty[:-1], "| " + " | ".join(str(c) for c in row) + " |")
              for row in rows]
    return "\n".join(lines)


def _eps(e):
    return f"{float(e):g}"


def _stats(rows, keys, column):
    """:func:`_harness.group_stats` keyed by the tuple of ``keys`` (epsilon as a float)."""
    out = {}
    for t in _harness.group_stats(rows, keys, column):
        key = tuple(float(t[k]) if k == "epsilon" else t[k] for k in keys)
        out[key] = t
    return out


def _results(name):
    rows = _harness.read_results(name)
    if not rows:
        raise FileNotFoundError(f"results/{name}.csv not found: run its script first")
    return rows


# --- the README's tables -----------------------------------------------------------------------

def safe_defaults():
    rows = _results("safe_defaults")
    label = {"default": "default", "dpboost_paper": "`dpboost_paper()`"}
    return markdown(
        ["setting", "epsilon", "test error", "ROC AUC", "fit s"],
        [[label[r["setting"]], _eps(r["epsilon"]),
          f"{float(r['error_mean']):.3f} ± {float(r['error_std']):.3f}",
          f"{float(r['auc_mean']):.3f} ± {float(r['auc_std']):.3f}",
          f"{float(r['fit_s_mean']):.1f}"] for r in rows])


def fit_time():
    """One row per dataset; every time and ratio as "1 thread / 2 threads"."""
    rows = _results("fit_time")
    by = {(r["dataset"], r["threads"], r["method"]): r for r in rows}
    threads = list(dict.fromkeys(r["threads"] for r in rows))
    lines = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        dp = [by[(dataset, t, "DPBoost")] for t in threads]
        np_ = [by[(dataset, t, "NP")] for t in threads]

        def cells(runs, f):
            return " / ".join(f"{f(r):.2f}" for r in runs)

        lines.append([dataset, f"{int(dp[0]['n_samples']):,} × {dp[0]['n_features']}",
                      cells(dp, lambda r: float(r["dpboost_ms_per_tree"])),
                      cells(np_, lambda r: float(r["dpboost_ms_per_tree"])),
                      cells(dp, lambda r: 1e3 * float(r["hgb_fit_s"]) / int(r["trees"])),
                      cells(dp, lambda r: float(r["ratio_vs_hgb"])),
                      cells(np_, lambda r: float(r["ratio_vs_hgb"]))])
    return markdown([f"dataset ({' / '.join(threads)} threads)", "rows × features",
                     "DPBoost ms/tree", "NP ms/tree", "HGB ms/tree", "DPBoost / HGB", "NP / HGB"],
                    lines)


def defaults_max_bins():
    rows = _results("defaults_max_bins")
    by = {(r["max_bins"], float(r["epsilon"])): r for r in rows}

    def error(b, e):
        r = by[(b, e)]
        return f"{float(r['test_error_mean']):.3f} ± {float(r['test_error_std']):.3f}"

    return markdown(
        ["max_bins", "error eps=0.5", "error eps=1", "error eps=2", "error eps=4", "AUC eps=1",
         "AUC eps=2", "error inf"],
        [[b, *(error(b, e) for e in (0.5, 1.0, 2.0, 4.0)),
          *(f"{float(by[(b, e)]['roc_auc_mean']):.3f}" for e in (1.0, 2.0)),
          f"{float(by[(b, math.inf)]['test_error_mean']):.3f}"]
         for b in dict.fromkeys(r["max_bins"] for r in rows)])


def secure_noise():
    def fmt(v, unit=" s", digits=2):
        return "" if v in ("", None) else f"{float(v):.{digits}f}{unit}"

    return markdown(
        ["setting", "data", "numpy noise (int `random_state`)", "secure (`random_state=None`)",
         "secure / numpy", "HGB, same trees", "secure / HGB"],
        [[r["setting"], r["data"], fmt(r["numpy_fit_s"]), fmt(r["secure_fit_s"]),
          fmt(r["secure_over_numpy"], "×"), fmt(r.get("hgb_fit_s")),
          fmt(r.get("secure_over_hgb"), "×")] for r in _results("secure_noise")])


def secure_samplers():
    rows = _results("secure_samplers")
    releases = list(dict.fromkeys(r["release"] for r in rows))
    options = list(dict.fromkeys(r["option"] for r in rows))
    cost = {(r["release"], r["option"]): float(r["us_per_value"]) for r in rows}
    return markdown(["option"] + releases,
                    [[o] + [f"{cost[(rel, o)]:.3g}" if (rel, o) in cost else "–"
                            for rel in releases] for o in options])


#: (dataset, methods) shown of error_vs_epsilon.csv, and the unit of the regression sets.
ERROR_ROWS = [("adult", "DPBoost SEQ PARA"), ("cod_rna", "DPBoost SEQ PARA"),
              ("bank", "DPBoost PARA"), ("give_me_some_credit", "DPBoost PARA"),
              ("electricity", "DPBoost PARA"), ("magic", "DPBoost PARA")]
RMSE_ROWS = [("abalone", "DPBoost SEQ PARA"), ("california", "DPBoost PARA"),
             ("house_16H", "DPBoost PARA"), ("nycflights", "DPBoost PARA")]
UNITS = {"abalone": "rings", "california": "USD", "house_16H": "USD", "nycflights": "minutes"}
PAPER_EPSILONS = (1.0, 2.0, 4.0, 10.0)


def _error_table(shown, first_column):
    rows = _results("error_vs_epsilon")
    stats = _stats(rows, ["dataset", "method", "epsilon"], _harness.main_metric)
    lines = []
    for dataset, methods in shown:
        metric = next(r["metric"] for r in rows if r["dataset"] == dataset)
        for i, method in enumerate(methods.split()):
            cells = [f"{value(stats[(dataset, method, e)]['mean'], metric)} ± "
                     f"{spread(stats[(dataset, method, e)]['std'])}" for e in PAPER_EPSILONS]
            np_ = value(stats[(dataset, "NP", math.inf)]["mean"], metric) if i == 0 else ""
            name = f"{dataset} ({UNITS[dataset]})" if i == 0 and dataset in UNITS else dataset
            lines.append([name, method, *cells, np_])
    return markdown([first_column, "method", *(f"eps {e:g}" for e in PAPER_EPSILONS), "NP"],
                    lines)


def error_vs_epsilon():
    return _error_table(ERROR_ROWS, "dataset")


def error_vs_epsilon_rmse():
    return _error_table(RMSE_ROWS, "dataset (RMSE, target units)")


def convergence():
    rows = _results("convergence")
    error = {(r["dataset"], r["method"], int(r["trees"])): float(r["error"]) for r in rows}
    shown = [("adult", "DPBoost PARA SEQ NP"), ("cod_rna", "DPBoost PARA"),
             ("covtype15k", "DPBoost PARA")]
    trees = (50, 100, 200, 500, 1000)
    return markdown(["dataset", "method", "50 trees", "100", "200", "500", "1000"],
                    [[d, m, *(f"{error[(d, m, t)]:.3f}" for t in trees)]
                     for d, methods in shown for m in methods.split()])


def ablation_filtered():
    rows = [r for r in _results("ablation_subset") if r["variant"] == "DPBoost"]
    stats = _stats(rows, ["dataset", "epsilon"], "filtered_fraction")
    return markdown(["dataset", *(f"eps {e:g}" for e in PAPER_EPSILONS)],
                    [[d, *(spread(stats[(d, e)]["mean"]) for e in PAPER_EPSILONS)]
                     for d in dict.fromkeys(r["dataset"] for r in rows)])


def _ablation_means():
    return _stats(_results("ablation_subset"), ["dataset", "variant", "epsilon"], "value")


def ablation_glc():
    means = _ablation_means()
    shown = [("abalone", "DPBoost|no GLC|no GDF"), ("california", "DPBoost|no GLC"),
             ("house_16H", "DPBoost|no GLC"), ("pol", "DPBoost|no GLC")]
    return markdown(["dataset", "variant", *(f"eps {e:g}" for e in PAPER_EPSILONS)],
                    [[d, v, *(amount(means[(d, v, e)]["mean"]) for e in PAPER_EPSILONS)]
                     for d, variants in shown for v in variants.split("|")])


def ablation_exact():
    means = _ablation_means()
    variants = ("DPBoost", "exact splits", "exact leaves")
    lines = []
    for d in ("adult", "cod_rna", "abalone", "california", "house_16H", "pol"):
        metric = "error" if d in ("adult", "cod_rna") else "rmse"
        lines.append([d, "error" if metric == "error" else "RMSE",
                      *(value(means[(d, v, e)]["mean"], metric)
                        for e in (1.0, 10.0) for v in variants)])
    return markdown(["dataset", "metric", "DPBoost eps 1", "exact splits", "exact leaves",
                     "DPBoost eps 10", "exact splits", "exact leaves"], lines)


def peers():
    """The DP-XGB blocks and DP-EBM per dataset and epsilon, the non-private HGB in the first row
    of each dataset (the DPBoost setting's rows are those of :func:`error_vs_epsilon`; every
    method is in results/tables.md)."""
    rows = _results("peers_subset")
    error, auc, rmse = (_stats(rows, ["dataset", "method", "epsilon"], c)
                        for c in ("error", "auc", "rmse"))
    label = {"dpboost DP-XGB blocks": "dpboost, DP-XGB blocks"}

    def cell(key):
        if key in rmse:
            return exact(rmse[key]["mean"])
        return f"{error[key]['mean']:.3f} / {auc[key]['mean']:.3f}"

    lines = []
    for d in dict.fromkeys(r["dataset"] for r in rows):
        metric = "RMSE" if (d, "HGB (non-private)", math.inf) in rmse else "error / AUC"
        hgb = cell((d, "HGB (non-private)", math.inf))
        methods = [m for m in dict.fromkeys(r["method"] for r in rows if r["dataset"] == d)
                   if m in ("dpboost DP-XGB blocks", "DP-EBM")]
        for i, m in enumerate(methods):
            lines.append([d, metric, label.get(m, m),
                          *(cell((d, m, e)) for e in PAPER_EPSILONS), hgb if i == 0 else ""])
    return markdown(["dataset", "metric", "method", *(f"eps {e:g}" for e in PAPER_EPSILONS),
                     "HGB (non-private)"], lines)


def _grid_label(config):
    """"random / sequential / 50x6 lr0.1" -> "random / sequential / 50 × 6, 0.1"."""
    return re.sub(r"(\d+)x(\d+) lr([\d.]+)", r"\1 × \2, \3", config)


def blocks_grid_ranks():
    rows = _results("blocks_grid")
    ranks = bench_blocks_grid.rank_table(rows)
    sequential = [t for t in ranks if "/ sequential /" in t["config"]]
    eoe = next(t for t in ranks if "/ eoe /" in t["config"])
    paper = next(t for t in ranks if t["config"].startswith("DPBoost"))
    labels = [_grid_label(t["config"]) for t in sequential]
    labels.append("best EoE configuration ("
                  + re.sub(r"(\d+)x(\d+) lr[\d.]+", r"\1 × \2", eoe["config"]) + ")")
    labels.append("DPBoost paper setting (pure DP)")
    return markdown(
        ["configuration (split selection / allocation / trees × depth, learning rate)",
         "mean rank", "worst rank"],
        [[label, f"{t['mean_rank']:.1f}", t["worst_rank"]]
         for label, t in zip(labels, sequential + [eoe, paper])])


#: The datasets of DP-XGB's Table 1 as the README names them.
TABLE1_NAMES = {"adult": "Adult", "magic": "MagicTelescope", "electricity": "Electricity",
                "house_16H": "House_16H", "california": "California"}


def multiclass():
    stats = _stats(_results("multiclass"), ["method", "epsilon"], "accuracy")
    labels = {
        "DPBoost setting": "dpboost, DPBoost setting (pure DP, one-vs-rest square loss)",
        "recommended preset":
            'dpboost, `recommended()` (delta 1e-5; multinomial, `loss="softmax"`)',
        "recommended preset, one-vs-rest logistic":
            'dpboost, `recommended(loss="logistic")` (one-vs-rest logistic)',
    }
    lines = [[label, pm(stats[(m, 1.0)]), pm(stats[(m, 4.0)]),
              f"{stats[(m, math.inf)]['mean']:.3f}"] for m, label in labels.items()]
    hgb = stats[("HGB (non-private)", math.inf)]["mean"]
    lines.append(["scikit-learn HGB", "", "", f"{hgb:.3f}"])
    return markdown(["method", "epsilon 1", "epsilon 4", "no noise"], lines)


def _config_label(config):
    """"cyclical 50x6 mcw20" -> "cyclical 50×6 mcw 20"."""
    return re.sub(r"mcw(\d)", r"mcw \1", re.sub(r"(\d)x(\d)", r"\1×\2", config))


def table1_hessian():
    stats = _stats(_results("table1_configs"), ["dataset", "config"], "auc")
    lines = []
    for d, name in TABLE1_NAMES.items():
        greedy, overall = bench_table1.THEIRS[d]
        preset = stats[(d, "preset recommended()")]
        uniform = stats[(d, "preset recommended() uniform grid")]
        sketch = [c for (dd, c) in stats if dd == d and c.endswith(" hessian")]
        best = max(sketch, key=lambda c: stats[(d, c)]["mean"])
        # a variant with the sketch above the preset; else the preset, unless the uniform grid
        # beats it (the sketch does not pay on this set: "—")
        if stats[(d, best)]["mean"] > preset["mean"]:
            best_cell = (f"{_config_label(best.removesuffix(' hessian'))}: "
                         f"{bold(pm(stats[(d, best)], 4))}")
        else:
            best_cell = "(the preset)" if preset["mean"] >= uniform["mean"] else "—"
        lines.append([name, f"{greedy[0]} {greedy[1]:.4f}", f"{overall[0]} {overall[1]:.4f}",
                      *(bold(pm(t, 4), t["mean"] > overall[1]) for t in (preset, uniform)),
                      best_cell, f"{stats[(d, 'HGB (non-private)')]['mean']:.4f}"])
    return markdown(["dataset", "theirs: best greedy", "theirs: best overall",
                     "`recommended()` (Hessian sketch)", "`recommended()`, uniform grid",
                     "best with the sketch", "HGB"], lines)


def fit():
    rows = [r for r in _results("fit") if r["task"] == "fit"]
    by = {(r["rows"], r["features"], r["threads"], r["library"], r["epsilon"]): r for r in rows}
    columns = [("dpboost", "1.0"), ("dpboost", "inf"), ("hgb", ""), ("lightgbm", ""),
               ("xgboost", "")]
    lines = []
    for n, d, threads in dict.fromkeys((r["rows"], r["features"], r["threads"]) for r in rows):
        cells = []
        for library, epsilon in columns:
            r = by.get((n, d, threads, library, epsilon))
            seconds = "" if r is None else f"{float(r['seconds']):.3g} s"
            ratio = "" if r is None or library == "hgb" else f" ({float(r['ratio_vs_hgb']):.2f})"
            cells.append(seconds + ratio)
        lines.append([f"{int(n) // 1000}k × {d}", threads, *cells])
    return markdown(["rows × features", "threads", "dpboost eps 1", "dpboost NP (eps inf)", "HGB",
                     "LightGBM", "XGBoost"], lines)


def _best(rows, column):
    """The smallest value of ``column`` over ``rows`` (repeats: the best of n), as a float."""
    return min(float(r[column]) for r in rows)


#: The runs of compile.csv the README shows: (setting, rows, run) -> label.
COMPILE_RUNS = {("default", "2000", "cold"): "default",
                ("dpboost_paper", "2000", "cold"): "`dpboost_paper()`",
                ("dpboost_paper", "2000", "after default"): "`dpboost_paper()` after a default fit",
                ("default", "100000", "cold"): "default, 100k rows",
                ("dpboost_paper", "100000", "cold"): "`dpboost_paper()`, 100k rows"}


def compile_startup():
    rows = _results("compile")
    lines = []
    for (setting, n, run), label in COMPILE_RUNS.items():
        cold = [r for r in rows if (r["setting"], r["rows"], r["run"]) == (setting, n, run)]
        if not cold:
            continue
        warm = [r for r in rows if run == "cold"
                and (r["setting"], r["rows"], r["run"]) == (setting, n, "warm")]
        cells = [f"{_best(cold, c):.2f}" for c in ("import_s", "fit_s", "predict_s", "compile_s")]
        cells.append(max(int(r["kernels_compiled"]) for r in cold))
        cells += ([f"{_best(warm, 'import_s'):.2f}", f"{_best(warm, 'fit_s'):.2f}",
                   f"{min(float(r['import_s']) + float(r['fit_s']) for r in warm):.2f}"]
                  if warm else ["", "", ""])
        lines.append([label, *cells])
    return markdown(["setting (2,000 × 10 unless stated)", "cold: import s", "first fit s",
                     "first predict s", "compile s", "kernels compiled", "warm: import s",
                     "fit s", "import + fit s"], lines)


def compile_floors():
    return markdown(["alone in a fresh process", "s"],
                    [[r["what"], f"{float(r['seconds']):.2f}"]
                     for r in _results("compile_floors")])


def _goal(label, target, measured, met, source):
    """One row of :func:`speed_goals`: ``measured`` and ``met`` may be None (no result yet)."""
    return [label, target, "" if measured is None else measured,
            "" if met is None else ("yes" if met else bold("no")), source]


def speed_goals():
    """The speed goals (secure noise at the speed of numpy noise, a fast first run, the
    non-private fit against HGB, peak memory, thread scaling), each with its target, the measured value, whether
    it is met, and the results file and script it comes from (the ratios of one run each)."""
    lines = []
    secure = {(r["setting"], r["data"]): r for r in _results("secure_noise")}
    source = "`secure_noise.csv` (`bench_secure_noise.py`)"
    checks = [(f"default, {what}, {data}", r[column], limit)
              for column, what, limit in (("secure_over_numpy", "secure / numpy noise", 1.2),
                                          ("secure_over_hgb", "secure noise / HGB (same trees)",
                                           1.0))
              for (setting, data), r in secure.items() if setting == "default"]
    checks.append(("`dpboost_paper()`, secure / numpy noise, Adult",
                   secure[("dpboost_paper", "adult")]["secure_over_numpy"], 1.5))
    for label, ratio, limit in checks:
        lines.append(_goal(label, f"≤ {limit}×", f"{float(ratio):.2f}×", float(ratio) <= limit,
                           source))
    compiled = _results("compile")
    source = "`compile.csv` (`bench_compile.py`)"
    for run, target, limit in (("cold", "≤ 10 s", 10.0), ("warm", "≤ 1.5 s", 1.5)):
        what = ("first fit after a fresh install, import included" if run == "cold"
                else "warm cache: `import dpboost` + fit")
        seconds = [min(float(r["import_s"]) + float(r["fit_s"]) for r in compiled
                       if (r["setting"], r["rows"], r["run"]) == (setting, "2000", run))
                   for setting in ("default", "dpboost_paper")]
        lines.append(_goal(f"{what} (2,000 × 10; default / `dpboost_paper()`)", target,
                           " / ".join(f"{v:.2f} s" for v in seconds), max(seconds) <= limit,
                           source + (", floors `compile_floors.csv`" if run == "warm" else "")))
    fits = _results("fit")
    source = "`fit.csv` (`bench_fit.py --part hgb`)"
    for d in ("20", "100"):
        for threads in ("1", "2"):
            r = next((r for r in fits if (r["task"], r["library"], r["rows"], r["features"],
                                          r["threads"], r["epsilon"])
                      == ("fit", "dpboost", "800000", d, threads, "inf")), None)
            ratio = None if r is None else float(r["ratio_vs_hgb"])
            lines.append(_goal(f"non-private fit / HGB, 1M × {d} (800k training rows), "
                               f"{threads} thread{'s' * (threads == '2')}", "≤ 0.5×",
                               None if r is None else f"{ratio:.2f}×",
                               None if r is None else ratio <= 0.5, source))
    peak = float(fits[0]["peak_rss_added_by_fit_over_input"])
    lines.append(_goal("peak memory added by a fit on 1M × 100 / the float64 input", "≤ 0.3×",
                       f"{peak:.2f}×", peak <= 0.3, source))
    lines.extend(_thread_goals())
    return markdown(["goal", "target", "measured", "met", "source"], lines)


def _thread_goals():
    """The thread-scaling goals of the fit at 1M x 20 (and 10M x 20 on 16 cores), 200 trees of
    depth 6 on 32 bins: on 2 cores from ``threads_quiet``, on 16 from the device runs."""
    def seconds(*names):
        return _fit_seconds(_thread_rows(*names))

    quiet, big = seconds("threads_quiet"), seconds("threads_device16_10m")
    big_default = seconds("threads_device16_10m_default")
    device = seconds(DEVICE_LATEST)
    checks = [
        ("additive trees, 1M × 20: 2 / 1 thread (2 cores)", quiet["dpboost_additive", 2]
         / quiet["dpboost_additive", 1], 0.55, "threads_quiet"),
        ("additive trees, 1M × 20: / LightGBM, 2 threads", quiet["dpboost_additive", 2]
         / quiet["lightgbm", 2], 0.5, "threads_quiet"),
        ("default as shipped (its count picks exponential-split trees), 1M × 20: 2 / 1 thread "
         "(2 cores)", quiet["dpboost_default", 2] / quiet["dpboost_default", 1], 0.55,
         "threads_quiet"),
        ("default as shipped, 1M × 20: / LightGBM, 2 threads", quiet["dpboost_default", 2]
         / quiet["lightgbm", 2], 0.5, "threads_quiet"),
        ("additive trees, 1M × 20: / LightGBM, 16 threads (16 cores)",
         device["dpboost_additive", 16] / device["lightgbm", 16], 0.5, DEVICE_LATEST),
        ("additive trees, 1M × 20: 16 / 1 thread", device["dpboost_additive", 16]
         / device["dpboost_additive", 1], 0.1, DEVICE_LATEST),
        ("default as shipped (its count picks exponential-split trees), 1M × 20: / LightGBM, "
         "16 threads", device["dpboost_default", 16] / device["lightgbm", 16], 0.5,
         DEVICE_LATEST),
        ("default as shipped, 1M × 20: 16 / 1 thread", device["dpboost_default", 16]
         / device["dpboost_default", 1], 0.1, DEVICE_LATEST),
        ("additive trees, 10M × 20: / HGB, 16 threads", big["dpboost_additive", 16]
         / big["hgb", 16], 0.5, "threads_device16_10m"),
        ("default as shipped, 10M × 20: / HGB, 16 threads", big_default["dpboost_default", 16]
         / big_default["hgb", 16], 0.5, "threads_device16_10m_default"),
    ]
    return [_goal(label, f"≤ {limit}×", f"{ratio:.2f}×", ratio <= limit,
                  f"`{name}.csv` (`bench_threads.py`)") for label, ratio, limit, name in checks]


#: The second lent machine's runs: 1 thread best of 1, 4 and 16 threads best of 2.
DEVICE_REPEAT = ("threads_device16_1t", "threads_device16_b2")
#: The latest lent machine's run, whose 1M x 20 rows the 16-core goals quote (best of 2).
DEVICE_LATEST = "threads_device16_blocks"


def _thread_rows(*names):
    """The rows of ``bench_threads.py`` results ``names``, one run after the other."""
    return [r for name in names for r in _results(name)]


def _fit_seconds(rows):
    """Fit seconds of ``bench_threads.py`` rows by (model, threads)."""
    return {(r["model"], int(r["threads"])): float(r["fit_s"]) for r in rows}


def _threads_table(rows):
    """Per contender of ``bench_threads.py`` rows: fit seconds at each thread count, the fewest
    threads' time over the most's, and the ratio to LightGBM at the most threads (from the fit
    seconds, so that rows of two runs, e.g. 1 thread best of 1 and 4 / 16 best of 2, combine)."""
    counts = sorted({int(r["threads"]) for r in rows})
    fit = _fit_seconds(rows)
    fewest, most = counts[0], counts[-1]
    lines = []
    for model in dict.fromkeys(r["model"] for r in rows):
        cells = [f"{fit[model, t]:.2f}" if (model, t) in fit else "" for t in counts]
        scaling = (f"{fit[model, most] / fit[model, fewest]:.2f}×"
                   if {(model, fewest), (model, most)} <= fit.keys() else "")
        lightgbm = (f"{fit[model, most] / fit['lightgbm', most]:.2f}×"
                    if {(model, most), ("lightgbm", most)} <= fit.keys() else "")
        lines.append([model.replace("_", " "), *cells, scaling, lightgbm])
    loads = [float(r[k]) for r in rows for k in ("load_before", "load_after")]
    header = ([f"{int(rows[0]['rows']):,} × 20 (load {min(loads):.1f}–{max(loads):.1f})"]
              + [f"{t} thread{'s' * (t > 1)} (s)" for t in counts]
              + [f"{most} / {fewest} thread{'s' * (fewest > 1)}", f"/ LightGBM at {most}"])
    return markdown(header, lines)


def threads():
    """Thread scaling on the 2-core machine (``bench_threads.py --label quiet``)."""
    return _threads_table(_results("threads_quiet"))


def threads_device():
    """Thread scaling on a lent 16-core machine, best of 1 (``--label device16``)."""
    return _threads_table(_results("threads_device16"))


def threads_device_repeat():
    """The same machine kind again: 1 thread best of 1 (``--label device16_1t``), 4 and 16
    threads best of 2 (``--repeats 2 --label device16_b2``)."""
    return _threads_table(_thread_rows(*DEVICE_REPEAT))


def threads_device_latest():
    """The latest lent machine: 1 and 16 threads, best of 2 (``--threads 1 16 --repeats 2
    --models dpboost_default dpboost_additive lightgbm --label device16_blocks``)."""
    return _threads_table(_results(DEVICE_LATEST))


def row_blocks():
    """The level histograms' row blocks against their number (``bench_row_blocks.py --label
    device16``): fit seconds, best and mean of the rounds, per ``TASKS_PER_THREAD``."""
    rows = _results("row_blocks_device16")
    settings = list(dict.fromkeys(int(r["tasks_per_thread"]) for r in rows))
    fits = {t: [float(r["fit_s"]) for r in rows if int(r["tasks_per_thread"]) == t]
            for t in settings}
    lines = [[str(t) if t else "0 (whole nodes)", f"{min(fits[t]):.2f}",
              f"{sum(fits[t]) / len(fits[t]):.2f}", f"{min(fits[t]) / min(fits[0]):.2f}×"]
             for t in settings]
    return markdown([f"tasks per thread ({len(fits[0])} rounds)", "best (s)", "mean (s)",
                     "best / whole nodes"], lines)


def _frontier(dataset, metric):
    """One dataset under S-BDT's protocol: ``metric`` mean ± std per method and epsilon, beside
    S-BDT's published numbers and the non-private ceiling."""
    rows = [r for r in _results("frontier") if r["dataset"] == dataset]
    stats = {(s["method"], float(s["epsilon"])): s
             for s in _harness.group_stats(rows, ["method", "epsilon"], metric)}
    exact = [m for m in dict.fromkeys(r["method"] for r in rows) if (m, math.inf) in stats]
    methods = [m for m in dict.fromkeys(r["method"] for r in rows) if m not in exact]
    sbdt = bench_frontier.SBDT[dataset]
    lines = [["S-BDT (published, tuned on the test folds)"]
             + [f"{sbdt[e]:.3f}" if e in sbdt else "" for e in bench_frontier.EPSILONS]]
    for m in methods:
        lines.append([m] + [f"{stats[(m, e)]['mean']:.3f} ± {stats[(m, e)]['std']:.3f}"
                            if (m, e) in stats else "" for e in bench_frontier.EPSILONS])
    for m in exact:  # the non-private references: one number each
        lines.append([f"{m}: {stats[(m, math.inf)]['mean']:.3f}"]
                     + [""] * len(bench_frontier.EPSILONS))
    return markdown(["epsilon"] + [f"{e:g}" for e in bench_frontier.EPSILONS], lines)


def frontier():
    """Adult under S-BDT's protocol: ROC AUC."""
    return _frontier("adult", "auc")


def frontier_abalone():
    """Abalone under S-BDT's protocol: RMSE in rings."""
    return _frontier("abalone", "rmse")


def _rmse_cell(t):
    return f"{amount(t['mean'])} ± {spread(t['std'])}"


def regression():
    """Every shared regression set: RMSE mean ± std over folds per method and epsilon; the
    default in bold where it is at or below DP-EBM's mean; the non-private HGB's RMSE beside the
    dataset's name."""
    rows = _results("regression")
    stats = _stats(rows, ["dataset", "method", "epsilon"], "rmse")
    lines = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        n = stats[(dataset, "dpboost default", bench_regression.EPSILONS[0])]["n"]
        ceiling = amount(stats[(dataset, "HGB (non-private)", math.inf)]["mean"])
        for method in ("dpboost default", "previous default", "DP-EBM"):
            cells = []
            for e in bench_regression.EPSILONS:
                t, ebm = stats.get((dataset, method, e)), stats.get((dataset, "DP-EBM", e))
                cells.append("" if t is None else bold(
                    _rmse_cell(t), method == "dpboost default" and ebm is not None
                    and t["mean"] <= ebm["mean"]))
            lines.append([f"{dataset} ({n} folds; HGB {ceiling})", method] + cells)
    return markdown(["dataset", "method"] + [f"eps {e:g}" for e in bench_regression.EPSILONS],
                    lines)


#: README table -> (benchmark script, its table function, its results): the tables a script
#: draws itself from its rows, the script imported only when the table is drawn.
SCRIPT_TABLES = {
    "capacity_trees": ("bench_capacity", "trees_table", "capacity_trees"),
    "capacity_select": ("bench_capacity", "select_table", "capacity_select"),
    "capacity_margins": ("bench_capacity", "margin_table", "capacity_margins"),
    "capacity_choice": ("bench_capacity", "choice_table", "capacity_choice"),
    "capacity_atoms": ("bench_capacity", "atoms_table", "capacity_atoms"),
    "capacity_log_grid": ("bench_capacity", "log_grid_table", "capacity_log_grid"),
    "capacity_log_grid_sketch": ("bench_capacity", "log_grid_sketch_table",
                                 "capacity_log_grid_sketch"),
    "capacity_adult_sweep": ("bench_capacity", "adult_sweep_table", "capacity_adult_sweep"),
    "small_recipe": ("bench_tree_count", "small_recipe_table", "tree_count_small_recipe"),
    "count_margin": ("bench_tree_count", "count_margin_table", "tree_count_count_margin"),
    "clip_oracle": ("bench_tree_count", "clip_oracle_table", "tree_count_clip_oracle"),
    "small_sbdt": ("bench_tree_count", "small_sbdt_table", "tree_count_small_sbdt"),
}


def _script_table(module, function, stem):
    """The drawing of a :data:`SCRIPT_TABLES` entry."""
    def draw():
        return getattr(importlib.import_module(module), function)(_results(stem))
    return draw


#: name -> function returning the markdown of README.md's ``<!-- table:name -->`` block.
TABLES = {**{f.__name__: f for f in (
    safe_defaults, fit_time, defaults_max_bins, secure_noise, secure_samplers, error_vs_epsilon,
    error_vs_epsilon_rmse, convergence, ablation_filtered, ablation_glc, ablation_exact, peers,
    blocks_grid_ranks, multiclass, table1_hessian, fit, compile_startup, compile_floors,
    frontier, speed_goals, frontier_abalone, regression, threads, threads_device,
    threads_device_repeat, threads_device_latest, row_blocks)},
    **{name: _script_table(*entry) for name, entry in SCRIPT_TABLES.items()}}

_BLOCK = re.compile(r"(<!-- table:(\w+) -->\n)(.*?)(<!-- /table:\2 -->)", re.S)


def render_readme(text):
    """``text`` with every marked block replaced by its table; every table must be marked."""
    seen = []

    def replace(match):
        name = match.group(2)
        if name not in TABLES:
            raise KeyError(f"README.md marks an unknown table {name!r}; known: {list(TABLES)}")
        seen.append(name)
        return f"{match.group(1)}{TABLES[name]()}\n{match.group(4)}"

    out = _BLOCK.sub(replace, text)
    missing = [name for name in TABLES if name not in seen]
    if missing:
        raise KeyError(f"README.md has no <!-- table:NAME --> block for {missing}")
    return out


# --- results/tables.md: every dataset, method and epsilon --------------------------------------

def _summary_read(name):
    """Rows of results/<name>.csv, else of <name>_subset.csv (a --datasets run)."""
    rows = _harness.read_results(name) or _harness.read_results(name + "_subset")
    return rows, ([] if rows else [f"({name}.csv not found: run its script first)\n"])


def _grid(rows, row_keys, value_key, title):
    """Table: one line per row_keys tuple, one column per epsilon, mean ± std over folds."""
    groups = {(tuple(t[k] for k in row_keys), float(t["epsilon"])): t
              for t in _harness.group_stats(rows, row_keys + ["epsilon"], value_key)}
    epsilons = sorted({e for _, e in groups})
    digits = 3 if value_key in ("error", "auc") else 4
    lines = [f"**{title}**\n",
             "| " + " | ".join(row_keys) + " | "
             + " | ".join(f"eps {e:g}" for e in epsilons) + " |",
             "|" + "---|" * (len(row_keys) + len(epsilons))]
    for key in dict.fromkeys(k for k, _ in groups):
        cells = [f"{groups[(key, e)]['mean']:.{digits}g} ± {groups[(key, e)]['std']:.2g}"
                 if (key, e) in groups else "" for e in epsilons]
        lines.append("| " + " | ".join(key) + " | " + " | ".join(cells) + " |")
    return lines + [""]


def summary(suffix=""):
    """results/tables.md: the long tables of error_vs_epsilon, peers, ablation, convergence."""
    lines = []
    for name, title in (("error_vs_epsilon", "Test {} (mean ± std over folds)"),
                        ("peers", "Peers: test {}")):
        rows, note = _summary_read(name + suffix)
        lines += note
        for metric in ("error", "auc", "rmse"):
            sel = [r for r in rows if r.get(metric)]
            if sel:
                lines += _grid(sel, ["dataset", "method"], metric, title.format(metric))
    rows, note = _summary_read("ablation" + suffix)
    lines += note
    if rows:
        lines += _grid(rows, ["dataset", "variant", "metric"], "value",
                       "Ablation (metric per row)")
        lines += _grid([r for r in rows if r["variant"] == "DPBoost"], ["dataset"],
                       "filtered_fraction",
                       "GDF filtered fraction of each tree's records (non-private diagnostic)")
    rows, note = _summary_read("convergence" + suffix)
    lines += note
    if rows:
        shown = [t for t in sorted({int(r["trees"]) for r in rows})
                 if t in (50, 100, 200, 500, 1000)]
        lines += ["**Test error after t trees**\n",
                  "| dataset | method | " + " | ".join(f"{t} trees" for t in shown) + " |",
                  "|" + "---|" * (2 + len(shown))]
        for key in dict.fromkeys((r["dataset"], r["method"]) for r in rows):
            err = {int(r["trees"]): float(r["error"]) for r in rows
                   if (r["dataset"], r["method"]) == key}
            lines.append(f"| {key[0]} | {key[1]} | "
                         + " | ".join(f"{err[t]:.3f}" for t in shown) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="rewrite README.md's marked tables and results/tables.md")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if --write would change README.md or results/tables.md")
    parser.add_argument("--quick", action="store_true",
                        help="print results/tables.md's tables from the *_quick results")
    args = parser.parse_args()
    if not (args.write or args.check):
        sys.stdout.write(summary("_quick" if args.quick else ""))
        return
    outputs = {README: render_readme(README.read_text()), SUMMARY: summary()}
    stale = [path for path, text in outputs.items()
             if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path} is not what tables.py --write would write", file=sys.stderr)
        sys.exit(1 if stale else 0)
    for path in stale:
        path.write_text(outputs[path])
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
