"""The reference Spark consumer (job.py). Nothing here imports PySpark, so the names below are
readable without it."""

# A file that takes the Spark JVM's stdout and stderr (start-up notes, log4j, its Python workers),
# read by job.spark_session when it starts the JVM; `run` points it into its work folder, `consume`
# into its scratch folder (OUT/work) unless it is set.
SPARK_LOG_ENV = "TICDC_CONFORMANCE_SPARK_LOG"
