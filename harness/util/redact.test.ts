import { describe, expect, it } from 'vitest';
import { isSecretParam, redactSecrets, redactUrl, redactUrlsIn, redactUrlsInValue, urlCredentialProblem } from './redact.js';

describe('isSecretParam', () => {
  it('reads the words of a name: keys, tokens, secrets, signatures, passwords, in any spelling', () => {
    for (const name of [
      'key',
      'api_key',
      'apikey',
      'apiKey',
      'x-api-key',
      'access_token',
      'accessToken',
      'X-Amz-Signature',
      'X-Amz-Credential',
      'sig',
      'client_secret',
      'password',
      'pwd',
      'auth',
      'sessionToken',
      'api%5Fkey',
    ])
      expect(isSecretParam(name), name).toBe(true);
    for (const name of ['q', 'page', 'keyword', 'monkey', 'topK', 'design', 'signal', 'scope']) expect(isSecretParam(name), name).toBe(false);
  });
});

describe('redactUrl', () => {
  it('hides user info and credential values, keeps the rest', () => {
    expect(redactUrl('https://u:hunter22@h.example/v1?apiKey=abc123&q=x')).toBe('https://***@h.example/v1?apiKey=***&q=x');
    expect(redactUrl('http://127.0.0.1:8080/a.json')).toBe('http://127.0.0.1:8080/a.json');
  });
});

describe('redactUrlsIn', () => {
  it('redacts every URL of a text in place and leaves the rest byte for byte', () => {
    const text = 'arm a: http://alex:pw-9f3e@10.0.0.1:9/s?api_key=K-77&q=cats: HTTP 500 (see https://x.example/doc).';
    expect(redactUrlsIn(text)).toBe('arm a: http://***@10.0.0.1:9/s?api_key=***&q=cats: HTTP 500 (see https://x.example/doc).');
    expect(redactUrlsIn('no url here: key=abc')).toBe('no url here: key=abc');
    expect(redactUrlsIn('"https://h/x?sig=s1&token=t2"')).toBe('"https://h/x?sig=***&token=***"');
  });
});

describe('redactSecrets', () => {
  it('blanks the given secrets and bearer tokens, and redacts URLs', () => {
    expect(redactSecrets('401: Incorrect API key provided: sk-live-123456. Authorization: Bearer sk-live-123456', ['sk-live-123456'])).toBe(
      '401: Incorrect API key provided: [redacted]. Authorization: Bearer [redacted]',
    );
    expect(redactSecrets('short abc stays', ['abc'])).toBe('short abc stays');
  });
});

describe('urlCredentialProblem', () => {
  it('names user info and credential parameters, never their values', () => {
    const user = urlCredentialProblem('https://alex:hunter22@api.example/v1', 'use an env variable');
    expect(user).toMatch(/holds a user:password \(shown as https:\/\/\*\*\*@api\.example\/v1\); use an env variable/);
    expect(user).not.toContain('hunter22');
    const query = urlCredentialProblem('http://127.0.0.1:9/search?q={{query.text}}&api_key=k-1234567', 'send it in a header');
    expect(query).toContain('holds a credential in its query (api_key;');
    expect(query).not.toContain('k-1234567');
    expect(urlCredentialProblem('http://127.0.0.1:9/search?q={{query.text}}&topK={{topK}}', 'x')).toBeUndefined();
    expect(urlCredentialProblem('http://127.0.0.1:9/s?token={{scope}}', 'x')).toBeUndefined();
  });
});

describe('redactUrlsInValue', () => {
  it('redacts every string of a params object, nested, and keeps everything else as it was', () => {
    const params = { server: { url: 'http://127.0.0.1:9/mcp?token=t-123456', headers: ['Authorization'] }, topK: 10, local: true, none: null };
    expect(redactUrlsInValue(params)).toEqual({
      server: { url: 'http://127.0.0.1:9/mcp?token=***', headers: ['Authorization'] },
      topK: 10,
      local: true,
      none: null,
    });
    expect(params.server.url).toBe('http://127.0.0.1:9/mcp?token=t-123456');
  });
});
