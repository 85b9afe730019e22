import { describe, expect, it } from 'vitest';
import { Keys } from '../../../dist/broker/redis/keys.js';

/**
 * The Redis key layout: whatever a queue is called (even a name the checks
 * refuse, written by another producer), its keys are its own and never
 * another queue's or the namespace's shared ones.
 */
describe('Redis keys', () => {
  it('no queue name spells a key of another queue, or a shared key', () => {
    const keys = new Keys('ns');
    const names = ['default', 'default:delayed', 'default:rd', 'default:dead', 'delayed:default', 'rd', 'q', 'queues'];
    const owner = new Map<string, string>();
    for (const shared of [keys.nodes, keys.recovering, keys.queues, keys.node('default'), keys.control('default')])
      owner.set(shared, 'shared');
    for (const name of names) {
      for (const key of keys.queueKeys(name)) {
        expect(owner.get(key) ?? name, `${key} belongs to ${owner.get(key)} and to queue ${name}`).toBe(name);
        owner.set(key, name);
      }
    }
    expect(owner.size).toBe(5 + 4 * names.length);
  });
});
