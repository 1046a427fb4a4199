"""Delivery schedules: which records a consumer under test receives, in which order and poll
batches, and when it is stopped and started again (docs/delivery-schedules.md)."""
from .delivery import Delivery
from .late_join import LateJoinRefused, late_join_refusal
from .schedule import LATE_JOIN, MERGES, RESTARTS, Schedule
from .steps import AskTables, Commit, Poll, Restart, SnapshotRow, Start, Step, TopicPartition, offsets_from_json

__all__ = ["AskTables", "Commit", "Delivery", "LATE_JOIN", "LateJoinRefused", "MERGES", "Poll", "RESTARTS", "Restart", "Schedule",
           "SnapshotRow", "Start", "Step", "TopicPartition", "late_join_refusal",
           "offsets_from_json"]
