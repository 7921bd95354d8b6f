# Databricks notebook source
# MAGIC %md
# MAGIC # Rebalance report
# MAGIC
# MAGIC What rebalances cost each consumer group: stop-the-world time, partition unavailability, churn,
# MAGIC the ownership timeline of every partition, and what-if scenarios against the actual replay.
# MAGIC
# MAGIC Reads the Delta tables written by `rebalance-replay run` / `whatif`. On Databricks it reads the
# MAGIC tables through Spark (widget `warehouse`: a path, or `catalog.schema` for metastore tables);
# MAGIC locally (Jupyter) it reads with `deltalake` the warehouse the job wrote: `REBALANCE_WAREHOUSE`,
# MAGIC else the `warehouse` of the conf file `REBALANCE_CONF` (default `conf/local.yaml`), a relative
# MAGIC path being from the project root (the folder holding `conf/`), as `rebalance-replay run` run there.

# COMMAND ----------

import json
import os

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

try:  # Databricks: widgets for date / group / scenario
    dbutils.widgets.text("warehouse", "")  # noqa: F821
    dbutils.widgets.text("date", "")  # noqa: F821
    dbutils.widgets.text("group", "")  # noqa: F821
    dbutils.widgets.text("scenario", "")  # noqa: F821
    WAREHOUSE = dbutils.widgets.get("warehouse")  # noqa: F821
    DATE = dbutils.widgets.get("date")  # noqa: F821
    GROUP = dbutils.widgets.get("group")  # noqa: F821
    SCENARIO = dbutils.widgets.get("scenario")  # noqa: F821
    ON_DATABRICKS = True
except NameError:  # local Jupyter: the same parameters from the environment
    ON_DATABRICKS = False


def local_warehouse() -> str:
    """The warehouse `rebalance-replay run` wrote when run from the project root: REBALANCE_WAREHOUSE,
    else the conf file's `warehouse` (REBALANCE_CONF, else conf/local.yaml), relative to the root."""
    if os.environ.get("REBALANCE_WAREHOUSE"):
        return os.environ["REBALANCE_WAREHOUSE"]
    root = here = os.path.abspath(os.getcwd())  # Jupyter starts a notebook in its own folder
    for folder in (here, os.path.dirname(here)):
        if os.path.exists(os.path.join(folder, "conf", "local.yaml")):
            root = folder
            break
    configured = "./warehouse"
    conf = os.environ.get("REBALANCE_CONF") or os.path.join(root, "conf", "local.yaml")
    if os.path.exists(conf):
        import yaml

        with open(conf) as f:
            configured = (yaml.safe_load(f) or {}).get("warehouse") or configured
    if "://" in configured or os.path.isabs(configured):
        return configured
    return os.path.normpath(os.path.join(root, configured))


if not ON_DATABRICKS:
    WAREHOUSE = local_warehouse()
    DATE = os.environ.get("REBALANCE_DATE", "")
    GROUP = os.environ.get("REBALANCE_GROUP", "")
    SCENARIO = os.environ.get("REBALANCE_SCENARIO", "")


def load(table: str, filtered: bool = True) -> pd.DataFrame:
    """One table as pandas, filtered by the widgets (empty widget = no filter)."""
    if ON_DATABRICKS:
        if "/" in WAREHOUSE or WAREHOUSE.startswith("dbfs:"):
            df = spark.read.format("delta").load(f"{WAREHOUSE.rstrip('/')}/{table}")  # noqa: F821
        else:
            df = spark.read.table(f"{WAREHOUSE}.{table}" if WAREHOUSE else table)  # noqa: F821
        pdf = df.toPandas()
    else:
        from deltalake import DeltaTable

        path = os.path.join(WAREHOUSE, table)
        if not os.path.exists(os.path.join(path, "_delta_log")):
            return pd.DataFrame()
        pdf = DeltaTable(path).to_pandas()
    if pdf.empty or not filtered:
        return pdf
    if DATE and "event_date" in pdf:
        pdf = pdf[pdf["event_date"].astype(str) == DATE]
    if GROUP and "group_id" in pdf:
        pdf = pdf[pdf["group_id"] == GROUP]
    return pdf


summary = load("group_daily_summary")
generations = load("generations")
assignments = load("assignments")
movements = load("partition_movements")
episodes = load("rebalance_episodes")
incidents = load("rebalance_incidents")
comparison = load("whatif_comparison")
if ON_DATABRICKS or os.path.isdir(WAREHOUSE) or "://" in WAREHOUSE:
    print(f"warehouse: {WAREHOUSE}")
else:
    print(
        f"warehouse: {WAREHOUSE} does not exist: run `rebalance-replay run` from the project root, or set "
        "REBALANCE_WAREHOUSE (or REBALANCE_CONF) to the warehouse the job wrote"
    )
print(f"{len(summary)} group-days, {len(generations)} generations, {len(movements)} partition movements")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Warehouse status
# MAGIC
# MAGIC A run commits its tables one at a time, between a `run_accounting` record saying `writing` and one
# MAGIC saying `finished`. A record still saying `writing` is a run that stopped half-way: until a rerun of
# MAGIC its dates completes it, the tables it committed ("ahead") hold its rows and the others the
# MAGIC previous run's, so figures joining them mix two runs.

# COMMAND ----------


def commit_run_ids(table: str) -> set:
    """Run ids of the table's commits: each commit of the job names its run in Delta's userMetadata."""
    if ON_DATABRICKS:
        name = f"delta.`{WAREHOUSE.rstrip('/')}/{table}`" if "/" in WAREHOUSE else f"{WAREHOUSE}.{table}"
        texts = [r.userMetadata for r in spark.sql(f"DESCRIBE HISTORY {name}").collect()]  # noqa: F821
    else:
        from deltalake import DeltaTable

        path = os.path.join(WAREHOUSE, table)
        if not os.path.exists(os.path.join(path, "_delta_log")):
            return set()
        texts = [commit.get("userMetadata") for commit in DeltaTable(path).history()]
    ids = set()
    for text in texts:
        try:
            ids.add(json.loads(text)["run_id"])
        except (TypeError, ValueError, KeyError):
            continue
    return ids


TABLES = ["events", "quarantine", "generations", "assignments", "partition_movements", "rebalance_episodes",
          "group_daily_summary", "anomalies", "group_state", "rebalance_incidents", "group_coordinators",
          "coordinator_placement", "whatif_comparison"]  # fmt: skip
accounting = load("run_accounting", filtered=False)
writing = accounting[accounting["status"] == "writing"] if "status" in accounting else accounting.iloc[0:0]
for run_id, rows in writing.groupby("run_id"):
    dates = sorted(str(d) for d in rows["event_date"])
    ahead = [t for t in TABLES if run_id in commit_run_ids(t)] or ["none yet"]
    print(
        f"WAREHOUSE MID-RUN: run {run_id} on {dates[0]}..{dates[-1]} ({rows['scenario'].iloc[0]}) did not "
        f"finish; tables ahead: {', '.join(ahead)}; the others hold the previous run's rows. "
        "Rerun those dates to complete it; until then the figures below mix two runs."
    )
if writing.empty:
    print("warehouse: every run finished")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Per group and day: rebalances, stop-the-world, churn

# COMMAND ----------

actual = summary[summary["scenario"] == (SCENARIO or "actual")] if not summary.empty else summary
cols = [
    "cluster",
    "group_id",
    "event_date",
    "rebalances",
    "generations",
    "stw_ms",
    "partition_unavailable_ms",
    "max_partition_unavailable_ms",
    "partitions_moved",
    "partitions_revoked",
    "revocations_wasted",
]
table = (
    actual[cols].sort_values(["event_date", "stw_ms"], ascending=[True, False])
    if not actual.empty
    else actual
)
table  # noqa: B018  (a notebook cell displays its last expression)

# COMMAND ----------

# MAGIC %md
# MAGIC ## Stop-the-world and partition-unavailable time per day

# COMMAND ----------

if not actual.empty:
    per_day = actual.groupby("event_date")[["stw_ms", "partition_unavailable_ms"]].sum() / 1000.0
    # two measures, two units: stop-the-world in seconds, unavailability in partition-seconds
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    per_day["stw_ms"].plot.bar(ax=left, color="tab:blue", title="Stop-the-world per day (all groups)")
    left.set_ylabel("seconds")
    per_day["partition_unavailable_ms"].plot.bar(
        ax=right, color="tab:orange", title="Partition-unavailable per day (all groups)"
    )
    right.set_ylabel("partition-seconds")
    for ax in (left, right):
        ax.set_xlabel("")
        ax.tick_params(axis="x", labelrotation=0)
    plt.tight_layout()
    plt.show()

# COMMAND ----------

# MAGIC ## Top groups by churn

# COMMAND ----------

if not actual.empty:
    churn = (
        actual.groupby(["cluster", "group_id"])[
            ["partitions_moved", "partitions_revoked", "revocations_wasted"]
        ]
        .sum()
        .sort_values("partitions_revoked", ascending=False)
        .head(10)
    )
    churn.index = [f"{c}/{g}" for c, g in churn.index]
    churn.columns = ["moved", "revoked", "wasted revocations"]
    ax = churn.plot.barh(figsize=(9, 0.9 + 0.4 * len(churn)), title="Top groups by churn")
    ax.invert_yaxis()
    ax.set_xlabel("partitions (sum over the days shown)")
    ax.legend(loc="upper left", bbox_to_anchor=(1, 1))  # beside the bars, not over them
    plt.tight_layout()
    plt.show()

# COMMAND ----------

# MAGIC %md
# MAGIC ## Why: causes of the rebalances
# MAGIC
# MAGIC Each rebalance's `cause` (docs/causes.md: member joined, left, session or poll timeout, static member
# MAGIC replaced, coordinator moved, ...), counted per group; the member that triggered it is in
# MAGIC `rebalance_episodes.trigger_*`.

# COMMAND ----------

scen_episodes = episodes[episodes["scenario"] == (SCENARIO or "actual")] if not episodes.empty else episodes
if not scen_episodes.empty and "cause" in scen_episodes:
    causes = scen_episodes.assign(
        group=scen_episodes["cluster"] + "/" + scen_episodes["group_id"]
    ).pivot_table(
        index="group", columns=scen_episodes["cause"].fillna("unknown"), aggfunc="size", fill_value=0
    )
    causes = causes.loc[causes.sum(axis=1).sort_values(ascending=False).index[:15]]
    ax = causes.plot.barh(stacked=True, figsize=(9, 0.9 + 0.4 * len(causes)), title="Rebalances by cause")
    ax.invert_yaxis()
    ax.set_xlabel("rebalances")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("")
    ax.legend(title="cause", loc="upper left", bbox_to_anchor=(1, 1))
    plt.tight_layout()
    plt.show()
    worst = scen_episodes.sort_values("partition_unavailable_ms", ascending=False).head(10)
    display_cols = ["cluster", "group_id", "started_at", "rebalance_ms", "partition_unavailable_ms", "cause",
                    "trigger_member_id", "trigger_client_id", "cause_raw_reason"]  # fmt: skip
    print("the 10 rebalances with the most partition-unavailable time:")
    print(worst[[c for c in display_cols if c in worst]].to_string(index=False))
else:
    print("no rebalance causes in this warehouse (tables written before causes existed)")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Incidents
# MAGIC
# MAGIC Patterns across rebalances (`rebalance_incidents`): storms, stuck rebalances, rolling restarts,
# MAGIC flapping members, unowned partitions, coordinator moves (one broker losing many groups at once).

# COMMAND ----------

scen_incidents = (
    incidents[incidents["scenario"] == (SCENARIO or "actual")] if not incidents.empty else incidents
)
if not scen_incidents.empty:
    print(scen_incidents.groupby("kind").size().rename("incidents").to_string())
    shown = [
        "kind",
        "cluster",
        "group_id",
        "started_at",
        "ended_at",
        "episodes",
        "members",
        "groups",
        "detail",
    ]
    print(
        scen_incidents.sort_values("started_at")[[c for c in shown if c in scen_incidents]].to_string(
            index=False
        )
    )
else:
    print("incidents: none in this warehouse")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Partition-ownership timeline
# MAGIC
# MAGIC One bar per partition and owner, from the generation that gave it to the member to the next
# MAGIC generation of the group (the group with the most generations unless the `group` widget names one).

# COMMAND ----------

if not generations.empty and not assignments.empty:
    scen = SCENARIO or "actual"
    gens = generations[generations["scenario"] == scen]
    focus = GROUP or gens.groupby("group_id").size().idxmax()
    gens = gens[gens["group_id"] == focus].sort_values("generation_id")
    gens = gens[gens["stabilized_at"].notna()]
    starts = dict(zip(gens["generation_id"], pd.to_datetime(gens["stabilized_at"], utc=True)))
    order = sorted(starts)
    ends = {g: starts[order[i + 1]] if i + 1 < len(order) else None for i, g in enumerate(order)}
    last = max(starts.values()) if starts else None
    asg = assignments[(assignments["scenario"] == scen) & (assignments["group_id"] == focus)]
    asg = asg[asg["generation_id"].isin(order)]
    if not asg.empty and last is not None:
        pad = pd.Timedelta(seconds=max(1.0, (last - min(starts.values())).total_seconds() * 0.05))
        asg = asg.assign(label=asg["topic"] + "-" + asg["partition"].astype(str))
        labels = sorted(asg["label"].unique(), key=lambda s: (s.rsplit("-", 1)[0], int(s.rsplit("-", 1)[1])))
        members = sorted(asg["member_id"].unique())
        colors = {m: plt.cm.tab20(i % 20) for i, m in enumerate(members)}
        fig, ax = plt.subplots(figsize=(10, 0.6 + 0.3 * len(labels)))
        for row in asg.itertuples():
            start = starts[row.generation_id]
            end = ends[row.generation_id] or last + pad
            ax.barh(
                labels.index(row.label),
                (end - start).total_seconds(),
                left=(start - min(starts.values())).total_seconds(),
                color=colors[row.member_id],
                edgecolor="white",
            )
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xlabel(f"seconds since generation {order[0]} stabilized")
        ax.set_title(f"{focus}: partition ownership by generation")
        handles = [plt.Rectangle((0, 0), 1, 1, color=colors[m]) for m in members]
        ax.legend(handles, [m[:28] for m in members], fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
        plt.tight_layout()
        plt.show()

# COMMAND ----------

# MAGIC %md
# MAGIC ## What-if: actual vs scenarios

# COMMAND ----------

if not comparison.empty:
    by_scenario = (
        comparison.groupby("scenario")[
            [
                "stw_ms_actual",
                "stw_ms_scenario",
                "partition_unavailable_ms_actual",
                "partition_unavailable_ms_scenario",
            ]
        ].sum()
        / 1000.0
    )
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.5))
    stw = by_scenario[["stw_ms_actual", "stw_ms_scenario"]].set_axis(["actual", "scenario"], axis=1)
    stw.plot.bar(ax=left, title="Stop-the-world, actual vs scenario")
    left.set_ylabel("seconds")
    unavailable = by_scenario[["partition_unavailable_ms_actual", "partition_unavailable_ms_scenario"]]
    unavailable.set_axis(["actual", "scenario"], axis=1).plot.bar(
        ax=right, title="Partition-unavailable, actual vs scenario"
    )
    right.set_ylabel("partition-seconds")
    for ax in (left, right):
        ax.set_xlabel("")
        ax.legend(loc="upper left", bbox_to_anchor=(1, 1))
    plt.tight_layout()
    plt.show()
else:
    print("no what-if comparison in this warehouse (run `rebalance-replay whatif`)")
