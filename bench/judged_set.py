"""The judged set: long conversations between two people, kept as agents'
daily logs in the format `axe-notes-remember` writes, and questions about
them, each naming the entries that answer it.

Deterministic: one seed, so every run builds the same set (nothing of it
is committed but this file). Each conversation is one agent; a session is
one day's log; a turn is one `## HH:MM` entry, `Name: text`, as a chat
kept turn by turn would be remembered.

The questions are written the way people ask them, in several wordings
each, and never with axe's ranker in mind: the set is to say whether an
idea helps, and a held-out public benchmark of the same shape judges the
result. Categories:

- single: one fact, asked with some of its words.
- multi: two entries, each half of the answer (the sister's city, and
  which sister got engaged).
- temporal: when something happened, what happened in a month, what came
  before a change; the month is often only in the log's date.
- paraphrase: no content word in common with the answer entry, checked
  here mechanically (a question that shares one is dropped).
- preference: what someone likes or would like.
"""

import random
import re
from datetime import date, timedelta
from pathlib import Path

SEED = 31
CONVERSATIONS = 10

NAMES = [
    "Maya", "Tom", "Priya", "Daniel", "Sofia", "Marcus", "Elena", "James",
    "Aisha", "Lucas", "Hannah", "Omar", "Grace", "Mateo", "Chloe", "Ravi",
    "Nora", "Felix", "Leila", "Ben",
]
SHE = {"Maya", "Priya", "Sofia", "Elena", "Aisha", "Hannah", "Grace", "Chloe", "Nora", "Leila"}
SIBLINGS = ["Ana", "Kate", "Lily", "Zoe", "Ruth", "Iris", "Mia", "Jade", "Vera", "Tess",
            "Sam", "Leo", "Max", "Eli", "Jon", "Ian", "Noah", "Adam", "Hugo", "Cole"]
PETS = [("beagle", "dog"), ("tabby", "cat"), ("labrador", "dog"), ("parrot", "bird"),
        ("corgi", "dog"), ("rabbit", "bunny"), ("husky", "dog"), ("siamese", "cat")]
PET_NAMES = ["Biscuit", "Pepper", "Mochi", "Olive", "Ziggy", "Juniper", "Waffles", "Nacho",
             "Pickles", "Clover", "Bruno", "Luna", "Tofu", "Maple", "Rocket", "Sprout"]
JOBS = [("nurse", "Mercy Hospital"), ("data analyst", "Brightline Insurance"),
        ("teacher", "Oakwood Elementary"), ("sous chef", "Olive & Thyme"),
        ("graphic designer", "Pixelforge Studio"), ("pharmacist", "Cornerstone Pharmacy"),
        ("accountant", "Hartley & Briggs"), ("software engineer", "Nimbus Labs"),
        ("physical therapist", "Peak Motion Clinic"), ("architect", "Greyline Partners"),
        ("librarian", "Eastside Public Library"), ("paralegal", "Whitmore Legal")]
CITIES = ["Lisbon", "Porto", "Kyoto", "Osaka", "Vancouver", "Montreal", "Barcelona", "Seville",
          "Reykjavik", "Edinburgh", "Prague", "Vienna", "Denver", "Austin", "Seattle", "Chicago",
          "Boston", "Portland", "Santa Fe", "Nashville", "Copenhagen", "Dublin", "Marrakesh", "Lima"]
SIGHTS = {"Lisbon": "the tram rides", "Porto": "the wine cellars", "Kyoto": "the temples",
          "Osaka": "the street food", "Vancouver": "the seawall", "Montreal": "the bagels",
          "Barcelona": "the Sagrada Familia", "Seville": "the flamenco show",
          "Reykjavik": "the hot springs", "Edinburgh": "the castle", "Prague": "the old bridge",
          "Vienna": "the opera house", "Copenhagen": "the harbour baths", "Dublin": "the pubs",
          "Marrakesh": "the souks", "Lima": "the ceviche"}
FOODS = [("Thai food", "green curry"), ("Mexican food", "mole"), ("Italian food", "carbonara"),
         ("Ethiopian food", "injera"), ("Japanese food", "ramen"), ("Indian food", "dosa"),
         ("Korean food", "bibimbap"), ("Greek food", "moussaka")]
MUSIC = [("jazz", "Coltrane"), ("folk", "Joni Mitchell"), ("hip hop", "Kendrick Lamar"),
         ("classical", "Debussy"), ("reggae", "Bob Marley"), ("punk", "the Clash"),
         ("soul", "Aretha Franklin"), ("country", "Dolly Parton")]
DISLIKES = ["horror movies", "cilantro", "crowded beaches", "karaoke", "cruises", "olives",
            "camping in the rain", "reality shows"]
HOBBIES = [("pottery", "a wobbly mug"), ("rock climbing", "a bouldering gym"),
           ("watercolor painting", "a set of brushes"), ("chess", "an online club"),
           ("baking sourdough", "a starter"), ("birdwatching", "binoculars"),
           ("salsa dancing", "a Thursday class"), ("woodworking", "a workbench")]
LANGUAGES = ["Japanese", "Portuguese", "German", "Italian", "Korean", "Arabic", "Spanish", "French"]
INSTRUMENTS = ["cello", "ukulele", "drums", "piano", "violin", "banjo", "saxophone", "harp"]
RACES = [("half marathon", "21 kilometres"), ("triathlon", "a swim, a bike ride and a run"),
         ("10K", "ten kilometres"), ("charity bike ride", "80 kilometres")]
CARS = ["a used Subaru Outback", "a red Honda Civic", "an electric Kia Niro", "a Toyota RAV4",
        "a vintage VW camper van", "a Mazda 3 hatchback"]
INJURIES = [("sprained my ankle", "soccer"), ("broke my wrist", "volleyball"),
            ("tore a ligament in my knee", "basketball"), ("hurt my back", "tennis")]
NEIGHBORHOODS = ["Riverside", "Maple Heights", "the Old Town", "Harbor Point", "Elm Park",
                 "Westbrook", "Cedar Hill", "the Arts District"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]

# The words that say nothing of a question's subject: the paraphrase check
# ignores them, and nothing else.
STOP = set("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves s t don ever yet any
anything something someone anybody anyone got get gets has've ve ll d re m o
""".split())


def stem(word):
    """A crude stem, strict on purpose: two words that begin with the same
    five letters count as one, so the paraphrase check errs on the side of
    dropping a question."""
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


def content(text):
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


FILLER = [
    "{me}: How was your week?",
    "{me}: Ha, that's so true.",
    "{me}: Honestly I'm just glad it's the weekend.",
    "{me}: Work has been a lot lately, long meetings every day.",
    "{me}: I binge-watched a whole season of a baking show last night.",
    "{me}: It's been raining nonstop here, I miss the sun.",
    "{me}: Did you see the game on Sunday? What a finish.",
    "{me}: I tried a new recipe for lentil soup, it turned out okay.",
    "{me}: Thanks for asking, I'm doing much better now.",
    "{me}: That sounds amazing, I'm happy for you!",
    "{me}: Oh no, that's rough. Hope it gets better soon.",
    "{me}: I've been reading a mystery novel before bed, can't put it down.",
    "{me}: My neighbor's dog barked all night again, I barely slept.",
    "{me}: We should catch up over coffee sometime soon.",
    "{me}: I've been trying to drink more water and walk every day.",
    "{me}: The traffic on the way home was awful today.",
    "{me}: I cleaned out the garage this weekend, found so much old stuff.",
    "{me}: Sorry for the late reply, it's been hectic.",
    "{me}: I know what you mean, I feel the same way sometimes.",
    "{me}: Any plans for the holidays?",
    "{me}: My phone died in the middle of the day, what a mess.",
    "{me}: I finally fixed the leaky faucet in the kitchen.",
    "{me}: We had friends over for dinner on Saturday, it was lovely.",
    "{me}: I'm thinking about repainting the living room, maybe green.",
    "{me}: That reminds me, I need to call my mom back.",
    "{me}: The new cafe downtown has great pastries, you'd love it.",
    "{me}: Haha, {you}, you always know how to make me laugh.",
    "{me}: What have you been up to, {you}?",
    "{me}: Good to hear from you, {you}!",
    "{me}: I went for a long walk by the river this morning.",
    "{me}: I'm so tired today, I stayed up way too late.",
    "{me}: We watched an old movie with the kids, they loved it.",
    "{me}: Is it me or is the year going by really fast?",
    "{me}: I started a puzzle with 1000 pieces, it's taking forever.",
    "{me}: My cousin visited for a few days, it was nice to see family.",
    "{me}: Let me know how it goes!",
    "{me}: I've been meaning to travel more, maybe next year.",
    "{me}: The city is doing roadworks outside my window at 7am.",
    "{me}: I had the worst headache yesterday, better now though.",
    "{me}: Our team at work got a new manager, seems nice so far.",
]


class Conversation:
    """Two people's sessions, and the facts said in them."""

    def __init__(self, rng, index, a, b, start):
        self.rng, self.index, self.people = rng, index, (a, b)
        self.agent = f"conv{index:02d}"
        # Sessions every 3 to 12 days over about eight months.
        days, d = [], start
        while len(days) < 26:
            days.append(d)
            d += timedelta(days=rng.randint(3, 12))
        self.days = days
        # Turns per session: (speaker, text, key) where key names a fact.
        self.sessions = [[] for _ in days]
        self.entries = {}  # key -> entry id
        self.questions = []

    def other(self, me):
        return self.people[1] if me == self.people[0] else self.people[0]

    def say(self, session, me, text, key=None):
        self.sessions[session].append((me, text, key))

    def reply(self, session, me, options):
        self.say(session, self.other(me), self.rng.choice(options))

    def write(self, root: Path):
        """The daily logs, one file per session, and each entry's id."""
        rng = self.rng
        daily = root / "agents" / self.agent / "daily"
        daily.mkdir(parents=True, exist_ok=True)
        ids = {}
        for day, turns in zip(self.days, self.sessions):
            minute = rng.randint(8 * 60, 20 * 60)
            out = [f"# {day.isoformat()}\n"]
            for me, text, key in turns:
                hhmm = f"{minute // 60:02d}:{minute % 60:02d}"
                out.append(f"\n## {hhmm}\n\n{text}\n")
                if key:
                    ids[key] = (f"agents/{self.agent}/daily/{day.isoformat()}.md", hhmm, text)
                minute += rng.randint(1, 2)
            (daily / f"{day.isoformat()}.md").write_text("".join(out))
        return ids


def build(rng, index, a, b, start):
    c = Conversation(rng, index, a, b, start)
    n = len(c.days)
    questions = []  # (category, text, [keys])

    paraphrased = {}

    def ask(category, options, keys):
        if category == "paraphrase":
            # Asked of neither by name: both people's entries answer it.
            topic = keys[0].split(".", 1)[1]
            paraphrased.setdefault(topic, (options, []))[1].extend(keys)
        else:
            questions.append((category, options, keys))

    def pron(p):
        return ("she", "her") if p in SHE else ("he", "his")

    for p in c.people:
        o = c.other(p)
        he, his = pron(p)
        # The pet: adopted early.
        breed, kind = rng.choice(PETS)
        pet = rng.choice(PET_NAMES)
        s = rng.randint(1, 6)
        c.say(s, p, f"{p}: Big news, I adopted a {breed} from the shelter yesterday! I named {'him' if rng.random() < .5 else 'her'} {pet}.", f"{p}.pet")
        c.reply(s, p, [f"{o}: Oh wow, {pet} is such a cute name! Send pictures!",
                       f"{o}: That's wonderful, a {breed} is a great choice."])
        later = rng.randint(s + 3, n - 2)
        c.say(later, p, f"{p}: {pet} chewed through my favorite sneakers this morning, so annoying.", f"{p}.pet2")
        ask("single", [f"What's the name of {p}'s {breed}?", f"what did {p} call the {kind} {he} got from the shelter",
                       f"Remind me what {p}'s {kind} is called?"], [f"{p}.pet"])
        ask("temporal", [f"When did {p} adopt {pet}?", f"when did {p} get the {breed}?",
                         f"How long ago did {p} bring {pet} home?"], [f"{p}.pet"])
        ask("paraphrase", ["Which animal joined one of them recently, and what's it called?",
                           "Did anybody get a new four-legged friend? What is its name?",
                           "Who has a new furry companion at home?"], [f"{p}.pet"])
        ask("multi", [f"What did {p}'s {breed} ruin?", f"what did {pet} the {breed} destroy?"],
            [f"{p}.pet", f"{p}.pet2"])

        # The job, and the change of job.
        (role1, co1), (role2, co2) = rng.sample(JOBS, 2)
        s1 = rng.randint(0, 5)
        c.say(s1, p, f"{p}: I've been working as a {role1} at {co1} for about three years now, it pays the bills.", f"{p}.job1")
        s2 = rng.randint(12, 18)
        c.say(s2, p, f"{p}: I did it, I handed in my notice! Next month I start as a {role2} at {co2}.", f"{p}.job2")
        c.reply(s2, p, [f"{o}: Congratulations! {co2} is lucky to have you.", f"{o}: That's a brave move, good luck at {co2}!"])
        s3 = rng.randint(s2 + 2, n - 1)
        c.say(s3, p, f"{p}: First weeks at {co2} have been intense but my new colleagues are great.", f"{p}.job3")
        ask("single", [f"Where does {p} work now?", f"what company did {p} move to?",
                       f"Which company hired {p} as a {role2}?"], [f"{p}.job2"])
        ask("temporal", [f"Where did {p} work before {co2}?", f"What was {p}'s job before the switch?",
                         f"before changing jobs, what did {p} do?"], [f"{p}.job1"])
        ask("temporal", [f"When did {p} decide to quit {his} old job?", f"When did {p} hand in {his} notice?"], [f"{p}.job2"])
        ask("paraphrase", ["Who changed employers this year?",
                           "Which of the two switched careers, and to what?",
                           "Who resigned to take a different position?"], [f"{p}.job2"])

        # The sister or brother: where they live, and their news (multi-hop).
        sib = rng.choice(SIBLINGS)
        rel = "sister" if SIBLINGS.index(sib) < 10 else "brother"
        city = rng.choice(CITIES)
        s1 = rng.randint(2, 10)
        c.say(s1, p, f"{p}: My {rel} {sib} just moved to {city} for grad school, I miss {'her' if rel == 'sister' else 'him'} already.", f"{p}.sib1")
        s2 = rng.randint(s1 + 2, n - 1)
        partner = rng.choice([x for x in SIBLINGS if x != sib])
        c.say(s2, p, f"{p}: {sib} called last night, {'she' if rel == 'sister' else 'he'} got engaged to {partner}! We're all thrilled.", f"{p}.sib2")
        c.reply(s2, p, [f"{o}: No way, congrats to {sib}!", f"{o}: That's lovely news, when's the wedding?"])
        ask("multi", [f"Where does the {rel} of {p} who just got engaged live?",
                      f"In which city does {p}'s engaged {rel} live?",
                      f"{p}'s {rel} is getting married, what city is {'she' if rel == 'sister' else 'he'} in?"],
            [f"{p}.sib1", f"{p}.sib2"])
        ask("single", [f"Who is {sib} engaged to?", f"who's {sib} marrying?"], [f"{p}.sib2"])
        ask("paraphrase", ["Whose sibling is studying far from home?",
                           "Which relative relocated for a university program?"], [f"{p}.sib1"])

        # The trip: planned, changed, taken. The month is only in the logs' dates.
        c1, c2 = rng.sample([x for x in SIGHTS], 2)
        s1 = rng.randint(3, 9)
        c.say(s1, p, f"{p}: We're planning a trip to {c1} later this year, I've wanted to go forever.", f"{p}.trip1")
        s2 = rng.randint(s1 + 2, s1 + 6)
        c.say(s2, p, f"{p}: Change of plans: flights to {c1} got way too expensive, so we're doing {c2} instead.", f"{p}.trip2")
        c.reply(s2, p, [f"{o}: {c2} is a great choice honestly.", f"{o}: Oh that's a shame about {c1}, but {c2} sounds fun."])
        s3 = rng.randint(s2 + 3, n - 1)
        c.say(s3, p, f"{p}: Just got back from {c2}! {SIGHTS[c2][0].upper() + SIGHTS[c2][1:]} were the highlight of the whole trip.", f"{p}.trip3")
        month = MONTHS[c.days[s3].month - 1]
        ask("temporal", [f"When did {p} get back from {c2}?", f"when was {p}'s trip to {c2}?"], [f"{p}.trip3"])
        ask("temporal", [f"Where did {p} travel in {month}?", f"What city did {p} visit in {month}?",
                         f"{p} went on a trip in {month}, where to?"], [f"{p}.trip3"])
        ask("single", [f"Why didn't {p} go to {c1}?", f"what happened with {p}'s {c1} plans?",
                       f"Did {p} end up going to {c1}?"], [f"{p}.trip2"])
        ask("multi", [f"Which city did {p} originally plan to visit before picking {c2}?",
                      f"What was the highlight of the trip {p} took instead of {c1}?"],
            [f"{p}.trip2", f"{p}.trip3"])

        # Preferences.
        food, dish = rng.choice(FOODS)
        s1 = rng.randint(0, n - 1)
        c.say(s1, p, f"{p}: I could eat {food} every day, {dish} is my absolute favorite.", f"{p}.food")
        c.reply(s1, p, [f"{o}: Same, there's a good place near me for that.", f"{o}: Ha, you say that every time."])
        genre, artist = rng.choice(MUSIC)
        s2 = rng.randint(0, n - 1)
        c.say(s2, p, f"{p}: I've had {artist} on repeat all week, nothing beats {genre} for me.", f"{p}.music")
        dislike = rng.choice(DISLIKES)
        s3 = rng.randint(0, n - 1)
        c.say(s3, p, f"{p}: Please never suggest {dislike} to me, I really can't stand it.", f"{p}.dislike")
        ask("preference", [f"What kind of food does {p} like?", f"If I cook dinner for {p}, what should I make?",
                           f"what's {p}'s favorite dish?"], [f"{p}.food"])
        ask("preference", [f"What music is {p} into?", f"Which artist would {p} want to see live?",
                           f"What should I put on the playlist for {p}?"], [f"{p}.music"])
        ask("preference", [f"Is there anything {p} hates?", f"What should I avoid suggesting to {p}?",
                           f"what does {p} dislike?"], [f"{p}.dislike"])
        ask("paraphrase", ["Which cuisine would make a good birthday meal for one of them?",
                           "What would be a good restaurant pick for one of them?"], [f"{p}.food"])

        # A hobby and a class.
        hobby, gear = rng.choice(HOBBIES)
        s1 = rng.randint(0, n - 3)
        c.say(s1, p, f"{p}: I've gotten really into {hobby} lately, I even bought {gear}.", f"{p}.hobby")
        lang = rng.choice(LANGUAGES)
        s2 = rng.randint(0, n - 1)
        c.say(s2, p, f"{p}: I signed up for evening {lang} lessons, twice a week at the community college.", f"{p}.lang")
        ask("single", [f"What hobby did {p} pick up?", f"what is {p} doing in {his} free time lately?"], [f"{p}.hobby"])
        ask("single", [f"What language is {p} learning?", f"Which lessons did {p} sign up for?"], [f"{p}.lang"])
        ask("paraphrase", ["Who is studying a foreign tongue?", "Which of them goes to night school?"], [f"{p}.lang"])
        ask("temporal", [f"When did {p} start the {lang} lessons?", f"when did {p} begin learning {lang}?"], [f"{p}.lang"])

        # An event with a date, an injury that stopped a sport, a move.
        race, length = rng.choice(RACES)
        s1 = rng.randint(5, n - 1)
        c.say(s1, p, f"{p}: I finished my first {race} on Sunday, {length}, and my legs are still sore.", f"{p}.race")
        c.reply(s1, p, [f"{o}: That's incredible, I'm so proud of you!", f"{o}: Wow, how did you train for that?"])
        injury, sport = rng.choice(INJURIES)
        s2 = rng.randint(0, n - 1)
        c.say(s2, p, f"{p}: I {injury} playing {sport}, so no more {sport} for a while.", f"{p}.injury")
        hood = rng.choice(NEIGHBORHOODS)
        s3 = rng.randint(0, n - 1)
        c.say(s3, p, f"{p}: We finally moved into the new apartment in {hood}, boxes everywhere.", f"{p}.move")
        car = rng.choice(CARS)
        s4 = rng.randint(0, n - 1)
        c.say(s4, p, f"{p}: I bought {car} last weekend, no more taking the bus.", f"{p}.car")
        rmonth = MONTHS[c.days[s1].month - 1]
        ask("temporal", [f"When did {p} run the {race}?", f"When was {p}'s {race}?",
                         f"What race did {p} do in {rmonth}?"], [f"{p}.race"])
        ask("single", [f"Why did {p} stop playing {sport}?", f"How did {p} get hurt?"], [f"{p}.injury"])
        ask("single", [f"Which neighborhood did {p} move to?", f"Where is {p}'s new apartment?"], [f"{p}.move"])
        ask("single", [f"What car did {p} buy?", f"what does {p} drive now?"], [f"{p}.car"])
        ask("paraphrase", ["Who got a new vehicle?", "Which of them purchased wheels recently?"], [f"{p}.car"])
        ask("paraphrase", ["Who got injured?", "Has anyone been hurt?"], [f"{p}.injury"])

    questions += [("paraphrase", options, keys) for options, keys in paraphrased.values()]

    # Filler: the rest of each session, in the people's turns.
    for s in range(n):
        want = rng.randint(9, 13)
        turns = c.sessions[s]
        while len(turns) < want:
            me = rng.choice(c.people)
            text = rng.choice(FILLER).format(me=me, you=c.other(me))
            turns.insert(rng.randint(0, len(turns)), (me, text, None))
    return c, questions


def generate(root: Path):
    """Writes every conversation under `root/<agent>/` (a workspace each)
    and returns the questions: dicts of agent, category, question and the
    answer entries as `path#HH:MM`."""
    rng = random.Random(SEED)
    out, dropped = [], 0
    for i in range(CONVERSATIONS):
        a, b = rng.sample(NAMES, 2)
        start = date(2025, 1, 6) + timedelta(days=rng.randint(0, 120))
        c, questions = build(rng, i + 1, a, b, start)
        ids = c.write(root / c.agent)
        for category, options, keys in questions:
            answers = [ids[k] for k in keys if k in ids]
            if len(answers) != len(keys):
                continue
            text = rng.choice(options)
            if category == "paraphrase":
                # Mechanically: no content word in common with any answer.
                fine = [q for q in options if not any(content(q) & content(a[2]) for a in answers)]
                if not fine:
                    dropped += 1
                    continue
                text = rng.choice(fine)
            out.append({
                "agent": c.agent,
                "category": category,
                "question": text,
                "answers": [f"{path}#{hhmm}" for path, hhmm, _ in answers],
            })
    return out, dropped
