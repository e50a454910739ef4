import { describe, expect, it } from 'vitest';
import { FusionParamsError } from './errors.js';
import { fuseParamsSchema, resolveFuseParams } from './params.js';

const issues = (raw: unknown): string[] => {
  const r = fuseParamsSchema.safeParse(raw);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('fuseParamsSchema', () => {
  it('fills defaults per method', () => {
    expect(fuseParamsSchema.parse({ method: 'rrf' })).toEqual({ method: 'rrf', rrfK: 60, absent: 'zero' });
    expect(fuseParamsSchema.parse({ method: 'cc', alpha: 0.3 })).toEqual({ method: 'cc', alpha: 0.3, normalization: 'min-max', absent: 'zero' });
  });

  it('rejects keys that do not apply, unknown keys and out-of-range values', () => {
    expect(issues({ method: 'rrf', normalization: 'min-max' })).toEqual([expect.stringMatching(/^normalization: rrf uses ranks/)]);
    expect(issues({ method: 'cc', rrfK: 10 })).toEqual([expect.stringMatching(/^rrfK: rrfK applies to rrf only/)]);
    expect(issues({ method: 'rrf', alpha: 0.5 })).toEqual([expect.stringMatching(/^alpha: alpha applies to cc only/)]);
    expect(issues({ method: 'cc', alpha: 0.5, weights: { a: 1 } })).toEqual([expect.stringMatching(/^alpha: give either alpha or weights/)]);
    expect(issues({ method: 'rrf', k: 60 })).toHaveLength(1);
    expect(issues({ method: 'rrf', depth: 0 })).toHaveLength(1);
    expect(issues({ method: 'rrf', weights: { a: -1 } })).toHaveLength(1);
    expect(issues({ method: 'cc', alpha: 1.5 })).toHaveLength(1);
    expect(issues({ method: 'borda' })).toHaveLength(1);
  });
});

describe('resolveFuseParams', () => {
  it('aligns weights with the input ids (default 1), alpha as alpha and 1 - alpha, depth Infinity by default', () => {
    const r = resolveFuseParams(fuseParamsSchema.parse({ method: 'rrf', weights: { dense: 0.5 }, depth: 100 }), ['bm25', 'dense']);
    expect(r).toEqual({ spec: { method: 'rrf', rrfK: 60, normalization: 'none', absent: 'zero' }, weights: [1, 0.5], depth: 100 });
    const cc = resolveFuseParams(fuseParamsSchema.parse({ method: 'cc', alpha: 0.25, normalization: 'tm2c2', priors: { importance: { weight: 0.2 } } }), [
      'a',
      'b',
    ]);
    expect(cc.weights).toEqual([0.25, 1 - 0.25]);
    expect(cc.depth).toBe(Infinity);
    expect(cc.spec.normalization).toBe('tm2c2');
    expect(cc.priors).toEqual({ importance: { weight: 0.2 } });
  });

  it('lists every problem as path: message, with a did-you-mean for an unknown input', () => {
    let err: unknown;
    try {
      resolveFuseParams(fuseParamsSchema.parse({ method: 'cc', weights: { densse: 1, bm25: 0 } }), ['bm25', 'dense', 'dense']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FusionParamsError);
    expect((err as FusionParamsError).exitCode).toBe(2);
    expect((err as FusionParamsError).problems).toEqual([
      'inputs: "dense" is listed twice',
      'weights.densse: "densse" is not an input of this fusion; did you mean "dense"? (inputs: bm25, dense, dense)',
    ]);
    expect(() => resolveFuseParams(fuseParamsSchema.parse({ method: 'cc', alpha: 0.5 }), ['a', 'b', 'c'])).toThrow(/alpha weighs exactly two inputs/);
    expect(() => resolveFuseParams(fuseParamsSchema.parse({ method: 'rrf', weights: { a: 0, b: 0 } }), ['a', 'b'])).toThrow(/every input has weight 0/);
  });
});
