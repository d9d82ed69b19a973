"""
Training on Spark
=================

``dpboost.spark`` fits on Spark DataFrames: each task keeps its partition's records, binned on
the public grid, and returns sums of their statistics; the driver adds them and adds the noise
once. The estimator is a SparkML stage, and the released model is the one the in-memory fit
would give.

A ``local[2]`` SparkSession on 20,000 made-up records, 50 trees; on a cluster, the session your
platform gives and ``spark.read.parquet``. Spark needs a Java runtime.
"""

import numpy as np
import pandas as pd
from pyspark.ml import Pipeline
from pyspark.ml.feature import VectorAssembler
from pyspark.sql import SparkSession

from dpboost.spark import SparkDPGBClassifier

spark = (SparkSession.builder.master("local[2]").appName("dpboost-example")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, size=(20_000, 5))
y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(0, 0.3, 20_000) > 0.2).astype(int)
records = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)]).assign(label=y)
frame = spark.createDataFrame(records).repartition(4)

# %%
# Fit in a pipeline
# -----------------
# The public inputs are required: reading bounds or classes off a distributed data set would be
# a non-private pass over it. The assembler's vector column carries its size in its metadata.
assembler = VectorAssembler(inputCols=[f"x{j}" for j in range(5)], outputCol="features")
clf = SparkDPGBClassifier(epsilon=1.0, n_estimators=50, feature_bounds=(-1, 1), classes=[0, 1])
model = Pipeline(stages=[assembler, clf]).fit(frame)
scored = model.transform(frame)   # + prediction, probability, rawPrediction
accuracy = scored.selectExpr("avg(cast(prediction = label as double))").first()[0]
print(f"accuracy on the training records {accuracy:.3f}")

# %%
# Serve without Spark
# -------------------
local = model.stages[-1].to_local()   # a DPGBClassifier: pickle it, export it, predict on numpy
print(local.privacy_report().splitlines()[0])
spark.stop()
