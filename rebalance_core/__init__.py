"""rebalance-replay's pure-Python protocol core: Kafka's group protocol as data and small functions.

No I/O, no clocks, no Spark here: time comes from the events.
"""

from rebalance_core.events import Event, TopicPartition

__all__ = ["Event", "TopicPartition"]
