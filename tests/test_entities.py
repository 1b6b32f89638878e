"""Entities: mentions read from words, aliases merged carefully, pages found by any
name, and recall's entity channel following one hop."""

from __future__ import annotations

import time

import pytest

from hindsight import Hindsight, NotFoundError, Settings, ValidationError
from hindsight.embed import Embeddings
from hindsight.entities import Graph, Said
from hindsight.entities.cache import Graphs
from hindsight.entities.mentions import read
from hindsight.store import Filter

ALICE = "user:alice"

FAMILY = [
    ("m1", "My uncle Bartholomew lives in Gdańsk."),
    ("m2", "Uncle Bart called me on Sunday about fishing."),
    ("m3", "Bartholomew Nowak is my mother's brother."),
    ("m4", "B. Nowak signed the lease for the flat."),
    ("m5", "Bart from accounting sent the quarterly report."),
    ("m6", "My niece Anna married Tom last year."),
    ("m7", "Tom coaches the Falcons on weekends."),
    ("m8", "My dog Rex hates the vacuum."),
    ("m9", "Anna works at Acme Corp now."),
]


@pytest.fixture(scope="module")
def family() -> Graph:
    return Graph(Said(mid, text, "Alice") for mid, text in FAMILY)


def named(text: str) -> list[tuple[str, str, str | None]]:
    return [(m.name, m.kind, m.role) for m in read(text)[0]]


def test_names_roles_and_kinds_are_read_from_the_words() -> None:
    assert named("My uncle Bartholomew lives in Gdańsk.") == [
        ("Bartholomew", "person", "uncle"),
        ("Gdańsk", "place", None),
    ]
    assert named("Dr. Chen saw B. Nowak.") == [
        ("Chen", "person", "doctor"),
        ("B. Nowak", "other", None),
    ]
    assert named("My dog Rex and I visited Łódź.") == [
        ("Rex", "pet", "dog"),
        ("Łódź", "place", None),
    ]
    assert named("Bart from accounting works at Acme Corp.") == [
        ("Bart", "person", "accounting"),
        ("Acme Corp", "organization", None),
    ]
    assert named("We started the Atlas project in May.") == [("Atlas", "project", None)]
    # a word opening a sentence is a name only if it is one elsewhere too
    assert read("Honestly the week was long.")[0][0].weak
    # the one spoken to: named, but nothing is said of them
    assert [m.addressed for m in read("Thanks, Mel! I told Mel about it.")[0]] == [True, False]


def test_relations_are_read_between_names_and_roles() -> None:
    mentions, links = read("My niece Anna married Tom last year. Tom coaches the Falcons.")
    said = {(mentions[x.subject].name, x.relation, mentions[x.object].name) for x in links}
    assert said == {("Anna", "married", "Tom"), ("Tom", "coaches", "Falcons")}
    mentions, links = read("Anna's husband Tom works at Acme Corp.")
    said = {(mentions[x.subject].name, x.relation, mentions[x.object].name) for x in links}
    assert said == {("Tom", "husband of", "Anna"), ("Tom", "works at", "Acme Corp")}
    _, links = read("I work at Google.")
    assert [(link.subject, link.relation) for link in links] == [(-1, "works at")]


def links(text: str) -> set[tuple[str, str, str]]:
    mentions, found = read(text)

    def who(i: int) -> str:
        return "I" if i == -1 else mentions[i].name or mentions[i].surface

    return {(who(x.subject), x.relation, who(x.object)) for x in found}


def test_he_she_his_and_her_are_whom_the_sentences_before_name() -> None:
    # the subject of the sentence, not the last name before the pronoun
    assert ("Zofia", "lives in", "Kraków") in links(
        "My cousin Zofia is Uncle Bart's daughter, she lives in Kraków."
    )
    # one named as another's is not who "he" is
    assert ("Callum", "works at", "Tesco") in links(
        "Elizabeth's boyfriend, Callum, seems nice, he works at the Tesco in Stockton."
    )
    # a sentence before; a name given only to women is no "he"
    assert links("Fiona met Tom Price. He works at Deloitte.") == {
        ("Tom Price", "works at", "Deloitte")
    }
    assert ("Carol", "daughter of", "Jenkins") in links(
        "Old Mr. Jenkins had a fall, his daughter Carol is staying with him."
    )
    # "her surgeon" with no one named before: no one's, not the speaker's
    assert [m.role for m in read("Her surgeon is Dr. Kwame Mensah.")[0]] == ["doctor"]
    # a diary's sentence with no subject is the speaker's
    assert links("Started volunteering at the Royal National Lifeboat Institution.") == {
        ("I", "works at", "Royal National Lifeboat Institution")
    }


def test_relations_are_read_through_the_words_between() -> None:
    assert links("Inês is an architect at a firm called Atelier Norte now.") == {
        ("Inês", "works at", "Atelier Norte")
    }
    assert links("Sandra Beck teaches PE at Eli's school, Hillside Primary.") == {
        ("Sandra Beck", "teaches at", "Hillside Primary")
    }
    assert links("Chloe is a nurse at the hospital in Scarborough.") == {
        ("Chloe", "works in", "Scarborough")
    }
    assert links("Mia works for Zalando in Berlin.") == {
        ("Mia", "works at", "Zalando"),
        ("Zalando", "located in", "Berlin"),
    }
    assert links("Yep, Kenji Tanaka, senior engineer at Panasonic.") == {
        ("Kenji Tanaka", "works at", "Panasonic")
    }
    assert links("Biscuit saw Dr. Alvarez at Riverside Vets.") == {
        ("Alvarez", "works at", "Riverside Vets")
    }
    assert links("Zofia is Uncle Bart's daughter.") >= {("Zofia", "daughter of", "Bart")}
    # what is no relation: the couple's Quebec, Mum's attic, Dai's "'s" that is "is"
    assert links("We met a couple from Quebec at the campground.") == set()
    assert links("Uncle Bart wants the albums from Mum's attic.") == set()
    assert links("Dai's a shearer, so he's useless in lambing season.") == set()


def test_roles_are_kin_social_words_and_what_people_do() -> None:
    assert ("Theodora", "person", "bassist") in named("Our bassist Theodora is driving.")
    assert ("Lucy", "person", "flatmate") in named("Lucy, my flatmate, is off to Japan.")
    assert ("Tariq Aziz", "person", "physio") in named("Tariq Aziz (the physio) is pleased.")
    assert ("Declan Foy", "person", "agent") in named(
        "The estate agent, a shiny man called Declan Foy, rang."
    )
    assert ("Mochi", "pet", "cat") in named("My flatmate's cat Mochi hissed.")
    # a place before "my cousin Kenji" is no cousin; a word that only ends like a role
    assert ("Osaka", "other", None) in named("Just landed in Osaka, my cousin Kenji came.")
    assert ("Arsenal", "other", None) in named("My other Arsenal shirt is dirty.")


def test_roles_find_the_owners_and_spouses_and_mr_is_not_mrs() -> None:
    graph = Graph(
        [
            Said("a1", "Lucy, my flatmate, is off to Japan.", "Alice"),
            Said("a2", "My flatmate's cat Mochi hissed at the dog.", "Alice"),
            Said("a3", "Señora Ortega's husband, Paco, drives a taxi.", "Alice"),
            Said("a4", "Mr. Pemberton wants to leave the greenhouse.", "Alice"),
            Said("a5", "Mrs. Pemberton wants to take the greenhouse.", "Alice"),
            Said("a6", "My niece Poppy works at the Red Lion.", "Dana"),
            Said("a7", "I told Dana about the Red Lion.", "Alice"),
            Said("a8", "My co-founder, Femi Ajayi, runs the tech side.", "Alice"),
            Said("a9", "We met Marie-Claude at the campground.", "Alice"),
            Said("a10", "We saw Jonah play the drums.", "Alice"),
        ]
    )
    lucy = graph.find("my flatmate")
    assert lucy is not None and lucy.name == "Lucy"
    assert ("Mochi", "cat") in {(r.name, r.relation) for r in lucy.related}  # through "my flatmate"
    wife = graph.find("Paco's wife")  # whom Paco is the husband of
    assert wife is not None and wife.name == "Ortega"
    mr, mrs = graph.find("Mr. Pemberton"), graph.find("Mrs. Pemberton")
    assert mr is not None and mrs is not None and mr is not mrs
    assert graph.find("my niece") is None  # Dana's niece, not Alice's
    niece = graph.find("Dana's niece")
    assert niece is not None and niece.name == "Poppy"
    femi = graph.find("my co-founder")
    assert femi is not None and femi.name == "Femi Ajayi"
    assert graph.find("marie claude") is graph.find("Marie-Claude") is not None
    # another given name is another person, not a misspelling
    assert graph.find("Jonas") is None and graph.find("Jonahh") is graph.find("Jonah")


def test_aliases_of_one_person_merge_and_a_namesake_stays_apart(family: Graph) -> None:
    uncle = family.find("Uncle Bart")
    assert uncle is not None and uncle.name == "Bartholomew Nowak"
    assert set(uncle.aliases) == {"Bartholomew", "Bart", "Uncle Bart", "B. Nowak"}
    assert [f.memory_id for f in uncle.facts] == ["m1", "m2", "m3", "m4"]  # under any name
    assert ("Gdańsk", "lives in") in {(r.name, r.relation) for r in uncle.related}
    colleague = family.find("Bart from accounting")
    assert colleague is not None and colleague is not uncle
    assert [f.memory_id for f in colleague.facts] == ["m5"]


def test_a_page_is_found_by_any_name_a_role_or_a_near_spelling(family: Graph) -> None:
    for name in ("b. nowak", "BARTHOLOMEW", "my uncle", "Bartholemew"):
        found = family.find(name)
        assert found is not None and found.name == "Bartholomew Nowak", name
    niece = family.find("my niece")
    assert niece is not None and niece.name == "Anna" and niece.kind == "person"
    assert family.find("Zebedee") is None


def test_relations_link_both_pages(family: Graph) -> None:
    tom = family.find("Tom")
    falcons = family.find("Falcons")
    assert tom is not None and falcons is not None and falcons.kind == "organization"
    assert {(r.name, r.relation) for r in tom.related} == {
        ("Anna", "married"),
        ("Falcons", "coaches"),
    }
    assert [(r.name, r.relation) for r in falcons.related] == [("Tom", "coached by")]
    alice = family.find("Alice")  # the speaker: "my niece" is her niece
    assert alice is not None and ("Anna", "niece") in {(r.name, r.relation) for r in alice.related}


def test_the_entity_channel_follows_one_hop(family: Graph) -> None:
    linked = family.linked("Which club does the man my niece married coach?", 10)
    # the niece is Anna: what is said of the one she is linked with by "married" (Tom)
    assert {mid for mid, _ in linked[:2]} == {"m7", "m6"}  # Tom coaches; Anna married Tom
    assert "m9" not in dict(linked)  # Acme Corp: a link the question does not name
    assert "m9" in dict(family.linked("Where does my niece work now?", 10))
    assert family.linked("What is the weather like?", 10) == []


@pytest.mark.backends  # pages are read from the store
def test_the_engine_keeps_pages_current_and_audits_a_page_read(
    settings: Settings, embedder: Embeddings
) -> None:
    settings = settings.model_copy(update={"audit_recalls": True})
    with Hindsight(settings, embedder=embedder) as hs:
        hs.retain(ALICE, "My uncle Bartholomew lives in Gdańsk.")
        assert [e.name for e in hs.entities(ALICE)] == ["Bartholomew", "Gdańsk"]
        hs.retain(ALICE, "Uncle Bart called me on Sunday about fishing.")
        page = hs.entity(ALICE, "uncle bart")
        assert page.name == "Bartholomew" and len(page.facts) == 2
        entry = hs.audit(owner=ALICE, action="entity")[0]
        assert set(entry.memory_ids) == {f.memory_id for f in page.facts}
        listed = hs.audit(owner=ALICE, action="entities")[0]  # the list holds every fact
        assert len(listed.memory_ids) == 1 and listed.detail == {"entities": 2}
        with pytest.raises(NotFoundError, match="no entity called 'Zed'"):
            hs.entity(ALICE, "Zed")
        with pytest.raises(ValidationError):
            hs.entity(ALICE, " ")


@pytest.mark.backends  # pages are read from the store
def test_recall_fuses_the_entity_channel_within_the_filter(
    settings: Settings, embedder: Embeddings
) -> None:
    lines = [
        "My niece Anna married Tom last year.",
        "Tom coaches the Falcons on weekends.",
        "The Falcons won the regional cup.",
        "I bought a new lamp for the hallway.",
        "My coach said I should rest more.",
    ]
    question = "Which club does the man my niece married coach?"
    with Hindsight(settings, embedder=embedder) as hs:
        ids = [hs.retain(ALICE, line, kind="fact").created[0] for line in lines]
        assert all("entity" not in r.explanation.channels for r in hs.recall(ALICE, question))
    on = settings.model_copy(update={"entity_channel": True})
    with Hindsight(on, embedder=embedder) as hs:
        results = hs.recall(ALICE, question, k=3)
        assert [r.memory.id for r in results[:2]] == ids[:2]
        assert all("entity" in r.explanation.channels for r in results[:2])
        hs.update(ids[1], status="archived")
        kept = hs.recall(ALICE, question, k=5)
        assert ids[1] not in [r.memory.id for r in kept]  # the channel keeps to the filter
        assert hs.store.passing(Filter(owners=[ALICE]), ids) == set(ids) - {ids[1]}


def test_recall_takes_the_graph_it_holds_while_a_newer_one_is_built(
    settings: Settings, embedder: Embeddings
) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        hs.retain(ALICE, "My uncle Bartholomew lives in Gdańsk.")
        graphs = Graphs(hs.store)
        first = graphs.of(ALICE)
        assert graphs.of(ALICE, current=False) is first  # nothing changed
        hs.retain(ALICE, "Tom coaches the Falcons on weekends.")
        assert graphs.of(ALICE, current=False) is first  # the held one, at once
        deadline = time.monotonic() + 10
        while graphs.of(ALICE, current=False) is first and time.monotonic() < deadline:
            time.sleep(0.01)
        newer = graphs.of(ALICE, current=False)
        assert newer is not first and newer.find("Tom") is not None
        assert graphs.of(ALICE) is newer  # current: built for the owner as it is now
