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
cost growing with the builds in the retention rather than with its change. Delta's auto
compaction keeps them few: the append that brings the table to COMPACT_AT_FILES small files
(Delta's own default) rewrites them into one, in a commit of its own that changes no row. At
1M keys a MERGE read 22 tombstone files in 0.15 s more than one, and a compaction took 1.4 to
4 s on two cores, so compacting at fewer files would cost more than it saves here.
"""

from datetime import datetime, timedelta

PURGED_AT = "dbt_streams.cdc_purged_at"
PURGE_INTERVAL = timedelta(hours=1)
COMPACT_AT_FILES = 50


def compaction_confs() -> dict[str, str]:
    """The confs of an append to a table beside the target that turn on Delta's auto
    compaction once COMPACT_AT_FILES small files have piled up."""
    return {
        "spark.databricks.delta.autoCompact.enabled": "true",
        "spark.databricks.delta.autoCompact.minNumFiles": str(COMPACT_AT_FILES),
    }


def purge_due(purged_at: str | None, now: datetime, days: int) -> bool:
    """Whether a build at `now` purges: never purged yet, the last purge (ISO time with its
    zone) at least the interval ago (the retention, when that is shorter), or a time it
    cannot read."""
    if not purged_at:
        return True
    try:
        last = datetime.fromisoformat(purged_at)
    except ValueError:
        return True
    if last.tzinfo is None or last > now:  # (a clock that went back: purge)
        return True
    return now - last >= min(PURGE_INTERVAL, timedelta(days=days))
