"""The words the entity reader knows: kinship, social and pet roles, words that only end
like a role, and capitalised words that name no one."""

from __future__ import annotations

from typing import Final


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


KIN: Final = _words(
    """
    uncle aunt niece nephew sister brother mom mum mother dad father son daughter wife
    husband partner cousin grandma grandmother grandpa grandfather granddaughter
    grandson stepmom stepmother stepdad stepfather stepson stepdaughter fiancé fiance
    fiancée fiancee girlfriend boyfriend sister-in-law brother-in-law mother-in-law
    father-in-law son-in-law daughter-in-law godmother godfather goddaughter godson
    """
)
SOCIAL: Final = _words(
    """
    friend boss colleague coworker co-worker neighbor neighbour roommate flatmate coach
    doctor therapist manager teacher mentor landlord landlady dentist classmate tutor
    trainer assistant supervisor gp instructor buddy pal housemate nanny babysitter vet
    lawyer accountant pastor priest nurse physio physiotherapist counsellor counselor
    surgeon optician hairdresser barber cleaner builder plumber electrician mechanic
    teammate bandmate bridesmaid client student pupil captain director editor agent
    secretary treasurer chair chairman chairwoman vicar carer midwife paralegal architect
    mate lad lass head rep receptionist
    """
)
PETS: Final = _words(
    """
    dog cat puppy kitten parrot hamster horse pony rabbit bunny turtle tortoise snake
    lizard budgie ferret goldfish
    """
)
RELATIVES: Final = KIN | SOCIAL | PETS  # roles one has to someone: "my uncle", "Anna's dog"
# What someone is by what they do ("bassist", "consultant", "porter"): a role too, but
# for words of those endings that name no one.
NOT_AGENTS: Final = _words(
    """
    other older younger elder former latter better bigger smaller lower upper inner outer
    never ever under after over together either neither whether rather super proper
    clever number computer paper letter water corner dinner summer winter order border
    power tower river center centre chapter cancer soccer burger flower weather trailer
    sticker poster folder monitor mirror floor door error color colour favour favor
    humour humor honour honor labour labor sector factor motor tractor elevator
    calculator moment present comment event content element payment apartment
    department government environment restaurant plant giant talent percent forever
    however whatever whenever wherever whoever later matter sooner another
    """
)
# Capitalised words that are not names of anything a page is kept for.
NOT_NAMES: Final = _words(
    """
    i i'm i've i'd i'll im the a an my our your his her their its this that these those
    there here it he she we they you me us them hi hey hello thanks thank yes no ok okay
    oh well so but and or also just what when where who whom whose why how which today
    tomorrow yesterday tonight monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november
    december mr mrs ms dr if then after before since because maybe sure great good nice
    wow haha lol omg please sorry let let's do did does is are was were have has had can
    could would should will not never always sometimes anyway actually really as at in
    on for with from to of by about by every some any all each both one two three first
    last next new old other another such mon tue tues wed thu thur thurs fri sat sun jan
    feb mar apr jun jul aug sep sept oct nov dec yeah yea yep yup nope woohoo woo yay
    hooray congrats congratulations bye goodbye aww aw awesome cool amazing ooh ah
    hahaha cheers glad love welcome morning evening night dear hmm um true totally
    definitely absolutely exactly right wait happy merry easter christmas halloween
    met had took got went saw called booked found hired played visited started joined
    told asked heard made bought spent rang texted
    """
)
# Kinship words people write as names ("Mum", "Grandpa").
KIN_NAMES: Final = {
    "mum": "mother", "mom": "mother", "mama": "mother", "mummy": "mother",
    "mommy": "mother", "dad": "father", "daddy": "father", "papa": "father",
    "grandma": "grandmother", "granny": "grandmother", "nana": "grandmother",
    "nan": "grandmother", "grandpa": "grandfather", "grandad": "grandfather",
    "granddad": "grandfather",
}  # fmt: skip
# Words a name spoken to follows ("Hey Caroline", "Thanks Mel").
CALLS: Final = _words(
    """
    hey hi hello thanks thank congrats congratulations bye goodbye woohoo yay wow aww aw
    dear sorry morning night welcome cheers yo oh ok okay yes no love miss
    """
)
# Given names that are words too ("Art is my escape"): opening a sentence, not a name
# unless it is one elsewhere.
WORD_NAMES: Final = _words(
    """
    art will bill pat rob bob sue may jack mark grace faith hope joy ray rose dawn frank
    carol gene don ken max sky summer autumn june april august penny ruby amber holly ivy
    lily daisy chase hunter guy drew
    """
)
