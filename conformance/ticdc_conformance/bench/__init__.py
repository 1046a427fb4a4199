"""Benchmarks: figures and ratios measured in one run and printed, never asserted by unit tests.

- generate.py: generation speed and peak memory of the `large` scenario (`bench generate`);
- decode.py: each reference decoder's messages/s next to a bare parse of the same messages (`bench decode`);
- consume.py: the reference Spark consumer end to end, with the driver's peak memory (`bench consume`);
- pipeline.py: one input through every step side by side -- generate, the decoder alone, each consumer
  engine, the check of each output -- with the ratios and targets of pipeline_table.py (`bench pipeline`);
  steps.py runs its child processes, baseline.py / baseline.json hold the "before" figures it compares
  with (`bench baseline`), cluster.py starts a standalone Spark cluster for `--cluster`;
- inputs.py: the generated inputs both share, cached per scenario, seed, size and sink config;
- sampling.py: peak resident memory and CPU time of a process tree, and the machine load, sampled.
"""
