import { describe, expect, it } from 'vitest';
import { Rng } from '../stats/rng.js';
import { fuse } from './fuse.js';
import type { FusionInput, FusionSpec } from './spec.js';
import { packArrays } from './run-form.js';
import { contributions, empiricalReach, reachOnRuns, structuralReach } from './reach.js';
import { inputsOf, listOf, packAll, runOf } from './testing.js';

const rrf = (over: Partial<FusionSpec> = {}): FusionSpec => ({ method: 'rrf', rrfK: 60, normalization: 'none', absent: 'zero', topK: 100, ...over });

describe('contributions', () => {
  it('share and solo share of the fused top-cutoff, pooled over queries; unread inputs contribute nothing', () => {
    // in0: q1 a b c, q2 e.  in1: q1 b d.  in2 (weight 0): q1 a.
    // Fused rrf q1: b = 1/62 + 1/61, a = 1/61, d = 1/62, c = 1/63 -> top 2: b, a.  q2: e.  3 entries in all.
    const { packed } = packAll(['q1', 'q2'], runOf({ q1: { a: 3, b: 2, c: 1 }, q2: { e: 1 } }), runOf({ q1: { b: 5, d: 4 } }), runOf({ q1: { a: 1 } }));
    const inputs = inputsOf(packed, [{}, {}, { weight: 0 }]);
    const fused = fuse(inputs, rrf());
    expect(contributions(fused, inputs, 2)).toEqual([
      { share: 3 / 3, soloShare: 2 / 3 }, // b, a, e; a and e only in in0 (in2 is not read)
      { share: 1 / 3, soloShare: 0 / 3 }, // b, also in in0
      { share: 0, soloShare: 0 },
    ]);
  });

  it('is NaN when the fused run has no entries', () => {
    const { packed } = packAll(['q1'], runOf({}));
    const inputs = inputsOf(packed);
    expect(contributions(fuse(inputs, rrf()), inputs, 10)[0]!.share).toBeNaN();
  });
});

describe('structuralReach', () => {
  const three = (w0: number, depth = 100) => [
    { weight: w0, depth },
    { weight: 1, depth },
    { weight: 1, depth },
  ];

  it('flags weighted RRF where 0.3 / (60 + 1) loses to 1 / (60 + r) for r <= 143: the acceptance case', () => {
    const [r0, r1, r2] = structuralReach(three(0.3), rrf(), 10, ['bm25', 'dense', 'graph']);
    expect(r0!.reachable).toBe(false);
    expect(r0!.reason).toContain("raise bm25's weight from 0.3 to at least 0.8714"); // 1 * (60 + 1) / (60 + 10)
    // Lower rrfK also frees it: 1 / (K + 10) <= 0.3 / (K + 1) for K <= (0.3 * 10 - 1) / (1 - 0.3) = 2.857.
    expect(r0!.reason).toContain('lower rrfK from 60 to 2.85 or less');
    expect(r1!.reachable).toBe(true);
    expect(r2!.reachable).toBe(true);
  });

  it('does not flag the same fusion with the weight fixed, nor at the exact boundary weight', () => {
    expect(structuralReach(three(1), rrf(), 10).every((r) => r.reachable)).toBe(true);
    // At w = 61/70 the solo document ties the others' 10th document, and may win the tie: reachable.
    expect(structuralReach(three(61 / 70), rrf(), 10)[0]!.reachable).toBe(true);
    expect(structuralReach(three(0.87), rrf(), 10)[0]!.reachable).toBe(false);
  });

  it('is not fooled by shallow competitors: depth 5 elsewhere cannot guarantee 10 documents above', () => {
    expect(structuralReach([{ weight: 0.3, depth: 100 }, ...three(1, 5).slice(1)], rrf(), 10)[0]!.reachable).toBe(true);
  });

  it('weight 0 and depth 0 bar an input, naming the parameter', () => {
    const [w, d] = structuralReach(
      [
        { weight: 0, depth: 10 },
        { weight: 1, depth: 0 },
        { weight: 1, depth: 10 },
      ],
      rrf(),
      10,
    );
    expect(w).toEqual({ reachable: false, reason: expect.stringContaining('weight 0') });
    expect(d).toEqual({ reachable: false, reason: expect.stringContaining('depth 0') });
  });

  it('score-based: min-max bars only at cutoff 1 against a heavier input; tm2c2, z-score, dbsf and none never provably bar', () => {
    const ins = [
      { weight: 1, depth: 50, theoreticalMin: 0 },
      { weight: 2, depth: 50, theoreticalMin: -1 },
    ];
    const cs = (normalization: FusionSpec['normalization']): FusionSpec => ({ method: 'combsum', rrfK: 60, normalization, absent: 'zero', topK: 100 });
    expect(structuralReach(ins, cs('min-max'), 1)[0]!.reachable).toBe(false);
    expect(structuralReach(ins, cs('min-max'), 1)[0]!.reason).toContain('to at least 2');
    expect(structuralReach(ins, cs('min-max'), 2)[0]!.reachable).toBe(true);
    for (const n of ['tm2c2', 'z-score', 'dbsf', 'none'] as const) expect(structuralReach(ins, cs(n), 1)[0]!.reachable).toBe(true);
  });

  it('is sound: whenever it says barred, no input-alone top document ever enters on random runs', () => {
    const rng = new Rng(11);
    const nq = 30;
    const queries = Array.from({ length: nq }, (_, q) => `q${q}`);
    const runs = Array.from({ length: 3 }, () => {
      const offsets = Int32Array.from({ length: nq + 1 }, (_, q) => q * 40);
      const docs = new Int32Array(nq * 40);
      const scores = new Float64Array(nq * 40);
      for (let q = 0; q < nq; q++) {
        const chosen = new Set<number>();
        while (chosen.size < 40) chosen.add(rng.nextInt(120));
        [...chosen].forEach((d, r) => {
          docs[q * 40 + r] = d;
          scores[q * 40 + r] = rng.nextFloat();
        });
      }
      return packArrays(queries, offsets, docs, scores);
    });
    let barred = 0;
    for (let t = 0; t < 60; t++) {
      const inputs: FusionInput[] = runs.map((run) => ({ run, weight: 0.05 + rng.nextFloat(), depth: 5 + rng.nextInt(36), theoreticalMin: 0 }));
      const s = rrf({ rrfK: rng.nextInt(100), absent: rng.nextInt(2) === 0 ? 'zero' : 'min' });
      const cutoff = 1 + rng.nextInt(10);
      const structural = structuralReach(inputs, s, cutoff);
      const empirical = empiricalReach(inputs, s, cutoff);
      structural.forEach((r, i) => {
        if (!r.reachable) {
          barred++;
          expect(empirical[i]).toBe(0);
        }
      });
    }
    expect(barred).toBeGreaterThan(0);
  });

  it('dbsf bounds are sound too: barred inputs never place a document alone on random runs', () => {
    const rng = new Rng(12);
    const nq = 30;
    const queries = Array.from({ length: nq }, (_, q) => `q${q}`);
    const runs = Array.from({ length: 3 }, () => {
      const offsets = Int32Array.from({ length: nq + 1 }, (_, q) => q * 40);
      const docs = new Int32Array(nq * 40);
      const scores = new Float64Array(nq * 40);
      for (let q = 0; q < nq; q++) {
        const chosen = new Set<number>();
        while (chosen.size < 40) chosen.add(rng.nextInt(120));
        // Sorted descending, a heavy top: the outlier shape where dbsf's Samuelson bound is nearly reached.
        const vals = Array.from({ length: 40 }, (_, r) => (r === 0 ? 10 * rng.nextFloat() : rng.nextFloat())).sort((a, b) => b - a);
        [...chosen].forEach((d, r) => {
          docs[q * 40 + r] = d;
          scores[q * 40 + r] = vals[r]!;
        });
      }
      return packArrays(queries, offsets, docs, scores);
    });
    let barred = 0;
    for (let t = 0; t < 60; t++) {
      const inputs: FusionInput[] = runs.map((run, i) => ({
        run,
        weight: i === 0 ? 0.02 + 0.3 * rng.nextFloat() : 0.5 + rng.nextFloat(),
        depth: 5 + rng.nextInt(36),
      }));
      const s: FusionSpec = {
        method: rng.nextInt(2) === 0 ? 'combsum' : 'cc',
        rrfK: 60,
        normalization: 'dbsf',
        absent: rng.nextInt(2) === 0 ? 'zero' : 'min',
        topK: 100,
      };
      const cutoff = 1 + rng.nextInt(10);
      const structural = structuralReach(inputs, s, cutoff);
      const empirical = empiricalReach(inputs, s, cutoff);
      structural.forEach((r, i) => {
        if (!r.reachable) {
          barred++;
          expect(empirical[i]).toBe(0);
        }
      });
    }
    expect(barred).toBeGreaterThan(0);
  });
});

describe('empiricalReach', () => {
  it('counts the queries where the input-alone top document would enter the top-cutoff', () => {
    // in0: q1 a b, q2 d.  in1: q1 c a.  Fused q1: a = 1/61 + 1/62, c = 1/61, b = 1/62.
    // in0's top a alone scores 1/61: c ties it and wins (c > a), so a is 2nd in q1; d alone wins q2.
    // in1's top c scores 1/61: a is above it, so c is 2nd in q1; in1 returns nothing for q2.
    const { packed } = packAll(['q1', 'q2'], runOf({ q1: { a: 2, b: 1 }, q2: { d: 1 } }), runOf({ q1: { c: 2, a: 1 } }));
    const inputs = inputsOf(packed);
    expect(empiricalReach(inputs, rrf(), 1)).toEqual([1 / 2, 0 / 2]);
    expect(empiricalReach(inputs, rrf(), 2)).toEqual([2 / 2, 1 / 2]);
    expect(empiricalReach(inputsOf(packed, [{}, { weight: 0 }]), rrf(), 1)).toEqual([2 / 2, 0]);
  });
});

describe('reachOnRuns', () => {
  // The issue-28 case: weighted RRF, fts5 at weight 0.3 beside bm25 at 1, rrfK 60. The data-free bound bars
  // fts5 (0.3/61 < 1/70), but bm25 returns fewer than 10 documents for some queries, and there the document
  // fts5 alone ranks first does enter the fused top 10: at rank 8 behind bm25's 7, at rank 1 where bm25 has none.
  const bm25Lengths = [12, 7, 0, 9, 15, 10, 11, 3, 20, 10, 12, 14];
  const queries = bm25Lengths.map((_, q) => `q${q}`);
  const bm25 = runOf(
    Object.fromEntries(queries.map((q, k) => [q, Object.fromEntries(Array.from({ length: bm25Lengths[k]! }, (_, r) => [`b${k}-${r}`, 100 - r]))])),
  );
  // fts5: first a document bm25 never returns, then a few of bm25's, then more of its own.
  const fts5 = runOf(
    Object.fromEntries(
      queries.map((q, k) => [
        q,
        Object.fromEntries([`f${k}-solo`, `b${k}-0`, `b${k}-1`, ...Array.from({ length: 10 }, (_, r) => `f${k}-${r}`)].map((d, r) => [d, 50 - r])),
      ]),
    ),
  );
  const { table, packed } = packAll(queries, bm25, fts5);
  const spec = rrf();
  const inputs = inputsOf(packed, [
    { weight: 1, depth: 100 },
    { weight: 0.3, depth: 100 },
  ]);

  it('says fts5 can reach the top 10 where bm25 returns fewer than 10, and agrees with the fused run in every query', () => {
    expect(structuralReach(inputs, spec, 10, ['bm25', 'fts5'])[1]!.reachable).toBe(false);
    const [, reach] = reachOnRuns(inputs, spec, 10, ['bm25', 'fts5']);
    expect(reach!.reachable).toBe(true);
    expect(reach!.reason).not.toContain('can never');
    expect(reach!.reason).toContain('barred in 8 of the 12 queries');
    expect([reach!.barred, reach!.queries]).toEqual([8, 12]);
    const fused = fuse(inputs, spec);
    const rankOfSolo = queries.map((q, k) => listOf(fused, table, q).findIndex(([d]) => d === `f${k}-solo`) + 1);
    // Where bm25 returned n < 10 documents the solo document is 1 + n-th; elsewhere it is below the top 10.
    expect(rankOfSolo).toEqual(bm25Lengths.map((n) => (n < 10 ? n + 1 : expect.toSatisfy((r: number) => r > 10))));
    const entered = rankOfSolo.filter((r) => r >= 1 && r <= 10).length;
    expect(entered).toBe(reach!.queries - reach!.barred);
    expect(empiricalReach(inputs, spec, 10)[1]).toBe(entered / queries.length);
  });

  it('keeps "can never" where every query gives bm25 10 documents or more, and the fused run never shows one', () => {
    const full = queries.filter((_, k) => bm25Lengths[k]! >= 10);
    const only = (run: typeof bm25) => new Map([...run].filter(([q]) => full.includes(q)));
    const p = packAll(full, only(bm25), only(fts5));
    const ins = inputsOf(p.packed, [
      { weight: 1, depth: 100 },
      { weight: 0.3, depth: 100 },
    ]);
    const [, reach] = reachOnRuns(ins, spec, 10, ['bm25', 'fts5']);
    expect(reach).toEqual({ reachable: false, reason: expect.stringContaining('fts5 can never place'), barred: full.length, queries: full.length });
    const fused = fuse(ins, spec);
    for (const q of full)
      expect(
        listOf(fused, p.table, q)
          .slice(0, 10)
          .some(([d]) => d.endsWith('-solo')),
      ).toBe(false);
  });

  it('is sound on random runs of every length: barred queries never show the input-alone top document entering', () => {
    const rng = new Rng(28);
    const nq = 25;
    const qs = Array.from({ length: nq }, (_, q) => `q${q}`);
    // Each input's first document is its own (the bound speaks of a document only that input returns); the
    // rest are drawn from one shared pool, and a quarter of the lists are shorter than 12.
    const runs = Array.from({ length: 3 }, (_, k) => {
      const lengths = Array.from({ length: nq }, () => (rng.nextInt(4) === 0 ? rng.nextInt(12) : 10 + rng.nextInt(30)));
      const offsets = Int32Array.from({ length: nq + 1 }, (_, q) => lengths.slice(0, q).reduce((a, b) => a + b, 0));
      const docs = new Int32Array(offsets[nq]!);
      const scores = new Float64Array(offsets[nq]!);
      for (let q = 0; q < nq; q++) {
        const chosen = new Set<number>([100 + k]);
        while (chosen.size < lengths[q]!) chosen.add(rng.nextInt(100));
        [...chosen].slice(0, lengths[q]).forEach((d, r) => {
          docs[offsets[q]! + r] = d;
          scores[offsets[q]! + r] = 1 - r / 100;
        });
      }
      return packArrays(qs, offsets, docs, scores);
    });
    let partly = 0;
    for (let t = 0; t < 80; t++) {
      const ins: FusionInput[] = runs.map((run) => ({ run, weight: 0.05 + rng.nextFloat(), depth: 5 + rng.nextInt(36), theoreticalMin: 0 }));
      const s = rrf({ rrfK: rng.nextInt(100), absent: rng.nextInt(2) === 0 ? 'zero' : 'min' });
      const cutoff = 1 + rng.nextInt(10);
      const empirical = empiricalReach(ins, s, cutoff);
      reachOnRuns(ins, s, cutoff).forEach((r, i) => {
        // Each barred query is one in which the input-alone top document does not enter.
        expect(Math.round(empirical[i]! * nq)).toBeLessThanOrEqual(r.queries - r.barred);
        if (!r.reachable) expect(empirical[i]).toBe(0);
        if (r.barred > 0 && r.barred < r.queries) partly++;
      });
    }
    expect(partly).toBeGreaterThan(0);
  });
});
