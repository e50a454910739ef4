import type { DeclaredFamily, StratumSize } from '../compare/families.js';
import type { Plan, PlanStratum } from '../compare/power-plan.js';
import type { ResolvedConfig } from '../config/load.js';
import type { ReportData } from '../decision/types.js';
import { defineCommand } from './io.js';

/** What a Power plan is about: the measure and pair, and the family whose correction it plans for. */
interface Subject {
  readonly measure: string | undefined;
  readonly pair: { readonly baseline: string; readonly system: string } | undefined;
  readonly strata: PlanStratum[];
  readonly familySize: number;
  readonly correction: 'holm' | 'bonferroni' | 'hommel' | 'bh' | 'by' | 'none';
  /** Where m came from, in words. */
  readonly familyNote: string;
}

/** `--sd 0.2` (the overall row) and `--sd exact=0.15` (a stratum), repeatable. */
export function parseSds(values: readonly string[]): PlanStratum[] {
  return values.map((v) => {
    const m = /^(?:([^=]+)=)?([0-9]*\.?[0-9]+(?:e-?[0-9]+)?)$/i.exec(v.trim());
    const sd = Number(m?.[2]);
    if (!m || !(sd >= 0) || !Number.isFinite(sd)) throw new Error(`--sd ${v}: give a standard deviation >= 0, e.g. 0.2, or stratum=sd, e.g. exact=0.15`);
    return { id: m[1] ?? 'all', sd };
  });
}

/** The overall row after the strata, as reports order them. */
function overallLast(strata: PlanStratum[]): PlanStratum[] {
  return [...strata.filter((s) => s.id !== 'all'), ...strata.filter((s) => s.id === 'all')];
}

/** Sample standard deviation of `system − baseline` on `measure` over each stratum's queries of a pilot report. */
export async function pilotStrata(data: ReportData, measure: string, pair: { baseline: string; system: string }): Promise<PlanStratum[]> {
  const { stratumIndices } = await import('../decision/build.js');
  const base = data.perQuery[pair.baseline]?.[measure];
  const sys = data.perQuery[pair.system]?.[measure];
  if (!base || !sys) throw new (await import('../errors.js')).UsageError(`the pilot holds no per-query ${measure} for ${pair.baseline} and ${pair.system}`);
  return stratumIndices(data.queries).map((s) => {
    const d = s.indices.map((i) => (sys[i] as number) - (base[i] as number));
    const mean = d.reduce((a, b) => a + b, 0) / d.length;
    const sd = d.length < 2 ? Number.NaN : Math.sqrt(d.reduce((a, x) => a + (x - mean) ** 2, 0) / (d.length - 1));
    return { id: s.id, sd, n: d.length };
  });
}

/** The family a config declares for the plan's rows: the gate's, or the exploratory one of the measure. */
function familyFromConfig(families: readonly DeclaredFamily[], id: string): DeclaredFamily | undefined {
  return families.find((f) => f.id === id);
}

/** m and the correction from the config's declared families, for strata `sizes`. */
export async function configFamily(
  cfg: ResolvedConfig,
  sizes: readonly StratumSize[],
  measure: string,
  role: 'gate' | 'exploratory',
): Promise<Pick<Subject, 'familySize' | 'correction' | 'familyNote'>> {
  const { declaredFamilies } = await import('../compare/families.js');
  const { familyId } = await import('../compare/comparisons.js');
  const { reportedMeasures } = await import('../compare/measures.js');
  const testedMeasures = reportedMeasures(cfg.measures)
    .filter((m) => m.tested)
    .map((m) => m.spelling);
  const families = declaredFamilies({ runIds: cfg.runIds, strata: sizes, testedMeasures, cfg: cfg.compare, ...(cfg.gate ? { gate: cfg.gate } : {}) });
  const overall = sizes[sizes.length - 1]?.id ?? 'all';
  const id = role === 'gate' ? 'gate' : familyId(cfg.compare, overall, measure);
  const f = familyFromConfig(families, id);
  if (!f) {
    const { ConfigError } = await import('../errors.js');
    throw new ConfigError(cfg.file, [`--family ${role}: the config declares no ${role === 'gate' ? 'gate (add a gate: block)' : `exploratory family ${id}`}`]);
  }
  return { familySize: f.size, correction: f.correction, familyNote: `${f.id} family of ${f.size} tests declared by the config` };
}

/** m and the correction a pilot report (`file`) recorded for the rows' comparisons; a family it lacks is an input error. */
async function reportFamily(file: string, data: ReportData, measure: string, pair: { baseline: string; system: string }, role: 'gate' | 'exploratory') {
  const { InputError } = await import('../errors.js');
  if (role === 'gate' && data.gateResult === undefined) {
    throw new InputError(file, undefined, 'the pilot report has no gate, so there is no gate family to plan for (--family gate is the default)', {
      hint: 'add a gate: block (candidate, baseline, measure) to the pilot config and run it again, or plan with --family exploratory',
    });
  }
  const c = data.comparisons.find(
    (x) => x.measure === measure && x.baseline === pair.baseline && x.system === pair.system && (role === 'gate') === (x.role === 'confirmatory'),
  );
  const f = c ? data.families.find((x) => x.id === c.family) : undefined;
  if (!f) throw new InputError(file, undefined, `--family ${role}: the pilot report has no such family for ${pair.system} vs ${pair.baseline} on ${measure}`);
  return { familySize: f.size, correction: f.correction, familyNote: `${f.id} family of ${f.size} tests in the pilot report` };
}

/** The table people read: one row per stratum, the rule and its level above it. */
export function formatPlan(s: Subject, plan: Plan, opts: { delta: number; power: number; alpha: number; ppi?: { halfWidth: number; rho: number } }): string {
  const what = s.measure ? `${s.measure}${s.pair ? ` (${s.pair.system} vs ${s.pair.baseline})` : ''}` : 'the measure';
  const lines = [
    `Queries to detect a difference of ${opts.delta} in ${what} with power ${opts.power}:`,
    `  two-sided paired test at the first corrected threshold alpha/m = ${opts.alpha}/${s.familySize} = ${plan.threshold.toPrecision(4)} ` +
      `(${s.correction === 'none' ? 'no correction' : `${s.correction}; ${s.familyNote}`}),`,
    '  n = smallest n with (t_{1-a/2,n-1} + t_{power,n-1}) sd / sqrt(n) <= delta: the formula of the report MDE.',
  ];
  if (opts.ppi) {
    lines.push(
      `Human labels for a PPI++ interval of half-width ${opts.ppi.halfWidth} at the same level, judge-human correlation ${opts.ppi.rho}, ` +
        'over the larger of the stratum pilot and needed queries, at least 10 (the PPI gate floor, docs/adr/0038 and 0039).',
    );
  }
  const header = ['stratum', 'pilot n', 'sd of differences', 'queries needed', ...(opts.ppi ? ['human labels'] : [])];
  const rows = plan.rows.map((r) => [
    r.stratum,
    r.pilotN === null ? '-' : String(r.pilotN),
    r.sd.toFixed(4),
    String(r.queries),
    ...(opts.ppi ? [`${r.labels}${r.labelsExceedQueries ? ' (more than its queries: add queries)' : ''}`] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const fmt = (cells: readonly string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ')}`.trimEnd();
  return `${[...lines, '', fmt(header), ...rows.map(fmt)].join('\n')}\n`;
}

interface PowerArgs {
  readonly pilot?: string | undefined;
  readonly sd?: readonly string[] | undefined;
  readonly delta: number;
  readonly power?: number | undefined;
  readonly config?: string | undefined;
  readonly family: 'gate' | 'exploratory';
  readonly width?: number | undefined;
  readonly rho?: number | undefined;
  readonly json: boolean;
}

/** Every flag checked before anything is read, each failure naming its flag (exit 2). */
async function checkFlags(a: PowerArgs): Promise<void> {
  const { UsageError } = await import('../errors.js');
  if (!(a.delta > 0) || !Number.isFinite(a.delta)) throw new UsageError(`--delta ${a.delta}: give the difference to detect, a number above 0, e.g. 0.03`);
  if (a.power !== undefined && !(a.power > 0 && a.power < 1)) throw new UsageError(`--power ${a.power}: give a probability between 0 and 1, e.g. 0.8`);
  if (a.width !== undefined && !(a.width > 0 && Number.isFinite(a.width))) throw new UsageError(`--width ${a.width}: give a half-width above 0, e.g. 0.03`);
  if (a.rho !== undefined && !(a.rho >= -1 && a.rho <= 1)) throw new UsageError(`--rho ${a.rho}: a correlation lies in [-1, 1]`);
  if (a.width !== undefined && a.rho === undefined && a.pilot === undefined)
    throw new UsageError('--width needs --rho, the correlation of judge and human per-query deltas (or a --pilot scored with humanLabels:)');
  if (a.rho !== undefined && a.width === undefined) throw new UsageError('--rho is used only with --width, the PPI half-width to plan labels for');
  if ((a.pilot === undefined) === (a.sd === undefined)) throw new UsageError('give either --pilot REPORT.json or --sd (not both, not neither)');
}

/** The rows' measure, pair and strata from a pilot report: the gate's comparison, else the first compared pair. */
async function fromPilot(path: string, cwd: string) {
  const { basename, dirname, resolve } = await import('node:path');
  const { readReport } = await import('../report/write.js');
  const { primaryMeasure } = await import('../decision/select.js');
  const abs = resolve(cwd, path);
  const data = await readReport(basename(abs) === 'report.json' ? dirname(abs) : abs);
  const measure = primaryMeasure(data);
  const g = data.gateResult?.config;
  const first = data.comparisons.find((c) => c.measure === measure);
  const pair = g ? { baseline: g.baseline, system: g.candidate } : first ? { baseline: first.baseline, system: first.system } : undefined;
  if (!pair) throw new (await import('../errors.js')).InputError(abs, undefined, 'the pilot report compares no runs; rerun it with two or more arms');
  return { file: basename(abs) === 'report.json' ? abs : resolve(abs, 'report.json'), data, measure, pair, strata: await pilotStrata(data, measure, pair) };
}

/**
 * The correlation of the judge's and the humans' per-query deltas (pair.system − pair.baseline on `measure`) over
 * the pilot's human-labelled queries: what a PPI interval's width depends on. Undefined without human labels, with
 * fewer than 3 labelled queries, or when either delta is constant (no correlation is defined).
 */
async function labelledRho(data: ReportData, measure: string, pair: { readonly baseline: string; readonly system: string }): Promise<number | undefined> {
  const h = data.humanLabels;
  const [hs, hb] = [h?.perQuery[pair.system]?.[measure], h?.perQuery[pair.baseline]?.[measure]];
  const [js, jb] = [data.perQuery[pair.system]?.[measure], data.perQuery[pair.baseline]?.[measure]];
  if (!h || h.queries.length < 3 || !hs || !hb || !js || !jb) return undefined;
  const at = new Map(data.queries.map((q, i) => [q.id, i] as const));
  const human = h.queries.map((_, k) => (hs[k] as number) - (hb[k] as number));
  const judge = h.queries.map((q) => (js[at.get(q) as number] as number) - (jb[at.get(q) as number] as number));
  const r = (await import('../stats/power.js')).pearsonCorrelation(human, judge);
  return Number.isFinite(r) ? Math.max(-1, Math.min(1, r)) : undefined;
}

/** The strata (and their sizes) of the config's eval set, which its families are counted over. */
async function evalSetStrata(cfg: ResolvedConfig): Promise<StratumSize[]> {
  const { loadConfiguredEvalSet } = await import('../ablate/scopes.js');
  const { stratumIndices } = await import('../decision/build.js');
  const { memoryLogger } = await import('../log.js');
  const es = await loadConfiguredEvalSet(cfg, memoryLogger());
  return stratumIndices(es.queries.map((q) => ({ id: q.id, stratum: q.stratum, text: q.text }))).map((s) => ({ id: s.id, n: s.indices.length }));
}

/** `harness power`: reads the pilot or the given numbers, finds the family, prints the plan. */
export async function planPower(a: PowerArgs, cwd: string): Promise<string> {
  await checkFlags(a);
  const { UsageError } = await import('../errors.js');
  const { powerPlan } = await import('../compare/power-plan.js');
  const cfg = a.config === undefined ? undefined : (await import('../config/load.js')).loadConfig(a.config, { cwd });
  const pilot = a.pilot === undefined ? undefined : await fromPilot(a.pilot, cwd);
  let strata: PlanStratum[];
  try {
    strata = pilot ? pilot.strata.filter((s) => Number.isFinite(s.sd)) : overallLast(parseSds(a.sd ?? []));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const measure = pilot?.measure ?? cfg?.gate?.measure;
  const role = a.family;
  const sizes = pilot ? strata.map((s) => ({ id: s.id, n: s.n ?? 2 })) : cfg ? await evalSetStrata(cfg) : [];
  const family = cfg
    ? await configFamily(cfg, sizes, measure ?? (cfg.measures[0] as string), role)
    : pilot
      ? await reportFamily(pilot.file, pilot.data, pilot.measure, pilot.pair, role)
      : { familySize: 1, correction: 'none' as const, familyNote: 'one test: give --config for the family of the study' };
  const alpha = cfg?.compare.alpha ?? pilot?.data.compare.alpha ?? 0.05;
  const power = a.power ?? cfg?.compare.power ?? pilot?.data.compare.power ?? 0.8;
  const rho = a.width === undefined ? undefined : (a.rho ?? (pilot ? await labelledRho(pilot.data, pilot.measure, pilot.pair) : undefined));
  if (a.width !== undefined && rho === undefined)
    throw new UsageError(
      `--width: the pilot ${a.pilot} has no human labels to read the judge-human correlation from (score it with humanLabels:), so give --rho`,
    );
  const ppi = a.width !== undefined && rho !== undefined ? { halfWidth: a.width, rho } : undefined;
  const plan = powerPlan({ strata, delta: a.delta, power, alpha, ...family, ...(ppi ? { ppi } : {}) });
  const subject: Subject = { measure, pair: pilot?.pair, strata, ...family };
  if (a.json) {
    const json = { measure: measure ?? null, pair: subject.pair ?? null, delta: a.delta, power, alpha, ...family, ppi: ppi ?? null, ...plan };
    return `${JSON.stringify(json, null, 2)}\n`;
  }
  return formatPlan(subject, plan, { delta: a.delta, power, alpha, ...(ppi ? { ppi } : {}) });
}

export const powerCommand = defineCommand({
  command: 'power',
  describe: 'Plan a study before running it: queries per stratum to detect a difference, and human labels for a PPI interval',
  builder: (y) =>
    y
      .option('pilot', { type: 'string', describe: 'a pilot report.json (or its folder): per-stratum n and sd of the gate comparison' })
      .option('sd', { type: 'string', array: true, describe: 'sd of per-query differences: 0.2 (overall) or stratum=0.15; repeatable' })
      .option('delta', { type: 'number', demandOption: true, describe: 'smallest true difference to detect' })
      .option('power', { type: 'number', describe: "probability of detecting it (default the config's compare.power, else 0.8)" })
      .option('config', { type: 'string', describe: 'the study config: family size m, correction and alpha come from it' })
      .option('family', { choices: ['gate', 'exploratory'] as const, default: 'gate' as const, describe: 'the family whose correction to plan for' })
      .option('width', { type: 'number', describe: 'half-width wanted of the PPI interval (adds the human-labels column)' })
      .option('rho', { type: 'number', describe: 'correlation of judge and human per-query deltas (needed with --width)' })
      .option('json', { type: 'boolean', default: false, describe: 'print JSON for tools' })
      .example('$0 power --pilot reports/example-1a2b/report.json --delta 0.03', 'queries per stratum for the gate comparison')
      .example('$0 power --sd 0.2 --sd exact=0.15 --delta 0.03 --width 0.03 --rho 0.8', 'from given numbers, with human labels'),
  async run(args, io) {
    io.out(await planPower(args, io.cwd));
  },
});
