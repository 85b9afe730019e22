/** The inputs of one Autoscaler decision. */
export interface ScaleInput {
  /** Jobs applied and not yet settled (buffered + running), plus the Consumer's prefetched jobs. */
  reserved: number;
  /** Children counted in the pool now (starting, idle, busy). */
  current: number;
  max: number;
  min: number;
  now: number;
  /** When the pool last grew (ms epoch; 0 if never). */
  lastScaleUp: number;
  keepalive: number;
}

export type ScaleDecision = { action: 'grow' | 'shrink'; to: number } | { action: 'none' };

/**
 * Celery's Autoscaler rule as a pure function: grow to min(reserved, max) at
 * once; shrink to max(reserved, min) only when `keepalive` has passed since the
 * last scale-up. The pool never drops below min nor rises above max.
 */
export function decideScale(s: ScaleInput): ScaleDecision {
  if (s.current > s.max) return { action: 'shrink', to: s.max };
  const want = Math.max(s.min, Math.min(s.reserved, s.max));
  if (want > s.current) return { action: 'grow', to: want };
  const floor = Math.max(s.reserved, s.min);
  if (floor < s.current && s.now - s.lastScaleUp >= s.keepalive) return { action: 'shrink', to: floor };
  return { action: 'none' };
}
