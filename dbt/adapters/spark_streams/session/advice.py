"""Spark's and Delta's advice that would lose data, left out of the errors a user reads.

Many of Spark's and Delta's error messages end with a way around the error: `try_cast` (which
turns a value that does not fit into NULL, as `try_divide` and its kin do),
`spark.sql.storeAssignmentPolicy` set to LEGACY (which truncates it), ANSI mode turned off
(`... to "false" to bypass this error`: overflows wrap, invalid casts become NULL), or a safety
check turned off (VACUUM's retention check, a partitioning check). Followed in a pipeline, each
silently nulls, truncates or drops data that the error was protecting. The adapter passes every
message on with those sentences left out, and says instead what keeps the data. Advice that
only enables a feature is kept.
"""

import re

# A sentence that advises a way around an error at the cost of the data or of a safety check.
HARMFUL = re.compile(
    r"try_cast"
    r"|return NULL instead"
    r"|storeAssignmentPolicy"
    r"|updateAndMergeCastingFollowsAnsiEnabled"
    r"|(?<!is )(?<!are )(?<!was )\bset(?:ting)?\b.*?(?:\bto\b|=)\s*[\"'`]?(?:false|LEGACY)\b"
    r"|\bdisabl(?:e|ing)\b.*?\bcheck\b"
    r"|\bbypass this error\b"
    r"|unsafeBatchReadOnIncompatibleSchemaChanges",
    re.IGNORECASE,
)
SQLSTATE = re.compile(r"\s*SQLSTATE:\s*\w+\s*$")
SENTENCE_END = re.compile(r"(?<=[.!?])(\s+)")
KEEP_THE_DATA = (
    "(The way around this that Spark or Delta suggests is left out: it would turn values into "
    "NULL, truncate them or switch a safety check off. To keep the data, fix the model's SQL or "
    "config, widen the target's column (ALTER TABLE ... ALTER COLUMN ... TYPE) or rebuild the "
    "model with --full-refresh.)"
)


def without_harmful_advice(message: str) -> str:
    """`message` without the sentences that advise losing data, and with what keeps it instead
    where any was left out; a message without such advice is returned as it came. The first
    sentence says what went wrong and is always kept."""
    state = SQLSTATE.search(message)
    body = message[: state.start()] if state else message
    parts = SENTENCE_END.split(body)
    sentences, separators = parts[0::2], [*parts[1::2], ""]
    kept = [
        (sentence, separator)
        for n, (sentence, separator) in enumerate(zip(sentences, separators, strict=True))
        if n == 0 or not HARMFUL.search(sentence)
    ]
    if len(kept) == len(sentences):
        return message
    text = "".join(sentence + separator for sentence, separator in kept).rstrip()
    tail = f" SQLSTATE: {state.group(0).split(':', 1)[1].strip()}" if state else ""
    return f"{text}\n{KEEP_THE_DATA}{tail}"
