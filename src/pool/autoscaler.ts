import type { Logger } from 'pino';
import { decideScale, type ScaleDecision } from './scale-policy.js';

/** The Autoscaler resized the pool: the Pool's 'autoscale' event. */
export interface ScaleEvent {
  /** 'up': children were added; 'down': idle children were retired. */
  direction: 'up' | 'down';
  /** The number of children before. */
  from: number;
  /** The number of children after. */
  to: number;
  /** Reserved requests (jobs applied and not yet settled) when it decided. */
  reserved: number;
}

export interface AutoscalerHooks {
  reserved(): number;
  current(): number;
  grow(n: number): void;
  /** Shrinks by up to n (idle children only); returns how many went. */
  shrink(n: number): number;
  onScale(event: ScaleEvent): void;
}

/**
 * Celery's Autoscaler: grows at once when reserved requests outnumber the
 * children (called on every apply and on a tick), shrinks on the tick only
 * after `keepalive` since the last scale-up. The rule is decideScale(); this
 * class only applies it.
 */
export class Autoscaler {
  private timer: NodeJS.Timeout | undefined;
  private lastScaleUp = 0;

  constructor(
    public max: number,
    public min: number,
    private readonly keepalive: number,
    private readonly interval: number,
    private readonly hooks: AutoscalerHooks,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.lastScaleUp = Date.now();
    this.timer = setInterval(() => this.evaluate(), this.interval);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A manual grow counts as a scale-up: the keepalive starts again. */
  noteScaleUp(now = Date.now()): void {
    this.lastScaleUp = now;
  }

  /** New bounds at run time; the next evaluation moves the pool into them. */
  setBounds(max: number, min: number): void {
    this.max = max;
    this.min = min;
    this.evaluate();
  }

  /** Cheap check for the apply() path: only grows. */
  maybeGrow(): void {
    const current = this.hooks.current();
    if (current < this.max && this.hooks.reserved() > current) this.evaluate();
  }

  evaluate(now = Date.now()): ScaleDecision {
    const reserved = this.hooks.reserved();
    const current = this.hooks.current();
    const decision = decideScale({
      reserved,
      current,
      max: this.max,
      min: this.min,
      now,
      lastScaleUp: this.lastScaleUp,
      keepalive: this.keepalive,
    });
    if (decision.action === 'grow') {
      this.hooks.grow(decision.to - current);
      this.lastScaleUp = now;
      this.report({ direction: 'up', from: current, to: decision.to, reserved });
    } else if (decision.action === 'shrink') {
      const gone = this.hooks.shrink(current - decision.to);
      if (gone > 0) this.report({ direction: 'down', from: current, to: current - gone, reserved });
    }
    return decision;
  }

  private report(event: ScaleEvent): void {
    this.log.info(
      event,
      `autoscale ${event.direction}: ${event.from} -> ${event.to} processes (reserved ${event.reserved})`,
    );
    this.hooks.onScale(event);
  }
}
