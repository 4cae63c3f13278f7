import { describe, expect, it } from 'vitest';
import { CALL_ID_HEADER, storedCallFields } from '../../../src/activities/provider/call-key';
import { openAiStoredCompletions } from '../../../src/activities/usage-source';
import { getJson, post, useHandClockSimulator } from './sim-client';

const start = useHandClockSimulator(11);
const request = (extra: Record<string, unknown> = {}) => ({
  model: 'sim-1',
  messages: [{ role: 'user', content: 'x'.repeat(40) }],
  max_tokens: 20,
  ...extra,
});

describe('model-plane simulator: usage by call id, and accept-and-drop', () => {
  it('lists what it served for a call id as OpenAI lists stored completions; nothing for a call never served', async () => {
    const { url } = await start(1_000_000, 1000);
    const served = await post(`${url}/v1/chat/completions`, request(storedCallFields('call-1')));
    expect(served.status).toBe(200);
    const list = (await getJson(`${url}/v1/chat/completions?metadata[fairway_call]=call-1`)) as {
      object: string;
      data: { metadata: unknown; usage: { total_tokens: number } }[];
    };
    expect(list.object).toBe('list');
    expect(list.data).toHaveLength(1);
    expect(list.data[0]!.metadata).toEqual({ fairway_call: 'call-1' });
    expect(list.data[0]!.usage.total_tokens).toBe(
      (served.body.usage as { total_tokens: number }).total_tokens,
    );
    // The port reads it: served with its usage, or never served.
    const usage = openAiStoredCompletions({ baseUrl: `${url}/v1` });
    expect(await usage.lookup('call-1')).toEqual({ served: true, tokens: 30 });
    expect(await usage.lookup('call-2')).toEqual({ served: false });
    // A call named by the header alone (the Anthropic dialect, a gateway's request id) is found too.
    await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CALL_ID_HEADER]: 'call-3' },
      body: JSON.stringify(request()),
    });
    expect(await usage.lookup('call-3')).toEqual({ served: true, tokens: 30 });
  });

  it('drops calls before serving them (nothing billed) or after (billed, the answer lost)', async () => {
    const { url } = await start(1_000_000, 1000);
    const usage = openAiStoredCompletions({ baseUrl: url });
    const send = (id: string) => post(`${url}/v1/chat/completions`, request(storedCallFields(id)));
    expect(await post(`${url}/admin/drops`, { calls: 1 })).toMatchObject({ status: 200 });
    await expect(send('d1')).rejects.toThrow();
    expect(await usage.lookup('d1')).toEqual({ served: false });
    expect(await post(`${url}/admin/drops`, { calls: 1, when: 'after' })).toMatchObject({ status: 200 });
    await expect(send('d2')).rejects.toThrow();
    expect(await usage.lookup('d2')).toEqual({ served: true, tokens: 30 });
    expect((await send('d3')).status).toBe(200);
    const stats = (await getJson(`${url}/admin/stats`)) as { dropped: number; bill: Record<string, number> };
    expect(stats.dropped).toBe(2);
    expect(stats.bill['']).toBe(60);
  });
});
