"""When a build purges its model's tombstones.

Tombstones older than `tombstone_retention_days` go (scd1.purge_sql), but a purge that finds
none still scans the tombstones table: at 1M keys it was 0.6 s of a 7.4 s build, every build
with a delete. So a build purges only when its model's last purge (the tombstones table's
PURGED_AT property, set by each purge) is at least PURGE_INTERVAL old, or the retention is
shorter than that. A tombstone then lives from its retention to at most PURGE_INTERVAL longer:
kept longer, a late event of its key stays deleted a little longer, never the other way.
As Delta Live Tables' APPLY CHANGES has a GC frequency beside its tombstone threshold.

The tombstones' appends (and a tracked history's kept events') skip Delta's checksum file, as
the registry's append does (offsets/registry.py): these tables are read only by the builds.
Each append adds a small file, and every build's MERGE reads them all (a key's newest
tombstone), so a model built every few minutes would read hundreds of files a build, its
cost growing with the builds in the retention rather than with its change. So the build that
purges also compacts them (OPTIMIZE, after its append): at most once an hour, the files of at
most an hour's builds are read besides the compacted one. With no retention every build
purges every tombstone before its append, and none pile up. Delta's auto compaction is no
help here: it counts a table's small files in the memory of the process that writes them, and
each dbt run is a new process (a long-lived one, after a CREATE OR REPLACE of the table,
compacted at every append). At 1M keys a MERGE read 22 tombstone files in 0.15 s more than
one; an OPTIMIZE of them takes 1 to 4 s on two cores.

A tracked history's kept events (tracked.py) are never purged: they are what happened. Each
build's append adds a small file there too, and each build reads the touched keys' events
from all of them, so a build compacts them as well, at most once an hour (the table's
COMPACTED_AT property), after its append. Its OPTIMIZE sizes files as Delta's auto compaction
does (COMPACTION_CONFS: files under 64 MB packed into files of up to 128 MB), so the large
files of earlier compactions are not rewritten each hour.

Compacted by size alone, every file of the kept events holds keys from the whole key range,
so the build's read of the touched keys' events (which names the change set's key ranges, as
the target's reads do) skipped none of them, and grew with the history rather than with the
change. Where the first key column is an integer (the only kind whose ranges a build names),
the kept events are clustered by it (Delta's liquid clustering, `ALTER TABLE ... CLUSTER BY`
at their first compaction), and their OPTIMIZE then writes them in key order (Delta splits
the rewritten cubes into ranges of the key; sorted within each, as
`spark.databricks.io.skipping.mdc.sortWithinFiles` asks), in files of at most the model's
`file_rows` rows, as a target's first build is written. Delta re-clusters the
cubes of a clustered table smaller than its minimum cube size (100 GB by default) with the new
files at each OPTIMIZE, which would rewrite a whole history every hour; CLUSTERING_CONFS makes a
cube of 1 GiB final, so a compaction rewrites at most the last cube and the hour's appends,
and a read of a narrow key range reads about one file of each cube.
"""

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

PURGED_AT = "dbt_streams.cdc_purged_at"
PURGE_INTERVAL = timedelta(hours=1)
COMPACTED_AT = "dbt_streams.cdc_compacted_at"
COMPACTION_CONFS = {
    "spark.databricks.delta.optimize.minFileSize": str(64 * 2**20),
    "spark.databricks.delta.optimize.maxFileSize": str(128 * 2**20),
}
_CUBE = "spark.databricks.delta.optimize.clustering.mergeStrategy.minCubeSize."
CLUSTERING_CONFS = {
    _CUBE + "threshold": str(2**30),
    _CUBE + "targetCubeSize": str(3 * 2**29),
    # each of OPTIMIZE's output partitions holds a range of keys, in no order unless sorted:
    # sorted, its files of at most file_rows rows each hold a narrower range
    "spark.databricks.io.skipping.mdc.sortWithinFiles": "true",
}
# Delta collects statistics on a table's first 32 columns (delta.dataSkippingNumIndexedCols),
# and clusters only by columns it has statistics on.
STATS_COLUMNS = 32


def purge_due(purged_at: str | None, now: datetime, days: int) -> bool:
    """Whether a build at `now` purges: never purged yet, the last purge (ISO time with its
    zone) at least the interval ago (the retention, when that is shorter), or a time it
    cannot read."""
    return _due(purged_at, now, min(PURGE_INTERVAL, timedelta(days=days)))


def compaction_due(compacted_at: str | None, now: datetime) -> bool:
    """Whether a build at `now` compacts a tracked history's kept events: never compacted
    yet, the last compaction (ISO time with its zone) at least PURGE_INTERVAL ago, or a time
    it cannot read."""
    return _due(compacted_at, now, PURGE_INTERVAL)


def _due(last_at: str | None, now: datetime, interval: timedelta) -> bool:
    if not last_at:
        return True
    try:
        last = datetime.fromisoformat(last_at)
    except ValueError:
        return True
    if last.tzinfo is None or last > now:  # (a clock that went back: due)
        return True
    return now - last >= interval


def compacts(purged: bool, days: int) -> bool:
    """Whether a build compacts the tombstones: when it purged them and a retention keeps
    some (with none, its purge left only its own append)."""
    return purged and days > 0


def cluster_column(
    key: Sequence[str], names: Sequence[str], types: Sequence[str], ranged: Callable[[str], bool]
) -> str | None:
    """The column the kept events are clustered by (`names` and `types`: their table's
    columns): the first key column, where builds name its ranges (`ranged`, by its type: an
    integer) and Delta keeps statistics on it; None where they do not or Delta could not."""
    lowered = [name.lower() for name in names]
    first = key[0].lower() if key else ""
    if first not in lowered:
        return None
    position = lowered.index(first)
    if position >= STATS_COLUMNS or not ranged(types[position]):
        return None
    return names[position]
