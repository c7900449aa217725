"""The words a plain answer may use around its value (weblica.scoring.grammar): an allow-list.

An answer is read word by word; a word that is not the gold, a value, one of the question's own words or
one of these is a word the grammar cannot read, and the answer fails. So a new hedge ("vielleicht"), an
approximation ("roughly"), a second candidate ("and others") or a word in a script the checker does not
read fails without anyone having listed it. What is here is what carries an answer ("It costs", "The
answer is"), restates a question ("The cheapest one is"), remarks on the search ("I could not find a
better one") or refuses ("Nothing by that name exists on the site").

Never add a word that hedges, approximates, offers an alternative or leaves a list open (maybe, about,
around, roughly, or, either, others, etc, would, should, might, guess, think, believe, doubt, seems
like): `tests/scoring/test_scoring_grammar.py` holds the list of words that must stay out.
"""
from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# English: the words that carry, restate, remark and refuse
_ENGLISH = _words("""
a an the this that these those its their there here our my your his her each every all both only just
exactly precisely total overall same such any
i we you it they he she one ones them him us me who whom whose which what where when how why
is are was were be been being am has have had do does did done will can could shall
not no none nothing never without except excluding non
and but so because since as than then also too while whereas instead rather
of in on at for with from to by per into onto within after before until till during via through across
upon inside outside behind next beside besides
cost costs costing priced sells sold sell selling comes come came shows show showed shown showing lists
list listed listing says say said reads read states state stated find found finds see saw seen named
called titled written wrote publish published released opens open opened closes close closed starts start
started ends end ended begins began departs depart departed arrives arrive arrived leaves leave left takes
take took lasts weighs weigh holds hold contains contain includes include included offers offer offered
located based set scheduled rated ranked gets get got belongs belong made makes make runs run ran
placed submitted booked added created sent saved updated completed confirmed ordered paid registered
signed applied selected chosen checked searched looked look visited clicked entered typed filled
went need needs needed want wants require requires required
exist exists existed carry carries carried stock stocks stocked provide provides provided support supports
supported appear appears appeared mention mentions mentioned display displays displayed feature features
featured specify specifies specified give gives given present anywhere nowhere unable able impossible
infeasible unavailable available fail failed failing seem seems seemed search came up turned returned return
returns result results match matches matching missing lacks lack applicable offered sorry
answer answers value values price prices cost total amount sum number numbers count name names title titles
author authors writer writers date dates day days time times year years item items product products option
options choice choices model models brand brands type types kind kinds category categories rating ratings
score scores status address addresses city cities country countries place places location locations
phone email code codes id reference references order orders booking bookings reservation reservations
ticket tickets account accounts user users owner owners people person page pages site sites website
websites store stores shop shops catalog catalogue listings entry entries record records section sections
link links detail details information info colour colours color colors size sizes quantity quantities
availability fee fees fare fares rate rates plan plans route routes line lines stop stops station stations
room rooms hotel hotels flight flights seat seats event events job jobs article articles story stories post
posts book books song songs film films movie movies restaurant restaurants dish dishes menu appointment
appointments doctor doctors clinic clinics course courses class classes school schools permit permits form
forms application applications confirmation receipt receipts message messages review reviews comment
comments cart basket checkout payment payments balance balances transaction transactions transfer transfers
statement statements task tasks question questions query queries term terms word words text label labels
field fields button buttons tab tabs menu menus filter filters sort list lists table tables row rows column
columns step steps version versions edition editions issue issues episode episodes chapter chapters
level levels grade grades unit units percent percentage
cheapest lowest highest most least first last latest earliest newest oldest best top biggest largest
smallest fastest shortest longest cheaper lower higher less better earlier later newer older bigger larger
smaller faster shorter longer free new other right correct final main only single whole
definitely certainly clearly indeed obviously actually currently now today still already yet again really
simply just please thanks thank ok okay yes sure hope helps hardly previous previously former original
founded established built born died opened launched introduced released created designed produced
locate locates located spot spotted identify identified determine determined complete completed perform
performed access accessed book buy bought bargain check checkin checkout arrival departure
monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
montag dienstag mittwoch donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi
dimanche lunes martes miercoles jueves viernes sabado domingo
like about matched everywhere unfortunately afraid requested empty back anything something luck else
""")

# units and currencies written beside a number ("12 kg", "316 yen", "95 cents")
_UNITS = _words("""
h hr hrs hour hours min mins minute minutes s sec secs second seconds d wk wks week weeks mo mos month
months y yr yrs kg kgs kilogram kilograms kilo kilos g gram grams lb lbs km kilometre kilometres kilometer
kilometers m metre metres meter meters cm mm mi mile miles l litre litres liter liters ml gb tb mb in
inch inches star stars night nights guest guests st nd rd th
dollar dollars cent cents euro euros pound pounds pence yen yuan rupee rupees franc francs
usd eur gbp jpy cny rmb inr krw chf cad aud nzd sek nok dkk pln czk huf rub try brl mxn zar hkd sgd
""")

# the carriers of other languages a site may be written in: articles, "is", "costs", "the price",
# "the answer" — enough for "Der Preis ist 12,50 €", never a hedge or an "or"
_OTHER_LANGUAGES = _words("""
der die das den dem des ein eine einer ist sind war kostet kosten betragt preis antwort lautet heisst
name von am um im und zu
le la les l un une est c sont coute coutent prix reponse il elle du de des et au aux
el los las es son cuesta cuestan precio respuesta del y en al lo
""")

PLAIN_WORDS = _ENGLISH | _UNITS | _OTHER_LANGUAGES

# words that offer an alternative wherever they stand: an answer that says "or" has not picked one
ALTERNATIVE_WORDS = _words("or either nor whether vs versus oder entweder ou soit o")
