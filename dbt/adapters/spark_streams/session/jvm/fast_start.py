"""The JVM start aids of one embedded Spark start, behind one interface: the Delta jars from the
jar cache (jar_cache.py) and the class-data-sharing archive (cds.py).

The embedded session asks, in this order: `jar_confs()` (which jars the start loads),
`resolving()` (held while Spark may have to resolve them), `before_start(confs)` (the confs to
start with: the archive's option added when one is ready), `without_archive(error)` when that
start failed (whether to start again without the archive, which is dropped once that start
succeeds: `started_without_archive()`), and `after_start(...)` once the JVM runs (cache what
Spark resolved, train an archive for the next start). Neither aid may fail a start: their
problems go to `notes`, for the debug log, and the next start tries again.
"""

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dbt.adapters.spark_streams.session.jvm import cds, jar_cache

PACKAGES = "spark.jars.packages"


@dataclass
class FastStart:
    """The aids for a start of `delta_package` (its jars from a folder of the user's when
    `jars_given`), with the profile's `server_side_parameters`; `trainer` is the command that
    trains an archive (its request file is added as the last argument)."""

    delta_package: str
    jars_given: bool
    server_side_parameters: Mapping[str, object]
    spark_home: Path
    master: str
    trainer: list[str]
    archive: cds.Archive | None = field(default=None, init=False)
    archive_options: list[str] = field(default_factory=list, init=False)
    failed_with_archive: Exception | None = field(default=None, init=False)
    notes: list[str] = field(default_factory=list, init=False)

    @property
    def enabled(self) -> bool:
        """False when SPARK_STREAMS_FAST_START says no: the start the adapter made before the
        aids (`spark.jars.packages` every time, no archive), kept for comparison."""
        return jar_cache.fast_start_enabled()

    @property
    def uses_jar_cache(self) -> bool:
        return not self.jars_given and jar_cache.applies(self.server_side_parameters)

    def jar_confs(self) -> dict[str, str]:
        """The Delta jars from the jar cache when it holds them, else resolved from Maven
        Central (and cached after the start); nothing when the profile gives its own."""
        if self.jars_given:
            return {}  # the embedded session reads the user's folder (jars_dir)
        cached = jar_cache.cached_jars(self.delta_package) if self.uses_jar_cache else None
        if cached:
            return {"spark.jars": ",".join(str(jar) for jar in cached)}
        return {PACKAGES: self.delta_package}

    def resolving(self) -> contextlib.AbstractContextManager[None]:
        """The jar cache's lock when this start may have to resolve the jars (nothing cached
        yet): processes starting at once then resolve one after another, the later ones from
        the cache. A start with its own jars or a filled cache takes no lock."""
        if not self.uses_jar_cache or jar_cache.cached_jars(self.delta_package):
            return contextlib.nullcontext()
        return jar_cache.resolution_lock(self.delta_package)

    def before_start(self, confs: Mapping[str, str]) -> dict[str, str]:
        """The confs to start with: `confs`, plus the archive's option when one is ready."""
        self.archive = self._archive(confs)
        self.archive_options = cds.start_options(self.archive) if self.archive else []
        return cds.with_java_options(confs, self.archive_options)

    def without_archive(self, error: Exception) -> bool:
        """Whether a start that failed with the archive should start again without it: the
        archive must never cost a start."""
        if not (self.archive and self.archive_options):
            return False
        self.notes.append(f"Spark did not start with the CDS archive {self.archive.path}: {error}")
        self.failed_with_archive, self.archive_options = error, []
        return True

    def started_without_archive(self) -> None:
        """The start without the archive succeeded, so the archive was what failed: drop it
        (and train none for its key for a day)."""
        if self.archive is not None and self.failed_with_archive is not None:
            why = (
                f"a start with it failed and one without it succeeded: {self.failed_with_archive}"
            )
            cds.forget(self.archive, why)

    def after_start(self, confs: Mapping[str, str], resolved_jars: str) -> None:
        """Once per machine: cache the jars this start resolved (Spark's `spark.jars` after
        the start), and train an archive for the next start's class path."""
        said = self.notes
        if PACKAGES in confs and self.uses_jar_cache:
            try:
                stored = jar_cache.store(
                    self.delta_package, jar_cache.resolved_jar_files(resolved_jars)
                )
                said.append(f"Cached the {len(stored)} jars of {self.delta_package}")
                confs = {**{k: v for k, v in confs.items() if k != PACKAGES}, **self.jar_confs()}
                self.archive = self._archive(confs)  # the next start's class path
            except Exception as exc:
                said.append(f"Could not cache the jars of {self.delta_package}: {exc}")
        if self.archive is not None:
            try:
                if cds.train_in_background(self.archive, confs, self.master, self.trainer):
                    said.append(f"Training the CDS archive {self.archive.path} in the background")
            except Exception as exc:
                said.append(f"Could not start training a CDS archive: {exc}")

    def describe(self, confs: Mapping[str, str]) -> str:
        """Where this start's Delta jars came from, and its archive, for the debug log."""
        jars = "jars_dir" if self.jars_given else PACKAGES
        if not self.jars_given and PACKAGES not in confs:
            jars = f"the jar cache {jar_cache.entry_dir(self.delta_package)}"
        archive = "no CDS archive"
        if self.archive is not None and self.archive_options:
            archive = f"CDS archive {self.archive.path}"
        return f"{self.delta_package} from {jars}, {archive}"

    def jars_from_cache(self, confs: Mapping[str, str]) -> str | None:
        """The jar cache's folder when this start's Delta jars came from it (a start that
        fails then names it, so the user can drop it)."""
        if self.jars_given or PACKAGES in confs:
            return None
        return str(jar_cache.entry_dir(self.delta_package))

    def _archive(self, confs: Mapping[str, str]) -> cds.Archive | None:
        if not cds.enabled():
            return None
        try:
            return cds.archive_for(confs, self.spark_home)
        except Exception as exc:
            self.notes.append(f"No CDS archive for this start: {exc}")
            return None
