"""The two paths of a view stream's build, as a user meets them: orders written in customer
order (each file holds a few customers) joined with customers in a view, mirrored by three
apply_changes models.

- A change to a few customers reads only the orders files that can hold them (the term's
  scan carries the change set's customer ranges) and is applied incrementally.
- A change to every customer would read all orders: `mirror_auto` rebuilds its target from
  the view in one commit and says so, `mirror_strict` (incremental: strict) fails and writes
  nothing, `mirror_small` (the default rebuild_min_bytes, far above these tables) stays
  incremental. The next small change is applied on top of the rebuilt target, once.
- `explain_stream` prints each path before the builds take it, and consumes nothing.
- `mirror_clustered` is created with liquid clustering by customer_id, and its MERGEs match
  the target through the change's customer ranges (old and new images), not its keys',
  known from the tables' change sets without reading the view's change set again.

Every mirror equals the view after each build that succeeds.
"""

import json
import re
from pathlib import Path

from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, sources_yml

CDF = "using delta tblproperties (delta.enableChangeDataFeed = true)"
VIEW = (
    "select o.id, o.customer_id, o.status, c.name as customer from {schema}.orders o "
    "join {schema}.customers c on o.customer_id = c.id"
)
MIRROR = (
    "{{{{ config(materialized='stream_incremental', incremental_strategy='apply_changes', "
    "unique_key='id'{settings}) }}}}\n"
    "select * from {{{{ stream(source('shop', 'order_details'), unique_key='id') }}}}\n"
)
MODELS = {
    "mirror_auto": MIRROR.format(settings=", key_ranges=true, rebuild_min_bytes=0"),
    "mirror_strict": MIRROR.format(
        settings=", key_ranges=true, rebuild_min_bytes=0, incremental='strict'"
    ),
    "mirror_small": MIRROR.format(settings=", key_ranges=true"),
    # clustered by customer: its MERGE names the customers' ranges instead of the keys'
    "mirror_clustered": MIRROR.format(
        settings=", key_ranges=true, liquid_clustered_by='customer_id', file_rows=20"
    ),
}
MIRRORS = tuple(MODELS)


class TestViewPaths(DeltaProject):
    def test_incremental_rebuild_and_strict(self, project):
        schema, sql = project.test_schema, project.run_sql
        sql(f"create table {schema}.customers (id int, name string) {CDF}")
        sql(f"create table {schema}.orders (id int, customer_id int, status string) {CDF}")
        sql(f"insert into {schema}.customers select id, concat('c', id) from range(1, 41)")
        # 400 orders in customer order, in 20 files: each holds about two customers' orders
        sql(
            f"insert into {schema}.orders select /*+ REPARTITION_BY_RANGE(20, customer_id) */ "
            f"* from (select id, cast(id % 40 + 1 as int) as customer_id, 'new' as status "
            "from range(400))"
        )
        sql(f"create view {schema}.order_details as {VIEW.format(schema=schema)}")
        root = Path(project.project_root)
        (root / "models" / "sources.yml").write_text(sources_yml("shop", "order_details"))
        for name, text in MODELS.items():
            (root / "models" / f"{name}.sql").write_text(text)
        run_dbt(["run"])
        self.assert_mirrors_equal_the_view(project, MIRRORS)

        # a few customers: their orders sit in one file of twenty
        sql(f"update {schema}.customers set name = 'renamed' where id = 3")
        explained = self.explain(project, "mirror_auto")
        assert f"reads `{schema}`.`orders` where (`customer_id` between 3 and 3)" in explained
        assert "path: incremental (the change would scan" in explained
        results = self.run(project)
        assert {name: path for name, (path, _) in results.items()} == dict.fromkeys(
            MIRRORS, "incremental"
        )
        self.assert_mirrors_equal_the_view(project, MIRRORS)

        # every customer: the change joins every orders file
        sql(f"update {schema}.customers set name = concat(name, '!')")
        assert "path: rebuild (the change would scan" in self.explain(project, "mirror_auto")
        strict = self.explain(project, "mirror_strict")
        assert "path: fail, as the model's incremental is 'strict'" in strict
        assert "under the model's rebuild_min_bytes" in self.explain(project, "mirror_small")
        strict_offsets = self.offsets(project, "mirror_strict")
        results = self.run(project, expect_pass=False)
        path, message = results["mirror_auto"]
        assert path == "rebuild" and message.startswith("OK, rebuilt mirror_auto: the change")
        assert results["mirror_small"][0] == results["mirror_clustered"][0] == "incremental"
        assert "incremental is 'strict', so nothing was written" in results["mirror_strict"][1]
        assert self.offsets(project, "mirror_strict") == strict_offsets
        self.assert_mirrors_equal_the_view(
            project, ("mirror_auto", "mirror_small", "mirror_clustered")
        )

        # after the rebuild, a small change lands once on the rebuilt target
        sql(f"insert into {schema}.orders values (1000, 7, 'late')")
        sql(f"delete from {schema}.orders where id = 5")
        sql(f"update {schema}.customers set name = 'again' where id = 9")
        sql(f"update {schema}.orders set customer_id = 12 where id = 6")  # moves customer
        results = self.run(project, "mirror_auto", "mirror_small", "mirror_clustered")
        assert {path for path, _ in results.values()} == {"incremental"}
        self.assert_mirrors_equal_the_view(
            project, ("mirror_auto", "mirror_small", "mirror_clustered")
        )
        [detail] = project.run_sql(f"describe detail {schema}.mirror_clustered", fetch="all")
        assert list(detail.asDict()["clusteringColumns"]) == ["customer_id"]
        history = project.run_sql(f"describe history {schema}.mirror_clustered", fetch="all")
        merges = [row.asDict() for row in history if row.asDict()["operation"] == "MERGE"]
        predicate = merges[0]["operationParameters"]["predicate"]  # the newest first
        # the ranges came from the tables' change sets, not from a read of the change set
        log = self.output
        assert "as k from mirror_auto__dbt_tmp" in log  # keyed ranges: read from it
        assert "as k from mirror_clustered__dbt_tmp" not in log
        # the ranges hold the moved order's old customer (7) and new one (12)
        ranges = re.findall(
            r"customer_id#\d+ >= (\d+)\) AND \(customer_id#\d+ <= (\d+)", predicate
        )
        assert ranges and all(
            any(int(low) <= customer <= int(high) for low, high in ranges) for customer in (7, 12)
        ), predicate

    @staticmethod
    def explain(project, model: str) -> str:
        _, output = run_dbt_and_capture(
            ["run-operation", "explain_stream", "--args", json.dumps({"model": model})]
        )
        return output

    def run(self, project, *models: str, expect_pass: bool = True) -> dict[str, tuple[str, str]]:
        """Build the models (all by default); each one's (build_path, message). The debug log
        is kept in `self.output`."""
        selection = ["--select", *models] if models else []
        command = ["--debug", "run", "--threads", "3", *selection]
        _, self.output = run_dbt_and_capture(command, expect_pass=expect_pass)
        saved = json.loads(Path(project.project_root, "target", "run_results.json").read_text())
        return {
            result["unique_id"].split(".")[-1]: (
                result["adapter_response"].get("build_path", ""),
                result["message"] or "",
            )
            for result in saved["results"]
        }

    @staticmethod
    def offsets(project, model: str) -> dict[str, int]:
        rows = project.run_sql(
            f"select name, offset_version from {project.test_schema}.dbt_streams "
            f"where consumer like '%.{model}'",
            fetch="all",
        )
        return {name: version for name, version in rows}

    @staticmethod
    def assert_mirrors_equal_the_view(project, mirrors: tuple[str, ...]) -> None:
        """Each mirror against the view, all in one statement: the rows each has that the
        other lacks, counted per mirror."""
        schema = project.test_schema
        columns = "id, status, customer"
        view = f"select {columns} from {schema}.order_details"
        counts = " union all ".join(
            f"select '{mirror}' as mirror, count(*) as differ from "
            f"((select {columns} from {schema}.{mirror} except all {view}) "
            f"union all ({view} except all select {columns} from {schema}.{mirror}))"
            for mirror in mirrors
        )
        differ = dict(project.run_sql(counts, fetch="all"))
        assert differ == dict.fromkeys(mirrors, 0), differ
