/**
 * Generates the bundled example eval set `evalset/examples/alex-memory/` in the `memory` format: the memory
 * store of one fictional user, Alex Rivera, with `exact`, `paraphrase` and `multi-hop` queries and graded qrels.
 *
 * Everything comes from the hand-written tables in scripts/example-data/ (facts, filler templates, queries);
 * nothing is taken from a dataset. Qrels are correct by construction: every memory is generated from a fact (or
 * a filler topic), and every query names the facts that answer it, so its grades follow from the fact ids
 * instead of from anyone reading the corpus afterwards.
 * Output is deterministic (own seeded PRNG, fixed key order, stable sort), so the committed files can be
 * checked against a fresh run.
 *
 * Run: `npx tsx scripts/make-example.ts [--out <dir>]` (default: evalset/examples/alex-memory).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
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
// The tables, read from scripts/example-data/ (each file's header says what its fields mean).

type Stratum = 'exact' | 'paraphrase' | 'multi-hop';
const STRATUM_NAMES: readonly Stratum[] = ['exact', 'paraphrase', 'multi-hop'];

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const keys = z.array(z.string()).optional();

const factSchema = z.strictObject({
  key: z.string(),
  date: isoDate,
  category: z.string(),
  importance: z.number(),
  sensitive: z.boolean().optional(),
  source: z.enum(['chat', 'calendar', 'email']).optional(),
  say: z.array(z.string()).min(1),
  repeats: z.number().int().nonnegative().optional(),
});
type FactSpec = z.infer<typeof factSchema>;

const fillerSchema = z.strictObject({
  topic: z.string(),
  category: z.string(),
  count: z.number().int().positive(),
  after: isoDate.optional(),
  draw: z.string().optional(),
  templates: z.array(z.string()).min(1),
});
type FillerSpec = z.infer<typeof fillerSchema>;
type ListEntry = string | Readonly<Record<string, string>>;
type Lists = Readonly<Record<string, readonly ListEntry[]>>;
const fillersSchema = z.strictObject({
  lists: z.record(z.string(), z.array(z.union([z.string(), z.record(z.string(), z.string())])).min(1)),
  topics: z.array(fillerSchema),
});

const querySchema = z.strictObject({
  id: z.string(),
  text: z.string(),
  answer: z.string(),
  full: keys,
  hops: keys,
  related: keys,
  negatives: keys,
  topics: keys,
});
type QuerySpec = z.infer<typeof querySchema>;
const queriesSchema = z.strictObject({
  exact: z.array(querySchema),
  paraphrase: z.array(z.strictObject({ id: z.string(), of: z.string(), text: z.string() })),
  'multi-hop': z.array(querySchema),
});

interface Tables {
  readonly facts: readonly FactSpec[];
  readonly lists: Lists;
  readonly fillers: readonly FillerSpec[];
  readonly strata: readonly (readonly [Stratum, readonly QuerySpec[]])[];
}

const DATA_DIR = fileURLToPath(new URL('example-data/', import.meta.url));

function readTable<T>(file: string, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(parseYaml(readFileSync(join(DATA_DIR, file), 'utf8')));
  if (!parsed.success) throw new HarnessError(`make-example: ${file}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function loadTables(): Tables {
  const facts = readTable('facts.yaml', factSchema.array());
  const { lists, topics } = readTable('fillers.yaml', fillersSchema);
  const queries = readTable('queries.yaml', queriesSchema);
  for (const f of topics) checkTemplates(f, lists);
  const exact = new Map(queries.exact.map((q) => [q.id, q]));
  // A paraphrase shares the answer and judgments of the exact query it rewords; only the wording differs.
  const paraphrase = queries.paraphrase.map((p) => {
    const source = exact.get(p.of);
    if (source === undefined) throw new HarnessError(`make-example: paraphrase ${p.id} names unknown exact query ${p.of}`);
    return { ...source, id: p.id, text: p.text };
  });
  const byStratum = { exact: queries.exact, paraphrase, 'multi-hop': queries['multi-hop'] };
  return { facts, lists, fillers: topics, strata: STRATUM_NAMES.map((s) => [s, byStratum[s]] as const) };
}

// ---------------------------------------------------------------------------------------------------------
// Filler templates: `{5..16}`, `{LIST}`, `{a|b|c}` and `{field}` of the entry drawn from the topic's `draw` list.

const SLOT = /\{([^}]*)\}/g;
const RANGE = /^(\d+)\.\.(\d+)$/;
const LIST_NAME = /^[A-Z_]+$/;

function listOf(lists: Lists, name: string, topic: string): readonly ListEntry[] {
  const list = lists[name];
  if (list === undefined) throw new HarnessError(`make-example: filler topic ${topic} names unknown word list ${name}`);
  return list;
}

/** Fails on a placeholder that cannot be filled, including in a template the seed never happens to choose. */
function checkTemplates(spec: FillerSpec, lists: Lists): void {
  const drawn = spec.draw === undefined ? [] : listOf(lists, spec.draw, spec.topic);
  for (const template of spec.templates) {
    for (const [, slot = ''] of template.matchAll(SLOT)) {
      if (RANGE.test(slot) || slot.includes('|')) continue;
      const ok = LIST_NAME.test(slot)
        ? listOf(lists, slot, spec.topic).every((e) => typeof e === 'string')
        : drawn.length > 0 && drawn.every((e) => typeof e !== 'string' && e[slot] !== undefined);
      if (!ok) throw new HarnessError(`make-example: filler topic ${spec.topic} cannot fill {${slot}}`);
    }
  }
}

/** Placeholders are filled left to right, so the PRNG draws in reading order. */
function fillerText(spec: FillerSpec, lists: Lists, rng: Picker): string {
  const drawn = spec.draw === undefined ? undefined : rng.pick(listOf(lists, spec.draw, spec.topic));
  // A topic with one sentence shape has nothing to choose, so it spends no draw on the choice.
  const template = spec.templates.length === 1 ? (spec.templates[0] ?? '') : rng.pick(spec.templates);
  return template.replace(SLOT, (_, slot: string) => {
    const range = RANGE.exec(slot);
    if (range !== null) return String(rng.int(Number(range[1]), Number(range[2])));
    if (slot.includes('|')) return rng.pick(slot.split('|'));
    const entry = LIST_NAME.test(slot) ? rng.pick(listOf(lists, slot, spec.topic)) : typeof drawn === 'object' ? drawn[slot] : undefined;
    if (typeof entry !== 'string') throw new HarnessError(`make-example: filler topic ${spec.topic} cannot fill {${slot}}`);
    return entry;
  });
}

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

function buildMemories(rng: Picker, tables: Tables): Memory[] {
  const end = dayNumber(END);
  const subject = (): string => (rng.chance(0.3) ? 'User' : 'Alex');
  const out: Omit<Memory, 'id'>[] = [];
  const seen = new Set<string>();
  for (const f of tables.facts) {
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
  for (const fl of tables.fillers) {
    const lo = dayNumber(fl.after ?? START);
    for (let i = 0; i < fl.count; i++) {
      let text = fillerText(fl, tables.lists, rng);
      // Identical filler lines would be two ids for one memory; redraw (deterministically) instead.
      for (let tries = 0; seen.has(text); tries++) {
        if (tries > 50) throw new HarnessError(`make-example: filler topic ${fl.topic} cannot produce ${fl.count} distinct lines`);
        text = fillerText(fl, tables.lists, rng);
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

function buildQueries(memories: readonly Memory[], tables: Tables): BuiltQuery[] {
  const byOrigin = new Map<string, string[]>();
  for (const m of memories) {
    const list = byOrigin.get(m.origin) ?? [];
    list.push(m.id);
    byOrigin.set(m.origin, list);
  }
  const factKeys = new Set(tables.facts.map((f) => f.key));
  const out: BuiltQuery[] = [];
  const ids = new Set<string>();
  for (const [stratum, specs] of tables.strata) {
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
  return JSON.stringify({ id: q.id, text: q.text, stratum: q.stratum, answer: q.answer, qrels });
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
  const strataRows = STRATUM_NAMES.map((s) => {
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
  (memory id -> grade), \`answer\` (a short gold answer taken from the memories that answer the question, for
  answer measures).
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
  const tables = loadTables();
  const memories = buildMemories(new Picker(SEED), tables);
  const queries = buildQueries(memories, tables);
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
