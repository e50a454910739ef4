import { describe, expect, it } from 'vitest';
import { erfc, logGamma, normalCdf, normalQuantile, normalSf, regularizedBeta, studentTQuantile, studentTSf, studentTTwoSided } from './special.js';

const close = (actual: number, expected: number, rel = 1e-12): void => {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(rel * Math.abs(expected));
};

describe('special functions against closed forms', () => {
  it('logGamma matches factorials and Γ(1/2) = √π', () => {
    expect(Math.abs(logGamma(1))).toBeLessThan(1e-15);
    expect(Math.abs(logGamma(2))).toBeLessThan(1e-15);
    close(logGamma(6), Math.log(120)); // Γ(6) = 5!
    close(logGamma(0.5), 0.5 * Math.log(Math.PI));
    close(
      logGamma(101),
      [...Array(100).keys()].reduce((s, k) => s + Math.log(k + 1), 0),
      1e-13,
    ); // ln 100!
  });

  it('regularizedBeta matches I_x(1, 1) = x and I_x(a, 1) = x^a', () => {
    close(regularizedBeta(0.3, 1, 1), 0.3);
    close(regularizedBeta(0.7, 3, 1), 0.7 ** 3);
    close(regularizedBeta(0.2, 1, 4), 1 - 0.8 ** 4); // I_x(1, b) = 1 − (1 − x)^b
  });

  it('Student t with 1 df is Cauchy: P(T > t) = 1/2 − atan(t)/π, quantile tan(π(p − 1/2))', () => {
    for (const t of [0.1, 1, 3.5, 40]) close(studentTSf(t, 1), 0.5 - Math.atan(t) / Math.PI);
    for (const p of [0.6, 0.8, 0.975, 0.999]) close(studentTQuantile(p, 1), Math.tan(Math.PI * (p - 0.5)));
    close(studentTQuantile(0.025, 1), -Math.tan(Math.PI * 0.475));
  });

  it('Student t with 2 df: two-sided p = 1 − |t|/√(t² + 2), quantile (2p − 1)/√(2p(1 − p))', () => {
    for (const t of [0.5, 2, 3.4641016151377544, 25]) close(studentTTwoSided(t, 2), 1 - t / Math.sqrt(t * t + 2), 1e-11);
    for (const p of [0.8, 0.975, 0.9995]) close(studentTQuantile(p, 2), (2 * p - 1) / Math.sqrt(2 * p * (1 - p)));
  });

  it('normal distribution: symmetric values, erfc tails, quantile round trip', () => {
    expect(normalCdf(0)).toBe(0.5);
    close(normalCdf(1.3) + normalCdf(-1.3), 1, 1e-15);
    close(erfc(0), 1);
    close(normalSf(3) + normalCdf(3), 1, 1e-15);
    // Mills-ratio bounds: φ(z)/z · (1 − 1/z²) < 1 − Φ(z) < φ(z)/z; at z = 30 they pin the tail to 0.1%.
    const z = 30;
    const phi = Math.exp((-z * z) / 2) / Math.sqrt(2 * Math.PI);
    expect(normalSf(z)).toBeLessThan(phi / z);
    expect(normalSf(z)).toBeGreaterThan((phi / z) * (1 - 1 / (z * z)));
    for (const p of [1e-12, 0.001, 0.025, 0.3, 0.5, 0.9, 0.975, 1 - 1e-9]) {
      const x = normalQuantile(p);
      close(p < 0.5 ? normalCdf(x) : 1 - normalSf(x), p, 1e-13);
    }
    expect(normalQuantile(0)).toBe(-Infinity);
    expect(normalQuantile(1)).toBe(Infinity);
  });
});
