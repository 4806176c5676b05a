"""current_valid_time() as a user builds it: the rows of a valid-time table current at the
invocation's start (the transaction's time), or now."""

from pathlib import Path

from dbt.tests.util import run_dbt

from tests.functional.delta import DeltaProject, sources_yml

VALID_TIME_SOURCES = sources_yml("hr", "addresses")
ADDED_DURING_THE_RUN = (
    "insert into {{ source('hr', 'addresses') }} values (5, 'added during the run', "
    "current_timestamp(), null)"
)
VALID_TIME_MODELS = {
    # the pre-hook adds a row after the invocation started, as another session would
    "as_of_transaction": (
        "{{ config(materialized='table', pre_hook=\"" + ADDED_DURING_THE_RUN + '") }}\n'
        "select * from {{ current_valid_time(source('hr', 'addresses'), valid_from='since', "
        "valid_to='until') }}\n"
    ),
    "as_of_now": (
        "-- depends_on: {{ ref('as_of_transaction') }}\n"
        "{{ config(materialized='table') }}\n"
        "select * from {{ current_valid_time(source('hr', 'addresses'), valid_from='since', "
        "valid_to='until', at='now') }}\n"
    ),
}


class TestCurrentValidTime(DeltaProject):
    """The seed's current valid-time query: only the rows whose period covers the reference
    time, without the period columns. With the transaction's time (the invocation's start) a
    row that became valid after the run began is a future row and is not returned, as the seed
    describes for a long transaction; with at='now' it is."""

    def test_current_rows_at_the_transaction_time_and_now(self, project):
        table = f"{project.test_schema}.addresses"
        project.run_sql(
            f"create table {table} (id int, city string, since timestamp, until timestamp) "
            "using delta"
        )
        project.run_sql(
            f"insert into {table} values "
            "(1, 'closed', timestamp'2020-01-01 00:00:00', timestamp'2021-01-01 00:00:00'), "
            "(2, 'open', timestamp'2020-01-01 00:00:00', null), "
            "(3, 'ends later', timestamp'2020-01-01 00:00:00', timestamp'2999-01-01 00:00:00'), "
            "(4, 'future', timestamp'2999-01-01 00:00:00', null)"
        )
        models = Path(project.project_root) / "models"
        (models / "sources.yml").write_text(VALID_TIME_SOURCES)
        for name, text in VALID_TIME_MODELS.items():
            (models / f"{name}.sql").write_text(text)

        run_dbt(["run"])
        got = {
            model: {
                tuple(row)
                for row in project.run_sql(
                    f"select * from {project.test_schema}.{model}", fetch="all"
                )
            }
            for model in VALID_TIME_MODELS
        }
        assert got == {
            "as_of_transaction": {(2, "open"), (3, "ends later")},
            "as_of_now": {(2, "open"), (3, "ends later"), (5, "added during the run")},
        }
