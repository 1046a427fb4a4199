# Read by spark-class for the standalone cluster's master and workers (tests/e2e/test_spark_cluster.py):
# the quick compiler only, as for the drivers and executors in spark-defaults.conf.
SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1"
