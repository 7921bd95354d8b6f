"""Kafka's own logs (broker server.log, consumer / Connect / Streams client logs) -> canonical events.

Pure: text in, events + quarantine rows + line counts out. The message wordings are data
(`patterns.PATTERNS`), the line layouts are in `layouts`, the assembly in `parser`.
"""

from rebalance_core.kafka_logs.parser import ParseCounts, ParseResult, QuarantinedLine, parse_lines
from rebalance_core.kafka_logs.patterns import PATTERNS, MessagePattern

__all__ = ["PATTERNS", "MessagePattern", "ParseCounts", "ParseResult", "QuarantinedLine", "parse_lines"]
