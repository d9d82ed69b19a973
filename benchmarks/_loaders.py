"""The one data loader of the benchmarks: ../shared/datasets (encoded, bounds, splits) and the
synthetic sets.

Every dataset is a dict (:func:`load`, :func:`synthetic`): ``X``, ``y``, ``bounds``, ``task``,
``target_bounds`` and, with a held-out split, ``X_test`` / ``y_test``. :func:`load_public` gives
Adult as a new user reads it (pandas frames and the public schema of ``dpboost.datasets``).

Feature bounds. Adult uses the public bounds and UCI category lists of ``dpboost.datasets``. For
the other datasets no data dictionary is at hand, so :data:`BOUNDS` holds constants written once from
each file's 0.5 % and 99.5 % quantiles, rounded outward to two significant digits. They stand in for
a data dictionary: the benchmark models are differentially private *given* these bounds, as in the
papers, which take their bins from the data; values outside are clipped. String categoricals are
coded by a fixed hash of the string into 32 buckets (bounds -0.5..31.5, one bucket per bin at
``max_bins=32``), which needs no category list read from the data; missing stays NaN.

Targets: binary labels as in the files (covtype: class 2 against the rest, as one binary task, or
its 7 classes with ``multiclass=True``);
regression targets are scaled into [-1, 1] by :data:`TARGET_BOUNDS` inside the regressor and RMSE is
reported in the original units.
"""

import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification
from sklearn.model_selection import KFold

from dpboost.datasets import SCHEMAS, estimator_params, load_encoded

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
N_HASH_BUCKETS = 32

#: name: (file stem, task); files with _train/_test have an official split.
DATASETS = {
    "adult": ("adult", "binary"),
    "cod_rna": ("cod_rna", "binary"),
    "covtype15k": ("covtype_kaggle15k", "binary"),
    "higgs7500": ("higgs_lightgbm7500", "binary"),
    "bank": ("bank_marketing", "binary"),
    "credit": ("default_credit_card", "binary"),
    "give_me_some_credit": ("give_me_some_credit", "binary"),
    "electricity": ("electricity", "binary"),
    "magic": ("magic_telescope", "binary"),
    "diabetes": ("diabetes130us", "binary"),
    "abalone": ("abalone", "regression"),
    "california": ("california_housing", "regression"),
    "house_16H": ("house_16H_pmlb", "regression"),
    "pol": ("pol_pmlb", "regression"),
    "nycflights": ("nycflights13_arr_delay", "regression"),
}

#: Public target ranges of the regression sets (abalone: rings 1-29 per UCI; California and
#: house_16H: census values top-coded at 500,001 USD; pol: 0-100 by construction; nycflights:
#: arrival delay in minutes, stand-in range from the quantiles like :data:`BOUNDS`).
TARGET_BOUNDS = {
    "abalone": (1.0, 29.0),
    "california": (0.0, 500_001.0),
    "house_16H": (0.0, 500_001.0),
    "pol": (0.0, 100.0),
    "nycflights": (-60.0, 300.0),
}

BOUNDS = {
    'abalone': {
        'length': (0.17, 0.75),
        'diameter': (0.12, 0.6),
        'height': (0.035, 0.23),
        'whole_weight': (0.024, 2.3),
        'shucked_weight': (0.0089, 1.2),
        'viscera_weight': (0.005, 0.52),
        'shell_weight': (0.0079, 0.68),
    },
    'bank': {
        'age': (22.0, 77.0),
        'balance': (-870.0, 19000.0),
        'day': (1.0, 31.0),
        'duration': (8.0, 1600.0),
        'campaign': (1.0, 21.0),
        'pdays': (-1.0, 410.0),
        'previous': (0.0, 12.0),
    },
    'california': {
        'longitude': (-130.0, -110.0),
        'latitude': (32.0, 41.0),
        'housing_median_age': (3.0, 52.0),
        'total_rooms': (81.0, 15000.0),
        'total_bedrooms': (18.0, 2700.0),
        'population': (49.0, 7300.0),
        'households': (17.0, 2500.0),
        'median_income': (0.92, 13.0),
    },
    'cod_rna': {
        'dynalign_deltaG_x10': (-1100.0, -49.0),
        'shorter_seq_length': (67.0, 130.0),
        'seq1_A_freq': (0.11, 0.46),
        'seq1_U_freq': (0.11, 0.4),
        'seq1_C_freq': (0.11, 0.36),
        'seq2_A_freq': (0.12, 0.42),
        'seq2_U_freq': (0.12, 0.38),
        'seq2_C_freq': (0.11, 0.36),
    },
    'covtype15k': {
        'Elevation': (1900.0, 3600.0),
        'Aspect': (0.0, 360.0),
        'Slope': (1.0, 39.0),
        'Horizontal_Distance_To_Hydrology': (0.0, 1100.0),
        'Vertical_Distance_To_Hydrology': (-47.0, 280.0),
        'Horizontal_Distance_To_Roadways': (90.0, 6000.0),
        'Hillshade_9am': (110.0, 260.0),
        'Hillshade_Noon': (140.0, 260.0),
        'Hillshade_3pm': (0.0, 240.0),
        'Horizontal_Distance_To_Fire_Points': (95.0, 6100.0),
        'Wilderness_Area1': (0.0, 1.0),
        'Wilderness_Area2': (0.0, 1.0),
        'Wilderness_Area3': (0.0, 1.0),
        'Wilderness_Area4': (0.0, 1.0),
        'Soil_Type1': (0.0, 1.0),
        'Soil_Type2': (0.0, 1.0),
        'Soil_Type3': (0.0, 1.0),
        'Soil_Type4': (0.0, 1.0),
        'Soil_Type5': (0.0, 1.0),
        'Soil_Type6': (0.0, 1.0),
        'Soil_Type7': (0.0, 1.0),
        'Soil_Type8': (0.0, 1.0),
        'Soil_Type9': (0.0, 1.0),
        'Soil_Type10': (0.0, 1.0),
        'Soil_Type11': (0.0, 1.0),
        'Soil_Type12': (0.0, 1.0),
        'Soil_Type13': (0.0, 1.0),
        'Soil_Type14': (0.0, 1.0),
        'Soil_Type15': (0.0, 1.0),
        'Soil_Type16': (0.0, 1.0),
        'Soil_Type17': (0.0, 1.0),
        'Soil_Type18': (0.0, 1.0),
        'Soil_Type19': (0.0, 1.0),
        'Soil_Type20': (0.0, 1.0),
        'Soil_Type21': (0.0, 1.0),
        'Soil_Type22': (0.0, 1.0),
        'Soil_Type23': (0.0, 1.0),
        'Soil_Type24': (0.0, 1.0),
        'Soil_Type25': (0.0, 1.0),
        'Soil_Type26': (0.0, 1.0),
        'Soil_Type27': (0.0, 1.0),
        'Soil_Type28': (0.0, 1.0),
        'Soil_Type29': (0.0, 1.0),
        'Soil_Type30': (0.0, 1.0),
        'Soil_Type31': (0.0, 1.0),
        'Soil_Type32': (0.0, 1.0),
        'Soil_Type33': (0.0, 1.0),
        'Soil_Type34': (0.0, 1.0),
        'Soil_Type35': (0.0, 1.0),
        'Soil_Type36': (0.0, 1.0),
        'Soil_Type37': (0.0, 1.0),
        'Soil_Type38': (0.0, 1.0),
        'Soil_Type39': (0.0, 1.0),
        'Soil_Type40': (0.0, 1.0),
    },
    'credit': {
        'LIMIT_BAL': (10000.0, 550000.0),
        'SEX': (1.0, 2.0),
        'EDUCATION': (1.0, 5.0),
        'MARRIAGE': (1.0, 3.0),
        'AGE': (22.0, 63.0),
        'PAY_0': (-2.0, 3.0),
        'PAY_2': (-2.0, 4.0),
        'PAY_3': (-2.0, 3.1),
        'PAY_4': (-2.0, 4.0),
        'PAY_5': (-2.0, 4.0),
        'PAY_6': (-2.0, 3.0),
        'BILL_AMT1': (-400.0, 420000.0),
        'BILL_AMT2': (-730.0, 400000.0),
        'BILL_AMT3': (-900.0, 390000.0),
        'BILL_AMT4': (-1100.0, 370000.0),
        'BILL_AMT5': (-1200.0, 340000.0),
        'BILL_AMT6': (-1500.0, 330000.0),
        'PAY_AMT1': (0.0, 100000.0),
        'PAY_AMT2': (0.0, 130000.0),
        'PAY_AMT3': (0.0, 110000.0),
        'PAY_AMT4': (0.0, 100000.0),
        'PAY_AMT5': (0.0, 110000.0),
        'PAY_AMT6': (0.0, 130000.0),
    },
    'diabetes': {
        'admission_type_id': (1.0, 6.0),
        'discharge_disposition_id': (1.0, 25.0),
        'admission_source_id': (1.0, 17.0),
        'time_in_hospital': (1.0, 14.0),
        'num_lab_procedures': (1.0, 89.0),
        'num_procedures': (0.0, 6.0),
        'num_medications': (2.0, 49.0),
        'number_outpatient': (0.0, 7.0),
        'number_emergency': (0.0, 5.0),
        'number_inpatient': (0.0, 7.0),
        'number_diagnoses': (2.0, 9.0),
    },
    'electricity': {
        'date': (0.00017, 0.99),
        'day': (1.0, 7.0),
        'period': (0.0, 1.0),
        'nswprice': (0.016, 0.22),
        'nswdemand': (0.063, 0.83),
        'vicprice': (0.00082, 0.012),
        'vicdemand': (0.1, 0.78),
        'transfer': (0.16, 0.9),
    },
    'give_me_some_credit': {
        'RevolvingUtilizationOfUnsecuredLines': (0.0, 1.4),
        'age': (23.0, 89.0),
        'NumberOfTime30-59DaysPastDueNotWorse': (0.0, 5.0),
        'DebtRatio': (0.0, 6200.0),
        'MonthlyIncome': (0.0, 35000.0),
        'NumberOfOpenCreditLinesAndLoans': (0.0, 27.0),
        'NumberOfTimes90DaysLate': (0.0, 4.0),
        'NumberRealEstateLoansOrLines': (0.0, 6.0),
        'NumberOfTime60-89DaysPastDueNotWorse': (0.0, 3.0),
        'NumberOfDependents': (0.0, 5.0),
    },
    'higgs7500': {
        'lepton_pT': (0.28, 3.4),
        'lepton_eta': (-2.3, 2.3),
        'lepton_phi': (-1.8, 1.8),
        'missing_energy_magnitude': (0.076, 3.3),
        'missing_energy_phi': (-1.8, 1.8),
        'jet1_pt': (0.31, 3.2),
        'jet1_eta': (-2.7, 2.7),
        'jet1_phi': (-1.8, 1.8),
        'jet1_btag': (0.0, 2.2),
        'jet2_pt': (0.28, 3.3),
        'jet2_eta': (-2.7, 2.7),
        'jet2_phi': (-1.8, 1.8),
        'jet2_btag': (0.0, 2.3),
        'jet3_pt': (0.28, 2.9),
        'jet3_eta': (-2.6, 2.6),
        'jet3_phi': (-1.8, 1.8),
        'jet3_btag': (0.0, 2.6),
        'jet4_pt': (0.37, 3.1),
        'jet4_eta': (-2.4, 2.4),
        'jet4_phi': (-1.8, 1.8),
        'jet4_btag': (0.0, 3.2),
        'm_jj': (0.29, 4.8),
        'm_jjj': (0.53, 3.2),
        'm_lv': (0.96, 2.0),
        'm_jlv': (0.48, 2.9),
        'm_bb': (0.17, 3.4),
        'm_wbb': (0.51, 2.9),
        'm_wwbb': (0.54, 2.5),
    },
    'house_16H': {
        'P1': (25.0, 150000.0),
        'P5p1': (0.4, 0.63),
        'P6p2': (0.0, 0.92),
        'P11p4': (0.0016, 0.48),
        'P14p9': (0.0, 0.31),
        'P15p1': (0.44, 0.98),
        'P15p3': (0.0, 0.42),
        'P16p2': (0.44, 0.97),
        'P18p2': (0.0, 0.03),
        'P27p4': (0.0, 0.19),
        'H2p2': (0.0, 0.71),
        'H8p2': (0.0, 0.9),
        'H10p1': (0.21, 1.0),
        'H13p1': (0.011, 0.84),
        'H18pA': (0.0, 0.5),
        'H40p4': (0.0, 1.0),
    },
    'magic': {
        'fLength': (12.0, 240.0),
        'fWidth': (0.0, 120.0),
        'fSize': (2.0, 4.4),
        'fConc': (0.052, 0.83),
        'fConc1': (0.027, 0.55),
        'fAsym': (-270.0, 160.0),
        'fM3Long': (-200.0, 150.0),
        'fM3Trans': (-84.0, 84.0),
        'fAlpha': (0.076, 90.0),
        'fDist': (31.0, 400.0),
    },
    'nycflights': {
        'month': (1.0, 12.0),
        'day': (1.0, 31.0),
        'dep_time': (510.0, 2400.0),
        'sched_dep_time': (540.0, 2300.0),
        'dep_delay': (-13.0, 240.0),
        'sched_arr_time': (15.0, 2400.0),
        'flight': (4.0, 5900.0),
        'distance': (110.0, 2600.0),
        'hour': (5.0, 22.0),
        'minute': (0.0, 59.0),
    },
    'pol': {
        'f1': (110.0, 111.0),
        'f2': (100.0, 101.0),
        'f3': (100.0, 101.0),
        'f4': (100.0, 101.0),
        'f5': (13.0, 180.0),
        'f6': (77.0, 170.0),
        'f7': (76.0, 160.0),
        'f8': (71.0, 160.0),
        'f9': (94.0, 160.0),
        'f10': (0.0, 1.0),
        'f11': (0.0, 1.0),
        'f12': (0.0, 1.0),
        'f13': (0.0, 71.0),
        'f14': (0.0, 86.0),
        'f15': (0.0, 87.0),
        'f16': (0.0, 89.0),
        'f17': (0.0, 87.0),
        'f18': (0.0, 88.0),
        'f19': (0.0, 76.0),
        'f20': (0.0, 65.0),
        'f21': (0.0, 60.0),
        'f22': (0.0, 60.0),
        'f23': (0.0, 57.0),
        'f24': (0.0, 46.0),
        'f25': (0.0, 48.0),
        'f26': (0.0, 44.0),
        'f27': (0.0, 41.0),
        'f28': (0.0, 45.0),
        'f29': (0.0, 37.0),
        'f30': (0.0, 28.0),
        'f31': (0.0, 29.0),
        'f32': (0.0, 28.0),
        'f33': (0.0, 20.0),
        'f34': (0.0, 1.0),
        'f35': (0.0, 1.0),
        'f36': (0.0, 1.0),
        'f37': (0.0, 1.0),
        'f38': (0.0, 1.0),
        'f39': (0.0, 1.0),
        'f40': (0.0, 1.0),
        'f41': (0.0, 1.0),
        'f42': (0.0, 1.0),
        'f43': (0.0, 1.0),
        'f44': (0.0, 1.0),
        'f45': (0.0, 1.0),
        'f46': (0.0, 1.0),
        'f47': (0.0, 1.0),
        'f48': (0.0, 1.0),
    },
}


def _hash_code(value):
    return np.nan if pd.isna(value) else float(zlib.crc32(str(value).encode()) % N_HASH_BUCKETS)


def _encode(name, frame):
    """Float matrix and (n_features, 2) bounds of one dataset's feature columns."""
    columns, bounds = [], []
    for column in frame.columns:
        if column in BOUNDS[name]:
            columns.append(frame[column].to_numpy(dtype=np.float64))
            bounds.append(BOUNDS[name][column])
        else:
            columns.append(frame[column].map(_hash_code).to_numpy(dtype=np.float64))
            bounds.append((-0.5, N_HASH_BUCKETS - 0.5))
    return np.column_stack(columns), np.array(bounds)


def _read(stem):
    frame = pd.read_csv(SHARED / f"{stem}.csv.gz", low_memory=False)
    return frame.drop(columns="target"), frame["target"].to_numpy()


def load(name, multiclass=False):
    """One dataset, encoded.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    multiclass : bool, default=False
        covtype15k: keep its 7 classes (1 ... 7) instead of "class 2 against the rest".

    Returns
    -------
    data : dict
        ``X`` (float64), ``y``, ``bounds`` (n_features, 2), ``task``, ``target_bounds`` (regression)
        and, for official splits, ``X_test``/``y_test``.
    """
    stem, task = DATASETS[name]
    data = {"task": task, "target_bounds": TARGET_BOUNDS.get(name)}
    if name == "adult":
        X, y, X_test, y_test, bounds, _ = load_encoded("adult", SHARED)
        return {**data, "X": X, "y": y, "X_test": X_test, "y_test": y_test, "bounds": bounds}
    if (SHARED / f"{stem}_train.csv.gz").exists():
        frame, y = _read(f"{stem}_train")
        test_frame, y_test = _read(f"{stem}_test")
        data["X_test"], _ = _encode(name, test_frame)
        data["y_test"] = y_test
    else:
        frame, y = _read(stem)
    if name == "covtype15k" and not multiclass:
        y = (y == 2).astype(np.int64)
    data["X"], data["bounds"] = _encode(name, frame)
    data["y"] = y.astype(np.float64) if task == "regression" else y
    return data


def splits(data, n_folds, seed=0, max_train=None, max_test=None):
    """Yield ``(fold, X_train, y_train, X_test, y_test)``.

    Official splits give ``n_folds`` repetitions of the same split (the models' seeds differ by
    fold); the others 5-fold cross-validation (shuffled, ``seed``), of which the first ``n_folds``.
    ``max_train`` / ``max_test`` subsample rows (fixed seed) for quick runs.
    """
    rng = np.random.default_rng(seed)

    def cap(X, y, limit):
        if limit is None or len(y) <= limit:
            return X, y
        keep = np.sort(rng.choice(len(y), size=limit, replace=False))
        return X[keep], y[keep]

    if "X_test" in data:
        X_train, y_train = cap(data["X"], data["y"], max_train)
        X_test, y_test = cap(data["X_test"], data["y_test"], max_test)
        for fold in range(n_folds):
            yield fold, X_train, y_train, X_test, y_test
        return
    folds = KFold(n_splits=5, shuffle=True, random_state=seed).split(data["X"])
    for fold, (train, test) in zip(range(n_folds), folds):
        yield (fold, *cap(data["X"][train], data["y"][train], max_train),
               *cap(data["X"][test], data["y"][test], max_test))


def available(names):
    """The names whose files are in the shared folder; prints a message for each missing one."""
    present = []
    for name in names:
        stem = DATASETS[name][0]
        if (SHARED / f"{stem}.csv.gz").exists() or (SHARED / f"{stem}_train.csv.gz").exists():
            present.append(name)
        else:
            print(f"skipping {name}: {stem} not found in {SHARED}")
    return present


def require_shared(dataset):
    """Exit with the missing paths unless every shared file of ``dataset`` (a public schema of
    ``dpboost.datasets``) is in :data:`SHARED`."""
    missing = [str(SHARED / f) for f in SCHEMAS[dataset].files if not (SHARED / f).exists()]
    if missing:
        sys.exit("needs " + " and ".join(missing))


def load_public(name):
    """``name`` as a new user gets it: ``dpboost.datasets.load`` (pandas frames read with
    ``pd.read_csv``, official split) and the estimator parameters of its public schema.

    Returns
    -------
    data : dict
        ``X``, ``X_test`` (DataFrame), ``y``, ``y_test`` (Series), ``task`` and ``params`` (the
        keyword arguments of ``dpboost.datasets.estimator_params``).
    """
    from dpboost.datasets import load as load_frames

    require_shared(name)
    X, y, X_test, y_test = load_frames(name, SHARED, random_state=0)
    return {"X": X, "y": y, "X_test": X_test, "y_test": y_test, "task": DATASETS[name][1],
            "params": estimator_params(name, X.columns)}


def synthetic(n_samples, n_features, train_share=0.8):
    """``make_classification(n_samples, n_features, random_state=0)``: the first ``train_share``
    of the rows to train on, the rest as the test set.

    Its features are standard-normal mixtures: the bounds +-8 are a public, generous box.
    """
    X, y = make_classification(n_samples=n_samples, n_features=n_features, random_state=0)
    n_train = int(train_share * n_samples)
    return {"X": X[:n_train], "y": y[:n_train], "X_test": X[n_train:], "y_test": y[n_train:],
            "bounds": np.tile([-8.0, 8.0], (n_features, 1)), "task": "binary",
            "target_bounds": None}
