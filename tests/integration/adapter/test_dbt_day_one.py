"""What a user meets on day one with dbt's own commands: seeds with empty cells and quotes,
`dbt clone --full-refresh` run twice, model contracts with constraints, a very long view."""

import shutil
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.delta import DeltaProject, sources_yml

PEOPLE_CSV = """id,name,note,big
1,O'Brien,they're,1234567890123456789
2,,back\\slash,
3,"comma, inside",%s and %d,7
"""


class TestSeedValues(DeltaProject):
    """Every cell reaches the table as written: an empty cell is NULL, not the text 'None';
    quotes, backslashes and percent signs are text; a 19-digit number keeps every digit (a
    float would round it)."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": PEOPLE_CSV}

    def test_cells_are_stored_as_written(self, project):
        run_dbt(["seed"])
        stored = project.run_sql(
            f"select id, name, note, cast(big as string) from {project.test_schema}.people "
            "order by id",
            fetch="all",
        )
        assert [tuple(row) for row in stored] == [
            (1, "O'Brien", "they're", "1234567890123456789"),
            (2, None, "back\\slash", None),
            (3, "comma, inside", "%s and %d", "7"),
        ]


ORDERS_MODEL = "select 1 as id, 'open' as status union all select 2, 'shipped'"


class TestCloneFullRefreshTwice(DeltaProject):
    """`dbt clone --full-refresh` over a clone that holds rows: Delta refuses to clone over a
    non-empty table, so the second full refresh used to fail; now each one replaces the clone
    with the state's table as it is now."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": "{{ config(materialized='table') }} " + ORDERS_MODEL}

    @pytest.fixture(scope="class")
    def other_schema(self, unique_schema):
        return unique_schema + "_clone"

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target, unique_schema, other_schema):
        clone_target = {**dbt_profile_target, "schema": other_schema}
        outputs = {"default": {**dbt_profile_target, "schema": unique_schema}}
        return {"test": {"outputs": {**outputs, "clone": clone_target}, "target": "default"}}

    def test_clone_full_refresh_twice(self, project, other_schema):
        project.create_test_schema(other_schema)
        run_dbt(["run"])
        state = Path(project.project_root) / "state"
        state.mkdir()
        shutil.copy(Path(project.project_root) / "target" / "manifest.json", state)
        clone = ["clone", "--state", str(state), "--target", "clone"]
        run_dbt(clone)
        project.run_sql(f"insert into {project.test_schema}.orders values (3, 'new')")
        for _ in range(2):
            run_dbt([*clone, "--full-refresh"])
            cloned = project.run_sql(
                f"select id from {other_schema}.orders order by id", fetch="all"
            )
            assert [row[0] for row in cloned] == [1, 2, 3]


CONTRACT_YML = """
version: 2
models:
  - name: {name}
    config:
      contract: {{enforced: true}}
    columns:
      - name: id
        data_type: int
        constraints: [{{type: not_null}}]
      - name: status
        data_type: string
        constraints: [{{type: check, expression: "status in ('open', 'shipped')"}}]
"""


class TestContractOnTable(DeltaProject):
    """A `table` model with an enforced contract: Delta holds its NOT NULL and CHECK
    constraints, so a later write that breaks them fails."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": "{{ config(materialized='table') }} " + ORDERS_MODEL,
            "orders.yml": CONTRACT_YML.format(name="orders"),
        }

    def test_constraints_are_enforced(self, project):
        run_dbt(["run"])
        table = f"{project.test_schema}.orders"
        for bad_row in ("(null, 'open')", "(3, 'lost')"):
            with pytest.raises(Exception, match=r"DELTA_NOT_NULL_CONSTRAINT|DELTA_VIOLATE"):
                project.run_sql(f"insert into {table} values {bad_row}")
        assert project.run_sql(f"select count(*) from {table}", fetch="one")[0] == 2


MIRROR_MODEL = """
{{ config(materialized='stream_incremental', incremental_strategy='apply_changes',
          unique_key='id') }}
select * from {{ stream(source('shop', 'orders'), unique_key='id') }}
"""


class TestContractOnStreamModel(DeltaProject):
    """A stream_incremental model with an enforced contract: the target is created with the
    contract's constraints, a change that breaks one fails the build and moves no offset, and
    the next build after the source is fixed consumes the change."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": sources_yml("shop", "orders"),
            "mirror.sql": MIRROR_MODEL,
            "mirror.yml": CONTRACT_YML.format(name="mirror"),
        }

    def offset(self, project) -> int:
        found = project.run_sql(
            f"select offset_version from {project.test_schema}.dbt_streams", fetch="one"
        )
        return found[0]

    def mirror(self, project) -> list[tuple]:
        found = project.run_sql(
            f"select id, status from {project.test_schema}.mirror order by id", fetch="all"
        )
        return [tuple(row) for row in found]

    def test_constraints_hold_and_a_breaking_change_moves_nothing(self, project):
        orders = f"{project.test_schema}.orders"
        project.run_sql(f"create table {orders} (id int, status string) using delta")
        project.run_sql(f"insert into {orders} values (1, 'open'), (2, 'shipped')")
        run_dbt(["run"])
        assert self.mirror(project) == [(1, "open"), (2, "shipped")]
        first_offset = self.offset(project)

        project.run_sql(f"insert into {orders} values (3, 'lost')")
        run_dbt(["run"], expect_pass=False)
        assert self.offset(project) == first_offset
        assert self.mirror(project) == [(1, "open"), (2, "shipped")]

        project.run_sql(f"update {orders} set status = 'open' where id = 3")
        run_dbt(["run"])
        assert self.mirror(project) == [(1, "open"), (2, "shipped"), (3, "open")]
        run_dbt(["run", "--full-refresh"])
        assert self.mirror(project) == [(1, "open"), (2, "shipped"), (3, "open")]
        with pytest.raises(Exception, match="DELTA_NOT_NULL_CONSTRAINT"):
            project.run_sql(f"insert into {project.test_schema}.mirror values (null, 'open')")


class TestViewLongerThanTheMetastoreStores(DeltaProject):
    """A view whose SQL is longer than a Derby metastore stores (32,700 characters) fails
    with an error that says so and names the ways out, instead of Derby's truncation error."""

    @pytest.fixture(scope="class")
    def models(self):
        padding = "x" * 33_000
        return {"wide.sql": f"{{{{ config(materialized='view') }}}} select '{padding}' as padding"}

    def test_the_error_names_the_limit_and_the_fix(self, project):
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "longer than the 32,700 characters a Hive metastore on Derby can store" in output
        assert "Materialize the model as a table" in output
        assert "truncation error" not in output
