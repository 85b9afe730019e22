import type {
  Broker, BrokerOptions, DeadJob, FetchReply, FetchRequest, HeartbeatReply, NewJob, NodeInfo,
  QueueCounts, ResultRecord, Settlement, WaitReply,
} from '../types.js';

/** Redis broker (work in progress: methods land shortly). */
export class RedisBroker implements Broker {
  readonly displayUrl: string;
  readonly leaseMs: number;

  constructor(url: string, options: BrokerOptions = {}) {
    this.displayUrl = url.replace(/:\/\/([^:@/]*):[^@/]*@/, '://$1:***@');
    this.leaseMs = options.leaseMs ?? 20_000;
  }

  connect(): Promise<void> { return notYet(); }
  close(): Promise<void> { return Promise.resolve(); }
  enqueue(_jobs: readonly NewJob[]): Promise<void> { return notYet(); }
  getResult(_id: string): Promise<ResultRecord | undefined> { return notYet(); }
  waitForResults(_clientId: string, _timeoutMs: number): Promise<ResultRecord[]> { return notYet(); }
  fetch(_request: FetchRequest): Promise<FetchReply> { return notYet(); }
  waitForWork(_n: string, _q: readonly string[], _t: number, _s: AbortSignal, _c?: number): Promise<WaitReply> { return notYet(); }
  settle(_s: readonly Settlement[]): Promise<void> { return notYet(); }
  register(_node: NodeInfo): Promise<void> { return notYet(); }
  heartbeat(_nodeId: string, _queues: readonly string[]): Promise<HeartbeatReply> { return notYet(); }
  recover(_dead: string, _by: string, _max: number): Promise<number> { return notYet(); }
  unregister(_nodeId: string): Promise<void> { return notYet(); }
  listNodes(): Promise<NodeInfo[]> { return notYet(); }
  knownQueues(): Promise<string[]> { return notYet(); }
  counts(_queues: readonly string[]): Promise<QueueCounts[]> { return notYet(); }
  purge(_queue: string): Promise<number> { return notYet(); }
  listDead(_queue: string, _limit: number): Promise<DeadJob[]> { return notYet(); }
  retryDead(_queue: string, _ids: readonly string[] | undefined): Promise<number> { return notYet(); }
  purgeDead(_queue: string): Promise<number> { return notYet(); }
}

function notYet<T>(): Promise<T> {
  return Promise.reject(new Error('RedisBroker: not implemented yet'));
}
