"""The row blocks of the level histograms against their number: the default classifier as
shipped at epsilon 1 (make_classification ``--rows`` x 20, 200 trees of depth 6 on 32 bins, the
public bounds and classes of ``bench_threads.PUBLIC``) on ``--threads`` threads, with
``_histogram.TASKS_PER_THREAD`` set to 0 (no blocks: whole nodes, as before the blocks), 2, 4
(the default) and 8.

The settings are timed interleaved, ``--repeats`` rounds (best and mean reported), after two
warm-up fits on every row (every kernel compiled or loaded). The models are the same bits in
every setting (integer sums), so only the time can differ.

Run: ``python benchmarks/bench_row_blocks.py [--rows N] [--threads T] [--repeats R]
[--label L]``; results in results/row_blocks[_L].csv (one row per fit) and its machine json.
"""

import argparse
import os
import time
import warnings

import _harness
from bench_threads import BINS, DEPTH, PUBLIC, TREES
from sklearn.datasets import make_classification

import dpboost._histogram as histogram
from dpboost import DPGBClassifier

SETTINGS = (0, 2, 4, 8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    X, y = make_classification(n_samples=args.rows, n_features=20, random_state=0)
    model = DPGBClassifier(n_estimators=TREES, max_depth=DEPTH, max_bins=BINS,
                           n_jobs=args.threads, **PUBLIC)
    for setting in (0, 4):  # warm-up: both kernels' variants compiled or loaded
        histogram.TASKS_PER_THREAD = setting
        model.fit(X, y)
    rows = []
    for repeat in range(args.repeats):
        for setting in SETTINGS:
            histogram.TASKS_PER_THREAD = setting
            start = time.perf_counter()
            model.fit(X, y)
            rows.append({"rows": args.rows, "threads": args.threads, "repeat": repeat,
                         "tasks_per_thread": setting,
                         "fit_s": round(time.perf_counter() - start, 3)})
            print(rows[-1], flush=True)
    _harness.write_results("row_blocks" + (f"_{args.label}" if args.label else ""), rows)


if __name__ == "__main__":
    main()
