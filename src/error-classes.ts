// The error classes the entries ('prefork', 'prefork/task') export: every
// class of errors.ts and none of its helpers (messageOf, describeValue).
// test/unit/entries.test.ts checks that none is missing.
export {
  PreforkError,
  OptionError,
  WorkerLostError,
  TimeLimitExceeded,
  SoftTimeLimitExceeded,
  UnknownTaskError,
  ResultSerializationError,
  PayloadDecodeError,
  ArgumentSerializationError,
  ArgumentsTooLargeError,
  ProtocolError,
  AppLoadError,
  PoolFailedError,
  ConsumerFailedError,
  PoolClosedError,
  ResultTimeoutError,
  ResultGoneError,
  JobWithdrawnError,
  RemoteTaskError,
  Retry,
  BrokerRefusedError,
  BrokerClosedError,
  BrokerUnavailableError,
} from './errors.js';
