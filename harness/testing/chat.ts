/**
 * The reply of an OpenAI-compatible server to a chat completion, for the loopback judges of the judge tests: one
 * choice whose message is `content`, from model `judge-m`, with the token usage the test's counts read. Each such
 * judge decides only what it says; the envelope the SDK needs around it is written here once.
 */
export function chatCompletion(content: string, tokens: { readonly prompt: number; readonly completion: number }) {
  return {
    body: {
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'judge-m',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
      usage: { prompt_tokens: tokens.prompt, completion_tokens: tokens.completion, total_tokens: tokens.prompt + tokens.completion },
    },
  };
}
