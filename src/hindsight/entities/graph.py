"""An owner's entities: the mentions of their memories merged into one page each, with
aliases, facts and relations, and found again by any of their names.

Merging is careful: two names are one entity only when nothing tells them apart and
exactly one entity fits. "my uncle Bartholomew", "Uncle Bart" and "B. Nowak" are one
when Bartholomew's surname is Nowak somewhere ("Bart" is a short form of Bartholomew,
both are the speaker's uncle, "B." is his initial); "Bart from accounting" is another
(an uncle is not "from accounting"); a "Bart" that either could be joins the one named
so most often. A role named without a name ("my niece") is the one entity given that
role, if there is exactly one, and a page of its own ("my niece") otherwise.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from difflib import SequenceMatcher
from typing import Final

from hindsight.entities.given import given_to, is_given
from hindsight.entities.mentions import (
    KIN,
    PROFESSIONS,
    RELATIVES,
    SOCIAL,
    TITLES,
    Mention,
    read,
    role_word,
)
from hindsight.entities.pages import RECIPROCAL, Entity, Fact, Related, Said, inverse
from hindsight.text.names import family, same_person
from hindsight.text.terms import query_terms, text_terms

__all__ = ["Entity", "Fact", "Graph", "Related", "Said"]

_KIND_RANK: Final = {"other": 0, "project": 1, "place": 2, "organization": 3, "pet": 4, "person": 5}
_DOMINANT: Final = 4  # a name that fits several joins one said this many times more
_PEOPLE: Final = ("person", "other", "pet")
_GENERIC_SPEAKERS: Final = frozenset({"user", "assistant", "system", "me", "i"})
_WORDS: Final = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*\.?")


@dataclass(slots=True)
class _Node:
    """Mentions of one name (with one role) before merging."""

    name: str
    kind: Counter[str] = field(default_factory=Counter)
    roles: set[tuple[str, str | None]] = field(default_factory=set)  # (role, of)
    surfaces: Counter[str] = field(default_factory=Counter)
    memories: dict[str, None] = field(default_factory=dict)  # ordered set
    strong: bool = False

    @property
    def words(self) -> list[str]:
        return self.name.split()

    def role_words(self) -> set[str]:
        return {role for role, _ in self.roles}


class _Sets:
    """Union-find over node numbers."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, a: int) -> int:
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(b)] = self.find(a)


def _given_fits(short: str, full: str) -> bool:
    """Whether given name ``short`` may be ``full``: the same, a short form, or a
    beginning of three letters or more ("Bart", "Bartholomew")."""
    a, b = short.lower().rstrip("."), full.lower().rstrip(".")
    if a == b:
        return True
    if short.endswith(".") and len(a) == 1:
        return b.startswith(a)
    if len(a) >= 3 and b.startswith(a):
        return True
    return bool(family(a) & (family(b) | {b})) or same_person(a, b)


def _surnames_fit(a: str, b: str) -> bool:
    """The same surname, or an initial of it ("H." and "Hughes")."""
    a, b = a.lower(), b.lower()
    if a.endswith(".") and len(a) == 2:
        return b.startswith(a[0])
    if b.endswith(".") and len(b) == 2:
        return a.startswith(b[0])
    return a == b


def _names_fit(a: _Node, b: _Node) -> bool:
    """Whether the names of ``a`` and ``b`` may be one person's: given names that fit
    and no two different surnames ("B. Nowak" and "Bartholomew Nowak")."""
    wa, wb = a.words, b.words
    if len(wa) > 1 and len(wb) > 1 and not _surnames_fit(wa[-1], wb[-1]):
        return False
    if len(wa) == 1 and len(wb) > 1 and wa[0].lower() == wb[-1].lower():
        return True  # "Nowak" and "Bartholomew Nowak"
    if len(wb) == 1 and len(wa) > 1 and wb[0].lower() == wa[-1].lower():
        return True
    if (wa[0].endswith(".") and len(wa) == 1) or (wb[0].endswith(".") and len(wb) == 1):
        return False  # an initial alone says too little
    return _given_fits(wa[0], wb[0]) or _given_fits(wb[0], wa[0])


def _key(name: str) -> str:
    """A name as it is looked up: lower-cased, without accents, dots, hyphens or extra
    spaces ("Marie-Claude" is "marie claude")."""
    plain = unicodedata.normalize("NFKD", name.casefold())
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return " ".join(plain.replace(".", " ").replace("-", " ").replace("\u2019", "'").split())


_TITLED: Final = frozenset({"mr", "ms"})  # "roles" of Mr. and Mrs.: no roles on a page
_NAMELESS: Final = -2  # a link's end at -2 - k: the k-th role named by no name ("my niece")
_TITLE_KEYS: Final = frozenset(_key(title) for title in TITLES)


def _initials(node: _Node) -> set[str]:
    """Keys a name is looked up under when merging: its first and last initials and
    those of the full names its given name is a short form of."""
    words = node.words
    keys = {words[0][0].lower(), "last:" + words[-1].lower()}
    if len(words) > 1:
        keys.add("last:" + words[-1].lower())
    keys |= {full[0] for full in family(words[0].lower().rstrip("."))}
    if len(words) == 1:
        keys.add("last:" + words[0].lower())  # "Nowak" alone may be a surname
    return keys


def _roles_fit(a: set[tuple[str, str | None]], b: set[tuple[str, str | None]]) -> bool:
    """Two sets of roles of one entity? Either unknown, one role in common, or roles to
    different people ("my instructor", "Gethin's daughter"). A kinship role and a
    workplace ("from accounting") tell two people apart; a title that is a profession
    ("Prof.") fits what such a person is to someone ("my supervisor")."""
    sa, sb = {r for r, _ in a} & _TITLED, {r for r, _ in b} & _TITLED
    if sa and sb and sa != sb:
        return False  # Mr. and Mrs. Pemberton
    a, b = {r for r in a if r[0] not in _TITLED}, {r for r in b if r[0] not in _TITLED}
    if not a or not b or a & b or not {of for _, of in a} & {of for _, of in b}:
        return True  # what one is to different people tells no one apart
    ra, rb = {role for role, _ in a}, {role for role, _ in b}
    return bool((ra & PROFESSIONS and rb <= SOCIAL) or (rb & PROFESSIONS and ra <= SOCIAL))


def _other_given(asked: str, known: str) -> bool:
    """Whether a word of ``asked`` is a given name that the word of ``known`` in its
    place is not."""
    return any(a != k and is_given(a) for a, k in zip(asked.split(), known.split(), strict=False))


def _sexes_fit(roles: set[tuple[str, str | None]], *nodes: _Node) -> bool:
    """Whether names and a Mr. or Mrs. among ``roles`` may be one person's: "Mrs. Doyle"
    is not "Marcus Doyle"."""
    told = {"m" if r == "mr" else "f" for r, _ in roles if r in _TITLED}
    told |= {given_to(n.words[0]) for n in nodes if len(n.words) > 1} - {"", "mf"}
    return len(told) < 2


class Graph:
    """An owner's entities, built from what their memories say."""

    def __init__(self, said: Iterable[Said]) -> None:
        self._nodes: list[_Node] = []
        self._by_key: dict[tuple[str, str | None, str | None], int] = {}
        self._nameless: dict[tuple[str, str | None], _Node] = {}
        self._nameless_at: dict[tuple[str, str | None], int] = {}  # a link's end for each
        self._texts: dict[str, tuple[str, datetime | None]] = {}
        self._same: list[tuple[int, int]] = []  # names an LLM said are one entity
        links: list[tuple[int, str, int, str]] = []  # node, relation, node, memory
        speakers: Counter[str] = Counter()
        for s in said:
            self._texts[s.memory_id] = (s.content, s.at)
            links.extend(self._read(s))
            speakers[s.speaker or ""] += 1
        self._owner = speakers.most_common(1)[0][0] if speakers else ""  # whose "my"
        self._sets = _Sets()
        self._merge()
        self.entities, self._of_root = self._pages(links)
        self._lookup: dict[str, list[int]] = defaultdict(list)
        self._parts: dict[str, set[int]] = defaultdict(set)  # each word of a name
        for index, entity in enumerate(self.entities):
            for name in entity.names():
                key = _key(name)
                self._lookup[key].append(index)
                for part in key.split():
                    if len(part) > 1 and part not in _TITLE_KEYS:
                        self._parts[part].add(index)

    # -- reading -------------------------------------------------------------------------
    def _node(self, m: Mention, speaker: str | None) -> int:
        of = m.of if m.of is not None else speaker
        role = (m.role, of) if m.role else None
        key = (m.name.casefold(), *role) if role else (m.name.casefold(), None, None)
        index = self._by_key.get(key)
        if index is None:
            index = self._by_key[key] = len(self._nodes)
            self._nodes.append(_Node(m.name))
        node = self._nodes[index]
        if role:
            node.roles.add(role)
        return index

    def _read(self, s: Said) -> list[tuple[int, str, int, str]]:
        speaker = s.speaker if s.speaker and s.speaker.lower() not in _GENERIC_SPEAKERS else None
        mentions, links = read(s.content)
        placed: dict[int, int] = {}
        for i, m in enumerate(mentions):
            if not m.name:  # "my niece": resolved once every name is known
                of = m.of if m.of is not None else speaker
                called = f"{of}'s {m.role}" if of and m.role else m.surface
                key = (m.role or "", of)
                if key not in self._nameless:
                    self._nameless_at[key] = _NAMELESS - len(self._nameless)
                nameless = self._nameless.setdefault(key, _Node(called))
                nameless.surfaces[m.surface] += 1
                nameless.kind[m.kind] += 1
                nameless.memories[s.memory_id] = None
                placed[i] = self._nameless_at[key]  # its page is found once all are read
                continue
            index = self._node(m, speaker)
            node = self._nodes[index]
            node.kind[m.kind] += 1
            node.surfaces[m.surface] += 1
            if not m.addressed:  # "Thanks, Mel!" says nothing of Mel
                node.memories[s.memory_id] = None
            node.strong = node.strong or not m.weak
            placed[i] = index
        out = []
        speaker_node = None
        if speaker is not None:
            speaker_node = self._node(Mention(speaker, speaker, "person", 0), None)
            node = self._nodes[speaker_node]
            node.kind["person"] += 1
            node.surfaces[speaker] += 1
            node.strong = True
        out.extend(self._read_by_model(s, speaker))
        for link in links:
            a = speaker_node if link.subject == -1 else placed.get(link.subject)
            b = placed.get(link.object)
            if a is not None and b is not None and a != b:
                out.append((a, link.relation, b, s.memory_id))
        for i, m in enumerate(mentions):  # "my uncle Bart": Bart is the speaker's uncle
            if m.role in RELATIVES and m.of is None and speaker_node is not None and m.name:
                out.append((placed[i], f"{m.role} of", speaker_node, s.memory_id))
        return out

    def _named(self, name: str, kind: str, memory_id: str) -> int:
        index = self._node(Mention(name, name, kind, 0), None)
        node = self._nodes[index]
        node.kind[kind] += 1
        node.surfaces[name] += 1
        node.memories[memory_id] = None
        node.strong = True
        return index

    def _read_by_model(self, s: Said, speaker: str | None) -> list[tuple[int, str, int, str]]:
        """The entities, aliases and relations an LLM extractor read in ``s``."""
        if not s.read:
            return []
        nodes: dict[str, int] = {}
        for entity in s.read.get("named") or ():
            name, kind = str(entity.get("name", "")).strip(), str(entity.get("kind", "other"))
            if not name or kind not in _KIND_RANK:
                continue
            nodes[_key(name)] = index = self._named(name, kind, s.memory_id)
            for alias in entity.get("aliases") or ():
                if str(alias).strip():
                    other = self._named(str(alias).strip(), kind, s.memory_id)
                    nodes[_key(str(alias))] = other
                    self._same.append((index, other))
        out = []
        for triple in s.read.get("relations") or ():
            if len(triple) != 3:
                continue
            a, relation, b = (str(part).strip() for part in triple)
            ends = [nodes.get(_key(a)), nodes.get(_key(b))]
            if None in ends or not relation or ends[0] == ends[1]:
                continue
            out.append((int(ends[0] or 0), relation.lower(), int(ends[1] or 0), s.memory_id))
        return out

    # -- merging -------------------------------------------------------------------------
    def _union(self, a: int, b: int) -> None:
        ra, rb = self._sets.find(a), self._sets.find(b)
        if ra != rb:
            self._sets.union(ra, rb)
            self._root_roles[ra] = self._root_roles.pop(ra, set()) | self._root_roles.pop(rb, set())
            self._said[ra] = self._said.pop(ra, 0) + self._said.pop(rb, 0)

    def _merge(self) -> None:
        nodes = self._nodes
        strong = {n.name for n in nodes if n.strong}
        strong |= {n.words[-1] for n in nodes if n.strong and len(n.words) > 1}  # "Pruitt says"
        live = [i for i, n in enumerate(nodes) if n.name in strong]
        self._live = live
        self._root_roles = {i: set(nodes[i].roles) for i in live}
        self._said = {i: len(nodes[i].memories) for i in live}  # memories of each root
        for one, other in self._same:  # what a model said is one entity is
            self._union(one, other)
        # one name with roles that tell people apart stays several entities; the same
        # name with no role joins the one of them named most
        by_name: dict[str, list[int]] = defaultdict(list)
        for i in live:
            by_name[nodes[i].name.casefold()].append(i)
        for group in by_name.values():
            with_role = [i for i in group if nodes[i].roles]
            bare = [i for i in group if not nodes[i].roles]
            if len(with_role) <= 1:
                for i in group[1:]:
                    self._union(group[0], i)
                continue
            for x in with_role:  # roles that fit ("uncle", "uncle" of two turns) join
                for y in with_role:
                    if x < y and _roles_fit(self._roles(x), self._roles(y)):
                        self._union(x, y)
            if bare:
                most = max(with_role, key=lambda i: len(nodes[i].memories))
                for i in bare:
                    self._union(most, i)
        # a name joins the one fuller entity it may be, if there is only one; candidates
        # share an initial with it (a first or a last name, or a short form's full name)
        buckets: dict[str, list[int]] = defaultdict(list)
        for i in live:
            for key in _initials(nodes[i]):
                buckets[key].append(i)
        order = sorted(live, key=lambda i: (-len(nodes[i].words), -len(nodes[i].name)))
        for i in order:  # fuller names first, so a short one finds them already joined
            a = nodes[i]
            if self._kind(a) not in _PEOPLE:
                continue
            fits: set[int] = set()
            for j in {j for key in _initials(a) for j in buckets[key]}:
                b = nodes[j]
                root = self._sets.find(j)
                if root == self._sets.find(i) or root in fits or self._kind(b) not in _PEOPLE:
                    continue
                if (len(b.words), len(b.name)) < (len(a.words), len(a.name)):
                    continue
                if (
                    _names_fit(a, b)
                    and _roles_fit(self._roles(i), self._roles(j))
                    and _sexes_fit(self._roles(i) | self._roles(j), a, b)
                ):
                    fits.add(root)
            if len(fits) > 1:  # one far more spoken of than the rest: that one
                said = sorted(fits, key=lambda root: -self._said[root])
                if self._said[said[0]] >= _DOMINANT * sum(self._said[r] for r in said[1:]):
                    fits = {said[0]}
            if len(fits) == 1:
                self._union(fits.pop(), i)
        # "the Henderson contract": a word alone that begins one organisation's name
        orgs: dict[str, set[int]] = defaultdict(set)
        for i in live:
            if self._kind(nodes[i]) == "organization" and len(nodes[i].words) > 1:
                orgs[nodes[i].words[0].casefold()].add(self._sets.find(i))
        joined = Counter(self._sets.find(i) for i in live)
        for i in live:
            node, root = nodes[i], self._sets.find(i)
            if len(node.words) == 1 and joined[root] == 1 and self._kind(node) != "person":
                roots = orgs.get(node.name.casefold(), set())
                if len(roots) == 1:
                    self._union(roots.pop(), i)

    def _roles(self, i: int) -> set[tuple[str, str | None]]:
        return self._root_roles.get(self._sets.find(i), set())

    def _kind(self, node: _Node) -> str:
        kinds = node.kind or Counter({"other": 1})
        return max(kinds, key=lambda k: (kinds[k] if k != "other" else 0, _KIND_RANK[k]))

    # -- pages ---------------------------------------------------------------------------
    def _pages(self, links: list[tuple[int, str, int, str]]) -> tuple[list[Entity], dict[int, int]]:
        nodes = self._nodes
        groups: dict[int, list[int]] = defaultdict(list)
        for i in self._live:
            groups[self._sets.find(i)].append(i)
        # nameless roles: the one entity with that role, else a page of their own
        by_role: dict[tuple[str, str | None], set[int]] = defaultdict(set)
        for root, members in groups.items():
            for i in members:
                for held in nodes[i].roles:
                    by_role[held].add(root)
        extra: dict[int, list[str]] = defaultdict(list)  # root -> memories said namelessly
        extra_alias: dict[int, list[str]] = defaultdict(list)
        for (role, of), node in self._nameless.items():
            roots = by_role.get((role, of), set())
            if len(roots) == 1:
                root = next(iter(roots))
            else:
                root = len(nodes)
                nodes.append(node)
                node.roles.add((role, of))
                node.strong = True
                groups[root] = [root]
                self._sets.parent[root] = root
            extra[root].extend(node.memories)
            extra_alias[root].append(node.name)
            self._sets.parent[self._nameless_at[role, of]] = root
        of_root: dict[int, int] = {}
        self._roles_of: dict[int, set[tuple[str, str | None]]] = {}
        entities: list[Entity] = []
        names: dict[int, str] = {}
        for root, members in groups.items():
            surfaces: Counter[str] = Counter()
            kinds: Counter[str] = Counter()
            memories: dict[str, None] = {}
            for i in members:
                surfaces.update(nodes[i].surfaces or {nodes[i].name: 1})
                kinds.update(nodes[i].kind)
                memories.update(nodes[i].memories)
            for mid in extra.get(root, []):
                memories[mid] = None
            # the fullest name it goes by: most words, then the most said
            plain = [n.name for n in (nodes[i] for i in members)]
            name = max(plain, key=lambda s: (len(s.split()), sum(c.isalpha() for c in s) > 2,
                                             surfaces[s], len(s)))  # fmt: skip
            aliases = [s for s in dict.fromkeys([*plain, *surfaces, *extra_alias.get(root, [])])
                       if s != name]  # fmt: skip
            kind = self._kind(_Node(name, kind=kinds))
            roles = sorted({role for i in members for role, _ in nodes[i].roles} - _TITLED)
            if kind == "other" and any(r in KIN for r in roles):
                kind = "person"
            names[root] = name
            of_root[root] = len(entities)
            facts = [Fact(self._texts[mid][0], mid) for mid in self._by_time(memories)]
            self._roles_of[len(entities)] = {r for i in members for r in nodes[i].roles}
            entities.append(Entity(name, kind, tuple(aliases), tuple(facts), (), tuple(roles)))
        related: dict[int, dict[tuple[str, str], None]] = defaultdict(dict)
        for a, relation, b, _ in links:
            ra, rb = self._sets.find(a), self._sets.find(b)
            if ra == rb or ra not in of_root or rb not in of_root:
                continue
            related[of_root[ra]][(names[rb], relation)] = None
            related[of_root[rb]][(names[ra], inverse(relation))] = None
        for index, pairs in related.items():
            e = entities[index]
            entities[index] = Entity(e.name, e.kind, e.aliases, e.facts,
                                     tuple(Related(n, r) for n, r in pairs), e.roles)  # fmt: skip
        return entities, of_root

    def _by_time(self, memories: dict[str, None]) -> list[str]:
        floor = datetime.min

        def when(mid: str) -> datetime:
            at = self._texts[mid][1]
            return at.replace(tzinfo=None) if at is not None else floor

        return sorted(memories, key=when)

    # -- finding -------------------------------------------------------------------------
    def find(self, name: str) -> Entity | None:
        """The entity called ``name``: by any alias (case, accents and dots aside), by a
        role ("my uncle", "Anna's husband"), by a first or last name only one entity
        has, else by the one spelling nearest to it if no other is as near."""
        wanted = _key(name)
        exact = self._lookup.get(wanted, [])
        first, _, rest = wanted.partition(" ")
        if not exact and (first in _TITLE_KEYS or first == "the"):  # "Dr. Kwame Mensah"
            exact = self._lookup.get(rest, [])  # said "Kwame Mensah"; "the Hollow Pines"
        if exact:
            return max((self.entities[i] for i in exact), key=lambda e: len(e.facts))
        held = self._holding(wanted)
        if held is not None or "'s " in wanted:
            return held
        part = self._parts.get(wanted, set())
        if len(part) == 1:
            return self.entities[next(iter(part))]
        # a spelling of one of its names: the closest, if no other is as close; a
        # misspelt name keeps its first letter ("Basia" is no spelling of "Kasia"), and
        # a given name is another person's, not a misspelling ("Jonas", "Jonah")
        scores = sorted(
            (
                (SequenceMatcher(None, wanted, key).ratio(), i)
                for key, found in self._lookup.items()
                if key[:1] == wanted[:1] and not _other_given(wanted, key)
                for i in found
            ),
            reverse=True,
        )
        if scores and scores[0][0] >= 0.8 and (len(scores) == 1 or scores[1][0] < scores[0][0]
                                               or scores[1][1] == scores[0][1]):  # fmt: skip
            return self.entities[scores[0][1]]
        return None

    def _holding(self, wanted: str) -> Entity | None:
        """The one entity with the role ``wanted`` names: "anna's husband" (or the one
        Anna is the husband of: "paco's wife"), "my uncle", "the estate agent"; "my" and
        "our" ask for the owner's, not another speaker's."""
        whose, _, role = wanted.rpartition("'s ")
        if whose and role:
            owner = self.find(whose)
            names = {_key(n) for n in owner.names()} if owner is not None else {whose}
            roles = {_key(role_word(role)), _key(role_word(role.split()[-1]))}
            held = {i for i, pairs in self._roles_of.items()
                    if any(_key(r) in roles and of is not None and _key(of) in names
                           for r, of in pairs)}  # fmt: skip
            if not held and owner is not None:  # "paco's wife": whom Paco is husband of
                other = {_key(RECIPROCAL.get(r, "")) for r in roles}
                theirs = self._roles_of[self.entities.index(owner)]
                found = [self.find(of) for r, of in theirs if _key(r) in other and of is not None]
                held = {self.entities.index(e) for e in found if e is not None}
            return self.entities[held.pop()] if len(held) == 1 else None
        mine = wanted.startswith(("my ", "our "))
        role = wanted.removeprefix("my ").removeprefix("our ").removeprefix("the ")
        for word in dict.fromkeys(_key(role_word(w)) for w in (role, role.split()[-1])):
            holders = [(i, of) for i, pairs in self._roles_of.items() for r, of in pairs
                       if _key(r) == word]  # fmt: skip
            own = {i for i, of in holders if of is None or of == self._owner}
            pick = own if own or mine else {i for i, _ in holders}
            if len(pick) == 1:
                return self.entities[pick.pop()]
        return None

    def named_in(self, text: str) -> list[Entity]:
        """The entities ``text`` names: by any alias, or a role ("my niece")."""
        found: dict[int, None] = {}
        words = _key(text).split()
        for n in (3, 2, 1):
            for start in range(len(words) - n + 1):
                key = " ".join(words[start : start + n])
                for i in self._lookup.get(key, []):
                    if len(key) > 2:
                        found[i] = None
        for index, word in enumerate(words):
            if index and words[index - 1] in ("my", "our", "his", "her", "their"):
                word = word.removesuffix("'s").removesuffix("\u2019s")
                word = role_word(word)
                with_role = [i for i, e in enumerate(self.entities) if word in e.roles]
                if len(with_role) == 1:
                    found[with_role[0]] = None
        return [self.entities[i] for i in found]

    def related_to(self, entity: Entity) -> list[Entity]:
        """The entities a page links to."""
        out = []
        for r in entity.related:
            other = self.find(r.name)
            if other is not None and other.name != entity.name:
                out.append(other)
        return out

    def linked(self, query: str, limit: int) -> list[tuple[str, float]]:
        """Memories of the entities linked with those ``query`` names, one hop away along
        a link the query names (the niece's husband -> the club he coaches: "Which club
        does the man my niece married coach?" follows "married"), best first: recall's
        entity channel.

        What is said of the named entities themselves the keyword channel finds by their
        names; what this adds is what is said of the ones they are linked with (the
        memory stating the link is among them). A memory scores by how many of the
        query's other words it holds over the log of how much is said of its entity.
        """
        named = self.named_in(query)
        if not named:
            return []
        asked = set(query_terms(query))
        own = {t for e in named for name in e.names() for t in text_terms(name)}
        wanted = asked - own
        seen = {e.name for e in named} | {self._owner}
        scores: dict[str, float] = {}
        for entity in named:
            for link in entity.related:
                other = self.find(link.name) if text_terms(link.relation) & asked else None
                if other is None or other.name in seen:
                    continue
                seen.add(other.name)
                spread = math.log2(2 + len(other.facts))
                for fact in other.facts:
                    score = (1 + len(wanted & text_terms(fact.content))) / spread
                    scores[fact.memory_id] = max(score, scores.get(fact.memory_id, 0.0))
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
