/**
 * Params that sibling arm kinds spell differently, with what each kind wants: a user who wrote the shape of a
 * sibling (an `index: true` of command on http) is told the difference rather than only "expected object".
 * Refused with a hint, not converted: `index: true` on http has no URL to send the documents to.
 */
const SIBLING_HINTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  http: {
    index:
      'on http, index is the store request sent once per document ({ url, method, headers, body }), not a boolean as on command; leave it out when the service holds the corpus already (`harness arms http`)',
  },
  command: {
    index:
      "on command, index is true or false (send each scope's documents in an index request, docs/arms/command-protocol.md), not a request object as on http (`harness arms command`)",
  },
  mcp: {
    index: 'on mcp, the store step is a tool call under store: { tool, arguments }, not index (`harness arms mcp`)',
  },
};

/** Each `arms[i].params.<key>` problem of a param sibling kinds spell differently, with the hint that tells them apart. */
export function withSiblingHints(problems: readonly string[], arms: readonly ({ readonly kind: string } | undefined)[] | undefined): string[] {
  return problems.map((p) => {
    const m = /^arms\[(\d+)\]\.params\.([A-Za-z]+)[.:]/.exec(p);
    const hint = m ? SIBLING_HINTS[arms?.[Number(m[1])]?.kind ?? '']?.[m[2] as string] : undefined;
    return hint === undefined ? p : `${p}; hint: ${hint}`;
  });
}
