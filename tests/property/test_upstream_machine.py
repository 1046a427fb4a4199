"""The stateful model of upstream TiDB: every rule keeps the history replayable, ordered, valid
and answerable at any earlier ts (see ticdc_generators/strategies/machine.py)."""
from ticdc_generators.strategies.machine import UpstreamMachine

TestUpstreamMachine = UpstreamMachine.TestCase
