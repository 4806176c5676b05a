"""What a build's write did, from Delta's own metrics (write_counts.py)."""

from dbt.adapters.spark_streams.streams.offsets.write_counts import WriteCounts


def test_a_merge_row_gives_its_counts() -> None:
    row = {
        "num_affected_rows": 9,
        "num_updated_rows": 2,
        "num_deleted_rows": 3,
        "num_inserted_rows": 4,
    }
    assert WriteCounts.from_merge_row(row) == WriteCounts(inserted=4, updated=2, deleted=3)
    assert WriteCounts.from_merge_row({}) == WriteCounts()


def test_operation_metrics_of_each_kind_of_commit() -> None:
    merge = {"numTargetRowsInserted": "1", "numTargetRowsUpdated": "2", "numOutputRows": "3",
             "numTargetRowsDeleted": "4"}  # fmt: skip
    assert WriteCounts.from_operation_metrics(merge) == WriteCounts(1, 2, 4)
    assert WriteCounts.from_operation_metrics({"numOutputRows": "7"}) == WriteCounts(7, 0, 0)
    assert WriteCounts.from_operation_metrics({"numDeletedRows": "5"}) == WriteCounts(0, 0, 5)
    assert WriteCounts.from_operation_metrics({"numUpdatedRows": "6"}) == WriteCounts(0, 6, 0)
    assert WriteCounts.from_operation_metrics(None) == WriteCounts()


def test_the_summary_names_each_count() -> None:
    assert WriteCounts(3, 1, 1).summary() == "3 inserted, 1 updated, 1 deleted"
