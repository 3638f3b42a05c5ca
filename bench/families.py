"""Query families with known answers, derived from a corpus and a seed. Pure.

(a) near-verbatim, (b) paraphrase, (c) cross-project distractor, (h) exact identifier, (g) no-answer
are recall queries; (f) near-duplicate writes are remember calls; the
forgotten/suppressed/superseded and graveyard families reuse these builders and are
driven by ``bench.lifecycle``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from bench.corpus import GLOBAL, Corpus, Item, render, slots
from bench.scenarios import SCENARIOS

SCENARIO = {s.id: s for s in SCENARIOS}
FAMILIES = {
    "a": "near-verbatim",
    "b": "paraphrase",
    "c": "cross-project distractor",
    "d": "superseded facts",
    "e": "suppressed & forgotten",
    "f": "near-duplicate writes",
    "g": "no-answer (abstention)",
    "h": "exact identifiers",
    "i": "graveyard warnings",
    "j": "contradictions (bench/contradictions.py)",
}

# No memory of the corpus answers these. Off-domain ones and in-domain ones
# about tools we never mention.
NO_ANSWER = (
    "What is a good recipe for sourdough bread with a stiff starter?",
    "Who won the football world cup in 1998?",
    "How tall is the highest mountain in the Alps?",
    "Recommend a novel set in nineteenth-century Russia.",
    "What is the capital city of Australia?",
    "How many legs does a spider have?",
    "Which wine goes with grilled salmon?",
    "Explain the rules of cricket in two sentences.",
    "What is the boiling point of water at the top of Everest?",
    "How do I get red wine stains out of a carpet?",
    "Which GraphQL federation gateway routes our supergraph?",
    "What is our Terraform state locking table called?",
    "How do we configure the Elixir Phoenix channels cluster?",
    "Which Haskell build plan does the compiler team use?",
    "Where is the Unity game client's asset bundle server?",
    "What FPGA synthesis flags does the firmware team pass?",
    "Which COBOL copybooks describe the mainframe batch records?",
    "How is the Kotlin Multiplatform iOS framework signed?",
    "What does our Fortran weather model use for MPI tuning?",
    "Which Solidity compiler version do the smart contracts need?",
)


@dataclass(frozen=True)
class Query:
    """One recall with its ground truth: ``targets`` should be found,
    ``avoid`` must never be returned."""

    family: str
    text: str
    project: str | None
    targets: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()


@dataclass(frozen=True)
class Write:
    """One remember call of the dedup family: ``duplicate_of`` is the uid it
    repeats, or None (new fact)."""

    text: str
    project: str
    namespace: str
    duplicate_of: str | None
    near: str  # the uid the write is close to (its source)


def near_verbatim(item: Item) -> str:
    """What an agent types when it half-remembers the note: no markup, no
    label, first sentences only."""
    text = item.content.replace("`", "")
    text = re.sub(r"^(Style|Decision|Deploy|Bug [A-Z]+-\d+):\s*", "", text)
    sentences = re.split(r"(?<=[.;])\s+", text)
    return " ".join(sentences[:2]).rstrip(".;")


def _facts(corpus: Corpus) -> list[Item]:
    return [i for i in corpus.items if i.scenario is not None and i.project != GLOBAL]


def verbatim_queries(corpus: Corpus, rng: random.Random, n: int) -> list[Query]:
    picks = rng.sample(_facts(corpus), min(n, len(_facts(corpus))))
    return [Query("a", near_verbatim(i), i.project, (i.uid,)) for i in picks]


def paraphrase_queries(corpus: Corpus, rng: random.Random, n: int) -> list[Query]:
    projects = corpus.projects()
    out: list[Query] = []
    for item in rng.sample(_facts(corpus) + [i for i in corpus.items if i.project == GLOBAL], n):
        scenario = SCENARIO[item.scenario or ""]
        project = item.project if item.project != GLOBAL else rng.choice(projects)
        out.append(Query("b", rng.choice(scenario.paraphrases), project, (item.uid,)))
    return out


def distractor_queries(corpus: Corpus, rng: random.Random, n: int) -> list[Query]:
    """The same scenario in two projects: the filter names one, the other must not come back."""
    twins = [
        group for group in corpus.by_scenario().values() if len({i.project for i in group}) >= 2
    ]
    out: list[Query] = []
    for _ in range(n):
        group = rng.choice(twins)
        target, other = rng.sample(group, 2)
        if GLOBAL in (target.project, other.project):
            continue
        scenario = SCENARIO[target.scenario or ""]
        out.append(
            Query(
                "c", rng.choice(scenario.paraphrases), target.project, (target.uid,), (other.uid,)
            )
        )
    return out


def identifier_queries(corpus: Corpus, rng: random.Random, n: int) -> list[Query]:
    """An error code, ticket or version pin, alone or in a short question."""
    # A bare version number ("3.12") names nothing on its own; identifiers carry
    # letters (E-codes, pkg==1.2).
    carriers = [
        i for i in _facts(corpus) if i.ident and re.search(r"[A-Za-z]", identifier_token(i))
    ]
    out: list[Query] = []
    for item in rng.sample(carriers, min(n, len(carriers))):
        token = identifier_token(item)
        text = rng.choice((token, f"{token} again?", f"what do we know about {token}"))
        out.append(Query("h", text, item.project, (item.uid,)))
    return out


def identifier_token(item: Item) -> str:
    """The whitespace-delimited token of the content that carries the identifier, without markup."""
    for raw in item.content.split():
        if item.ident and item.ident in raw:
            return raw.strip("`:;,.()")
    return item.ident or ""


def no_answer_queries(corpus: Corpus, rng: random.Random) -> list[Query]:
    projects = corpus.projects()
    return [Query("g", text, rng.choice(projects)) for text in NO_ANSWER]


def duplicate_writes(corpus: Corpus, rng: random.Random, n: int) -> list[Write]:
    """Half rewordings of a stored memory (must be refused), half the same scenario with other
    values (a different fact that must be stored)."""
    facts = [i for i in _facts(corpus) if "{" in SCENARIO[i.scenario or ""].text]
    out: list[Write] = []
    for index, item in enumerate(rng.sample(facts, min(n, len(facts)))):
        if index % 2 == 0:
            out.append(
                Write(reword(item.content, rng), item.project, item.namespace, item.uid, item.uid)
            )
            continue
        fresh = render(SCENARIO[item.scenario or ""], _fresh_values(rng, item))
        if fresh != item.content:
            out.append(Write(fresh, item.project, item.namespace, None, item.uid))
    return out


def _fresh_values(rng: random.Random, item: Item) -> dict[str, str]:
    values = slots(rng, item.project)
    values["code"] = f"{item.project[:2].upper()}X-{rng.randint(100000, 999999)}"
    return values


def reword(text: str, rng: random.Random) -> str:
    """A light rewording an agent produces when it stores the same lesson again."""
    choice = rng.randrange(4)
    if choice == 1 and "`" in text:
        return text.replace("`", "")
    if choice == 2:
        return text.rstrip(".") + " (confirmed again this week)."
    if choice == 3 and ". " in text:
        return text[0].lower() + text[1:].replace(". ", "; ")
    return "Note: " + text
