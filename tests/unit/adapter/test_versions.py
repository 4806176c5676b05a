"""Which Delta package each Spark version gets, and the sentence for one no Delta supports."""

import pytest
from pyspark.errors import AnalysisException

from dbt.adapters.spark_streams import versions
from dbt.adapters.spark_streams.session.errors import spark_error_message
from dbt.adapters.spark_streams.versions import SparkVersion


@pytest.mark.parametrize(
    ("text", "line"),
    [("4.0.1", "4.0"), ("4.1.4", "4.1"), ("4.2.0", "4.2"), ("4.3.0.dev0", "4.3"), ("4.1", "4.1")],
)
def test_a_version_is_read_to_its_minor_line(text: str, line: str) -> None:
    assert SparkVersion.parse(text).minor_line == line


def test_a_version_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValueError, match="not a Spark version: 'spark'"):
        SparkVersion.parse("spark")


@pytest.mark.parametrize(
    ("spark", "artifact"),
    [
        ("4.0.5", "delta-spark_4.0_2.13"),
        ("4.1.4", "delta-spark_4.1_2.13"),
        ("4.2.1", "delta-spark_4.2_2.13"),
    ],
)
def test_each_supported_spark_gets_its_own_delta_artifact(spark: str, artifact: str) -> None:
    assert versions.delta_package_for(SparkVersion.parse(spark)) == f"io.delta:{artifact}:4.4.0"
    assert versions.unsupported_spark(SparkVersion.parse(spark)) is None


@pytest.mark.parametrize("spark", ["4.3.0", "3.5.7"])
def test_a_spark_no_delta_supports_gets_a_sentence_naming_the_fix(spark: str) -> None:
    assert versions.delta_package_for(SparkVersion.parse(spark)) is None
    sentence = versions.unsupported_spark(SparkVersion.parse(spark))
    assert sentence is not None
    assert sentence.startswith(f"PySpark {spark} is installed, but Delta Lake 4.4.0")
    assert "supports Spark 4.0, 4.1, 4.2 only" in sentence
    assert "pip install 'pyspark>=4.0.1,<4.3'" in sentence
    assert "method: connect or thrift" in sentence


def test_the_default_package_follows_the_installed_pyspark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(versions.metadata, "version", lambda name: {"pyspark": "4.1.3"}[name])
    assert versions.default_delta_package() == "io.delta:delta-spark_4.1_2.13:4.4.0"
    monkeypatch.setattr(versions.metadata, "version", lambda name: {"pyspark": "4.3.0"}[name])
    assert versions.default_delta_package() == "io.delta:delta-spark_4.2_2.13:4.4.0"


def test_only_the_keywords_a_function_takes_are_passed() -> None:
    def policy(max_retries: int = 1, max_backoff: int = 2) -> None: ...

    options = {"max_retries": 3, "max_server_retry_delay": 5}
    assert versions.accepted_keywords(policy, options) == {"max_retries": 3}


class Status:
    name = "UNAVAILABLE"


class NewClientError(Exception):
    def getGrpcStatusCode(self) -> Status:
        return Status()


class GrpcError(Exception):
    def code(self) -> Status:
        return Status()


class OtherError(Exception):
    def code(self, argument: int) -> int:
        return argument


def test_the_grpc_status_is_read_where_each_client_keeps_it() -> None:
    assert versions.grpc_status_name(NewClientError()) == "UNAVAILABLE"
    assert versions.grpc_status_name(GrpcError()) == "UNAVAILABLE"
    assert versions.grpc_status_name(OtherError()) is None
    assert versions.grpc_status_name(ValueError("StatusCode.UNAVAILABLE")) is None


def test_what_an_older_spark_line_cannot_do_is_said_with_the_fix() -> None:
    view = (
        "[INVALID_TEMP_OBJ_REFERENCE] Cannot create the persistent object `s`.`v` of the type "
        "VIEW because it references to the temporary object `table_changes_by_path` of the type "
        "FUNCTION."
    )
    said = spark_error_message(AnalysisException(view))
    assert said is not None and said.startswith("A view cannot read changes() here: before")
    assert "Materialize the model as a table" in said and "Spark said: [INVALID_TEMP_OBJ" in said
    variant = "java.lang.RuntimeException: Not implemented. VariantType\n\tat ColumnarBatchRow"
    said = versions.line_limit(variant)
    assert said is not None and "{'delta.enableDeletionVectors': 'false'}" in said
    assert "--full-refresh" in said
    assert versions.line_limit("[INVALID_TEMP_OBJ_REFERENCE] ... `my_udf` ...") is None
