/**
 * The argv of `harness judge` over the study the judge's CLI tests write: the run `a.trec` over the eval set `es`,
 * pooled to depth 2, replies cached in `cache`. Those tests judge the same files; only the model, the folder the
 * judgments go to and the flags they test differ (`extra`, after the shared ones).
 */
export function judgeArgv(model: string, out: string, extra: readonly string[] = []): string[] {
  return ['judge', '--runs', 'a.trec', '--evalset', 'es', '--out', out, '--cache', 'cache', '--depth', '2', '--model', model, ...extra];
}
