import { afterEach, describe, expect, it } from 'vitest';
import { checkDeployment, type CheckDeploymentOptions } from '../src/doctor/index.js';
import { startLoopbackServer } from '../src/index.js';
import { startHandmadeDeployment, type Breakage, type HandmadeDeployment } from './helpers/handmade-deployment.js';

let deployment: HandmadeDeployment | undefined;
afterEach(async () => {
  await deployment?.close();
  deployment = undefined;
});

async function doctor(breaks: Breakage[]) {
  deployment = await startHandmadeDeployment(breaks);
  const options: CheckDeploymentOptions = {
    allowPrivate: true,
    token: deployment.token,
    otherResourceToken: deployment.otherResourceToken,
    scopeProbe: { method: 'tools/call', params: { name: 'write', arguments: {} } },
  };
  return checkDeployment(deployment.url, options);
}

describe('checkDeployment against deployments broken on purpose (issue 45)', () => {
  it('the handmade deployment unbroken: nothing fails or warns (the table below differs only by its breakage)', async () => {
    const report = await doctor([]);
    expect(report.findings.filter((f) => f.status === 'fail' || f.status === 'warn')).toEqual([]);
    expect(report.status).toBe('pass');
  });

  it.each<[Breakage, string, 'fail' | 'warn', RegExp, RegExp]>([
    ['prm-resource', 'prm-resource', 'fail', /RFC 9728 §3\.3/, /Set `resource` to http:\/\/127\.0\.0\.1:\d+\/mcp/],
    ['issuer-mismatch', 'as-issuer', 'fail', /RFC 8414 §3\.3/, /exactly the AS `issuer`/],
    ['no-pkce', 'as-pkce', 'fail', /Authorization Code Protection; .*RFC 7636/, /code_challenge_methods_supported: \["S256"\]/],
    ['no-resource-metadata', 'challenge-resource-metadata', 'warn', /RFC 9728 §5\.1/, /resource_metadata="<PRM URL>"/],
    ['audience-unchecked', 'token-other-resource', 'fail', /Token Audience Binding.*RFC 8707/, /Validate the audience/],
    ['scope-missing-on-403', 'insufficient-scope', 'fail', /Runtime Insufficient Scope Errors; RFC 6750 §3\.1/, /scope="<all scopes/],
    ['origin-unchecked', 'origin-refused', 'fail', /Streamable HTTP §Security/, /answer 403/],
    ['query-token-accepted', 'token-query-refused', 'fail', /RFC 6750 §2\.3/, /Authorization header only/],
  ])('%s: finding %s is %s with its section and fix', async (breakage, id, status, section, fix) => {
    const report = await doctor([breakage]);
    const finding = report.findings.find((f) => f.id === id);
    expect(finding).toMatchObject({ status });
    expect(finding?.section).toMatch(section);
    expect(finding?.fix).toMatch(fix);
    expect(report.status).toBe(status);
    // the breakage is the only thing found wrong
    expect(report.findings.filter((f) => f.status === 'fail' || f.status === 'warn').map((f) => f.id)).toEqual([id]);
  });

  it('never shows a token: sent and received are redacted', async () => {
    const report = await doctor(['query-token-accepted']);
    const text = JSON.stringify(report);
    expect(text).not.toContain(deployment!.token);
    expect(text).not.toContain(deployment!.otherResourceToken);
    expect(report.findings.find((f) => f.id === 'token-query-refused')?.sent).toMatch(/access_token=\[redacted\]/);
  });

  it('stops at the request budget: later checks report the budget, not a request', async () => {
    deployment = await startHandmadeDeployment();
    const report = await checkDeployment(deployment.url, { allowPrivate: true, maxRequests: 2 });
    expect(report.requests).toBe(2);
    expect(JSON.stringify(report.findings)).toMatch(/request budget is spent \(maxRequests 2\)/);
  });

  it('bounds time: each request by requestTimeoutMs, the whole run by timeoutMs (a server that never answers)', async () => {
    const silent = await startLoopbackServer(() => undefined);
    try {
      const report = await checkDeployment(`${silent.origin}/mcp`, { allowPrivate: true, requestTimeoutMs: 200, timeoutMs: 700 });
      const received = report.findings.map((f) => f.received ?? '').join('\n');
      expect(received).toMatch(/did not answer in time/);
      expect(received).toMatch(/the time for all checks is up/);
      expect(report.requests).toBeLessThan(6);
    } finally {
      await silent.close();
    }
  });

  it('refuses plain http to a public address even with allowPrivate, before any byte is sent', async () => {
    let called = 0;
    const report = await checkDeployment('http://93.184.215.14/mcp', {
      allowPrivate: true,
      fetch: async () => {
        called++;
        return new Response('');
      },
    });
    expect(called).toBe(0);
    expect(report.findings[0]).toMatchObject({ id: 'unauthenticated-401', status: 'fail' });
    expect(report.findings[0]!.received).toMatch(/plain http to a public address is refused/);
  });

  it('refuses a non-http URL with a coded TypeError', async () => {
    await expect(checkDeployment('file:///etc/passwd')).rejects.toMatchObject({ name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' });
  });
});
