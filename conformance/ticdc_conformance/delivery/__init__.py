"""Delivery schedules: which records a consumer under test receives, in which order and poll
batches, and when it is stopped and started again (docs/delivery-schedules.md)."""
