"""A tiny declarative column model, so every schema is written once.

Each table (the canonical event log, the output tables) is a tuple of `Column`s. From it we derive the
Spark `StructType` (Spark layer), the Arrow schema (pandas/`mapInPandas`/delta-rs) and a JSON Schema
(documentation, validation of JSON-lines input). pyspark is imported lazily: the protocol core imports
this package and must stay free of Spark.
"""

from __future__ import annotations

from dataclasses import dataclass

# Logical types. Composite types are fixed shapes used by several tables.
STRING = "string"
INT = "int"  # 32-bit
LONG = "long"  # 64-bit
BOOLEAN = "boolean"
DOUBLE = "double"
TIMESTAMP = "timestamp"  # UTC instant, microsecond precision in Spark/Arrow; epoch ms in the core
DATE = "date"
STRINGS = "array<string>"
PARTITIONS = "array<struct<topic:string,partition:int>>"
ASSIGNMENT = "map<string,array<struct<topic:string,partition:int>>>"
ATTRIBUTES = "map<string,string>"
COUNTS = "map<string,long>"

LOGICAL_TYPES = (
    STRING,
    INT,
    LONG,
    BOOLEAN,
    DOUBLE,
    TIMESTAMP,
    DATE,
    STRINGS,
    PARTITIONS,
    ASSIGNMENT,
    ATTRIBUTES,
    COUNTS,
)


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    required: bool = False
    doc: str = ""

    def __post_init__(self) -> None:
        if self.type not in LOGICAL_TYPES:
            raise ValueError(f"unknown logical type {self.type!r} for column {self.name!r}")


def column_names(columns: tuple[Column, ...]) -> list[str]:
    return [c.name for c in columns]


# --------------------------------------------------------------------------------------------- Arrow
def _arrow_type(logical: str):
    import pyarrow as pa

    tp = pa.struct([pa.field("topic", pa.string()), pa.field("partition", pa.int32())])
    return {
        STRING: pa.string(),
        INT: pa.int32(),
        LONG: pa.int64(),
        BOOLEAN: pa.bool_(),
        DOUBLE: pa.float64(),
        TIMESTAMP: pa.timestamp("us", tz="UTC"),
        DATE: pa.date32(),
        STRINGS: pa.list_(pa.string()),
        PARTITIONS: pa.list_(tp),
        ASSIGNMENT: pa.map_(pa.string(), pa.list_(tp)),
        ATTRIBUTES: pa.map_(pa.string(), pa.string()),
        COUNTS: pa.map_(pa.string(), pa.int64()),
    }[logical]


def arrow_schema(columns: tuple[Column, ...]):
    import pyarrow as pa

    return pa.schema([pa.field(c.name, _arrow_type(c.type), nullable=not c.required) for c in columns])


# --------------------------------------------------------------------------------------------- Spark
def _spark_type(logical: str):
    from pyspark.sql import types as T

    tp = T.StructType(
        [T.StructField("topic", T.StringType(), True), T.StructField("partition", T.IntegerType(), True)]
    )
    return {
        STRING: T.StringType(),
        INT: T.IntegerType(),
        LONG: T.LongType(),
        BOOLEAN: T.BooleanType(),
        DOUBLE: T.DoubleType(),
        TIMESTAMP: T.TimestampType(),
        DATE: T.DateType(),
        STRINGS: T.ArrayType(T.StringType(), True),
        PARTITIONS: T.ArrayType(tp, True),
        ASSIGNMENT: T.MapType(T.StringType(), T.ArrayType(tp, True), True),
        ATTRIBUTES: T.MapType(T.StringType(), T.StringType(), True),
        COUNTS: T.MapType(T.StringType(), T.LongType(), True),
    }[logical]


def spark_schema(columns: tuple[Column, ...]):
    """Spark StructType. Every field is nullable: Spark does not enforce nullability on read, and
    required fields are checked explicitly (a missing one sends the row to quarantine)."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(c.name, _spark_type(c.type), True) for c in columns])


def spark_ddl(columns: tuple[Column, ...]) -> str:
    """DDL string (`name TYPE, ...`), handy for `mapInPandas(fn, schema=...)` and SQL."""
    return spark_schema(columns).simpleString()[len("struct<") : -1]


# ------------------------------------------------------------------------------------- JSON Schema
_TP_JSON = {
    "type": "object",
    "properties": {"topic": {"type": "string"}, "partition": {"type": "integer", "minimum": 0}},
    "required": ["topic", "partition"],
}


def _json_type(logical: str) -> dict:
    return {
        STRING: {"type": "string"},
        INT: {"type": "integer"},
        LONG: {"type": "integer"},
        BOOLEAN: {"type": "boolean"},
        DOUBLE: {"type": "number"},
        TIMESTAMP: {
            "description": "UTC instant: ISO-8601 string (Z or offset) or epoch milliseconds",
            "anyOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}],
        },
        DATE: {"type": "string", "format": "date"},
        STRINGS: {"type": "array", "items": {"type": "string"}},
        PARTITIONS: {"type": "array", "items": _TP_JSON},
        ASSIGNMENT: {"type": "object", "additionalProperties": {"type": "array", "items": _TP_JSON}},
        ATTRIBUTES: {"type": "object", "additionalProperties": {"type": "string"}},
        COUNTS: {"type": "object", "additionalProperties": {"type": "integer"}},
    }[logical]


def json_schema(
    columns: tuple[Column, ...], *, title: str, schema_id: str, extra: dict | None = None
) -> dict:
    props = {}
    for c in columns:
        t = dict(_json_type(c.type))
        if not c.required:
            t = {"anyOf": [t, {"type": "null"}]}
        if c.doc:
            t["description"] = c.doc
        props[c.name] = t
    out = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id,
        "title": title,
        "type": "object",
        "properties": props,
        "required": [c.name for c in columns if c.required],
    }
    if extra:
        out.update(extra)
    return out
