/**
 * The v1 hybrid provider's LLM reranker, as pure parts (docs/adr/0024-reference-recipes.md): a regex query
 * classifier into 7 types, a versioned prompt with type-specific instructions asking for a JSON array of
 * `{index, score}` (0-10), and a strict parser of the reply.
 */

export const QUERY_TYPES = ['temporal', 'knowledge-update', 'multi-hop', 'preference', 'assistant-recall', 'factual', 'general'] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

/**
 * The classifier's rules, tried in this order; the first that matches names the type, `general` otherwise.
 * Assistant recall and knowledge updates come before temporal because their questions often also say "when" or
 * "now"; `factual` is any remaining wh-question.
 */
export const QUERY_TYPE_RULES: readonly (readonly [QueryType, RegExp])[] = [
  ['assistant-recall', /\b(you (said|told|mentioned|recommended|suggested|gave)|did you|your (answer|suggestion|recommendation|advice)|remind me what you)\b/i],
  ['knowledge-update', /\b(currently|current|now|latest|still|anymore|no longer|changed?|updated?|most recent(ly)?|these days)\b/i],
  ['temporal', /\b(when|what (year|month|day|date|time)|how long|before|after|since|until|ago|yesterday|last (week|month|year|time)|first time)\b/i],
  ['multi-hop', /\b(both|in common|compare|comparison|relationship between|how many|total|combined|altogether|which of)\b/i],
  ['preference', /\b(prefers?|preferred|preference|favou?rite|likes?|liked|enjoys?|enjoyed|loves?|loved|hates?|dislikes?|recommend)\b/i],
  ['factual', /^\s*(who|what|where|which|how|why|is|are|does|did|was|were)\b/i],
];

export function classifyQuery(text: string): QueryType {
  for (const [type, rule] of QUERY_TYPE_RULES) if (rule.test(text)) return type;
  return 'general';
}

/** What the prompt tells the model to weigh, per query type. */
export const TYPE_INSTRUCTIONS: Readonly<Record<QueryType, string>> = {
  temporal: 'Prefer memories that state when something happened; dates in the memory headers count.',
  'knowledge-update': 'The most recent memory on the subject wins; score older, superseded memories lower.',
  'multi-hop': 'The answer may need several memories; score every memory that supplies one of the needed facts.',
  preference: "Prefer memories that state the person's likes, dislikes or choices in their own words.",
  'assistant-recall': 'Prefer memories of what the assistant itself said, suggested or recommended.',
  factual: 'Prefer memories that state the asked fact directly.',
  general: 'Score each memory by how much it helps answer the question.',
};

/** Changes whenever the prompt's wording does: part of every cache key, so old replies are never reused. */
export const PROMPT_VERSION = 'llm-rerank/v1';

/** Characters of a memory shown to the model; longer memories are cut (the cut is marked). */
export const MAX_MEMORY_CHARS = 1000;

export function rerankPrompt(query: string, type: QueryType, memories: readonly string[]): string {
  const lines = memories.map((m, i) => `[${i}] ${(m.length > MAX_MEMORY_CHARS ? `${m.slice(0, MAX_MEMORY_CHARS)} [...]` : m).replace(/\s+/g, ' ')}`);
  return [
    'You rank memories by how useful they are for answering a question.',
    `Question type: ${type}. ${TYPE_INSTRUCTIONS[type]}`,
    `Question: ${query}`,
    'Memories:',
    ...lines,
    'Score every memory from 0 (useless) to 10 (answers the question).',
    'Reply with only a JSON array, one object per memory: [{"index": 0, "score": 7}, ...].',
  ].join('\n');
}

/**
 * Parses a reply into one score per memory index, or undefined when it is not a usable answer: the JSON array
 * is taken from the first `[` to the last `]` (models wrap it in prose or code fences); every element must be
 * `{index, score}` with an integer index in [0, n) given once and a finite score in [0, 10]; at least one
 * element. Indices the model left out get no score.
 */
export function parseRerankReply(reply: string, n: number): Map<number, number> | undefined {
  const start = reply.indexOf('[');
  const end = reply.lastIndexOf(']');
  if (start < 0 || end <= start) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(reply.slice(start, end + 1));
  } catch {
    return undefined;
  }
  if (!Array.isArray(data) || data.length === 0) return undefined;
  const out = new Map<number, number>();
  for (const x of data) {
    if (x === null || typeof x !== 'object') return undefined;
    const { index, score } = x as { index?: unknown; score?: unknown };
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= n || out.has(index)) return undefined;
    if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 10) return undefined;
    out.set(index, score);
  }
  return out;
}
