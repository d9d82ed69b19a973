"""Public schemas of the shared Adult and Diabetes130US files, and their path from ``pd.read_csv``.

A schema holds what a data holder can know without reading the records: the numeric columns' bounds
and the categorical columns' category lists, taken from each dataset's published documentation
(a bound no documentation gives is a round, generous choice, its reason written beside it), never
computed from the files. With them, a DataFrame read by ``pd.read_csv`` (string columns, NaN
and all) goes straight to ``DPGBClassifier`` without a :class:`~dpboost.PrivacyLeakWarning`.

Missing values. The shared files store them as empty fields (their README); the UCI originals write
``?``. Both are read as NaN. pandas' other default NA markers are switched off because Diabetes130US
has a real category spelled ``None`` ("test not taken" in max_glu_serum and A1Cresult), which pandas
would otherwise read as missing. NaN and values outside a public list share the missing-value bin.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Strings read as NaN: empty fields (the shared files) and UCI's ``?`` marker.
NA_VALUES = ("", "?")


@dataclass(frozen=True)
class Schema:
    """Public description of one dataset.

    Parameters
    ----------
    files : tuple of str
        ``(train, test)`` for an official split, or one file that :func:`load` splits.
    bounds : dict of str to (float, float)
        Public ``(lower, upper)`` of each numeric column; values outside are clipped.
    categories : dict of str to list
        Public category list of each categorical column, in the order that defines the split
        candidates ("first k categories vs the rest").
    classes : tuple, default=(0, 1)
        Public labels of the ``target`` column (both shared files code their label 0 / 1).
    """

    files: tuple
    bounds: dict
    categories: dict
    classes: tuple = (0, 1)


#: Adult's numeric ranges. Each bound is documented or, where no documentation gives one, a round
#: generous choice with its reason; none is read from the files (tests/test_datasets_schema.py checks
#: that no bound sits on a data extreme unless it is a documented code range or top-code). Sources:
#: UCI adult.names (extraction conditions AAGE>16, AGI>100, AFNLWGT>1, HRSWK>0) and the March 1994
#: Current Population Survey (CPS) the records were extracted from.
_ADULT_BOUNDS = {
    # adult.names, extraction condition AAGE>16 (17 and over); the CPS top-codes age at 90
    # (IPUMS-CPS, unharmonized age UH_AGE_B3: "top coded at 90 for July 1985-December 2002").
    "age": (17.0, 90.0),
    # The CPS final weight A_FNLWGT, in hundredths of a person (2 implied decimal places), positive
    # (adult.names, AFNLWGT>1); no documented maximum. A round 2,000,000 (20,000 persons a record)
    # is over ten times the average weight (US population / persons in the March CPS, about 260
    # million / 150,000 = 1,700).
    "fnlwgt": (0.0, 2_000_000.0),
    # The 16 education values of adult.names, numbered 1 (Preschool) to 16 (Doctorate): the CPS
    # educational-attainment codes A-HGA 31-46 (their 1992 revision) minus 30.
    "education_num": (1.0, 16.0),
    # Tax-model amounts of the March CPS, not negative: net gain and net loss are separate fields,
    # one of them always zero (IPUMS-CPS, CAPGAIN and CAPLOSS). The capital-gain field has five
    # digits and is top-coded (IPUMS-CPS, CAPGAIN); 99,999 is its largest value.
    "capital_gain": (0.0, 99_999.0),
    # No documented maximum below the field's five digits (IPUMS-CPS, CAPLOSS). A round 10,000,
    # over three times the $3,000 yearly limit on net capital loss deductible from other income
    # (26 U.S.C. 1211(b)); larger losses are clipped. (It was 4,356: the training file's maximum.)
    "capital_loss": (0.0, 10_000.0),
    # adult.names, extraction condition HRSWK>0 (whole hours, so 1 and over); the March CPS
    # top-codes hours worked last week at 99 (IPUMS-CPS, AHRSWORKT: "the top-code in the ...
    # 1968-2014 ASEC samples is 99").
    "hours_per_week": (1.0, 99.0),
}

#: Adult's category lists, in the order of UCI adult.names.
_ADULT_CATEGORIES = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                  "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th",
                  "Doctorate", "5th-6th", "Preschool"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native_country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
        "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
        "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
        "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
        "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"],
}


def _icd9_codes():
    """ICD-9-CM diagnosis codes in the spelling of the Diabetes130US file, in code order.

    Strack et al. (2014) code diagnoses by the first three digits of ICD-9 (the file drops leading
    zeros: ``"8"`` is 008), keeping the diabetes subcodes 250.xy (4th digit 0-9, 5th digit 0-3;
    the file writes 250.10 as ``"250.1"`` and 250.00 as ``"250"``), then the supplementary V01-V91
    and E800-E999 codes. Code order keeps each ICD chapter contiguous, so "first k codes vs the
    rest" splits at chapter-like boundaries. Any other code (a finer subcode) is unknown and goes to
    the missing-value bin.
    """
    diabetes = [f"250.{x}{y}".rstrip("0").rstrip(".") for x in range(10) for y in range(4)]
    codes = []
    for n in range(1, 1000):
        codes += diabetes if n == 250 else [str(n)]
    return (codes + [f"V{n:02d}" for n in range(1, 92)]
            + [f"E{n}" for n in range(800, 1000)])


#: The 23 medication columns of Diabetes130US (Strack et al. 2014, Table 1, where sitagliptin is
#: the file's "citoglipton"); each is "up", "down", "steady" or "no" (not prescribed).
_DIABETES_DRUGS = [
    "metformin", "repaglinide", "nateglinide", "chlorpropamide", "glimepiride", "acetohexamide",
    "glipizide", "glyburide", "tolbutamide", "pioglitazone", "rosiglitazone", "acarbose", "miglitol",
    "troglitazone", "tolazamide", "examide", "citoglipton", "insulin", "glyburide-metformin",
    "glipizide-metformin", "glimepiride-pioglitazone", "metformin-rosiglitazone",
    "metformin-pioglitazone"]

#: Diabetes130US's numeric ranges. Strack et al. (2014, Table 1) describe each count but give no
#: range; the one documented range is the stay's, an extraction criterion. Every other bound is a
#: round generous choice with its reason, none read from the file; larger values are clipped.
_DIABETES_BOUNDS = {
    # "Integer number of days between admission and discharge" (Table 1); extraction criterion
    # (3): "the length of stay was at least 1 day and at most 14 days" (Strack et al. 2014, Sec.
    # 2; UCI dataset page, "Additional Information").
    "time_in_hospital": (1.0, 14.0),
    # Lab tests during the encounter (Table 1), at least one by extraction criterion (4); 0 kept
    # as the counts' natural floor. 150: about ten tests a day over the longest (14-day) stay.
    "num_lab_procedures": (0.0, 150.0),
    # Procedures other than lab tests during the encounter (Table 1): a generous round 10.
    "num_procedures": (0.0, 10.0),
    # Distinct generic drug names given during the encounter (Table 1), at least one by
    # extraction criterion (5); 0 kept as the counts' floor. A generous round 100.
    "num_medications": (0.0, 100.0),
    # Outpatient, emergency and inpatient visits in the year before the encounter (Table 1):
    # [0, 32), which at the default 32 bins gives every count from 0 to 31 its own bin.
    "number_outpatient": (0.0, 32.0),
    "number_emergency": (0.0, 32.0),
    "number_inpatient": (0.0, 32.0),
    # Diagnoses entered to the system (Table 1): 25, the most diagnosis codes an electronic US
    # hospital claim (ASC X12 837I) carries, a principal and 24 others.
    "number_diagnoses": (0.0, 25.0),
}

#: Diabetes130US's category lists, in the spelling of the file. Strack et al. 2014, Table 1:
#: race, gender, age (10-year groups), weight (25-pound groups), the lab results, the medication
#: changes, change and diabetesMed. admission_type_id, discharge_disposition_id and
#: admission_source_id are integer codes whose lists are the dataset's IDs_mapping.csv (UCI). For
#: payer_code (23 values) and medical_specialty (84 values) the documentation names only examples
#: (Blue Cross/Blue Shield, Medicare, self-pay; cardiology, internal medicine, family/general
#: practice, surgeon): only those are listed, every other value shares the missing-value bin.
_DIABETES_CATEGORIES = {
    "race": ["Caucasian", "Asian", "AfricanAmerican", "Hispanic", "Other"],
    "gender": ["Female", "Male", "Unknown/Invalid"],
    "age": [f"[{a}-{a + 10})" for a in range(0, 100, 10)],
    "weight": [f"[{w}-{w + 25})" for w in range(0, 200, 25)] + [">200"],
    "admission_type_id": list(range(1, 9)),
    "discharge_disposition_id": list(range(1, 31)),
    "admission_source_id": [*range(1, 16), *range(17, 27)],
    "payer_code": ["BC", "MC", "SP"],
    "medical_specialty": ["Cardiology", "InternalMedicine", "Family/GeneralPractice", "Surgeon"],
    **dict.fromkeys(["diag_1", "diag_2", "diag_3"], _icd9_codes()),
    "max_glu_serum": ["None", "Norm", ">200", ">300"],
    "A1Cresult": ["None", "Norm", ">7", ">8"],
    **{drug: ["Up", "Down", "Steady", "No"] for drug in _DIABETES_DRUGS},
    "change": ["Ch", "No"],
    "diabetesMed": ["Yes", "No"],
}

SCHEMAS = {
    "adult": Schema(("adult_train.csv.gz", "adult_test.csv.gz"), _ADULT_BOUNDS,
                    _ADULT_CATEGORIES),
    "diabetes": Schema(("diabetes130us.csv.gz",), _DIABETES_BOUNDS, _DIABETES_CATEGORIES),
}


def read_csv(path, target="target"):
    """Read a (gzipped) CSV with pandas; empty fields and ``?`` are NaN, nothing else is.

    Parameters
    ----------
    path : path-like
    target : str, default="target"
        The label column.

    Returns
    -------
    X : pandas.DataFrame
        Every column but ``target``, with pandas' dtypes (strings stay strings).
    y : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        ``target`` is not a column of the file.
    """
    import pandas as pd

    frame = pd.read_csv(path, keep_default_na=False, na_values=list(NA_VALUES),
                        low_memory=False)
    if target not in frame.columns:
        raise ValueError(f"target={target!r} is not a column of {path}; columns: "
                         f"{list(frame.columns)}")
    return frame.drop(columns=target), frame[target].to_numpy()


def load(name, folder, test_size=0.2, random_state=0):
    """Train and test DataFrames of a shared dataset, as ``pd.read_csv`` gives them.

    Parameters
    ----------
    name : {"adult", "diabetes"}
    folder : path-like
        The shared datasets folder.
    test_size : float, default=0.2
        Fraction held out when the dataset has no official split (Diabetes130US), stratified.
    random_state : int, default=0
        Seed of that split.

    Returns
    -------
    X_train, y_train, X_test, y_test : DataFrame, ndarray, DataFrame, ndarray
    """
    from sklearn.model_selection import train_test_split

    files = [Path(folder) / f for f in SCHEMAS[name].files]
    if len(files) == 2:
        return (*read_csv(files[0]), *read_csv(files[1]))
    X, y = read_csv(files[0])
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, stratify=y, random_state=random_state)
    return X_train, y_train, X_test, y_test


def estimator_params(name, columns):
    """The public inputs of ``DPGBClassifier`` for a dataset's columns.

    Parameters
    ----------
    name : {"adult", "diabetes"}
    columns : sequence of str
        The DataFrame's columns, in order.

    Returns
    -------
    params : dict
        ``feature_bounds`` (ndarray of shape (n_columns, 2); a categorical row is
        ``(-0.5, n_categories - 0.5)``, the row the estimator uses), ``categorical_features``
        (names), ``categories`` (dict by name) and ``classes`` (the schema's, [0, 1]).

    Raises
    ------
    ValueError
        A column with neither a public bound nor a public category list in the schema.
    """
    schema = SCHEMAS[name]
    unknown = [c for c in columns if c not in schema.bounds and c not in schema.categories]
    if unknown:
        raise ValueError(f"columns {unknown} have no public bound or category list in the "
                         f"{name!r} schema.")
    categorical = [c for c in columns if c in schema.categories]
    bounds = [schema.bounds[c] if c in schema.bounds
              else (-0.5, len(schema.categories[c]) - 0.5) for c in columns]
    return {"feature_bounds": np.array(bounds, dtype=np.float64),
            "categorical_features": categorical,
            "categories": {c: schema.categories[c] for c in categorical},
            "classes": list(schema.classes)}


def load_encoded(name, folder):
    """A shared dataset as float matrices: each category replaced by its position in the public
    list, unknown and missing values NaN -- the matrix the estimator builds from the DataFrame, so
    a model fitted on it with ``feature_bounds`` equals one fitted on the DataFrame. For scripts
    that index rows with numpy (the benchmarks).

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarray
        Features as float64.
    feature_bounds : ndarray of shape (n_features, 2)
    feature_names : list of str
    """
    from ._categories import encode_categorical

    X_train, y_train, X_test, y_test = load(name, folder)
    columns = X_train.columns
    params = estimator_params(name, columns)
    lists = {columns.get_loc(c): np.array(v, dtype=object)
             for c, v in params["categories"].items()}
    X_train, X_test = (encode_categorical(X, lists).to_numpy(dtype=np.float64)
                       for X in (X_train, X_test))
    return X_train, y_train, X_test, y_test, params["feature_bounds"], list(columns)
