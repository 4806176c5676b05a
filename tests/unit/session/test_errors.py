"""What a user reads for a Spark error: class and message, never the JVM's stack (no JVM here:
the Java side is a stand-in)."""

import pytest
from dbt_common.exceptions import DbtRuntimeError
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from dbt.adapters.spark_streams.session.errors import readable_spark_errors, spark_error_message

DELTA_MESSAGE = "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint positive (id > 0)"


class JavaThrowable:
    """Enough of a py4j JavaObject for Py4JJavaError and spark_errors."""

    _target_id = "o1"

    def __init__(self, message: str | None, text: str) -> None:
        self.message, self.text = message, text

    def getMessage(self) -> str | None:
        return self.message

    def toString(self) -> str:
        return self.text


def java_error(call: str, message: str | None, text: str = "") -> Py4JJavaError:
    return Py4JJavaError(
        f"An error occurred while calling {call}.\n", JavaThrowable(message, text)
    )


def test_unconverted_java_error_shows_its_message_only():
    error = java_error("o150.sql", DELTA_MESSAGE, "DeltaInvariantViolationException: ...")
    assert spark_error_message(error) == DELTA_MESSAGE


def test_java_error_without_a_class_shows_the_java_class():
    error = java_error("o150.sql", "/tmp/x", "java.io.FileNotFoundException: /tmp/x")
    assert spark_error_message(error) == "java.io.FileNotFoundException: /tmp/x"


def test_failure_to_format_gives_way_to_the_error_being_formatted():
    delta = java_error("o58.sql", "[DELTA_MERGE_UNRESOLVED_EXPRESSION] Cannot resolve t.nope")
    internal = java_error(
        "z:org.apache.spark.SparkThrowableHelper.getMessage",
        "[INTERNAL_ERROR] Cannot find main error class 'DELTA_MERGE_UNRESOLVED_EXPRESSION'",
    )
    internal.__context__ = delta
    assert spark_error_message(internal) == (
        "[DELTA_MERGE_UNRESOLVED_EXPRESSION] Cannot resolve t.nope"
    )


def test_connect_error_loses_the_server_stack_and_java_class():
    error = PySparkException(
        "(org.apache.spark.sql.delta.schema.DeltaInvariantViolationException) "
        f"{DELTA_MESSAGE}\n\nJVM stacktrace:\norg.apache.spark.sql.delta.Foo\n\tat x.y(z)"
    )
    assert spark_error_message(error) == DELTA_MESSAGE


def test_other_errors_pass_through_unchanged():
    assert spark_error_message(ValueError("no")) is None
    with pytest.raises(ValueError), readable_spark_errors():
        raise ValueError("no")


def test_spark_errors_become_dbt_errors():
    expected = pytest.raises(DbtRuntimeError, match=r"DELTA_VIOLATE_CONSTRAINT_WITH_VALUES")
    with expected, readable_spark_errors():
        raise java_error("o150.sql", DELTA_MESSAGE)


def test_a_full_disk_is_said_in_a_sentence():
    error = PySparkException(
        "(org.apache.hadoop.fs.FSError) java.io.IOException: No space left on device"
        "\n\nJVM stacktrace:\norg.apache.hadoop.fs.FSError\n\tat x.y(z)"
    )
    message = spark_error_message(error)
    assert message is not None
    assert message.startswith("A file system Spark writes to is full (No space left on device)")
    assert "Free space there, then run again." in message
    assert message.endswith("Spark said: (org.apache.hadoop.fs.FSError) java.io.IOException: "
                            "No space left on device")  # fmt: skip
    assert "JVM stacktrace" not in message


def test_a_full_disk_named_only_in_the_stack_is_found_there():
    error = PySparkException(
        "(org.apache.spark.SparkException) [TASK_WRITE_FAILED] Task failed while writing rows "
        "to file:/w/crash.db/customers_merge. SQLSTATE: 58030\n\nJVM stacktrace:\n"
        "org.apache.spark.SparkException\n\tat x.y(z)\nCaused by: java.io.IOException: "
        "No space left on device\n\tat a.b(c)"
    )
    message = spark_error_message(error)
    assert message is not None
    assert message.startswith("A file system Spark writes to is full")
    assert message.endswith(
        "Spark said: [TASK_WRITE_FAILED] Task failed while writing rows to "
        "file:/w/crash.db/customers_merge. SQLSTATE: 58030"
    )


def test_an_object_store_that_stopped_answering_is_said_in_a_sentence():
    error = PySparkException(
        "(java.io.UncheckedIOException) java.io.IOException: Client error accessing "
        "s3a://lake/warehouse/crash_raw.db/customers/_delta_log/00000000000000000007.json, "
        "failed with: Unable to execute HTTP request: The target server failed to respond "
        "(SDK Attempt Count: 6)\n\nJVM stacktrace:\njava.io.UncheckedIOException\n\tat x.y(z)"
    )
    message = spark_error_message(error)
    assert message is not None
    assert message.startswith(
        "The object store stopped answering while Spark read or wrote s3a://lake/warehouse/"
        "crash_raw.db/customers/_delta_log/00000000000000000007.json, after S3A's retries."
    )
    assert "moved no offset" in message and "spark.hadoop.fs.s3a.endpoint" in message
    assert "JVM stacktrace" not in message


def test_an_object_store_that_kept_throttling_is_said_in_a_sentence():
    error = PySparkException(
        "[TASK_WRITE_FAILED] Task failed while writing rows to s3a://lake/w/t.\n\nJVM "
        "stacktrace:\nCaused by: org.apache.hadoop.fs.s3a.AWSServiceThrottledException: put on "
        "s3a://lake/w/t/part-0.parquet: 503 Slow Down\n\tat a.b(c)"
    )
    message = spark_error_message(error)
    assert message is not None
    assert message.startswith(
        "The object store kept refusing Spark's requests for s3a://lake/w/t with 503 Slow Down, "
        "after S3A's retries."
    )
    assert "fewer threads or processes" in message
    assert message.endswith("Spark said: [TASK_WRITE_FAILED] Task failed while writing rows to "
                            "s3a://lake/w/t.")  # fmt: skip
