import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useHarness } from './harness';

describe('the error middleware', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const h = useHarness({ log: pino({ level: 'error' }, sink), tenants: ['acme'] });

  it('turns an unexpected failure into a generic 500 and logs the cause', async () => {
    h.fleet.down = true;
    const res = await request(h.app).get('/v1/admin/scheduler').set(h.admin());
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'internal', message: expect.any(String) } });
    expect(JSON.stringify(res.body)).not.toMatch(/unreachable|stack|at /);
    expect(lines.join('')).toMatch(/fleet unreachable/);
  });

  it('answers a wrong content type as 415 unsupported_media_type, not 5xx', async () => {
    const key = h.keys.acme!;
    const res = await request(h.app)
      .post('/v1/runs')
      .set('Authorization', `Bearer ${key}`)
      .set('Content-Type', 'text/plain')
      .send('agent=synthetic');
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    const gzip = await request(h.app)
      .post('/v1/runs')
      .set('Authorization', `Bearer ${key}`)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'br-unknown')
      .send('{}');
    expect(gzip.status).toBe(415);
    expect(h.fleet.submitCalls).toHaveLength(0);
  });
});
