"""What a `thrift` session SETs as it opens (session/servers/thrift_session.py)."""

import pytest
from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.exceptions import FailedToConnectError

from dbt.adapters.spark_streams.credentials import ALL_FILES_IN_CRC, SparkStreamsCredentials
from dbt.adapters.spark_streams.session.servers.lost_servers import forget_lost_servers
from dbt.adapters.spark_streams.session.servers.thrift_session import (
    _refused,
    server_message,
    session_sets,
    set_statement,
    with_session_parameters,
)


def thrift(**more: object) -> SparkStreamsCredentials:
    return SparkStreamsCredentials.from_dict(
        {"method": "thrift", "host": "spark.example", "port": 10000, "schema": "s", **more}
    )


def test_plain_keys_and_settings_are_set_in_order_and_secrets_and_server_prefixes_left_out() -> (
    None
):
    creds = thrift(
        server_side_parameters={
            "spark.sql.shuffle.partitions": 7,
            "spark.hadoop.fs.s3a.secret.key": "hidden-value",
            "spark.hadoop.fs.azure.sas.token.provider.type": "org.apache.hadoop.fs.Provider",
            "spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:postgresql://u:pw-1234@db/m",
            "set:hiveconf:spark.sql.session.timeZone": "UTC",
            "use:database": "other",
        }
    )
    sets, secrets = session_sets(creds.server_side_parameters)
    assert sets == [
        ("spark.sql.shuffle.partitions", "7"),
        ("spark.hadoop.fs.azure.sas.token.provider.type", "org.apache.hadoop.fs.Provider"),
        ("spark.sql.ansi.enabled", "false"),  # dbt-spark's
        (ALL_FILES_IN_CRC, "false"),  # the adapter's default
    ]
    assert secrets == [
        "spark.hadoop.fs.s3a.secret.key",
        "spark.hadoop.javax.jdo.option.ConnectionURL",  # its value holds a password
    ]


def test_set_statement_quotes_a_key_with_other_characters() -> None:
    assert set_statement("spark.sql.shuffle.partitions", "7") == (
        "set spark.sql.shuffle.partitions=7"
    )
    assert set_statement("my key", "a b") == "set `my key`=a b"


def test_a_refusal_names_the_key_and_scrubs_the_profiles_secrets() -> None:
    creds = thrift(token="tok-123456789", server_side_parameters={"spark.sql.x": "1"})
    said = _refused(
        creds, "spark.example:10000", "spark.sql.x",
        RuntimeError("Cannot modify\n the value tok-123456789."),
    )  # fmt: skip
    assert said.startswith(
        "The Spark Thrift Server at spark.example:10000 refused server_side_parameters' "
        "spark.sql.x for the session (Cannot modify the value "
    )
    assert "tok-123456789" not in said and "--conf or spark-defaults.conf" in said


def test_the_servers_message_is_taken_out_of_pyhives_response() -> None:
    response = (
        "TExecuteStatementResp(status=TStatus(statusCode=3, infoMessages=['*org.apache.hive."
        "HiveSQLException:Error running query: ...', 'a:b:1'], sqlState='46110', errorCode=0, "
        "errorMessage='Error running query: [CANNOT_MODIFY_STATIC_CONFIG] org.apache.spark.sql."
        "AnalysisException: [CANNOT_MODIFY_STATIC_CONFIG] Cannot modify the value of the static "
        'Spark config: "spark.sql.warehouse.dir". SQLSTATE: 46110\'), operationHandle=None)'
    )
    assert server_message(RuntimeError(response)) == (
        "[CANNOT_MODIFY_STATIC_CONFIG] Cannot modify the value of the static Spark config: "
        '"spark.sql.warehouse.dir". SQLSTATE: 46110'
    )
    assert server_message(RuntimeError("plain\n text")) == "plain text"


def test_a_server_lost_as_the_session_opens_is_said_as_lost() -> None:
    class TTransportException(Exception):  # Thrift's, named as the adapter tells it
        pass

    forget_lost_servers()
    try:
        said = _refused(thrift(), "spark.example:10000", "spark.sql.x", TTransportException("EOF"))
    finally:
        forget_lost_servers()
    assert said.startswith(
        "The Spark Thrift Server at spark.example:10000 stopped answering "
        "(TTransportException: EOF)"
    )


def test_a_refused_session_is_closed_at_once_and_the_connection_marked_failed() -> None:
    ran: list[str] = []

    class Cursor:  # PyHive's, refusing the user's key as the server does
        def execute(self, sql: str) -> None:
            ran.append(sql)
            if "shuffle" in sql:
                raise RuntimeError("errorMessage='[CANNOT_MODIFY_STATIC_CONFIG] No.')")

        def close(self) -> None:
            ran.append("cursor closed")

    class Wrapper:  # dbt-spark's PyhiveConnectionWrapper around PyHive's connection
        class handle:
            @staticmethod
            def cursor() -> Cursor:
                return Cursor()

        def close(self) -> None:
            ran.append("session closed")

    creds = thrift(server_side_parameters={"spark.sql.shuffle.partitions": 7})
    connection = Connection(type="spark_streams", name="m", credentials=creds)
    connection.handle, connection.state = Wrapper(), ConnectionState.OPEN
    with pytest.raises(FailedToConnectError, match=r"refused server_side_parameters' spark\.sql"):
        with_session_parameters(connection)
    assert ran == ["set spark.sql.shuffle.partitions=7", "cursor closed", "session closed"]
    assert connection.state == ConnectionState.FAIL and connection.handle is None
