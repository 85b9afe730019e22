export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
}
export function ensureRedisInstalled(): void;
export function freePort(): Promise<number>;
export function startRedisServer(options?: { port?: number }): Promise<RedisServer>;
