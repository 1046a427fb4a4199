"""The failure every simulated-changefeed error shares.

Where real TiCDC stops a changefeed (a message over max-message-bytes, a column selection
without a usable key, an encoder that panics on a value), the simulator raises an error that is
also a `ChangefeedFailure`, so callers can tell "TiCDC fails here" from a bug in the suite.
"""
from __future__ import annotations


class ChangefeedFailure(Exception):
    """Real TiCDC would fail the changefeed at this event."""
