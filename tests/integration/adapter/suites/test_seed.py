"""dbt-tests-adapter's seed suites that apply to Spark.

Not run, with the reason: BaseBasicSeedTests, BaseSeedConfigFullRefreshOn/Off,
BaseSeedCustomSchema, BaseSeedWithUniqueDelimiter/WrongDelimiter/EmptyDelimiter,
BaseSeedParsing and BaseSimpleSeedWithBOM build their expected table with one Postgres
statement (CREATE TABLE followed by INSERT), which Spark does not parse;
BaseSimpleSeedColumnOverride overrides columns to Postgres types (`text`);
BaseSeedSpecificFormats loads a 10,000-row seed, minutes of INSERT statements on two cores.
test_dbt_day_one.py checks what these would: cells stored as written.
"""

from dbt.tests.adapter.simple_seed.test_seed import (
    BaseSimpleSeedEnabledViaConfig,
    BaseTestEmptySeed,
)


class TestSimpleSeedEnabledViaConfig(BaseSimpleSeedEnabledViaConfig):
    pass


class TestEmptySeed(BaseTestEmptySeed):
    pass
