"""Shared helpers of the benchmark scripts: machine facts and result files."""

import argparse
import csv
import json
import os
import platform
import sys
import warnings
from pathlib import Path

from dpboost import ReproducibleNoiseWarning

#: Every benchmark seeds numpy's noise so that its tables are reproducible: it opts in here, once,
#: and says so on stdout and in every result's machine facts.
NOISE_NOTE = ("noise: seeded fits use numpy's (reproducible, hence predictable): such models are for "
              "measurement, NOT for release")
warnings.filterwarnings("ignore", category=ReproducibleNoiseWarning)
print(f"[benchmarks] {NOISE_NOTE}", file=sys.stderr)

RESULTS = Path(__file__).resolve().parent / "results"
SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"


def machine_facts():
    """Facts to record beside every figure: CPU, cores, library versions, thread settings."""
    import numba
    import numpy
    import sklearn

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if "model name" in line)
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "python": sys.version.split()[0],
        "numpy": numpy.__version__, "numba": numba.__version__, "sklearn": sklearn.__version__,
        "numba_threads": numba.get_num_threads(), "noise": NOISE_NOTE,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", ""),
    }


def require_shared(dataset):
    """Exit with the missing paths unless every shared file of ``dataset`` (a public schema of
    ``dpboost.datasets``) is in :data:`SHARED`."""
    from dpboost.datasets import SCHEMAS

    missing = [str(SHARED / f) for f in SCHEMAS[dataset].files if not (SHARED / f).exists()]
    if missing:
        sys.exit("needs " + " and ".join(missing))


def write_results(name, rows):
    """Write ``rows`` (list of dicts) to ``results/<name>.csv`` and machine facts beside them."""
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / f"{name}.csv", "w", newline="") as fh:
        # rows may differ in their metric columns (error/auc or rmse): the union, blanks elsewhere
        writer = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        writer.writeheader()
        writer.writerows(rows)
    with open(RESULTS / f"{name}.machine.json", "w") as fh:
        json.dump(machine_facts(), fh, indent=1)


def print_table(rows):
    """Print ``rows`` (list of dicts) as an aligned plain-text table."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[f"{r[k]:.4g}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys]
             for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    print("  ".join(k.rjust(w) for k, w in zip(keys, widths)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)))


def paper_parser(doc, datasets):
    """Command line of the paper-reproduction scripts: ``--quick`` and ``--datasets``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller settings (module docstring)")
    parser.add_argument("--datasets", nargs="+", choices=list(datasets), help="only these datasets")
    return parser


def result_name(base, args):
    """``base`` with ``_quick`` / ``_subset`` so that partial runs never overwrite full results."""
    return base + ("_quick" if args.quick else "") + ("_subset" if args.datasets else "")


def label_panel(ax, title, xlabel, ylabel):
    """Small-font title and axis labels of one panel of a grid of plots."""
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)


def save_figure(fig, axes, n_panels, path):
    """Legend on the first panel, the panels after ``n_panels`` blanked, tight layout, PNG."""
    for ax in list(axes.flat)[n_panels:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
