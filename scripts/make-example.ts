/**
 * Generates the bundled example eval set `evalset/examples/alex-memory/` in the `memory` format: the memory
 * store of one fictional user, Alex Rivera, with `exact`, `paraphrase` and `multi-hop` queries and graded qrels.
 *
 * Everything comes from the tables in this file; nothing is taken from a dataset. Qrels are correct by
 * construction: every memory is generated from a fact (or a filler topic), and every query names the facts
 * that answer it, so its grades follow from the fact ids instead of from anyone reading the corpus afterwards.
 * Output is deterministic (own seeded PRNG, fixed key order, stable sort), so the committed files can be
 * checked against a fresh run.
 *
 * Run: `npx tsx scripts/make-example.ts [--out <dir>]` (default: evalset/examples/alex-memory).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HarnessError, UsageError } from '../harness/errors.js';
import { projectRoot } from '../harness/util/project.js';
import { createRng, type Rng } from '../harness/stats/rng.js';

export const EXAMPLE_RELATIVE_DIR = 'evalset/examples/alex-memory';
export const EXAMPLE_FILES = ['corpus.jsonl', 'queries.jsonl', 'README.md'] as const;

const SEED = 20250531;
/** The store spans two years of the user's life; every memory date lies in [START, END]. */
const START = '2023-06-01';
const END = '2025-05-31';
/** How many filler memories of a query's `topics` are judged 1 (on-topic, not answering). */
const TOPIC_JUDGED = 2;

// ---------------------------------------------------------------------------------------------------------
// Deterministic helpers

/** Template picking over the project's one seeded PRNG (harness/stats/rng.ts): a fixed sequence everywhere. */
class Picker {
  private readonly rng: Rng;
  constructor(seed: number) {
    this.rng = createRng(seed);
  }
  private next(): number {
    return this.rng.nextFloat();
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    const item = items[this.int(0, items.length - 1)];
    if (item === undefined) throw new HarnessError('make-example: pick from an empty list');
    return item;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const DAY_MS = 86_400_000;
function dayNumber(iso: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (m === null) throw new HarnessError(`make-example: bad date "${iso}"`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS;
}
function isoDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------------------
// The fact table. `say` holds phrasings: the first mention uses say[0], each repeat (a near-duplicate a memory
// system stores when the user mentions the fact again) the next phrasing. `{A}` becomes "Alex" or "User", the
// two ways memory systems name their user.

interface FactSpec {
  readonly key: string;
  readonly date: string;
  readonly category: string;
  readonly importance: number;
  readonly sensitive?: boolean;
  readonly source?: 'chat' | 'calendar' | 'email';
  readonly say: readonly string[];
  readonly repeats?: number;
}

const FACTS: readonly FactSpec[] = [
  // family
  {
    key: 'partner_sam',
    date: '2023-06-03',
    category: 'family',
    importance: 0.9,
    say: ["{A}'s partner Sam Chen is an ER nurse at Harborview Medical Center.", "Sam Chen (Alex's partner) works as an ER nurse at Harborview."],
    repeats: 1,
  },
  { key: 'parents_tucson', date: '2023-06-05', category: 'family', importance: 0.6, say: ["{A}'s parents, Elena and Jorge Rivera, live in Tucson, Arizona."] },
  {
    key: 'mom_teacher',
    date: '2023-06-12',
    category: 'family',
    importance: 0.5,
    say: ["Alex's mom Elena retired in 2022 after 30 years of teaching third grade."],
  },
  {
    key: 'brother_austin',
    date: '2023-06-20',
    category: 'family',
    importance: 0.7,
    say: ["{A}'s older brother Daniel lives in Austin and works as a firefighter."],
  },
  { key: 'niece_sofia', date: '2023-07-05', category: 'family', importance: 0.6, say: ["Alex's brother Daniel has a daughter named Sofia, born in 2018."] },
  { key: 'sister_job', date: '2023-08-02', category: 'family', importance: 0.5, say: ["Alex's sister Maya works as a UX designer for a travel startup."] },
  { key: 'dad_birthday', date: '2023-09-01', category: 'family', importance: 0.5, say: ["Jorge's birthday is October 9."] },
  {
    key: 'anniversary',
    date: '2023-10-03',
    category: 'family',
    importance: 0.7,
    say: ["Alex and Sam's anniversary is October 3; they started dating in 2019."],
  },
  {
    key: 'mom_allergy',
    date: '2023-11-20',
    category: 'family',
    importance: 0.7,
    say: ['Elena is allergic to shellfish, so no shrimp or crab when she visits.'],
  },
  {
    key: 'grandma_rosa',
    date: '2023-12-02',
    category: 'family',
    importance: 0.5,
    say: ["Alex's grandmother Rosa is 91 and lives in an assisted living home in Santa Fe."],
  },
  { key: 'sam_shifts', date: '2024-01-08', category: 'family', importance: 0.55, say: ['Sam works night shifts Tuesday through Thursday.'] },
  {
    key: 'dad_woodwork',
    date: '2024-02-14',
    category: 'family',
    importance: 0.35,
    say: ["Alex's dad Jorge spends most afternoons in his woodworking shop building furniture."],
  },
  {
    key: 'sister_lisbon',
    date: '2024-03-18',
    category: 'family',
    importance: 0.8,
    say: ["{A}'s sister Maya moved to Lisbon in March 2024.", "Maya (Alex's sister) now lives in Lisbon after relocating in March 2024."],
    repeats: 1,
  },
  {
    key: 'tomas_job',
    date: '2024-05-10',
    category: 'family',
    importance: 0.5,
    say: ["Tomás Ferreira is an architect who restores old buildings in Lisbon's Alfama district."],
  },
  {
    key: 'sofia_birthday',
    date: '2024-06-01',
    category: 'family',
    importance: 0.6,
    say: ["Sofia's birthday is June 14; she asked for a telescope this year."],
  },
  {
    key: 'maya_married',
    date: '2024-09-16',
    category: 'family',
    importance: 0.85,
    say: [
      "{A}'s sister Maya married Tomás Ferreira in Sintra on September 14, 2024.",
      'Maya and Tomás Ferreira got married in Sintra on September 14, 2024; Alex was there.',
    ],
    repeats: 1,
  },
  { key: 'tomas_brother', date: '2024-09-20', category: 'family', importance: 0.4, say: ["Tomás's brother Luca runs a surf school in Ericeira."] },
  {
    key: 'sam_parents',
    date: '2024-11-30',
    category: 'family',
    importance: 0.45,
    say: ["Sam's parents, Wei and Lily Chen, live in Richmond, British Columbia."],
  },
  {
    key: 'sam_summary',
    date: '2025-03-02',
    category: 'family',
    importance: 0.5,
    say: ["Reminder: Alex's partner Sam is on nights Tuesday to Thursday, so plan date nights for Monday or Friday."],
  },
  // social
  { key: 'best_friend', date: '2023-06-25', category: 'social', importance: 0.6, say: ["Alex's best friend from college is Omar Haddad."] },
  { key: 'omar_city', date: '2023-08-15', category: 'social', importance: 0.35, say: ['Omar lives in Portland and teaches high-school chemistry.'] },
  { key: 'lena_home', date: '2023-08-25', category: 'social', importance: 0.3, say: ['Lena Marsh lives on Queen Anne, near Kerry Park.'] },
  { key: 'jonah_job', date: '2023-10-20', category: 'social', importance: 0.3, say: ['Jonah works as a route setter at Vertical Hold in Georgetown.'] },
  {
    key: 'omar_baby',
    date: '2025-02-18',
    category: 'social',
    importance: 0.5,
    say: ['Omar and his wife Leila welcomed a baby girl named Noor on February 16, 2025.'],
  },
  // pets
  {
    key: 'cat_pepper',
    date: '2023-06-08',
    category: 'pets',
    importance: 0.7,
    say: ["{A}'s cat is named Pepper, a 9-year-old gray tabby.", "Pepper, the gray tabby, is Alex's cat."],
    repeats: 1,
  },
  { key: 'pepper_vet', date: '2023-06-30', category: 'pets', importance: 0.45, say: ['Pepper sees Dr. Femi Okoro at Ballard Cat Clinic.'] },
  {
    key: 'dog_biscuit',
    date: '2023-07-22',
    category: 'pets',
    importance: 0.8,
    say: [
      '{A} adopted a dog named Biscuit, a beagle mix, from the Seattle Humane shelter in July 2023.',
      "Biscuit (the beagle mix) is Alex's dog; adopted summer 2023.",
    ],
    repeats: 1,
  },
  { key: 'biscuit_vet', date: '2023-08-05', category: 'pets', importance: 0.6, say: ["Biscuit's vet is Dr. Anika Patel at Greenwood Animal Clinic."] },
  {
    key: 'biscuit_food',
    date: '2023-09-12',
    category: 'pets',
    importance: 0.4,
    say: ['Biscuit eats grain-free lamb kibble, two cups a day split between breakfast and dinner.'],
  },
  { key: 'daniel_dog', date: '2023-10-11', category: 'pets', importance: 0.3, say: ["Daniel's family got a dachshund puppy named Biscotti."] },
  { key: 'pepper_food', date: '2023-12-10', category: 'pets', importance: 0.35, say: ['Pepper only eats the salmon pâté from Tiki Cat.'] },
  { key: 'biscuit_chicken', date: '2024-01-15', category: 'pets', importance: 0.55, say: ['Biscuit is allergic to chicken; check treat labels.'] },
  { key: 'maya_dog', date: '2024-04-02', category: 'pets', importance: 0.3, say: ["Maya's dog Bruno is a Portuguese water dog."] },
  {
    key: 'pepper_thyroid',
    date: '2024-05-14',
    category: 'pets',
    importance: 0.6,
    say: ['Pepper was diagnosed with hyperthyroidism and takes methimazole twice a day.'],
  },
  {
    key: 'dog_walker',
    date: '2024-09-03',
    category: 'pets',
    importance: 0.4,
    say: ["Biscuit's midday walker is Jess from Wag Along, Monday, Wednesday and Friday at noon."],
  },
  {
    key: 'vet_clinic_address',
    date: '2024-10-02',
    category: 'pets',
    importance: 0.3,
    say: ['Greenwood Animal Clinic moved to 8520 Greenwood Ave N in October 2024.'],
  },
  // home and car
  { key: 'address_old', date: '2023-06-02', category: 'home', importance: 0.6, say: ['{A} rents a one-bedroom apartment at 1420 E Pine St on Capitol Hill.'] },
  { key: 'rent_old', date: '2023-06-02', category: 'finances', importance: 0.4, say: ['Rent for the Capitol Hill apartment is $2,150 a month.'] },
  {
    key: 'car_outback',
    date: '2023-09-18',
    category: 'vehicle',
    importance: 0.55,
    say: ['{A} sold the old Honda Civic and bought a green 2019 Subaru Outback.'],
  },
  {
    key: 'landlord',
    date: '2023-09-20',
    category: 'home',
    importance: 0.3,
    say: ["Alex's landlord at the Pine St apartment is Gary Novak; rent is due on the 1st."],
  },
  { key: 'condo_buy', date: '2024-07-30', category: 'home', importance: 0.8, say: ['{A} closed on a two-bedroom condo in Ballard on July 30, 2024.'] },
  {
    key: 'address_new',
    date: '2024-08-12',
    category: 'home',
    importance: 0.85,
    say: [
      "{A}'s new address is 5611 22nd Ave NW, Apt 3B, Seattle (Ballard), since August 2024.",
      'Alex moved from Capitol Hill to 5611 22nd Ave NW in Ballard.',
    ],
    repeats: 1,
  },
  {
    key: 'wifi_password',
    date: '2024-08-20',
    category: 'home',
    importance: 0.5,
    sensitive: true,
    say: ["Home Wi-Fi network 'bluefern' password: fern-otter-42."],
  },
  { key: 'garage_code', date: '2024-08-25', category: 'home', importance: 0.5, sensitive: true, say: ['The garage door code at the Ballard condo is 4471.'] },
  { key: 'hoa_meeting', date: '2024-09-10', category: 'home', importance: 0.3, say: ['The condo HOA meets the second Tuesday of each month.'] },
  { key: 'oil_change', date: '2024-12-02', category: 'vehicle', importance: 0.3, say: ["The Outback's next oil change is due at 45,000 miles."] },
  // work and projects
  {
    key: 'job',
    date: '2023-06-06',
    category: 'work',
    importance: 0.85,
    say: ['{A} is a senior data engineer at Larkspur Freight, a logistics company.', 'Alex works at Larkspur Freight as a senior data engineer.'],
    repeats: 1,
  },
  { key: 'manager', date: '2023-06-14', category: 'work', importance: 0.7, say: ["Alex's manager at Larkspur is Priya Nair."] },
  {
    key: 'remote_days',
    date: '2023-07-10',
    category: 'work',
    importance: 0.5,
    say: ['{A} works from home on Mondays and Fridays and goes to the office Tuesday to Thursday.'],
  },
  {
    key: 'teammate_ben',
    date: '2023-09-05',
    category: 'work',
    importance: 0.45,
    say: ["Ben Okafor is Alex's teammate on the data platform team and the go-to person for Kafka."],
  },
  {
    key: 'tidewater',
    date: '2023-10-02',
    category: 'projects',
    importance: 0.5,
    say: ['Alex built the Tidewater dashboard that tracks on-time delivery rates for the ops team.'],
  },
  {
    key: 'switchback',
    date: '2024-01-28',
    category: 'projects',
    importance: 0.6,
    say: ["Alex's side project, Switchback, is a hiking-trail planner app written in Rust."],
  },
  {
    key: 'heron',
    date: '2024-02-01',
    category: 'projects',
    importance: 0.75,
    say: ['Project Heron: Alex leads the migration of the warehouse pipelines from Airflow to Dagster; target is end of Q2 2025.'],
  },
  {
    key: 'switchback_db',
    date: '2024-04-11',
    category: 'projects',
    importance: 0.4,
    say: ['Switchback stores trail data in SQLite with the SpatiaLite extension.'],
  },
  {
    key: 'conference_talk',
    date: '2024-08-28',
    category: 'work',
    importance: 0.65,
    say: ['{A} will give a talk at DataOps Summit in Denver on November 6, 2024.'],
  },
  { key: 'talk_title', date: '2024-09-30', category: 'work', importance: 0.5, say: ["The DataOps Summit talk is titled 'Backfills Without Tears'."] },
  { key: 'promotion', date: '2025-01-15', category: 'work', importance: 0.8, say: ['{A} was promoted to staff data engineer in January 2025.'] },
  {
    key: 'switchback_beta',
    date: '2025-02-02',
    category: 'projects',
    importance: 0.4,
    say: ["Switchback's private beta has 40 testers, mostly from the Mountaineers club."],
  },
  { key: 'priya_relocate', date: '2025-03-20', category: 'work', importance: 0.5, say: ['Priya Nair is relocating to Vancouver in June 2025.'] },
  { key: 'heron_cover', date: '2025-03-25', category: 'work', importance: 0.5, say: ['Ben will cover Project Heron on-call while Alex is in Japan in April.'] },
  { key: 'new_manager', date: '2025-04-25', category: 'work', importance: 0.6, say: ['Starting June 2025, Alex will report to Marcus Lee.'] },
  // finances
  { key: 'budget_app', date: '2023-07-01', category: 'finances', importance: 0.3, say: ['Alex tracks spending in YNAB and reviews it every Sunday.'] },
  { key: 'retirement', date: '2023-07-15', category: 'finances', importance: 0.4, say: ['Alex contributes 10% of salary to the Larkspur 401(k).'] },
  { key: 'sabbatical_fund', date: '2024-02-20', category: 'finances', importance: 0.4, say: ['{A} is saving $800 a month toward a sabbatical in 2026.'] },
  {
    key: 'mortgage',
    date: '2024-08-02',
    category: 'finances',
    importance: 0.7,
    sensitive: true,
    say: ['The condo mortgage is with Cascade Credit Union: 30-year fixed at 6.4%, $3,180 a month.'],
  },
  {
    key: 'salary',
    date: '2025-01-16',
    category: 'finances',
    importance: 0.6,
    sensitive: true,
    say: ["With the promotion, Alex's base salary went to $186,000."],
  },
  // travel
  {
    key: 'aisle',
    date: '2023-07-18',
    category: 'preferences',
    importance: 0.7,
    say: ['{A} prefers aisle seats on long flights and window seats on short ones.', 'Seat preference: aisle for long-haul, window for short hops.'],
    repeats: 1,
  },
  {
    key: 'passport',
    date: '2023-11-02',
    category: 'travel',
    importance: 0.6,
    sensitive: true,
    say: ["Alex's US passport (no. 548812093) expires on August 21, 2027."],
  },
  {
    key: 'thanksgiving',
    date: '2023-11-10',
    category: 'travel',
    importance: 0.4,
    say: ['Alex is flying to Tucson for Thanksgiving 2023 to stay with the parents.'],
  },
  { key: 'ski_trip', date: '2024-01-18', category: 'travel', importance: 0.4, say: ['Alex is going skiing at Crystal Mountain on January 20, 2024.'] },
  {
    key: 'frequent_flyer',
    date: '2024-03-05',
    category: 'travel',
    importance: 0.4,
    sensitive: true,
    say: ["Alex's Alaska Mileage Plan number is 193 447 820."],
  },
  {
    key: 'lisbon_trip',
    date: '2024-08-10',
    category: 'travel',
    importance: 0.5,
    say: ["Alex flies to Lisbon on September 10, 2024 for Maya's wedding and stays until the 20th."],
  },
  { key: 'denver_hotel', date: '2024-10-15', category: 'travel', importance: 0.45, say: ['{A} booked the Curtis Hotel in Denver for November 5-7.'] },
  { key: 'christmas_plan', date: '2024-12-05', category: 'travel', importance: 0.5, say: ["Alex and Sam will spend Christmas 2024 with Sam's parents."] },
  {
    key: 'japan_trip',
    date: '2025-01-20',
    category: 'travel',
    importance: 0.8,
    say: [
      '{A} is planning a trip to Japan from April 3 to April 17, 2025: Tokyo, Kyoto and Osaka.',
      'Japan trip: April 3-17, 2025, covering Tokyo, Kyoto and Osaka.',
    ],
    repeats: 1,
  },
  {
    key: 'japan_flight',
    date: '2025-02-10',
    category: 'travel',
    importance: 0.6,
    say: ['Alex booked ANA flight NH 177 from Seattle to Tokyo Narita, departing April 3; about 10.5 hours.'],
  },
  { key: 'kyoto_ryokan', date: '2025-02-14', category: 'travel', importance: 0.5, say: ['In Kyoto, Alex booked three nights at Kinsui Ryokan near Gion.'] },
  { key: 'osaka_hotel', date: '2025-02-15', category: 'travel', importance: 0.4, say: ['For Osaka, Alex reserved two nights at Hotel Kansai Bay.'] },
  // health
  {
    key: 'penicillin',
    date: '2023-06-15',
    category: 'health',
    importance: 0.9,
    sensitive: true,
    say: ['{A} is allergic to penicillin (hives as a child).', 'Allergy on file: penicillin. Alex breaks out in hives.'],
    repeats: 1,
  },
  { key: 'pcp', date: '2023-06-22', category: 'health', importance: 0.5, say: ["Alex's primary care doctor is Dr. Laura Mendes at Swedish Ballard."] },
  { key: 'dentist_old', date: '2023-08-09', category: 'health', importance: 0.5, say: ["Alex's dentist is Dr. Ramon Alvarez at Capitol Hill Dental."] },
  { key: 'alvarez_hours', date: '2023-08-20', category: 'health', importance: 0.2, say: ['Capitol Hill Dental is open until 6 pm on Fridays.'] },
  {
    key: 'therapist',
    date: '2023-09-28',
    category: 'health',
    importance: 0.6,
    sensitive: true,
    say: ['Alex sees a therapist, Dr. Hannah Lowe, every other Thursday at 5 pm for anxiety.'],
  },
  { key: 'contacts', date: '2023-12-15', category: 'health', importance: 0.35, say: ['Alex wears daily contact lenses, prescription -2.75 in both eyes.'] },
  {
    key: 'meniscus',
    date: '2024-01-22',
    category: 'health',
    importance: 0.75,
    say: ['{A} tore the meniscus in the left knee while skiing at Crystal Mountain on January 20, 2024.'],
  },
  {
    key: 'physio',
    date: '2024-02-05',
    category: 'health',
    importance: 0.55,
    say: ["Marco Bianchi at Pacific Physical Therapy is handling Alex's knee rehab, Tuesdays at 7:30 am."],
  },
  {
    key: 'blood_pressure',
    date: '2024-06-20',
    category: 'health',
    importance: 0.6,
    sensitive: true,
    say: ["At the June 2024 physical, Alex's blood pressure was 138/88; the doctor suggested cutting back on salt."],
  },
  {
    key: 'dentist_new',
    date: '2024-10-14',
    category: 'health',
    importance: 0.55,
    say: ['After the move, Alex switched dentists to Dr. Grace Kim at Ballard Smiles.'],
  },
  { key: 'kim_hours', date: '2024-10-20', category: 'health', importance: 0.3, say: ['Ballard Smiles closes at 1 pm on Fridays.'] },
  // hobbies
  {
    key: 'climbing_gym',
    date: '2023-06-10',
    category: 'hobbies',
    importance: 0.55,
    say: ['{A} has a membership at Granite Loft, a bouldering gym in Fremont.'],
  },
  { key: 'climbing_partner', date: '2023-07-12', category: 'hobbies', importance: 0.45, say: ['Alex climbs with Jonah Weiss on Wednesday evenings.'] },
  {
    key: 'book_club',
    date: '2023-08-22',
    category: 'hobbies',
    importance: 0.45,
    say: ["Alex is in a sci-fi book club that meets the last Sunday of each month at Lena's house."],
  },
  {
    key: 'band',
    date: '2023-09-14',
    category: 'hobbies',
    importance: 0.6,
    say: ['{A} plays bass in a band called The Low Tides; rehearsals are Thursday nights.', 'Alex is the bassist in The Low Tides (rehearsal every Thursday).'],
    repeats: 1,
  },
  { key: 'sourdough', date: '2023-11-05', category: 'hobbies', importance: 0.4, say: ["{A}'s sourdough starter is named Clint Yeastwood."] },
  {
    key: 'starter_feed',
    date: '2024-03-02',
    category: 'hobbies',
    importance: 0.3,
    say: ['Clint Yeastwood gets fed 1:1:1 (starter, flour, water) every 12 hours when kept on the counter.'],
  },
  { key: 'chess', date: '2024-05-01', category: 'hobbies', importance: 0.3, say: ["Alex plays rapid chess on Lichess under the handle 'ballard_bishop'."] },
  { key: 'bass_model', date: '2024-06-15', category: 'hobbies', importance: 0.35, say: ["Alex's bass is a 2016 Fender Jazz Bass in sunburst."] },
  { key: 'half_result', date: '2024-11-25', category: 'hobbies', importance: 0.6, say: ['{A} ran the Seattle Half Marathon on November 24, 2024 in 1:52:10.'] },
  {
    key: 'half_goal',
    date: '2025-01-05',
    category: 'hobbies',
    importance: 0.55,
    say: ["Alex's goal for the Vancouver Half Marathon on May 4, 2025 is to finish under 1:50."],
  },
  { key: 'band_gig', date: '2025-02-20', category: 'hobbies', importance: 0.5, say: ['The Low Tides have a gig at the Sunset Tavern on March 8, 2025.'] },
  // preferences
  {
    key: 'coffee',
    date: '2023-06-16',
    category: 'preferences',
    importance: 0.5,
    say: ["{A}'s usual coffee order is an oat-milk flat white.", 'Coffee order: oat-milk flat white, no sugar.'],
    repeats: 1,
  },
  {
    key: 'pescatarian',
    date: '2023-06-18',
    category: 'preferences',
    importance: 0.75,
    say: ['{A} is pescatarian: no meat, but fish and seafood are fine.', "Alex doesn't eat meat (pescatarian since 2021)."],
    repeats: 1,
  },
  {
    key: 'email_style',
    date: '2023-09-02',
    category: 'preferences',
    importance: 0.55,
    say: ['Alex wants summaries as short bullet points, not long paragraphs.'],
  },
  { key: 'date_spot', date: '2023-10-05', category: 'preferences', importance: 0.45, say: ["Alex and Sam's go-to date-night spot is Saffron Table."] },
  { key: 'no_calls', date: '2023-10-12', category: 'preferences', importance: 0.5, say: ['{A} dislikes phone calls before 10 am; text first.'] },
  { key: 'caffeine', date: '2023-11-14', category: 'preferences', importance: 0.4, say: ['Alex avoids caffeine after 2 pm because it wrecks sleep.'] },
  {
    key: 'saffron_cuisine',
    date: '2024-02-10',
    category: 'preferences',
    importance: 0.3,
    say: ['Saffron Table serves Persian food and is closed on Mondays.'],
  },
  { key: 'units', date: '2024-04-20', category: 'preferences', importance: 0.3, say: ['Alex logs runs in kilometers, not miles.'] },
  { key: 'fav_band', date: '2024-07-07', category: 'preferences', importance: 0.3, say: ["Alex's favorite band to listen to is Khruangbin."] },
  // appointments
  {
    key: 'biscuit_vaccine',
    date: '2024-07-01',
    category: 'appointments',
    importance: 0.45,
    source: 'calendar',
    say: ["Biscuit's rabies booster is due on August 15, 2024."],
  },
  {
    key: 'eye_exam',
    date: '2024-11-12',
    category: 'appointments',
    importance: 0.35,
    source: 'calendar',
    say: ['Eye exam at Clearview Optometry on December 3, 2024 at 4 pm.'],
  },
  {
    key: 'car_service',
    date: '2025-02-05',
    category: 'appointments',
    importance: 0.45,
    source: 'calendar',
    say: ['The Outback is booked for service at Ballard Auto Care on February 20, 2025.'],
  },
  {
    key: 'dentist_appt',
    date: '2025-02-25',
    category: 'appointments',
    importance: 0.6,
    source: 'calendar',
    say: ['Dental cleaning with Dr. Kim on March 12, 2025 at 9:30 am.'],
  },
  {
    key: 'tax_appt',
    date: '2025-03-01',
    category: 'appointments',
    importance: 0.4,
    source: 'calendar',
    say: ['Meeting with the accountant, Rita Gomez, on April 1, 2025 to file taxes.'],
  },
];

// ---------------------------------------------------------------------------------------------------------
// Filler: the everyday log a memory system accumulates. It answers no query (no names of the people, places
// or things the queries ask about) but shares their vocabulary, and some of it is judged 1 (on-topic).

interface FillerSpec {
  readonly topic: string;
  readonly category: string;
  readonly count: number;
  /** Earliest date (the dog arrives in July 2023). */
  readonly after?: string;
  readonly make: (r: Picker) => string;
}

const FRIENDS = ['Nadia', 'Felix', 'Hiro', 'Tess', 'Carmen', 'Ravi'] as const;
const CAFES = ['Milstead', 'Fulcrum Cafe', 'Sip House', 'the corner cafe on Market St'] as const;
const ROUTES = ['the Burke-Gilman Trail', 'the Green Lake loop', 'Discovery Park', 'the Alki waterfront', 'the Ship Canal'] as const;
const RESTAURANTS = ['Little Fern Noodle Bar', 'Copper Pot Diner', 'Mesa Verde Taqueria', 'Kasbah Grill', 'Blue Heron Sushi', 'Pho Lantern'] as const;
const DISHES = [
  'mushroom ramen',
  'salmon poke bowl',
  'black bean tacos',
  'falafel plate',
  'margherita pizza',
  'shrimp pad thai',
  'tofu banh mi',
  'saag paneer',
] as const;
const HOME_DISHES = [
  'a lentil curry',
  'miso-glazed cod',
  'shakshuka',
  'mushroom risotto',
  'a big Greek salad',
  'vegetable dumplings',
  'seared salmon with rice',
] as const;
const RECIPE_SOURCES = ['a NYT Cooking recipe', 'a cookbook from the library', 'a video recipe', 'a recipe card from a friend'] as const;
const BOOKS = [
  ['The Left Hand of Darkness', 'Ursula K. Le Guin'],
  ['Piranesi', 'Susanna Clarke'],
  ['Project Hail Mary', 'Andy Weir'],
  ['The Fifth Season', 'N. K. Jemisin'],
  ['A Memory Called Empire', 'Arkady Martine'],
  ['Klara and the Sun', 'Kazuo Ishiguro'],
  ['Children of Time', 'Adrian Tchaikovsky'],
  ['Station Eleven', 'Emily St. John Mandel'],
  ['Exhalation', 'Ted Chiang'],
  ['Ancillary Justice', 'Ann Leckie'],
  ['Hyperion', 'Dan Simmons'],
  ['Neuromancer', 'William Gibson'],
] as const;
const MOVIES = ['Arrival', 'Past Lives', 'Dune: Part Two', 'Perfect Days', 'The Holdovers', 'Aftersun', 'Paddington 2', 'Spirited Away'] as const;
const PODCASTS = ['Pipeline Radio', 'Trailhead Talk', 'The Long Exposure', 'Small Bites'] as const;
const POD_SUBJECTS = [
  'columnar file formats',
  'trail running nutrition',
  'the history of shipping containers',
  'sleep and memory',
  'fermentation',
  'urban beekeeping',
] as const;
const WORK_TASKS = [
  'a schema drift bug',
  'a flaky integration test',
  'a slow join',
  'late-arriving events',
  'a duplicate-row issue',
  'an out-of-memory crash',
] as const;
const PIPELINES = ['shipments', 'invoices', 'fleet telemetry', 'customs filings', 'warehouse scans'] as const;
const ERRAND_ITEMS = [
  'printer ink',
  'climbing chalk',
  'a new rain jacket',
  'light bulbs',
  'a bag of coffee beans',
  'houseplant soil',
  'a phone charger',
  'birthday cards',
] as const;
const STORES = ['Ballard Hardware', 'the REI flagship', 'Fred Meyer', 'the farmers market', 'Target'] as const;
const PARKS = ['Golden Gardens', 'Magnuson Park', 'Carkeek Park', 'Green Lake'] as const;
const SONGS = ['Dreams', 'Superstition', 'Heart of Glass', 'Seven Nation Army', 'Valerie'] as const;
const GRADES = ['V3', 'V4', 'V5'] as const;

const FILLERS: readonly FillerSpec[] = [
  {
    topic: 'running',
    category: 'fitness',
    count: 20,
    make: (r) =>
      r.pick([
        () => `Alex ran ${r.int(5, 16)} km along ${r.pick(ROUTES)} in ${r.int(28, 95)} minutes.`,
        () => `Easy ${r.int(4, 8)} km recovery run around ${r.pick(ROUTES)}; legs felt ${r.pick(['heavy', 'fresh', 'okay'])}.`,
        () => `Alex did interval training: ${r.int(5, 8)} x 800 m repeats at the track.`,
      ])(),
  },
  {
    topic: 'climbing',
    category: 'fitness',
    count: 14,
    make: (r) =>
      r.pick([
        () => `Alex had a bouldering session and sent a ${r.pick(GRADES)} on the ${r.pick(['overhang', 'slab wall', 'cave', 'competition wall'])}.`,
        () => `Short climbing session; worked on ${r.pick(['heel hooks', 'slab footwork', 'crimpy problems', 'dynos'])} for an hour.`,
        () => `Alex spent ${r.int(3, 9)} attempts on a ${r.pick(GRADES)} and fell off the last move every time.`,
      ])(),
  },
  {
    topic: 'food',
    category: 'food',
    count: 22,
    make: (r) =>
      r.pick([
        () => `Alex tried the ${r.pick(DISHES)} at ${r.pick(RESTAURANTS)} and rated it ${r.int(2, 5)}/5.`,
        () => `Lunch at ${r.pick(RESTAURANTS)}: ${r.pick(DISHES)}, ${r.pick(['would order again', 'too salty', 'solid but pricey'])}.`,
      ])(),
  },
  {
    topic: 'cooking',
    category: 'food',
    count: 14,
    make: (r) => `Alex cooked ${r.pick(HOME_DISHES)} for dinner from ${r.pick(RECIPE_SOURCES)}.`,
  },
  {
    topic: 'baking',
    category: 'hobbies',
    count: 12,
    after: '2023-11-06',
    make: (r) =>
      r.pick([
        () =>
          `Alex baked a sourdough loaf with ${r.pick(['rosemary', 'olives', 'walnuts', 'sesame', 'rye flour'])}; the crumb came out ${r.pick(['open', 'a bit tight', 'great'])}.`,
        () => `Bake day: ${r.int(2, 3)} loaves, ${r.int(70, 80)}% hydration, ${r.int(10, 16)}-hour cold proof.`,
      ])(),
  },
  {
    topic: 'reading',
    category: 'reading',
    count: 16,
    make: (r) => {
      const [title, author] = r.pick(BOOKS);
      return r.pick([
        () => `Alex finished reading '${title}' by ${author} and gave it ${r.int(3, 5)} stars.`,
        () => `Book club picked '${title}' for next month.`,
        () => `Alex started '${title}' (${author}) on the bus.`,
      ])();
    },
  },
  {
    topic: 'movies',
    category: 'entertainment',
    count: 12,
    make: (r) => `Alex and Sam watched '${r.pick(MOVIES)}'; Alex rated it ${r.int(5, 10)}/10.`,
  },
  {
    topic: 'work',
    category: 'work',
    count: 30,
    make: (r) =>
      r.pick([
        () => `Alex spent the afternoon debugging ${r.pick(WORK_TASKS)} in the ${r.pick(PIPELINES)} pipeline.`,
        () => `Alex reviewed ${r.int(3, 9)} pull requests and wrote a design note on ${r.pick(PIPELINES)} data retention.`,
        () =>
          `Sprint retro: the team agreed to ${r.pick(['cap meetings at 30 minutes', 'rotate on-call weekly', 'add data contracts', 'write runbooks for every alert'])}.`,
        () => `Alex paired with a new hire on the ${r.pick(PIPELINES)} models.`,
      ])(),
  },
  {
    topic: 'podcasts',
    category: 'entertainment',
    count: 12,
    make: (r) => `Alex listened to an episode of ${r.pick(PODCASTS)} about ${r.pick(POD_SUBJECTS)}.`,
  },
  {
    topic: 'errands',
    category: 'errands',
    count: 16,
    make: (r) =>
      r.pick([
        () => `Alex picked up ${r.pick(ERRAND_ITEMS)} at ${r.pick(STORES)}.`,
        () => `Shopping list: ${r.pick(ERRAND_ITEMS)}, ${r.pick(['oat milk', 'eggs', 'batteries', 'paper towels', 'lemons'])}.`,
      ])(),
  },
  {
    topic: 'social',
    category: 'social',
    count: 16,
    make: (r) =>
      r.pick([
        () => `Alex grabbed coffee with ${r.pick(FRIENDS)} at ${r.pick(CAFES)}.`,
        () => `Game night at ${r.pick(FRIENDS)}'s place; played ${r.pick(['Wingspan', 'Codenames', 'Catan', 'Azul'])}.`,
        () => `${r.pick(FRIENDS)} texted Alex about ${r.pick(['a hiking trip', 'a concert', 'a new job', 'moving apartments'])}.`,
      ])(),
  },
  {
    topic: 'dog',
    category: 'pets',
    count: 14,
    after: '2023-07-23',
    make: (r) =>
      r.pick([
        () => `Alex walked the dog for ${r.int(25, 70)} minutes around ${r.pick(PARKS)}.`,
        () => `Took the dog to the off-leash area at ${r.pick(PARKS)}; bath night afterwards.`,
      ])(),
  },
  {
    topic: 'cat',
    category: 'pets',
    count: 8,
    make: (r) =>
      r.pick([
        () => 'Alex cleaned the litter box and ordered more litter.',
        () => `The cat knocked ${r.pick(['a mug', 'a plant', 'the TV remote', 'a pen', 'a glass of water'])} off the counter again.`,
        () => 'The cat slept in the sunny window all afternoon.',
        () => `The cat woke Alex at ${r.pick(['5 am', '5:30 am', '6 am', '4:45 am'])} demanding breakfast.`,
        () => 'Alex bought a new scratching post for the cat.',
      ])(),
  },
  {
    topic: 'band',
    category: 'hobbies',
    count: 10,
    after: '2023-09-15',
    make: (r) =>
      r.pick([
        () => `Band practice ran late; worked on a cover of '${r.pick(SONGS)}'.`,
        () => `Alex changed the strings and practiced scales for ${r.int(20, 60)} minutes.`,
      ])(),
  },
  {
    topic: 'chess',
    category: 'hobbies',
    count: 8,
    after: '2024-05-02',
    make: (r) => `Alex played ${r.int(3, 9)} rapid chess games online and won ${r.int(1, 3)}.`,
  },
];

// ---------------------------------------------------------------------------------------------------------
// Queries, hand-written and tied to fact keys. full -> 3, hops -> 2, related -> 1, negatives -> 0 (hard
// negatives: similar entities or superseded facts), topics -> the first TOPIC_JUDGED filler memories of each
// topic judged 1.

type Stratum = 'exact' | 'paraphrase' | 'multi-hop';

interface QuerySpec {
  readonly id: string;
  readonly text: string;
  readonly answer: string;
  readonly full?: readonly string[];
  readonly hops?: readonly string[];
  readonly related?: readonly string[];
  readonly negatives?: readonly string[];
  readonly topics?: readonly string[];
}

/** `exact`: the question reuses the distinctive words of the answering memory. */
const EXACT: readonly QuerySpec[] = [
  { id: 'qe01', text: "What is Alex's dog named?", answer: 'Biscuit', full: ['dog_biscuit'], negatives: ['maya_dog', 'daniel_dog'], topics: ['dog'] },
  {
    id: 'qe02',
    text: "Which city did Alex's sister Maya move to in March 2024?",
    answer: 'Lisbon',
    full: ['sister_lisbon'],
    related: ['sister_job'],
    negatives: ['lisbon_trip'],
  },
  {
    id: 'qe03',
    text: "Who did Alex's sister Maya marry?",
    answer: 'Tomás Ferreira',
    full: ['maya_married'],
    related: ['lisbon_trip'],
    negatives: ['tomas_brother'],
  },
  {
    id: 'qe04',
    text: "What is Alex's new address in Ballard?",
    answer: '5611 22nd Ave NW, Apt 3B, Seattle',
    full: ['address_new'],
    related: ['condo_buy'],
    negatives: ['address_old'],
  },
  {
    id: 'qe05',
    text: "Where does Alex's partner Sam work as an ER nurse?",
    answer: 'Harborview Medical Center',
    full: ['partner_sam'],
    related: ['sam_shifts'],
  },
  { id: 'qe06', text: 'What was Alex at Larkspur Freight before the promotion?', answer: 'Senior data engineer', full: ['job'], related: ['promotion'] },
  {
    id: 'qe07',
    text: "Who is Alex's manager at Larkspur?",
    answer: 'Priya Nair (until June 2025)',
    full: ['manager'],
    related: ['new_manager', 'priya_relocate'],
    negatives: ['teammate_ben'],
  },
  { id: 'qe08', text: 'Which seats does Alex prefer on long flights?', answer: 'Aisle seats', full: ['aisle'], related: ['japan_flight'] },
  { id: 'qe09', text: 'What is Alex allergic to?', answer: 'Penicillin', full: ['penicillin'], negatives: ['mom_allergy', 'biscuit_chicken'] },
  { id: 'qe10', text: "What is Alex's usual coffee order?", answer: 'An oat-milk flat white', full: ['coffee'], related: ['caffeine'] },
  {
    id: 'qe11',
    text: 'When is the dental cleaning with Dr. Kim?',
    answer: 'March 12, 2025 at 9:30 am',
    full: ['dentist_appt'],
    related: ['dentist_new'],
    negatives: ['dentist_old'],
  },
  {
    id: 'qe12',
    text: 'Who did Alex switch dentists to after the move?',
    answer: 'Dr. Grace Kim at Ballard Smiles',
    full: ['dentist_new'],
    related: ['dentist_appt'],
    negatives: ['dentist_old'],
  },
  {
    id: 'qe13',
    text: 'Which band does Alex play bass in?',
    answer: 'The Low Tides',
    full: ['band'],
    related: ['band_gig', 'bass_model'],
    negatives: ['fav_band'],
    topics: ['band'],
  },
  {
    id: 'qe14',
    text: "What is Alex's sourdough starter named?",
    answer: 'Clint Yeastwood',
    full: ['sourdough'],
    related: ['starter_feed'],
    topics: ['baking'],
  },
  {
    id: 'qe15',
    text: 'Alex ran the Seattle Half Marathon in what time?',
    answer: '1:52:10',
    full: ['half_result'],
    related: ['half_goal'],
    topics: ['running'],
  },
  { id: 'qe16', text: "What is Alex's cat named?", answer: 'Pepper', full: ['cat_pepper'], topics: ['cat'] },
  {
    id: 'qe17',
    text: 'What does Pepper take for hyperthyroidism?',
    answer: 'Methimazole, twice a day',
    full: ['pepper_thyroid'],
    related: ['pepper_vet', 'cat_pepper'],
    negatives: ['blood_pressure'],
    topics: ['cat'],
  },
  {
    id: 'qe18',
    text: "Who is Biscuit's vet?",
    answer: 'Dr. Anika Patel at Greenwood Animal Clinic',
    full: ['biscuit_vet'],
    related: ['vet_clinic_address'],
    negatives: ['pepper_vet'],
  },
  {
    id: 'qe19',
    text: 'Which bouldering gym does Alex have a membership at?',
    answer: 'Granite Loft in Fremont',
    full: ['climbing_gym'],
    related: ['climbing_partner'],
    negatives: ['jonah_job'],
    topics: ['climbing'],
  },
  {
    id: 'qe20',
    text: "What is Alex's side project Switchback written in?",
    answer: 'Rust',
    full: ['switchback'],
    related: ['switchback_db', 'switchback_beta'],
  },
  { id: 'qe21', text: "When is Alex's trip to Japan?", answer: 'April 3-17, 2025', full: ['japan_trip'], related: ['japan_flight', 'heron_cover'] },
  {
    id: 'qe22',
    text: 'Where did Alex book nights in Kyoto?',
    answer: 'Kinsui Ryokan near Gion',
    full: ['kyoto_ryokan'],
    related: ['japan_trip'],
    negatives: ['osaka_hotel', 'denver_hotel'],
  },
  {
    id: 'qe23',
    text: "Who is handling Alex's knee rehab?",
    answer: 'Marco Bianchi at Pacific Physical Therapy',
    full: ['physio'],
    related: ['meniscus', 'ski_trip'],
    negatives: ['pcp'],
  },
  {
    id: 'qe24',
    text: "Who is Alex's primary care doctor?",
    answer: 'Dr. Laura Mendes at Swedish Ballard',
    full: ['pcp'],
    negatives: ['therapist', 'dentist_new'],
  },
  { id: 'qe25', text: 'How much is the condo mortgage a month?', answer: '$3,180', full: ['mortgage'], related: ['condo_buy'], negatives: ['rent_old'] },
  {
    id: 'qe26',
    text: "What does Alex's dad Jorge build in his woodworking shop?",
    answer: 'Furniture',
    full: ['dad_woodwork'],
    related: ['dad_birthday', 'parents_tucson'],
  },
  {
    id: 'qe27',
    text: "When is Sofia's birthday?",
    answer: 'June 14',
    full: ['sofia_birthday'],
    related: ['niece_sofia'],
    negatives: ['dad_birthday', 'anniversary'],
  },
  {
    id: 'qe28',
    text: "Where does Alex's grandmother Rosa live?",
    answer: 'An assisted living home in Santa Fe',
    full: ['grandma_rosa'],
    negatives: ['parents_tucson', 'sam_parents'],
  },
  {
    id: 'qe29',
    text: 'What is the DataOps Summit talk titled?',
    answer: 'Backfills Without Tears',
    full: ['talk_title'],
    related: ['conference_talk', 'denver_hotel'],
  },
  {
    id: 'qe30',
    text: 'When do The Low Tides have a gig at the Sunset Tavern?',
    answer: 'March 8, 2025',
    full: ['band_gig'],
    related: ['band'],
    topics: ['band'],
  },
  {
    id: 'qe31',
    text: 'Alex works from home on which days?',
    answer: 'Mondays and Fridays',
    full: ['remote_days'],
    related: ['job'],
    negatives: ['sam_shifts'],
  },
  {
    id: 'qe32',
    text: "What is Alex's Alaska Mileage Plan number?",
    answer: '193 447 820',
    full: ['frequent_flyer'],
    related: ['japan_flight'],
    negatives: ['passport', 'aisle'],
  },
  {
    id: 'qe33',
    text: 'What is the garage door code at the condo?',
    answer: '4471',
    full: ['garage_code'],
    related: ['condo_buy'],
    negatives: ['wifi_password'],
  },
  {
    id: 'qe34',
    text: "When does Alex's passport expire?",
    answer: 'August 21, 2027',
    full: ['passport'],
    related: ['japan_trip'],
    negatives: ['frequent_flyer'],
  },
  {
    id: 'qe35',
    text: 'What did Alex buy after selling the old Honda Civic?',
    answer: 'A green 2019 Subaru Outback',
    full: ['car_outback'],
    related: ['oil_change', 'car_service'],
  },
  {
    id: 'qe36',
    text: 'How much is Alex saving a month toward a sabbatical?',
    answer: '$800 a month',
    full: ['sabbatical_fund'],
    related: ['budget_app'],
    negatives: ['retirement', 'salary'],
  },
];

/** A paraphrase asks the same thing as the `exact` query `of`, so it shares that query's answer and judgments. */
interface ParaphraseSpec {
  readonly id: string;
  readonly of: string;
  readonly text: string;
}

/**
 * `paraphrase`: the information needs of the `exact` queries in other words (synonyms, first person,
 * descriptions), so that exact and paraphrase differ only in wording.
 */
const PARAPHRASE: readonly ParaphraseSpec[] = [
  { id: 'qp01', of: 'qe01', text: 'Which four-legged companion did I bring home from the animal rescue?' },
  { id: 'qp02', of: 'qe02', text: 'In what European capital has my younger sibling settled?' },
  { id: 'qp03', of: 'qe03', text: 'Who did my sibling tie the knot with last autumn?' },
  { id: 'qp04', of: 'qe04', text: "What's the street location of the place I currently live?" },
  { id: 'qp05', of: 'qe05', text: 'At which hospital is my significant other employed?' },
  { id: 'qp06', of: 'qe06', text: 'What was my role at the logistics firm before I moved up?' },
  { id: 'qp07', of: 'qe07', text: "Who's my boss right now?" },
  { id: 'qp08', of: 'qe08', text: 'Do I like sitting by the corridor or the window when the plane ride is lengthy?' },
  { id: 'qp09', of: 'qe09', text: 'Which antibiotic gives me a bad reaction?' },
  { id: 'qp10', of: 'qe10', text: 'How do I normally take my espresso drink?' },
  { id: 'qp11', of: 'qe11', text: 'When am I getting my teeth cleaned next?' },
  { id: 'qp12', of: 'qe12', text: 'Which tooth doctor did I start seeing once I relocated?' },
  { id: 'qp13', of: 'qe13', text: "What's the group I perform with on four strings?" },
  { id: 'qp14', of: 'qe14', text: 'What did I call the wild yeast culture I keep for bread?' },
  { id: 'qp15', of: 'qe15', text: 'How long did the 21-kilometre race through my city take me last fall?' },
  { id: 'qp16', of: 'qe16', text: 'What do we call the feline at home?' },
  { id: 'qp17', of: 'qe17', text: 'What pills does the kitty get for the overactive gland?' },
  { id: 'qp18', of: 'qe18', text: 'Which veterinarian looks after my pup?' },
  { id: 'qp19', of: 'qe19', text: 'Where do I go to climb indoors?' },
  { id: 'qp20', of: 'qe20', text: 'Which programming language did I pick for my weekend coding venture about hikes?' },
  { id: 'qp21', of: 'qe21', text: 'Which dates am I away in the land of the rising sun?' },
  { id: 'qp22', of: 'qe22', text: 'What lodging have I reserved in the old imperial capital?' },
  { id: 'qp23', of: 'qe23', text: 'Who is helping me recover from the torn cartilage?' },
  { id: 'qp24', of: 'qe24', text: 'Which GP do I see for general checkups?' },
  { id: 'qp25', of: 'qe25', text: 'How much do I pay the bank for the home loan each month?' },
  { id: 'qp26', of: 'qe26', text: 'What does my father make in his workshop?' },
  { id: 'qp27', of: 'qe27', text: "On what date does my brother's little girl celebrate getting older?" },
  { id: 'qp28', of: 'qe28', text: "Where does my mother's mother reside?" },
  { id: 'qp29', of: 'qe29', text: "What's my conference presentation called?" },
  { id: 'qp30', of: 'qe30', text: 'When is our next show at the bar?' },
  { id: 'qp31', of: 'qe31', text: 'On which weekdays do I skip the commute?' },
  { id: 'qp32', of: 'qe32', text: "What's my airline loyalty account ID?" },
  { id: 'qp33', of: 'qe33', text: 'What digits open the parking entrance at my place?' },
  { id: 'qp34', of: 'qe34', text: 'Until when is my travel document valid?' },
  { id: 'qp35', of: 'qe35', text: 'What vehicle replaced my previous sedan?' },
  { id: 'qp36', of: 'qe36', text: 'How much am I putting aside monthly for the career break?' },
];

/** `multi-hop`: the answer needs two or more memories joined on an entity; each hop is graded 2. */
const MULTI_HOP: readonly QuerySpec[] = [
  {
    id: 'qm01',
    text: "What does the man Alex's sister married do for a living?",
    answer: 'Architect (restores old buildings in Alfama)',
    hops: ['maya_married', 'tomas_job'],
    related: ['sister_lisbon'],
    negatives: ['tomas_brother'],
  },
  {
    id: 'qm02',
    text: "What business does the brother of Maya's husband run?",
    answer: 'A surf school in Ericeira',
    hops: ['maya_married', 'tomas_brother'],
    negatives: ['tomas_job'],
  },
  {
    id: 'qm03',
    text: 'What breed is the dog of the relative who moved to Lisbon in March 2024?',
    answer: 'Portuguese water dog',
    hops: ['sister_lisbon', 'maya_dog'],
    negatives: ['dog_biscuit', 'daniel_dog'],
  },
  {
    id: 'qm04',
    text: "In which city does Sofia's father live?",
    answer: 'Austin',
    hops: ['niece_sofia', 'brother_austin'],
    related: ['sofia_birthday'],
    negatives: ['parents_tucson'],
  },
  {
    id: 'qm05',
    text: "What gift did Alex's brother's daughter ask for this year?",
    answer: 'A telescope',
    hops: ['niece_sofia', 'sofia_birthday'],
    related: ['brother_austin'],
    negatives: ['omar_baby'],
  },
  {
    id: 'qm06',
    text: 'What should Alex not cook when the retired schoolteacher in the family visits?',
    answer: 'Shellfish (no shrimp or crab)',
    hops: ['mom_teacher', 'mom_allergy'],
    negatives: ['penicillin', 'biscuit_chicken'],
  },
  {
    id: 'qm07',
    text: 'When is the birthday of the family member who builds furniture?',
    answer: 'October 9',
    hops: ['dad_woodwork', 'dad_birthday'],
    negatives: ['sofia_birthday'],
  },
  {
    id: 'qm08',
    text: "Which nights does Alex's partner work?",
    answer: 'Tuesday through Thursday',
    full: ['sam_summary'],
    hops: ['partner_sam', 'sam_shifts'],
  },
  {
    id: 'qm09',
    text: 'In which city will Alex spend Christmas 2024?',
    answer: 'Richmond, British Columbia',
    hops: ['christmas_plan', 'sam_parents'],
    negatives: ['parents_tucson'],
  },
  {
    id: 'qm10',
    text: "What is the name of the baby born to Alex's best friend from college?",
    answer: 'Noor',
    hops: ['best_friend', 'omar_baby'],
    negatives: ['niece_sofia'],
  },
  { id: 'qm11', text: "Which city does Alex's best friend live in?", answer: 'Portland', hops: ['best_friend', 'omar_city'], related: ['omar_baby'] },
  {
    id: 'qm12',
    text: "On which street is the clinic of Biscuit's vet now?",
    answer: '8520 Greenwood Ave N',
    hops: ['biscuit_vet', 'vet_clinic_address'],
    negatives: ['pepper_vet'],
  },
  {
    id: 'qm13',
    text: 'Which protein must be avoided in treats for the dog Alex adopted from the shelter?',
    answer: 'Chicken',
    hops: ['dog_biscuit', 'biscuit_chicken'],
    related: ['biscuit_food'],
    negatives: ['mom_allergy'],
  },
  {
    id: 'qm14',
    text: 'Who is the vet of the pet that takes methimazole?',
    answer: 'Dr. Femi Okoro at Ballard Cat Clinic',
    hops: ['pepper_thyroid', 'pepper_vet'],
    negatives: ['biscuit_vet'],
  },
  {
    id: 'qm15',
    text: "What food does Alex's gray tabby eat?",
    answer: 'Salmon pâté from Tiki Cat',
    hops: ['cat_pepper', 'pepper_food'],
    negatives: ['biscuit_food'],
  },
  { id: 'qm16', text: 'Who walks the beagle mix at midday?', answer: 'Jess from Wag Along', hops: ['dog_biscuit', 'dog_walker'], topics: ['dog'] },
  {
    id: 'qm17',
    text: "What time does Alex's current dentist's office close on Fridays?",
    answer: '1 pm',
    hops: ['dentist_new', 'kim_hours'],
    negatives: ['dentist_old', 'alvarez_hours'],
  },
  {
    id: 'qm18',
    text: "Which city is Alex's manager relocating to?",
    answer: 'Vancouver (June 2025)',
    hops: ['manager', 'priya_relocate'],
    related: ['new_manager'],
    negatives: ['half_goal'],
  },
  {
    id: 'qm19',
    text: 'Who will cover on-call for the Airflow to Dagster migration while Alex is away?',
    answer: 'Ben Okafor',
    hops: ['heron', 'heron_cover'],
    related: ['japan_trip'],
  },
  {
    id: 'qm20',
    text: 'Which team is the person covering Heron on-call on?',
    answer: 'The data platform team',
    hops: ['heron_cover', 'teammate_ben'],
    related: ['heron'],
  },
  {
    id: 'qm21',
    text: 'Which hotel is Alex staying at for the conference talk?',
    answer: 'The Curtis Hotel in Denver',
    hops: ['conference_talk', 'denver_hotel'],
    related: ['talk_title'],
    negatives: ['kyoto_ryokan', 'osaka_hotel'],
  },
  {
    id: 'qm22',
    text: "Which database does Alex's hiking-trail app use?",
    answer: 'SQLite with SpatiaLite',
    hops: ['switchback', 'switchback_db'],
    related: ['switchback_beta'],
  },
  {
    id: 'qm23',
    text: "Where do most beta testers of Alex's Rust side project come from?",
    answer: 'The Mountaineers club',
    hops: ['switchback', 'switchback_beta'],
    related: ['switchback_db'],
  },
  {
    id: 'qm24',
    text: 'Who is the physical therapist for the injury Alex got skiing?',
    answer: 'Marco Bianchi at Pacific Physical Therapy',
    hops: ['meniscus', 'physio'],
    related: ['ski_trip'],
  },
  {
    id: 'qm25',
    text: 'Which seat should Alex request on the flight to Tokyo?',
    answer: 'An aisle seat (10.5-hour flight)',
    hops: ['japan_flight', 'aisle'],
    related: ['japan_trip'],
  },
  {
    id: 'qm26',
    text: "Where does Alex's climbing partner work?",
    answer: 'Vertical Hold in Georgetown (route setter)',
    hops: ['climbing_partner', 'jonah_job'],
    negatives: ['climbing_gym'],
    topics: ['climbing'],
  },
  { id: 'qm27', text: "In which neighborhood is Alex's book club hosted?", answer: 'Queen Anne', hops: ['book_club', 'lena_home'], topics: ['reading'] },
  { id: 'qm28', text: "What cuisine does Alex and Sam's date-night spot serve?", answer: 'Persian', hops: ['date_spot', 'saffron_cuisine'], topics: ['food'] },
  {
    id: 'qm29',
    text: 'How much faster than the Seattle Half does Alex need to run the Vancouver Half to hit the goal?',
    answer: 'More than 2:10 faster (1:52:10 to under 1:50)',
    hops: ['half_result', 'half_goal'],
    topics: ['running'],
  },
  {
    id: 'qm30',
    text: 'What feeding ratio does Alex use for the sourdough starter?',
    answer: '1:1:1 every 12 hours',
    hops: ['sourdough', 'starter_feed'],
    topics: ['baking'],
  },
  {
    id: 'qm31',
    text: 'At what mileage is the car Alex bought in 2023 due for an oil change?',
    answer: '45,000 miles',
    hops: ['car_outback', 'oil_change'],
    related: ['car_service'],
  },
  {
    id: 'qm32',
    text: 'Which bass does the bassist of The Low Tides play?',
    answer: 'A 2016 Fender Jazz Bass in sunburst',
    hops: ['band', 'bass_model'],
    related: ['band_gig'],
    topics: ['band'],
  },
  {
    id: 'qm33',
    text: 'What is the monthly payment on the home Alex closed on in July 2024?',
    answer: '$3,180',
    hops: ['condo_buy', 'mortgage'],
    negatives: ['rent_old'],
  },
  { id: 'qm34', text: "How old was Alex's niece on the day Maya got married?", answer: '6', hops: ['niece_sofia', 'sofia_birthday', 'maya_married'] },
];

function resolveParaphrases(): QuerySpec[] {
  const exact = new Map(EXACT.map((q) => [q.id, q]));
  return PARAPHRASE.map((p) => {
    const source = exact.get(p.of);
    if (source === undefined) throw new HarnessError(`make-example: paraphrase ${p.id} names unknown exact query ${p.of}`);
    return { ...source, id: p.id, text: p.text };
  });
}

const STRATA: readonly (readonly [Stratum, readonly QuerySpec[]])[] = [
  ['exact', EXACT],
  ['paraphrase', resolveParaphrases()],
  ['multi-hop', MULTI_HOP],
];

// ---------------------------------------------------------------------------------------------------------
// Generation

interface Memory {
  id: string;
  text: string;
  date: string;
  category: string;
  importance: number;
  sensitive: boolean;
  source: string;
  /** Fact key or `filler:<topic>`; never written out, it only ties qrels to memories. */
  origin: string;
}

export interface ExampleFiles {
  readonly 'corpus.jsonl': string;
  readonly 'queries.jsonl': string;
  readonly 'README.md': string;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function clampImportance(x: number): number {
  return round2(Math.min(1, Math.max(0, x)));
}

function buildMemories(rng: Picker): Memory[] {
  const end = dayNumber(END);
  const subject = (): string => (rng.chance(0.3) ? 'User' : 'Alex');
  const out: Omit<Memory, 'id'>[] = [];
  const seen = new Set<string>();
  for (const f of FACTS) {
    const first = dayNumber(f.date);
    if (first < dayNumber(START) || first > end) throw new HarnessError(`make-example: fact ${f.key} dated outside ${START}..${END}`);
    const mentions = 1 + (f.repeats ?? 0);
    for (let i = 0; i < mentions; i++) {
      const phrasing = f.say[i % f.say.length];
      if (phrasing === undefined) throw new HarnessError(`make-example: fact ${f.key} has no phrasing`);
      const day = i === 0 ? first : Math.min(end, first + rng.int(20, 240));
      const text = phrasing.replaceAll('{A}', subject());
      if (seen.has(text)) throw new HarnessError(`make-example: duplicate memory text "${text}"`);
      seen.add(text);
      out.push({
        text,
        date: isoDay(day),
        category: f.category,
        importance: clampImportance(f.importance + rng.int(-5, 5) / 100),
        sensitive: f.sensitive ?? false,
        source: f.source ?? 'chat',
        origin: f.key,
      });
    }
  }
  for (const fl of FILLERS) {
    const lo = dayNumber(fl.after ?? START);
    for (let i = 0; i < fl.count; i++) {
      let text = fl.make(rng);
      // Identical filler lines would be two ids for one memory; redraw (deterministically) instead.
      for (let tries = 0; seen.has(text); tries++) {
        if (tries > 50) throw new HarnessError(`make-example: filler topic ${fl.topic} cannot produce ${fl.count} distinct lines`);
        text = fl.make(rng);
      }
      seen.add(text);
      out.push({
        text,
        date: isoDay(rng.int(lo, end)),
        category: fl.category,
        importance: round2(rng.int(5, 35) / 100),
        sensitive: false,
        source: 'chat',
        origin: `filler:${fl.topic}`,
      });
    }
  }
  // Ids follow time, as in a store that appends: sort by date, ties by text, then number.
  out.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  return out.map((m, i) => ({ id: `m${String(i + 1).padStart(4, '0')}`, ...m }));
}

interface BuiltQuery {
  readonly id: string;
  readonly text: string;
  readonly stratum: Stratum;
  readonly qrels: ReadonlyMap<string, number>;
  readonly answer: string;
}

function buildQueries(memories: readonly Memory[]): BuiltQuery[] {
  const byOrigin = new Map<string, string[]>();
  for (const m of memories) {
    const list = byOrigin.get(m.origin) ?? [];
    list.push(m.id);
    byOrigin.set(m.origin, list);
  }
  const factKeys = new Set(FACTS.map((f) => f.key));
  const out: BuiltQuery[] = [];
  const ids = new Set<string>();
  for (const [stratum, specs] of STRATA) {
    for (const q of specs) {
      if (ids.has(q.id)) throw new HarnessError(`make-example: duplicate query id ${q.id}`);
      ids.add(q.id);
      const qrels = new Map<string, number>();
      const judge = (origin: string, grade: number, limit = Infinity) => {
        const docs = byOrigin.get(origin);
        if (docs === undefined) throw new HarnessError(`make-example: query ${q.id} names unknown fact or topic "${origin}"`);
        for (const d of docs.slice(0, limit)) {
          if (qrels.has(d)) throw new HarnessError(`make-example: query ${q.id} judges ${d} (${origin}) twice`);
          qrels.set(d, grade);
        }
      };
      for (const k of q.full ?? []) judge(k, 3);
      for (const k of q.hops ?? []) judge(k, 2);
      for (const k of q.related ?? []) judge(k, 1);
      for (const k of q.negatives ?? []) judge(k, 0);
      for (const t of q.topics ?? []) judge(`filler:${t}`, 1, TOPIC_JUDGED);
      for (const k of [...(q.full ?? []), ...(q.hops ?? []), ...(q.related ?? []), ...(q.negatives ?? [])]) {
        if (!factKeys.has(k)) throw new HarnessError(`make-example: query ${q.id} names "${k}", which is not a fact`);
      }
      if (stratum === 'multi-hop' && (q.hops ?? []).length < 2) {
        throw new HarnessError(`make-example: multi-hop query ${q.id} needs at least two hop facts`);
      }
      if (stratum !== 'multi-hop' && (q.full ?? []).length === 0) {
        throw new HarnessError(`make-example: ${stratum} query ${q.id} needs a fact that answers it fully`);
      }
      out.push({ id: q.id, text: q.text, stratum, qrels, answer: q.answer });
    }
  }
  return out;
}

function corpusLine(m: Memory): string {
  return JSON.stringify({
    id: m.id,
    text: m.text,
    date: m.date,
    category: m.category,
    importance: m.importance,
    sensitive: m.sensitive,
    metadata: { source: m.source },
  });
}

function queryLine(q: BuiltQuery): string {
  // Memory ids are not integer-like, so the object keeps this (sorted) insertion order when serialised.
  const qrels = Object.fromEntries([...q.qrels].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)));
  return JSON.stringify({ id: q.id, text: q.text, stratum: q.stratum, qrels, metadata: { answer: q.answer } });
}

function readme(memories: readonly Memory[], queries: readonly BuiltQuery[]): string {
  const sensitive = memories.filter((m) => m.sensitive).length;
  const filler = memories.filter((m) => m.origin.startsWith('filler:')).length;
  const categories = new Map<string, number>();
  for (const m of memories) categories.set(m.category, (categories.get(m.category) ?? 0) + 1);
  const grades = [0, 0, 0, 0];
  let judged = 0;
  for (const q of queries) {
    for (const g of q.qrels.values()) {
      grades[g] = (grades[g] ?? 0) + 1;
      judged++;
    }
  }
  const strataRows = STRATA.map(([s]) => {
    const qs = queries.filter((q) => q.stratum === s);
    const pairs = qs.reduce((n, q) => n + q.qrels.size, 0);
    return `| \`${s}\` | ${qs.length} | ${pairs} |`;
  });
  const categoryList = [...categories.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  const first = memories[0]?.date ?? START;
  const last = memories[memories.length - 1]?.date ?? END;
  return `# alex-memory: a bundled example eval set

The memory store of one user of an AI assistant, with questions about it and graded relevance judgments, in
the harness's \`memory\` eval-set format. It exists so that \`harness ablate\` can be tried offline, in seconds,
on data shaped like an agent-memory workload.

**Synthetic and fictional.** Alex Rivera, their family, friends, pets, employer, addresses, doctors, account
numbers and codes are invented. Nothing here comes from a dataset or a real person. Do not read the numbers
measured on this set as evidence about real systems: it is small, and it was written by the people who built the
arms. Use it to check that a setup works and to see how the strata differ.

## Contents

- \`corpus.jsonl\`: ${memories.length} memories dated ${first} to ${last}, one JSON object a line:
  \`id\`, \`text\`, \`date\`, \`category\`, \`importance\` (0..1), \`sensitive\`, \`metadata.source\`.
  ${memories.length - filler} of them state facts about Alex's life, some more than once in other words (near-duplicates),
  some superseded by later ones (an old address, an old dentist, a job title before a promotion, a manager who
  is leaving), some about similar entities (three dogs, two dentists, two vets, hotels in two cities). The other
  ${filler} are everyday filler (runs, meals, books, work chores) that share vocabulary with the questions without
  answering them. ${sensitive} memories are flagged \`sensitive\` (health, finances, credential-like numbers).
  Categories: ${categoryList}.
- \`queries.jsonl\`: ${queries.length} questions, one JSON object a line: \`id\`, \`text\`, \`stratum\`, \`qrels\`
  (memory id -> grade), \`metadata.answer\` (a short reference answer).
  Memories name the user "Alex" or, as many memory systems do, "User".

| stratum | queries | judged pairs |
|---|---:|---:|
${strataRows.join('\n')}

- \`exact\`: the question reuses the distinctive words of the memory that answers it ("What is Alex's dog named?").
- \`paraphrase\`: the same information needs as the \`exact\` questions (\`qpNN\` asks what \`qeNN\` asks, with the
  same judgments) in other words, with little word overlap ("Which four-legged companion did I bring home from
  the animal rescue?"). Lexical retrieval is expected to do clearly worse here.
- \`multi-hop\`: the answer needs two or more memories joined on an entity ("What business does the brother of
  Maya's husband run?" needs "Maya married Tomás" and "Tomás's brother Luca runs a surf school").

## Relevance grades

| grade | meaning | count |
|---:|---|---:|
| 3 | the memory answers the question fully | ${grades[3]} |
| 2 | answers it in part, or is one hop of a multi-hop answer | ${grades[2]} |
| 1 | on-topic but does not answer | ${grades[1]} |
| 0 | judged not relevant: a hard negative (similar entity, superseded fact) | ${grades[0]} |

${judged} judged pairs in all. Memories a question does not list are unjudged (treated as not relevant by the
measures). The qrels are correct by construction: every memory is generated from an entry of a fact table, and
every question names the facts that answer it.

## How it was made

Generated by \`scripts/make-example.ts\` from hand-written fact tables, phrasings, filler templates and
questions, with a fixed seed (${SEED}) and no network. To regenerate (byte-identical output):

\`\`\`
npx tsx scripts/make-example.ts
\`\`\`

\`scripts/make-example.test.ts\` checks that the committed files equal a fresh run.
`;
}

/** Builds the three files of the example eval set in memory. Same output on every call. */
export function generateExample(): ExampleFiles {
  const rng = new Picker(SEED);
  const memories = buildMemories(rng);
  const queries = buildQueries(memories);
  return {
    'corpus.jsonl': `${memories.map(corpusLine).join('\n')}\n`,
    'queries.jsonl': `${queries.map(queryLine).join('\n')}\n`,
    'README.md': readme(memories, queries),
  };
}

/** Writes the example eval set into `outDir` (created if missing) and returns the paths written. */
export function writeExample(outDir: string): string[] {
  const files = generateExample();
  mkdirSync(outDir, { recursive: true });
  return EXAMPLE_FILES.map((name) => {
    const path = join(outDir, name);
    writeFileSync(path, files[name]);
    return path;
  });
}

function parseArgs(argv: readonly string[]): { out: string } {
  let out = join(projectRoot(), EXAMPLE_RELATIVE_DIR);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--out') {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError('--out needs a directory');
      out = resolve(value);
      i++;
    } else {
      throw new UsageError(`unknown argument "${arg}"`, { hint: 'usage: npx tsx scripts/make-example.ts [--out <dir>]' });
    }
  }
  return { out };
}

function main(): void {
  try {
    const { out } = parseArgs(process.argv.slice(2));
    for (const path of writeExample(out)) process.stderr.write(`wrote ${path}\n`);
  } catch (err) {
    if (!(err instanceof HarnessError)) throw err;
    process.stderr.write(`${err.message}\n${err.hint === undefined ? '' : `${err.hint}\n`}`);
    process.exitCode = err.exitCode;
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) main();
