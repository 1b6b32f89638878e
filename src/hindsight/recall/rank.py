"""Fusion, reranking and budget packing for recall: pure functions over channel rankings.

A recall searches several channels (dense vectors, BM25), each giving a ranked
list of memory ids with scores. They are fused, by default by min-max score
fusion (each channel's scores scaled to 0..1 and summed; reciprocal-rank fusion,
``1 / (k + rank)``, is the alternative). A turn that answers a question ranked near the
top inherits part of the question's fused score (the "reply" channel). Then each
candidate's fused score is multiplied by boosts for confidence, source (the agent's own
words count less, except where the query asks for them: a summary, what it recommended),
recency (exponential half-life) and, when the query names a time ("in May 2023",
"last week"), for being from then; and by its owner's weight. Everything that went
into a score is kept in its :class:`Explanation`.

How often a memory was recalled is recorded, not used to rank: being returned is not
being useful, and a boost for it fed the ranking's own picks back into it (issue 3's
benchmarks lost 0.004 and 0.009 fraction-recall@10 to a 5% boost per log unit).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from hindsight.guard.conflict import contradiction
from hindsight.lifecycle.decay import Decay
from hindsight.models import (
    ChannelHit,
    Explanation,
    Kind,
    Memory,
    RecallResult,
    Source,
    estimate_tokens,
)
from hindsight.text.timewords import Period

# The search channels and their weights in fusion. Recency and use are not
# channels: as channels they promoted recent but irrelevant memories (LoCoMo and
# BEAM fell), so they only rerank (boosts below).
CHANNEL_WEIGHTS: Mapping[str, float] = {"dense": 1.0, "bm25": 1.0}
# A channel's best raw score below which it counts for less in fusion, in proportion: a
# BM25 score under 1 is less than one fairly rare word matched once (one word found in
# 1 of 4 memories scores ~0.85; on LoCoMo and BEAM the best match scores 5-20).
INFORMATIVE: Mapping[str, float] = {"bm25": 1.0}
# Scores closer than this (relative) are one score: two copies of a text embed a float's
# rounding apart, and min-max scaling made that 1 against 0.
RESOLUTION = 1e-5


# What the agent said is second-hand: memory is about the user and the world, and an
# assistant's reply restates the question at length, so it matches many queries by
# sheer volume. Its turns count half; other sources count fully (the figures behind
# this and the weights below: BENCHMARKS.md, "The figures behind the constants").
SOURCE_WEIGHTS: Mapping[Source, float] = {Source.AGENT: 0.5}
# A question asked in a conversation states little; the turn that answers it holds what
# a later query about it wants ("Anything you're excited for in the adoption process?"
# -> "I'm thrilled to make a family for kids who need one"). A reply gets this share of
# its question's fused score. The agent's replies are not lifted, and its questions
# lift with its source weight: both are second-hand (BEAM falls without these rules).
REPLY_WEIGHT = 0.85
# Questions that ask for the agent's own words, which count less elsewhere (second-hand,
# they restate the user's): a summary is of what both sides of the conversation said
# (BEAM's summary questions cite the assistant's replies in 98 of their 171 evidence
# messages), and "How did you recommend ...?" or "What did you say ...?" asks what the
# agent said. There the agent's words weigh as the user's (BEAM's summaries and
# information extraction gain, both halves; no LoCoMo question asks either).
ASKS_AGENT = re.compile(
    r"\b(?:summar(?:y|ies|i[sz]e[sd]?|i[sz]ing)|recap(?:s|ped|ping)?|sum (?:\w+ )?up"
    r"|did you (?:recommend|suggest|advise|propose|say|tell|mention|explain)"
    r"|you (?:recommended|suggested|advised|proposed|said|told|mentioned|explained))\b",
    re.IGNORECASE,
)
# People type one thought as several messages in a row ("ok so" / "we finally got the
# dog" / "a golden retriever, 2 years old"): the statement is the run (the store's
# RUN_GAP), and a question matches the run, not any one message. The turns of a top
# result's run, up to RUN_REACH on each side, follow it with its fused score. Turns
# that alternate speakers, as LoCoMo's and BEAM's do, form no runs.
RUN_REACH = 3
# A message of a run follows its best one only if it says something of its own: a word
# that at most one in fifty of the owner's memories uses. People send the same short
# replies over and over ("lol", "ok", "omg that's amazing"); lifted, they pushed other
# evidence out of the ten (real chats lost their fact recall that way). One in a hundred
# or two hundred kept less of what runs are good for (a fact typed as "i signed up for
# pottery!!" / "at clay barn, wednesdays 7 til 9").
RARE_SHARE = 0.02
# A query that names a time ("What did Caroline do in May 2023?", "last week") asks
# about then: memories observed in that span count double (BEAM's questions name none).
TIME_WEIGHT = 2.0
# A turn whose stated values have since been superseded ("I live in Paris", after "I
# moved to Berlin") loses up to half its score, in proportion to the share of its values
# that are outdated: it still says what else it said ("... and I love jazz").
OUTDATED_WEIGHT = 0.5
# Among the first this many results, a newer statement of a change outranks an older
# statement of the same thing (see current_first); the ten stay the ten.
UPDATE_WINDOW = 10
# Words that say something changed: "recently improved to 78%", "rescheduled to 4:30",
# "the new deadline", "I now love coffee".
_CHANGE = re.compile(
    r"\b(?:now|nowadays|new|newly|recent|recently|lately|update[ds]?|updating|change[ds]?|"
    r"changing|switched|moved|moving|rescheduled|postponed|delayed|pushed back|increased|"
    r"decreased|improved|dropped|grew|grown|extended|adjusted|revised|reached|raised|"
    r"lowered|upgraded|no longer|any ?more|instead|actually)\b",
    re.IGNORECASE,
)
_COUNT = re.compile(r"\b(\d[\d,.]*)\s*(%|[a-z]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Rerank:
    """How much confidence, source, recency and a named time may move a fused score."""

    half_life_days: float = 30.0
    confidence_floor: float = 0.7  # a memory of confidence 0 keeps 70% of its score
    recency_weight: float = 0.1  # a brand-new memory gains up to 10%
    time_weight: float = TIME_WEIGHT  # for being from the span of time a query names
    source_weights: Mapping[Source, float] = field(default_factory=lambda: SOURCE_WEIGHTS)
    decay: Decay = field(default_factory=Decay)  # of confidence while a memory goes unused

    def for_query(self, query: str) -> Rerank:
        """This reranking as it applies to ``query``: where it asks for the agent's own
        words (a summary of the conversation, what the agent recommended), they weigh
        as the user's (see :data:`ASKS_AGENT`)."""
        if not ASKS_AGENT.search(query):
            return self
        weights = {**self.source_weights, Source.AGENT: self.source_weights.get(Source.USER, 1.0)}
        return replace(self, source_weights=weights)


def rank_channels(
    channels: Mapping[str, Sequence[tuple[str, float]]],
) -> dict[str, dict[str, ChannelHit]]:
    """Per channel, each memory id's 1-based rank and raw score."""
    return {
        name: {mid: ChannelHit(rank=i + 1, score=score) for i, (mid, score) in enumerate(hits)}
        for name, hits in channels.items()
    }


def fuse(
    ranked: Mapping[str, Mapping[str, ChannelHit]],
    *,
    k: int,
    weights: Mapping[str, float] = CHANNEL_WEIGHTS,
) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: sum over channels of ``w / (k + rank)``."""
    fused: dict[str, float] = {}
    for name, hits in ranked.items():
        weight = weights.get(name, 1.0)
        for mid, hit in hits.items():
            fused[mid] = fused.get(mid, 0.0) + weight / (k + hit.rank)
    return fused


def fuse_minmax(
    ranked: Mapping[str, Mapping[str, ChannelHit]],
    *,
    weights: Mapping[str, float] = CHANNEL_WEIGHTS,
) -> dict[str, float]:
    """Weighted score fusion: each channel's raw scores scaled to 0..1 (min-max), summed.

    Unlike RRF it keeps how far apart the scores are, which matters when a store
    holds a few hundred memories and the top few are much better than the rest.
    """
    fused: dict[str, float] = {}
    for name, hits in ranked.items():
        if not hits:
            continue
        weight = weights.get(name, 1.0)
        low = min(hit.score for hit in hits.values())
        top = max(hit.score for hit in hits.values())
        span = top - low
        informative = INFORMATIVE.get(name.partition(":")[0])  # "bm25:2": a sub-query's
        if informative is not None:
            # On a store of a few memories a word found in half of them has an IDF of
            # about 0, and scaling would still give its best match a full 1.0.
            weight *= min(1.0, top / informative)
        spread = span > RESOLUTION * max(1.0, abs(top))  # else rounding, not a difference
        for mid, hit in hits.items():
            scaled = (hit.score - low) / span if spread else 1.0
            fused[mid] = fused.get(mid, 0.0) + weight * scaled
    return fused


def boosts(
    memory: Memory,
    *,
    now: datetime,
    rerank: Rerank,
    period: Period | None = None,
    outdated: float = 0.0,
) -> dict[str, float]:
    """Multiplicative factors for confidence (decayed: see :mod:`hindsight.lifecycle`),
    source, recency, given a ``period`` the query names, time, and given the share of a
    turn's values since superseded, that."""
    age_days = max(0.0, (now - memory.observed_at).total_seconds() / 86_400)
    confidence = rerank.decay.confidence(memory, now)
    factors = {
        "confidence": rerank.confidence_floor + (1 - rerank.confidence_floor) * confidence,
        "source": rerank.source_weights.get(memory.provenance.source, 1.0),
        "recency": 1 + rerank.recency_weight * 0.5 ** (age_days / rerank.half_life_days),
    }
    if period is not None:
        factors["time"] = rerank.time_weight if memory.observed_at in period else 1.0
    if outdated > 0:
        factors["outdated"] = 1 - OUTDATED_WEIGHT * outdated
    return factors


def fuse_channels(
    ranked: Mapping[str, Mapping[str, ChannelHit]], *, fusion: str, rrf_k: int
) -> dict[str, float]:
    """Each candidate's fused score: "minmax" (default) or "rrf"."""
    return fuse(ranked, k=rrf_k) if fusion == "rrf" else fuse_minmax(ranked)


def is_question(memory: Memory) -> bool:
    """A turn that asks something: what it asks about is answered by the next turn."""
    return memory.kind is Kind.EPISODE and "?" in memory.content


def lift_replies(
    fused: dict[str, float],
    replies: Mapping[str, str],
    asked: Mapping[str, float],
    *,
    weight: float = REPLY_WEIGHT,
) -> dict[str, ChannelHit]:
    """Give each reply ``weight`` times what its question is worth.

    ``replies`` maps a question's id to its reply's id, ``asked`` a question's id to
    what its answer is worth (the question's fused score, or that of the statement it
    follows up, times the trust in who asked it). A reply that already scores higher
    keeps its score. Returns the replies lifted, as a channel of their own.
    """
    lifted: dict[str, float] = {}
    for question, reply in replies.items():
        score = weight * asked[question]
        if score > max(fused.get(reply, 0.0), lifted.get(reply, 0.0)):
            lifted[reply] = score
    fused.update(lifted)
    order = sorted(lifted, key=lambda mid: (-lifted[mid], mid))
    return {mid: ChannelHit(rank=i + 1, score=lifted[mid]) for i, mid in enumerate(order)}


def says_something(terms: Iterable[str], frequencies: Mapping[str, int], size: int) -> bool:
    """Whether a text of these keyword ``terms`` uses a word that few of the ``size``
    memories it is among use (``frequencies``: how many use each; see RARE_SHARE)."""
    rare = max(1.0, RARE_SHARE * size)
    return any(frequencies.get(term, 0) <= rare for term in terms)


def lift_runs(fused: dict[str, float], runs: Mapping[str, Sequence[str]]) -> dict[str, ChannelHit]:
    """Give each turn of a result's run (``runs`` maps a result's id to its run's other
    turns, nearest first) the result's fused score, a hair less for each step away, so
    that the run reads in one piece after it. A turn that already scores higher keeps its
    score. Returns the turns lifted, as a channel of their own."""
    lifted: dict[str, float] = {}
    for member, mates in runs.items():
        for step, mate in enumerate(mates, start=1):
            score = fused[member] * (1 - RESOLUTION * step)
            if score > max(fused.get(mate, 0.0), lifted.get(mate, 0.0)):
                lifted[mate] = score
    fused.update(lifted)
    order = sorted(lifted, key=lambda mid: (-lifted[mid], mid))
    return {mid: ChannelHit(rank=i + 1, score=lifted[mid]) for i, mid in enumerate(order)}


def score(
    memories: Mapping[str, Memory],
    ranked: Mapping[str, Mapping[str, ChannelHit]],
    fused: Mapping[str, float],
    *,
    owner_weights: Mapping[str, float],
    now: datetime,
    rerank: Rerank,
    period: Period | None = None,
    outdated: Mapping[str, float] | None = None,
) -> list[RecallResult]:
    """Rerank fused scores and explain them; best first (ties broken by id).

    ``outdated`` maps a turn's id to the share of the values it stated that were since
    superseded."""
    outdated = outdated or {}
    results = []
    for mid, base in fused.items():
        memory = memories.get(mid)
        if memory is None:
            continue
        factors = boosts(
            memory, now=now, rerank=rerank, period=period, outdated=outdated.get(mid, 0.0)
        )
        owner_weight = owner_weights.get(memory.owner, 1.0)
        final = base * owner_weight * math.prod(factors.values())
        explanation = Explanation(
            channels={name: hits[mid] for name, hits in ranked.items() if mid in hits},
            fused=base,
            boosts=factors,
            final=final,
            owner_weight=owner_weight,
            confidence=rerank.decay.confidence(memory, now),
        )
        results.append(RecallResult(memory=memory, score=final, explanation=explanation))
    results.sort(key=lambda r: (-r.score, r.memory.id))
    return results


def current_first(
    results: list[RecallResult],
    query: Collection[str],
    terms: Callable[[str], Collection[str]],
    *,
    window: int = UPDATE_WINDOW,
) -> list[RecallResult]:
    """Put a newer statement of a change above the older statement it updates.

    Among the first ``window`` results, a statement (not the agent's, and from a source
    trusted no less than the older one's: a tool cannot overrule the user) that says
    something changed ("my coverage has recently improved to 78%"), gives another count
    of the same thing ("I secured 5 interviews" after "3 interviews") or contradicts an
    older result, and shares at least two of the query's terms (``query``; ``terms``
    gives a text's) with that older result, moves just above it: the latest value of
    what was asked is read first. Only the order changes, and the explanation says so
    (the ``update`` boost).
    """
    if len(query) < 2:
        return results
    asked = set(query)
    shared: dict[str, set[str]] = {}

    def about(r: RecallResult) -> set[str]:
        if r.memory.id not in shared:
            shared[r.memory.id] = asked.intersection(terms(r.memory.content))
        return shared[r.memory.id]

    top = results[:window]
    moved = False
    for i, new in enumerate(top):
        if new.memory.provenance.source is Source.AGENT or len(about(new)) < 2:
            continue
        changed = bool(_CHANGE.search(new.memory.content))
        for old in top[:i]:
            if (
                old.score >= new.score > 0
                and new.memory.trust >= old.memory.trust  # no less trusted a source
                and _older(old.memory, new.memory)
                and len(about(old) & about(new)) >= 2
                and not _named_only_by(old, new, about)
                and (changed or _updates(new.memory.content, old.memory.content))
            ):
                _lift_above(new, old)
                moved = True
                break
    if moved:
        results = sorted(results, key=lambda r: (-r.score, r.memory.id))
    return results


def successors_first(
    results: list[RecallResult],
    successors: Mapping[str, Collection[str]],
    *,
    window: int = UPDATE_WINDOW,
) -> list[RecallResult]:
    """Put a memory that superseded a value a turn stated just above that turn.

    ``successors`` maps a turn's id to the memories that superseded the values derived
    from it ("User moved to Berlin", for "I live in Paris and I love jazz"). Among the
    first ``window`` results, such a memory ranked below its turn moves just above it:
    what is true now is read before what was, however close their scores. Only the order
    changes, and the explanation says so (the ``update`` boost).
    """
    top = results[:window]
    position = {r.memory.id: i for i, r in enumerate(top)}
    moved = False
    for old in top:
        for new in sorted(
            (top[position[s]] for s in successors.get(old.memory.id, ()) if s in position),
            key=lambda r: (-r.score, r.memory.id),
        ):
            if old.score >= new.score > 0:
                _lift_above(new, old)
                moved = True
    if moved:
        results = sorted(results, key=lambda r: (-r.score, r.memory.id))
    return results


def _lift_above(new: RecallResult, old: RecallResult) -> None:
    """Score ``new`` just above ``old``, keeping the order the lifted had among themselves."""
    lifted = old.score * (1 + 1e-3 * new.score / old.score)
    new.explanation.boosts["update"] = lifted / new.score
    new.score = new.explanation.final = lifted


def _named_only_by(
    old: RecallResult, new: RecallResult, about: Callable[[RecallResult], set[str]]
) -> bool:
    """Whether the query names a number only the older result has: "parcel 7" asks
    about parcel 7, and "parcel 17 arrived" updates nothing of it."""
    return any(any(c.isdigit() for c in term) for term in about(old) - about(new))


def _older(a: Memory, b: Memory) -> bool:
    return (a.observed_at, a.id) < (b.observed_at, b.id)


def _updates(new: str, old: str) -> bool:
    """Whether ``new`` gives another value than ``old``: another count of one thing, or
    a contradiction (another number on a label, another date, a denial)."""
    counts_new, counts_old = _counts(new), _counts(old)
    if any(n.isdisjoint(counts_old[w]) for w, n in counts_new.items() if w in counts_old):
        return True
    return contradiction(new, old) is not None


def _counts(text: str) -> dict[str, set[str]]:
    """Numbers by what they count: "3 interviews" -> {"interview": {"3"}}."""
    out: dict[str, set[str]] = {}
    for number, unit in _COUNT.findall(text):
        out.setdefault(unit.lower().removesuffix("s"), set()).add(number.rstrip(".,"))
    return out


def pack(
    results: Sequence[RecallResult], *, k: int, token_budget: int | None
) -> list[RecallResult]:
    """The best ``k`` results whose contents fit in ``token_budget`` together.

    A result too large for what is left is skipped, so smaller ones after it may still fit.
    """
    packed: list[RecallResult] = []
    left = token_budget
    for result in results:
        if len(packed) == k:
            break
        if left is not None:
            cost = estimate_tokens(result.memory.content)
            if cost > left:
                continue
            left -= cost
        packed.append(result)
    return packed
