export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing answers. */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
}
export function ensureRedisInstalled(): void;
export function freePort(): Promise<number>;
/** `args` are added to the command line, e.g. ["--proto-max-bulk-len", "1mb"]. */
export function startRedisServer(options?: { port?: number; args?: string[] }): Promise<RedisServer>;
