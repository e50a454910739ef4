import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { commands } from './commands.js';
import { splitMeasureList } from './compare.command.js';
import { tempDir } from '../testing/temp.js';

const dir = tempDir('harness-cli');

function file(name: string, text: string | Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** Runs the CLI in `dir`; `err` is everything written to stderr (progress, notes, the error report). */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await runCaptured(args, dir);
  return { code: r.code, out: r.out, err: [...r.log, r.stderr].join('\n') };
}

const pkgVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('harness: global options and exit codes', () => {
  it('--version prints the package version and exits 0', async () => {
    expect(await cli(['--version'])).toMatchObject({ code: 0, out: `${pkgVersion}\n` });
  });
  it('-h and --help print help on stdout and exit 0, for the CLI and for a command', async () => {
    for (const args of [['-h'], ['--help'], ['compare', '-h'], ['cache', '--help'], ['eval', '-h']]) {
      const r = await cli(args);
      expect([args, r.code]).toEqual([args, 0]);
      expect(r.out).toMatch(/^harness /);
    }
    expect((await cli(['--help'])).out).toMatch(
      /Exit codes: 0 success; 1 runtime or verification failure; 2 bad input, usage or config .*; 3 gate REJECT with --gate-exit/s,
    );
  });
  it('accepts --verbose on every command and prints the stack trace on failure', async () => {
    const quiet = await cli(['eval', 'missing.qrels', 'missing.run']);
    expect(quiet.code).toBe(2);
    expect(quiet.err).not.toMatch(/\n\s+at /);
    const verbose = await cli(['eval', '--verbose', 'missing.qrels', 'missing.run']);
    expect(verbose.code).toBe(2);
    expect(verbose.err).toMatch(/missing\.qrels: file not found/);
    expect(verbose.err).toMatch(/InputError: .*\n\s+at /);
    for (const verb of ['compare', 'arms', 'measures', 'report', 'cache', 'adr', 'ablate', 'datasets', 'evalset']) {
      expect((await cli([verb, '--help', '--verbose'])).code).toBe(0);
    }
    expect((await cli(['arms', '--verbose'])).code).toBe(0);
  });
  it('exits 2 for an unknown command or option', async () => {
    expect((await cli(['nope'])).code).toBe(2);
    expect((await cli(['arms', '--nope'])).code).toBe(2);
  });
  it('eval -v prints the version, exit 0', async () => {
    const r = await cli(['eval', '-v']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(pkgVersion);
  });
});

describe('help and README agree with the commands', () => {
  it('lists every command in `harness --help` and in the README command table', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const help = (await cli(['--help'])).out;
    for (const spec of commands) {
      const verb = spec.command.split(' ')[0]!;
      expect(help, verb).toMatch(new RegExp(`harness ${verb}\\b`));
      expect(readme, verb).toMatch(new RegExp(`^\\| \`harness ${verb}\\b`, 'm'));
    }
  });
});

describe('harness measures', () => {
  it('lists every measure with its aliases and trec_eval spelling, and the presets', async () => {
    const r = await cli(['measures']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^nDCG \| nDCG@10/m);
    expect(r.out).toMatch(/trec_eval \(harness eval\): nDCG: -m ndcg; nDCG@10: -m ndcg_cut\.10/);
    expect(r.out).toMatch(/Judged@10: none/);
    expect(r.out).toMatch(/also accepted: .*mrr/);
    expect(r.out).toMatch(/longmemeval: Success@5/);
    const json = JSON.parse((await cli(['measures', '--format', 'json'])).out) as { measures: { name: string; aliases: string[] }[] };
    expect(json.measures.find((m) => m.name === 'AP')?.aliases).toContain('map');
  });
});

// Twelve queries, one relevant document each. Run good ranks it first (RR 1); run bad ranks it second
// (RR 1/2) for every query: a loss of 1/2 on all 12, which the exact sign-flip test finds at p = 2 / 2^12.
const QIDS = Array.from({ length: 12 }, (_, i) => `q${String(i + 1).padStart(2, '0')}`);
const QRELS = QIDS.map((q) => `${q} 0 rel-${q} 1\n`).join('');
const GOOD = QIDS.map((q) => `${q} Q0 rel-${q} 1 2 good\n${q} Q0 other 2 1 good\n`).join('');
const BAD = QIDS.map((q) => `${q} Q0 other 1 2 bad\n${q} Q0 rel-${q} 2 1 bad\n`).join('');

describe('harness compare', () => {
  file('c.qrels', QRELS);
  file('good.trec', GOOD);
  file('bad.trec', BAD);
  const base = ['compare', 'good.trec', 'bad.trec', '--qrels', 'c.qrels'];

  it('takes options before the run files without swallowing them', async () => {
    const r = await cli(['compare', '--measures', 'RR', '--qrels', 'c.qrels', 'good.trec', 'bad.trec']);
    expect(r.err).not.toMatch(/harness:/);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/RR/);
  });
  it('reads --measures as a comma list or repeated, and explains the old space-separated form', async () => {
    expect(splitMeasureList(['nDCG@10,P(rel=2)@5', 'nDCG(gains={1:1,2:3}),RR'])).toEqual(['nDCG@10', 'P(rel=2)@5', 'nDCG(gains={1:1,2:3})', 'RR']);
    expect((await cli([...base, '--measures', 'RR,P@1', '--measures', 'AP'])).code).toBe(0);
    const old = await cli([...base, '--measures', 'RR', 'P@1']);
    expect(old.code).toBe(2);
    expect(old.err).toMatch(/"P@1" is not a run file; it reads as a measure/);
  });
  it("accepts other tools' measure names and reports them canonically", async () => {
    const r = await cli([...base, '--measures', 'MRR,NDCG@10,Recall@100,P_1', '--out', 'aliases']);
    expect(r.code).toBe(0);
    const data = JSON.parse(readFileSync(join(dir, 'aliases', 'report.json'), 'utf8')) as { measures: string[] };
    expect(data.measures).toEqual(['RR', 'nDCG@10', 'R@100', 'P@1']);
  });
  it('--gate decides, and --gate-exit turns REJECT into exit 3 after writing the report', async () => {
    const gate = ['--measures', 'RR', '--gate', 'bad', '--gate-measure', 'MRR', '--out', 'gated'];
    const plain = await cli([...base, ...gate]);
    expect(plain.code).toBe(0);
    expect(plain.out).toMatch(/gate REJECT/);
    const ci = await cli([...base, ...gate, '--gate-exit']);
    expect(ci.code).toBe(3);
    expect(ci.err).toMatch(/harness: gate REJECT: /);
    const data = JSON.parse(readFileSync(join(dir, 'gated', 'report.json'), 'utf8')) as { gateResult: { verdict: string; config: { measure: string } } };
    expect(data.gateResult.verdict).toBe('REJECT');
    expect(data.gateResult.config.measure).toBe('RR');
    // The other way round the candidate gains: ADOPT, exit 0 even under --gate-exit.
    const adopt = await cli(['compare', 'bad.trec', 'good.trec', '--qrels', 'c.qrels', '--measures', 'RR', '--gate', 'good', '--gate-exit']);
    expect(adopt.code).toBe(0);
    expect(adopt.out).toMatch(/ADOPT/);
  });
  it('refuses gate flags that cannot work, naming them', async () => {
    expect((await cli([...base, '--gate-exit'])).err).toMatch(/--gate-exit need --gate CANDIDATE/);
    expect((await cli([...base, '--gate', 'nope'])).err).toMatch(/--gate nope: not a run id \(runs: good, bad\)/);
    expect((await cli([...base, '--gate', 'bad', '--gate-measure', 'AP'])).err).toMatch(/--gate-measure AP: not among the measures/);
    expect((await cli([...base, '--gate', 'bad', '--gate-measure', 'AP'])).code).toBe(2);
    const noMargin = await cli([...base, '--gate', 'bad', '--gate-rule', 'equivalent']);
    expect([noMargin.code, noMargin.err]).toEqual([2, expect.stringMatching(/--gate-rule equivalent needs --gate-margin above 0/)]);
    expect((await cli([...base, '--gate', 'bad', '--gate-margin', '0.1'])).err).toMatch(/--gate-margin is read only by --gate-rule equivalent/);
  });
  it('--gate-rule equivalent with --gate-margin decides on equivalence within the margin', async () => {
    // bad loses RR on every query by far more than 0.01: not equivalent, a loss beyond the margin.
    const r = await cli([...base, '--measures', 'RR', '--gate', 'bad', '--gate-rule', 'equivalent', '--gate-margin', '0.01', '--out', 'equiv']);
    expect(r.code).toBe(0);
    const data = JSON.parse(readFileSync(join(dir, 'equiv', 'report.json'), 'utf8')) as {
      gateResult: { verdict: string; config: { rule: string; margin: number } };
    };
    expect(data.gateResult.config).toMatchObject({ rule: 'equivalent', margin: 0.01 });
    expect(data.gateResult.verdict).not.toBe('ADOPT');
  });
  it('refuses an empty run as eval does, instead of scoring it 0', async () => {
    file('empty.trec', '');
    const r = await cli([...base, 'empty.trec']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/empty\.trec: the run has no result lines/);
  });
  it('refuses qrels in which no document is relevant at the relevance level', async () => {
    file('zero.qrels', QIDS.map((q) => `${q} 0 rel-${q} 0\n`).join(''));
    const r = await cli(['compare', 'good.trec', 'bad.trec', '--qrels', 'zero.qrels', '--measures', 'RR,nDCG@10']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/relevance level 1 is above the highest grade in the qrels \(0\): no document is relevant, so RR would be 0/);
  });
  it('gives byte-identical runs identical scores when one starts with a byte-order mark, and notes it', async () => {
    file('good-bom.trec', `\uFEFF${GOOD}`);
    const r = await cli(['compare', 'good.trec', 'good-bom.trec', '--qrels', 'c.qrels', '--measures', 'AP', '--out', 'bom']);
    expect(r.code).toBe(0);
    const data = JSON.parse(readFileSync(join(dir, 'bom', 'report.json'), 'utf8')) as {
      perQuery: Record<string, Record<string, number[]>>;
      evalset: { notes: string[] };
    };
    expect(data.perQuery['good-bom']!['AP']).toEqual(data.perQuery['good']!['AP']);
    expect(data.evalset.notes).toContain('good-bom.trec: a UTF-8 byte-order mark at the start of the file was ignored');
  });
  it("reads gzip runs and BEIR's qrels TSV", async () => {
    file('bad.trec.gz', gzipSync(BAD));
    file('test.tsv', `query-id\tcorpus-id\tscore\n${QIDS.map((q) => `${q}\trel-${q}\t1\n`).join('')}`);
    const plainRun = await cli([...base, '--measures', 'RR', '--out', 'plain']);
    const other = await cli(['compare', 'good.trec', 'bad.trec.gz', '--qrels', 'test.tsv', '--measures', 'RR', '--out', 'gz']);
    expect([plainRun.code, other.code]).toEqual([0, 0]);
    const perQuery = (d: string) => (JSON.parse(readFileSync(join(dir, d, 'report.json'), 'utf8')) as { perQuery: unknown }).perQuery;
    expect(perQuery('gz')).toEqual(perQuery('plain'));
  });
  it('exits 2 when a run is a directory', async () => {
    mkdirSync(join(dir, 'a-folder'), { recursive: true });
    const r = await cli([...base, 'a-folder']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/a-folder: is a directory, not a TREC file/);
  });
});

describe('harness ablate --gate-exit', () => {
  // Twelve memories with one distinctive word each and one query per word. Arm exact (fake, signal 1) ranks
  // the matching memory first every time; arm noise (signal 0) ranks at random, so the gate on noise sees a
  // significant RR loss and says REJECT.
  const words = ['apple', 'banana', 'cherry', 'damson', 'elder', 'fig', 'grape', 'hazel', 'iris', 'juniper', 'kiwi', 'lime'];
  function setUp(gate: string): string {
    const es = join(dir, 'ablate-es');
    mkdirSync(es, { recursive: true });
    writeFileSync(join(es, 'corpus.jsonl'), `${words.map((w, i) => JSON.stringify({ id: `m${i}`, text: `note about ${w}` })).join('\n')}\n`);
    writeFileSync(
      join(es, 'queries.jsonl'),
      `${words.map((w, i) => JSON.stringify({ id: `q${i}`, text: w, stratum: 'exact', qrels: { [`m${i}`]: 1 } })).join('\n')}\n`,
    );
    const cfg = join(dir, 'gate.yaml');
    writeFileSync(
      cfg,
      `name: gate
evalset: { format: memory, path: ablate-es }
measures: [RR, nDCG@10]
topK: 12
output: ablate-out
cache: ablate-cache
arms:
  - { id: exact, kind: fake, params: { signal: 1 } }
  - { id: noise, kind: fake, params: { signal: 0, seed: 3 } }
compare: { permutations: 5000, resamples: 1000 }
${gate}
`,
    );
    return cfg;
  }
  it('exits 3 on a REJECT only when asked, after writing the report', async () => {
    const cfg = setUp('gate: { candidate: noise, measure: MRR }');
    const plain = await cli(['ablate', '--config', cfg]);
    expect(plain.code).toBe(0);
    const ci = await cli(['ablate', '--config', cfg, '--gate-exit']);
    expect(ci.code).toBe(3);
    expect(ci.err).toMatch(/harness: gate REJECT: /);
    expect(ci.out).toMatch(/report: ablate-out\/gate-[0-9a-f]{8}\/report\.md/);
  });
  it('exits 0 under --gate-exit when the verdict is not REJECT, and 2 when the config has no gate', async () => {
    expect((await cli(['ablate', '--config', setUp('gate: { candidate: exact, measure: RR, baseline: noise }'), '--gate-exit'])).code).toBe(0);
    const none = await cli(['ablate', '--config', setUp(''), '--gate-exit']);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/--gate-exit: .*gate\.yaml has no gate: block/);
  });
});
