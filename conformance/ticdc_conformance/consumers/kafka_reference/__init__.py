"""The reference Kafka black-box consumer for the `kafka:` mode (docs/consumer-modes.md): reads the
topics with confluent-kafka up to the end offsets, runs the reference sequential consumer on the
records and writes the OUT folder (`--out`) or the final tables into a database (`--jdbc`).

    python -m ticdc_conformance.consumers.kafka_reference --bootstrap-servers H:P --topics T \
        --group-id G --end-offsets T:0=115,T:1=113 --manifest FILE (--out DIR | --jdbc URL)
"""
