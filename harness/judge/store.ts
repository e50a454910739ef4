import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonValue, Qrels } from '../../evalset/types.js';
import { canonicalJson, sha256Hex, writeFolderAtomic } from '../cache/index.js';
import { InputError } from '../errors.js';
import type { JudgeAudit } from '../decision/types.js';
import type { TokenCount } from '../llm/price.js';

/** The file `harness evalset build` writes beside an eval set it generated: the generator's provenance. */
export const BUILD_MANIFEST = 'build-manifest.json';

/** What became of one pooled pair. */
export type JudgmentStatus = 'judged' | 'parse-failure' | 'skipped-sensitive';

/** One line of `judgments.jsonl`. Ids only: no query or document text, so a sensitive memory never lands here. */
export interface JudgmentRecord {
  readonly queryId: string;
  readonly docId: string;
  readonly stratum: string;
  readonly status: JudgmentStatus;
  /** The majority of `samples` when judged; null otherwise (never a stand-in grade). */
  readonly grade: number | null;
  /** The grade of each parsed sample. */
  readonly samples: readonly number[];
  /** Samples whose every attempt was unparsable. */
  readonly parseFailures: number;
}

/** Who judged, with what: the identity hashed into the qrels version. */
export interface JudgeIdentity {
  readonly model: string;
  readonly prompt: { readonly name: string; readonly sha256: string };
  readonly decoding: { readonly temperature: number; readonly maxTokens: number };
  readonly samples: number;
  readonly parseRetries: number;
}

/** What one judging run counted (a JudgeOutcome's, recorded in the manifest). */
export interface JudgeCounts {
  readonly pooled: number;
  readonly gold: number;
  readonly judged: number;
  readonly parseFailures: number;
  readonly skippedSensitive: number;
  readonly requests: number;
  readonly cachedReplies: number;
}

/** Prompt and completion tokens of one judging run's requests (`batched`: the part sent through a batch API). */
export type JudgeTokens = TokenCount;

export type { AuditProbe, AuditProbeResult, JudgeAudit } from '../decision/types.js';

/** `manifest.json` of a judgments folder: the provenance of every record in it. */
export interface JudgmentsManifest {
  readonly judgmentsVersion: 1;
  /** sha256 (16 hex) of the pool, the judge identity and the prompt: the id a report prints. */
  readonly qrelsVersion: string;
  /** `provider` and `batch` (calls went through the provider's batch API) are absent in folders written before them. */
  readonly judge: JudgeIdentity & { readonly provider?: string; readonly baseURL: string; readonly local: boolean; readonly batch?: boolean };
  readonly pool: { readonly depth: number; readonly systems: readonly string[]; readonly pairs: number; readonly queries: number };
  readonly evalset: { readonly name: string; readonly format: string; readonly path: string; readonly fingerprint: string; readonly split?: string };
  readonly counts: JudgeCounts;
  readonly tokens: JudgeTokens;
  /**
   * The models the server named in the replies behind the grades (a dated snapshot of `judge.model`, say): what
   * actually judged. Absent in folders written before it was recorded.
   */
  readonly servedModels?: readonly string[];
  /** USD, when the judge config gives a price. */
  readonly cost?: number;
  /** The latest robustness audit (`harness judge --audit`); absent in folders never audited. */
  readonly audit?: JudgeAudit;
  readonly startedAt: string;
  readonly finishedAt: string;
}

/** The identity part of a manifest's judge: what a rerun or an audit must match (not where or how it was asked). */
export function recordedIdentity(judge: JudgmentsManifest['judge']): JudgeIdentity {
  const { model, prompt, decoding, samples, parseRetries } = judge;
  return { model, prompt, decoding, samples, parseRetries };
}

export interface Judgments {
  readonly dir: string;
  readonly manifest: JudgmentsManifest;
  readonly records: readonly JudgmentRecord[];
}

/**
 * The qrels version: a hash of the judged pairs, the judge identity and the prompt. Two judgment sets with the
 * same version hold grades from the same judge and prompt over the same pool; anything else gets a new one.
 */
export function qrelsVersion(pairs: readonly { queryId: string; docId: string }[], judge: JudgeIdentity): string {
  const sorted = pairs.map((p) => `${p.queryId}\t${p.docId}`).sort();
  return sha256Hex(canonicalJson({ pool: sha256Hex(sorted.join('\n')), judge: judge as unknown as JsonValue })).slice(0, 16);
}

/** The judged grades as qrels (parse failures and skipped pairs hold no grade and are absent). */
export function judgedQrels(records: readonly JudgmentRecord[]): Map<string, Map<string, number>> {
  const q = new Map<string, Map<string, number>>();
  for (const r of records) {
    if (r.status !== 'judged' || r.grade === null) continue;
    let docs = q.get(r.queryId);
    if (!docs) q.set(r.queryId, (docs = new Map()));
    docs.set(r.docId, r.grade);
  }
  return q;
}

/** `gold+judged`: every gold grade kept, judged grades fill only the pairs gold does not grade. */
export function mergeQrels(gold: Qrels, judged: Qrels): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const [qid, docs] of gold) out.set(qid, new Map(docs));
  for (const [qid, docs] of judged) {
    let target = out.get(qid);
    if (!target) out.set(qid, (target = new Map()));
    for (const [docId, g] of docs) if (!target.has(docId)) target.set(docId, g);
  }
  return out;
}

export async function writeJudgments(dir: string, manifest: JudgmentsManifest, records: readonly JudgmentRecord[]): Promise<void> {
  const qrels = judgedQrels(records);
  const lines: string[] = [];
  for (const [qid, docs] of qrels) for (const [docId, g] of docs) lines.push(`${qid} 0 ${docId} ${g}\n`);
  await writeFolderAtomic(
    dir,
    new Map([
      ['manifest.json', `${JSON.stringify(manifest, null, 2)}\n`],
      ['judgments.jsonl', records.map((r) => `${JSON.stringify(r)}\n`).join('')],
      ['qrels.trec', lines.join('')],
    ]),
  );
}

/** Reads a judgments folder written by `harness judge`; a missing or malformed one is an input error (exit 2). */
export async function readJudgments(dir: string): Promise<Judgments> {
  const mf = join(dir, 'manifest.json');
  if (!existsSync(mf)) {
    throw new InputError(dir, undefined, 'not a judgments folder (no manifest.json)', { hint: 'write one with `harness judge --config C`' });
  }
  let manifest: JudgmentsManifest;
  try {
    manifest = JSON.parse(await readFile(mf, 'utf8')) as JudgmentsManifest;
  } catch (err) {
    throw new InputError(mf, undefined, `not valid JSON: ${(err as Error).message}`);
  }
  if (manifest.judgmentsVersion !== 1) throw new InputError(mf, undefined, `judgmentsVersion ${String(manifest.judgmentsVersion)}; this harness reads 1`);
  const file = join(dir, 'judgments.jsonl');
  const text = await readFile(file, 'utf8').catch(() => {
    throw new InputError(file, undefined, 'missing');
  });
  const records: JudgmentRecord[] = [];
  const statuses = new Set<string>(['judged', 'parse-failure', 'skipped-sensitive']);
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let r: JudgmentRecord;
    try {
      r = JSON.parse(line) as JudgmentRecord;
    } catch (err) {
      throw new InputError(file, i + 1, `not valid JSON: ${(err as Error).message}`);
    }
    const gradeOk = r.status === 'judged' ? Number.isInteger(r.grade) && (r.grade as number) >= 0 && (r.grade as number) <= 3 : r.grade === null;
    if (typeof r.queryId !== 'string' || typeof r.docId !== 'string' || typeof r.stratum !== 'string' || !statuses.has(r.status) || !gradeOk) {
      throw new InputError(file, i + 1, 'not a judgment record (queryId, docId, stratum, status, grade 0-3 when judged else null)');
    }
    records.push(r);
  });
  return { dir, manifest, records };
}
