"""The example messages of the protocol specs, as data, and what it takes to reproduce them.

Each file in examples/ is one example message (or message fragment) of a spec in shared/specs/:
where it is, its verbatim text, the upstream event that produces it, the expected message, and
the fields left out of the comparison with the reason. The encoder tests encode each example's
events, the decoder tests decode its message, and protocol tests take spec messages from it by id
(corpus.py). README.md describes the file format;
docs/spec-examples.md the outcome per example.
"""
