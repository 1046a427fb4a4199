"""Deliberately broken streaming consumers: each is the reference StreamingConsumer
(consumers/streaming/) with one rule broken, run as `python:tests.consumers.streaming.<module>:<Class>`.
Each bug needs a particular delivery schedule, configuration or restart to show; `fuzz` must find
every one of them (tests/fuzz/test_detection.py)."""
