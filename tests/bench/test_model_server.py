"""The scripted model server of `kenning bench --llm` answers each extra in the
shape its schema asks for."""

from __future__ import annotations

import json

from pydantic import BaseModel

from bench.model_server import reply_for
from kenning.llm.client import FRAME, Expansion, Facts, Summary, Verdict


def system(schema: type[BaseModel]) -> str:
    return FRAME.format(schema=json.dumps(schema.model_json_schema()))


def test_each_extra_gets_an_answer_its_schema_accepts() -> None:
    queries = Expansion.model_validate(reply_for(system(Expansion), {"query": "how do we deploy"}))
    assert len(queries.queries) == 3
    assert all("how do we deploy" in q for q in queries.queries)
    memory = (
        "The billing export runs at 02:30 UTC every night. It is owned by the data team since May."
    )
    facts = Facts.model_validate(reply_for(system(Facts), {"memory": memory}))
    assert facts.facts == [
        "Fact: The billing export runs at 02:30 UTC every night.",
        "Fact: It is owned by the data team since May.",
    ]
    assert Summary.model_validate(reply_for(system(Summary), {"entry": {}})).summary
    assert Verdict.model_validate(reply_for(system(Verdict), {})).verdict == "unknown"
