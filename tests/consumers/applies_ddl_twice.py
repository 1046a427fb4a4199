"""A deliberately broken consumer: it applies every DDL twice, as a consumer that takes the copy a
second partition carries for a second DDL would. Everything else follows the rules.

The checkpoint check must report CONSUMER-DDL-1 (and, where applying twice changes rows, as an
EXCHANGE PARTITION swapped back does, CONSUMER-CHECKPOINT-1).
"""
from _common import run

from ticdc_conformance.consumers.sequential.consumer import LocalConsumer


class AppliesDDLTwice(LocalConsumer):
    def apply_ddl(self, ev):
        super().apply_ddl(ev)
        super().apply_ddl(ev)


if __name__ == "__main__":
    run(AppliesDDLTwice)
