import { Option } from 'commander';
import type { Command } from 'commander';
import { WEBHOOK_EVENT_TYPES } from '../contract/webhooks';
import type { WebhookCreated, WebhookDeliveryView, WebhookView } from '../contract/webhooks';
import type { Act } from './commands-schedules';
import { printJson } from './commands';
import { pairs, table } from './table';

const path = (id: string, tail = '') => `/v1/webhooks/${encodeURIComponent(id)}${tail}`;

/** The last attempt in a few words: its status, or why none came. */
const lastAttempt = (d: WebhookDeliveryView): string => {
  const a = d.attempts.at(-1);
  if (!a) return '-';
  return a.status !== null ? String(a.status) : (a.error ?? 'no answer');
};

/** `fairway webhooks list|create|delete|deliveries` (a tenant's API key as --token). */
export function addWebhookCommands(program: Command, act: Act): void {
  const wh = program
    .command('webhooks')
    .description("webhooks out (a tenant's API key as --token): list, create, delete, deliveries");
  wh.command('list')
    .description("the tenant's endpoints")
    .action(
      act(async ({ api, io, json }) => {
        const { items } = await api.get<{ items: WebhookView[] }>('/v1/webhooks');
        if (json) return printJson(io, { items });
        if (items.length === 0) return io.out('No webhooks.');
        io.out(
          table(items, [
            { title: 'ID', value: (w) => w.id },
            { title: 'URL', value: (w) => w.url },
            { title: 'EVENTS', value: (w) => w.events.join(',') },
            { title: 'CREATED', value: (w) => w.createdAt },
          ]),
        );
      }),
    );
  wh.command('create')
    .description('register an endpoint; prints its signing secret, shown only this once')
    .argument('<url>')
    .addOption(
      new Option('--events <types...>', 'the event types it receives')
        .choices(WEBHOOK_EVENT_TYPES)
        .default([...WEBHOOK_EVENT_TYPES]),
    )
    .option('--description <text>')
    .action(
      act(async ({ api, io, json }, url: string, o: { events: string[]; description?: string }) => {
        const w = await api.post<WebhookCreated>('/v1/webhooks', {
          url,
          events: o.events,
          ...(o.description !== undefined ? { description: o.description } : {}),
        });
        if (json) return printJson(io, w);
        io.out(
          pairs([
            ['webhook', w.id],
            ['url', w.url],
            ['events', w.events.join(', ')],
            ['secret', `${w.secret}  (shown only now: keep it)`],
          ]),
        );
      }),
    );
  wh.command('delete')
    .description('remove an endpoint and its pending deliveries')
    .argument('<id>')
    .action(
      act(async ({ api, io, json }, id: string) => {
        await api.delete<null>(path(id));
        if (json) printJson(io, { id, deleted: true });
        else io.out(`Webhook ${id} deleted.`);
      }),
    );
  wh.command('deliveries')
    .description("an endpoint's deliveries, newest first, with their attempts")
    .argument('<id>')
    .action(
      act(async ({ api, io, json }, id: string) => {
        const { items } = await api.get<{ items: WebhookDeliveryView[] }>(path(id, '/deliveries'));
        if (json) return printJson(io, { items });
        if (items.length === 0) return io.out('No deliveries.');
        io.out(
          table(items, [
            { title: 'EVENT', value: (d) => d.eventId },
            { title: 'TYPE', value: (d) => d.type },
            { title: 'STATE', value: (d) => d.state },
            { title: 'ATTEMPTS', value: (d) => String(d.attempts.length) },
            { title: 'LAST', value: lastAttempt },
            { title: 'NEXT', value: (d) => d.nextAttemptAt ?? '-' },
          ]),
        );
      }),
    );
}
