import { describe, expect, it } from 'vitest';
import { renderInput, triggerMatches, valueAt, type EventEnvelope } from '../../../src/contract/triggers';

const event: EventEnvelope = {
  id: 'evt-1',
  type: 'incident.opened',
  source: 'https://alerts.example.com',
  specversion: '1.0',
  data: {
    severity: 'high',
    service: { name: 'api', replicas: 3, paged: false },
    tags: ['a', 'b'],
    none: null,
  },
};

describe('trigger filter: type, then equality on dotted paths (all must hold)', () => {
  it('matches on type alone when there is no filter', () => {
    expect(triggerMatches({ eventType: 'incident.opened', filter: {} }, event)).toBe(true);
    expect(triggerMatches({ eventType: 'incident.closed', filter: {} }, event)).toBe(false);
    expect(triggerMatches({ eventType: 'incident', filter: {} }, event)).toBe(false); // no prefix match
  });

  it('compares scalars strictly at nested paths, arrays by index, and the envelope too', () => {
    const f = (filter: Record<string, string | number | boolean | null>) =>
      triggerMatches({ eventType: 'incident.opened', filter }, event);
    expect(f({ 'data.severity': 'high', 'data.service.name': 'api' })).toBe(true);
    expect(f({ 'data.severity': 'high', 'data.service.name': 'web' })).toBe(false);
    expect(f({ 'data.service.replicas': 3 })).toBe(true);
    expect(f({ 'data.service.replicas': '3' })).toBe(false);
    expect(f({ 'data.service.paged': false })).toBe(true);
    expect(f({ 'data.none': null })).toBe(true);
    expect(f({ 'data.missing': null })).toBe(false); // missing is not null
    expect(f({ 'data.tags.1': 'b' })).toBe(true);
    expect(f({ source: 'https://alerts.example.com' })).toBe(true);
    expect(f({ 'data.service': 'api' })).toBe(false); // an object never equals a scalar
  });

  it('never walks the prototype chain', () => {
    expect(valueAt(event, 'data.__proto__')).toBeUndefined();
    expect(valueAt(event, 'data.constructor')).toBeUndefined();
    expect(valueAt(event, 'data.severity.length')).toBeUndefined();
  });
});

describe('input mapping', () => {
  it('passes data as is when the trigger has no input template', () => {
    expect(renderInput(undefined, event)).toBe(event.data);
  });

  it('replaces whole-string {{path}} placeholders at any depth and keeps other values literal', () => {
    const template = {
      service: '{{ data.service.name }}',
      replicas: '{{data.service.replicas}}',
      eventId: '{{id}}',
      note: 'sev {{data.severity}}', // not a whole-string placeholder: literal
      steps: 2,
      list: ['{{data.tags.0}}', 'x'],
      gone: '{{data.missing}}', // missing: the key is left out
    };
    expect(renderInput(template, event)).toEqual({
      service: 'api',
      replicas: 3,
      eventId: 'evt-1',
      note: 'sev {{data.severity}}',
      steps: 2,
      list: ['a', 'x'],
    });
  });
});
