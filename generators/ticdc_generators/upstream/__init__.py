"""The upstream TiDB model: catalog, clock, DDL and transactions that TiDB would accept."""
from .cluster import Rejected, Upstream
from .txn import TxnBuilder

__all__ = ["Rejected", "TxnBuilder", "Upstream"]
