// Preloaded (`node --import`) by scripts/report-parity.sh: every clock reads one fixed instant, so two
// ablations' report folders can be compared byte for byte, timings aside (they all read 0).
const FIXED = Date.parse('2026-01-01T00:00:00.000Z');
performance.now = () => 0;
const RealDate = Date;
globalThis.Date = class FrozenDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(FIXED);
    else super(...args);
  }
  static now() {
    return FIXED;
  }
};
