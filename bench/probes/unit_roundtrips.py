"""Round trips and commands of the write paths issue 12's second pass put into units of work.

    .venv/bin/python -m bench.probes.unit_roundtrips

Same counting as ``bench.roundtrips`` (each packed send of the client is one round trip; commands
from
INFO commandstats) on an embedded Valkey with the real model: a state move that writes reinstate
hints, an
experience record with an abandoned approach (graveyard and registry entries), and the OAuth flow
from
registration to revoking the client. docs/architecture.md ("Not yet in a unit") quotes it.
"""

from __future__ import annotations

import json
from typing import Any

from bench.roundtrips import measure, private_engine
from kenning.access.accounts import Accounts
from kenning.access.oauth import ClientInfo, OAuth
from kenning.engine import Engine
from kenning.memory.experience import Approach, Report
from kenning.memory.memories import Draft
from kenning.store import Client


def memory_paths(engine: Engine, client: Client) -> dict[str, dict[str, int]]:
    mem = engine.memories
    mem.remember(Draft("Warm-up: the staging cluster runs Postgres 16."), actor="bench")
    key = mem.remember(Draft("Deploys go out on Tuesdays after the standup."), actor="bench").key
    report = Report(
        effort=3,
        outcome="succeeded",
        abandoned_approaches=[Approach("cron trains", "approach", "drift")],
    )
    return {
        "deprioritise with 2 hints": measure(
            client,
            lambda: engine.lifecycle.deprioritise(
                key, reason="stale", actor="bench", reinstate_hints=["deploy day", "release train"]
            ),
        ),
        "reinstate (drops 2 hints)": measure(
            client, lambda: engine.lifecycle.reinstate(key, reason="needed", actor="bench")
        ),
        "record_experience (1 abandoned)": measure(
            client, lambda: engine.experience.record_experience(key, report, actor="bench")
        ),
    }


def oauth_paths(engine: Engine, client: Client) -> dict[str, dict[str, int]]:
    accounts = Accounts(engine.store, engine.ctx.clock)
    accounts.create("ana", "a long enough password", "editor", actor="admin")
    oauth = OAuth(engine.store, engine.ctx.clock, accounts)
    info = ClientInfo(
        client_id="c1",
        name="bench",
        redirect_uris=("http://localhost/cb",),
        scope="read",
        auth_method="none",
        grant_types=("authorization_code",),
        created_at=1.0,
        secret_digest="",
        metadata={},
    )
    out = {"oauth register": measure(client, lambda: oauth.register(info, ip="10.0.0.1"))}
    request = oauth.begin(
        "c1", "http://localhost/cb", True, ["read", "offline_access"], None, "x" * 43, "r"
    )
    box: dict[str, Any] = {}
    out["oauth approve"] = measure(
        client,
        lambda: box.update(code=oauth.approve(request.id, "ana", ["read", "offline_access"])[0]),
    )
    out["oauth redeem (with refresh)"] = measure(
        client, lambda: box.update(issued=oauth.redeem(box["code"], refresh=True))
    )
    out["oauth rotate"] = measure(
        client, lambda: box.update(rotated=oauth.rotate(box["issued"].refresh_token, ["read"]))
    )
    live = oauth.access(box["rotated"].access_token)
    assert live is not None
    out["oauth revoke"] = measure(client, lambda: oauth.revoke(live))
    out["oauth revoke_client"] = measure(client, lambda: oauth.revoke_client("c1", actor="admin"))
    return out


def main() -> None:
    with private_engine() as (engine, client):
        print(json.dumps({**memory_paths(engine, client), **oauth_paths(engine, client)}, indent=1))


if __name__ == "__main__":
    main()
