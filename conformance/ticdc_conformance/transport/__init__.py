"""The Kafka transport: a real broker between the generators' records and the consumer.

- maven.py: Apache Kafka's and Spark's jars from the Maven repository, resolved with Ivy, cached;
- broker.py: a local single-node KRaft broker run from those jars (KafkaBroker);
- provision.py: the suite's broker: testcontainers' Kafka where a Docker engine answers, else the local one;
- kafka_io.py: publish record files to a cluster exactly, and read topics back (kafka_records);
- spark_source.py: Spark's own Kafka source for the same topics (spark_source);

Record files (the embedded default) and a topic hold the same columns, so every consumer reads
either. See docs/kafka.md.
"""
