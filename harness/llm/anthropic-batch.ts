import { type BatchCallError, batchCalls } from './batch.js';
import { messageBody, messageReply } from './anthropic.js';
import { anthropicSdk, endpointSecrets } from './sdk.js';
import type { BatchApi, BatchRequest, BatchResult, BatchStatus, ChatEndpoint } from './types.js';

/**
 * Anthropic's Message Batches API through `@anthropic-ai/sdk`: the requests go in the create call's body, the
 * results are streamed as JSONL from the batch's results URL once it has ended. Anthropic keeps no metadata on a
 * batch, so `findSubmitted` cannot tell whether a submission interrupted before its id was recorded reached it
 * (see ledger.ts): such requests are submitted again.
 */

/** A create call carries the requests themselves (up to 256 MB): longer than one message's deadline. */
const CREATE_TIMEOUT_MS = 600_000;

type AnthropicClient = import('@anthropic-ai/sdk').Anthropic;
type MessageBatch = import('@anthropic-ai/sdk').Anthropic.Messages.Batches.MessageBatch;
type IndividualResponse = import('@anthropic-ai/sdk').Anthropic.Messages.Batches.MessageBatchIndividualResponse;

/** One request as the create call's body holds it. */
export function anthropicBatchRequest(model: string, r: BatchRequest) {
  return { custom_id: r.customId, params: messageBody(model, r.prompt, r.decoding) };
}

function statusOf(b: MessageBatch): BatchStatus {
  const c = b.request_counts;
  return {
    state: b.processing_status === 'ended' ? 'ended' : 'in_progress',
    providerState: b.processing_status,
    counts: { total: c.processing + c.succeeded + c.errored + c.canceled + c.expired, succeeded: c.succeeded, failed: c.errored + c.canceled + c.expired },
  };
}

/** One results line as a result: an error is retryable unless the request itself was invalid; canceled and expired are. */
export function anthropicResultOf(x: IndividualResponse): BatchResult {
  const customId = x.custom_id;
  const r = x.result;
  if (r.type === 'succeeded') {
    const reply = messageReply(r.message);
    return 'reason' in reply ? { customId, failure: reply.reason, retryable: true } : { customId, reply };
  }
  if (r.type === 'errored') {
    const kind = r.error?.error?.type ?? 'error';
    const said = r.error?.error?.message;
    return { customId, failure: `${kind}${typeof said === 'string' ? ` (${said.slice(0, 200)})` : ''}`, retryable: kind !== 'invalid_request_error' };
  }
  return { customId, failure: `request ${r.type}`, retryable: true };
}

async function* resultsOf(client: AnthropicClient, id: string, what: (op: string, err: unknown) => BatchCallError): AsyncGenerator<BatchResult> {
  try {
    for await (const x of await client.messages.batches.results(id)) yield anthropicResultOf(x);
  } catch (err) {
    throw what(`reading the results of batch ${id}`, err);
  }
}

/** Anthropic's Message Batches API for `ep`; the key is read now from `env`, as for a synchronous client. */
export async function anthropicBatchApi(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, who: string): Promise<BatchApi> {
  const client = await anthropicSdk(ep, env, source, who);
  const { what, wrap } = batchCalls('anthropic', endpointSecrets(ep, env));
  return {
    provider: 'anthropic',
    // A request's share of the create call's JSON body, the comma between requests included.
    requestBytes: (r) => Buffer.byteLength(JSON.stringify(anthropicBatchRequest(ep.model, r)), 'utf8') + 1,
    submit: (requests, _token) =>
      wrap(
        'submitting a batch',
        async () =>
          (await client.messages.batches.create({ requests: requests.map((r) => anthropicBatchRequest(ep.model, r)) }, { timeout: CREATE_TIMEOUT_MS })).id,
      ),
    findSubmitted: async () => undefined,
    status: (id) => wrap(`status of batch ${id}`, async () => statusOf(await client.messages.batches.retrieve(id))),
    results: (id) => resultsOf(client, id, what),
  };
}
