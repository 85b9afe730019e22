import type { StrategyName } from '../pool/options.js';
import { FairStrategy } from './fair.js';
import { FcfsStrategy } from './fcfs.js';
import type { SchedulingStrategy } from './strategy.js';

export type { SchedulingStrategy } from './strategy.js';

export function createStrategy(name: StrategyName): SchedulingStrategy {
  return name === 'fcfs' ? new FcfsStrategy() : new FairStrategy();
}
