/**
 * C `printf` number formatting, exact to the byte, for trec_eval-compatible output.
 *
 * `%.Nf` in glibc rounds the *exact* binary value of the double to N decimals, resolving exact ties to even
 * (the default rounding mode). `Number.prototype.toFixed` also works on the exact value but resolves exact
 * ties upwards ("pick the larger n", ECMA-262 §21.1.3.3), so `(0.03125).toFixed(4)` is `"0.0313"` while
 * `printf("%6.4f", 0.03125)` prints `0.0312`. A double x is an exact tie at N decimals iff x·10^N = n + ½,
 * i.e. x = odd / (2^(N+1) · 5^N); since x is dyadic, 5^N must divide the odd numerator, so x·2^(N+1) is an
 * odd integer. That test is exact (scaling by a power of two never rounds), so only those values take the
 * even-rounding path and all others use toFixed, which is then exact.
 */

const PAD4 = Array.from({ length: 10000 }, (_, i) => String(i).padStart(4, '0'));

/** `%.{digits}f` exactly as glibc prints it (without width padding). */
export function formatFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return '-nan'; // x86 produces the sign-bit-set default NaN for 0/0, and glibc prints it so
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  const negative = x < 0 || Object.is(x, -0);
  const a = Math.abs(x);
  let body: string;
  if (digits === 4 && a < 1e6) {
    // Fast path for trec_eval's %6.4f: t = fl(a·10^4) is within 2^-18 of the exact product here, so unless
    // t sits near a half the exact value rounds the same way t does.
    const t = a * 10000;
    const f = Math.floor(t);
    const r = t - f;
    if (r < 0.4999 || r > 0.5001) {
      const n = r > 0.5 ? f + 1 : f;
      const ip = Math.floor(n / 10000);
      body = `${ip}.${PAD4[n - ip * 10000]}`;
      return negative ? `-${body}` : body;
    }
  }
  if (a >= 1e21) {
    // toFixed switches to exponent notation here; every double this large is an integer.
    body = `${BigInt(a).toString()}${digits > 0 ? `.${'0'.repeat(digits)}` : ''}`;
  } else {
    const y = a * 2 ** (digits + 1);
    if (Number.isInteger(y) && y % 2 === 1 && y < 2 ** 53) {
      body = tieToEven(a, digits);
    } else {
      body = a.toFixed(digits);
    }
  }
  return negative ? `-${body}` : body;
}

/** a = odd / 2^(digits+1) exactly: a·10^digits = k + ½ with k = (odd·5^digits − 1) / 2; keep k if even. */
function tieToEven(a: number, digits: number): string {
  const odd = BigInt(a * 2 ** (digits + 1));
  const twiceScaled = odd * 5n ** BigInt(digits); // = 2·a·10^digits, an odd integer
  const k = (twiceScaled - 1n) / 2n;
  const n = k % 2n === 0n ? k : k + 1n;
  if (digits === 0) return n.toString();
  const s = n.toString().padStart(digits + 1, '0');
  return `${s.slice(0, s.length - digits)}.${s.slice(s.length - digits)}`;
}

/** `%{width}.{digits}f`: right-aligned in `width` columns, never truncated. */
export function printfFixed(x: number, width: number, digits: number): string {
  return formatFixed(x, digits).padStart(width, ' ');
}

/** `%-{width}s`: left-aligned, padded with spaces, never truncated. */
export function padRight(s: string, width: number): string {
  return s.length >= width ? s : s + ' '.repeat(width - s.length);
}

/** `%ld` of `(long) x`: C truncates toward zero. */
export function formatLong(x: number): string {
  const t = Math.trunc(x);
  return Object.is(t, -0) ? '0' : String(t);
}
