"""Signals by which the storage pipeline tells the frontier when items are durable.

A popped request is acknowledged (removed from its worker's in-flight hash) only once the items
of its callback are committed or spooled, so that a hard kill re-fetches it instead of losing
its items. Sent by :class:`~blogfeeds.pipelines.blogs.StoragePipeline`; without
``storage_opened`` the scheduler acknowledges a request as soon as the engine has finished with it.
"""

batch_sealed = object()
"""Signal ``batch_sealed(seq: int)``: the storage pipeline took every item it had buffered into
a batch numbered ``seq`` (ascending)."""

batch_durable = object()
"""Signal ``batch_durable(seq: int)``: every batch up to ``seq`` is committed or spooled."""

storage_opened = object()
"""Signal ``storage_opened()``: a storage pipeline is on and will send the two signals above."""
