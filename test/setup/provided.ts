// Values the globalSetup hands to tests through vitest's provide/inject.
declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export {};
