/**
 * The layers of src/, checked on its import graph: every import, export-from
 * and import() of src/**\/*.ts, type-only ones included (a type import is
 * knowledge of the other side too). A failure names the offending edge, or
 * the chain of edges that reaches a forbidden module.
 *
 * The foundation is what every layer may import: job-types.ts (the job and
 * option types shared by the pool, the protocol, the tasks and the brokers:
 * their single home), errors.ts (the error classes) and util/. It imports
 * nothing but itself, and util/ and job-types.ts not even errors.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** A module of src/ by its path under src/ ('pool/job.ts'), or a package by its name ('ioredis'). */
type Module = string;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path).split('\\').join('/')] : [];
  });
}

const FILES = sourceFiles(SRC).sort();
const TEXT = new Map(FILES.map((file) => [file, readFileSync(join(SRC, file), 'utf8')]));

/** A specifier as a module: a relative one resolved to its .ts file under src/, a package to its name. */
function target(from: Module, specifier: string): Module {
  if (specifier.startsWith('.')) {
    const path = resolve(SRC, dirname(from), specifier).replace(/\.js$/, '.ts');
    return relative(SRC, path).split('\\').join('/');
  }
  if (specifier.startsWith('node:')) return specifier;
  const [scope, name] = specifier.split('/');
  return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
}

const IMPORTS = new Map<Module, Module[]>(
  FILES.map((file) => {
    const specifiers = ts.preProcessFile(TEXT.get(file)!, true, true).importedFiles.map((f) => f.fileName);
    return [file, [...new Set(specifiers.map((s) => target(file, s)))]];
  }),
);

const ours = (m: Module): boolean => TEXT.has(m);
const under =
  (...prefixes: string[]) =>
  (m: Module): boolean =>
    prefixes.some((p) => (p.endsWith('/') ? m.startsWith(p) : m === p));

const isFoundation = under('job-types.ts', 'errors.ts', 'util/');
/** Everything that knows of brokers: the brokers, and what drives them. */
const knowsBrokers = under(
  'broker/',
  'consumer/',
  'cluster/',
  'cli/',
  'demo/',
  'client.ts',
  'worker.ts',
  'worker-options.ts',
  'ioredis',
);
const isRedis = under('broker/redis/', 'ioredis');
/** The broker implementations, which only the factory (broker/index.ts) picks from. */
const isBrokerImplementation = under('broker/redis/', 'broker/memory/');

/**
 * Words that only Redis speaks: its commands and error replies (the
 * distinctive ones: GET or TIME may be plain words), and ioredis's error
 * class. Matched in code, not comments: string, template and regex literals,
 * and identifiers.
 */
const REDIS_WORDS = new RegExp(
  `\\b(${[
    ...['XADD', 'XREADGROUP', 'XACK', 'XDEL', 'XPENDING', 'XCLAIM', 'XAUTOCLAIM', 'XGROUP', 'XINFO', 'XRANGE'],
    ...['XREVRANGE', 'XLEN', 'XTRIM', 'MKSTREAM', 'ZADD', 'ZRANGE', 'ZRANGEBYSCORE', 'ZREM', 'ZCARD', 'LPUSH'],
    ...['RPUSH', 'LPOP', 'RPOP', 'BLPOP', 'BRPOP', 'BLMPOP', 'LMPOP', 'LRANGE', 'LTRIM', 'LLEN', 'HSET', 'HGETALL'],
    ...['HMGET', 'SADD', 'SMEMBERS', 'SREM', 'EVALSHA', 'PEXPIRE', 'PUBLISH', 'SUBSCRIBE', 'UNLINK', 'FLUSHALL'],
    ...['WRONGTYPE', 'NOSCRIPT', 'NOGROUP', 'BUSYGROUP', 'TRYAGAIN', 'MASTERDOWN', 'CLUSTERDOWN', 'NOREPLICAS'],
    ...['MISCONF', 'EXECABORT', 'NOAUTH', 'NOPERM', 'WRONGPASS', 'ReplyError'],
  ].join('|')})\\b`,
);

/** The Redis words `file` uses in its code, each as "file: word". */
function redisWords(file: Module): string[] {
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isLiteralExpression(node) || ts.isTemplateLiteralToken(node)) {
      const word = REDIS_WORDS.exec(node.text)?.[1];
      if (word !== undefined) found.add(`${file}: ${word}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, TEXT.get(file)!, ts.ScriptTarget.Latest, true));
  return [...found];
}

/** The edges `from` files matching `source` make to modules matching `forbidden`, as "a -> b" lines. */
function directEdges(source: (m: Module) => boolean, forbidden: (m: Module) => boolean): string[] {
  return FILES.filter(source).flatMap((from) =>
    IMPORTS.get(from)!
      .filter(forbidden)
      .map((to) => `${from} -> ${to}`),
  );
}

/** For each module matching `forbidden` reachable from a file matching `source`, the chain of edges that reaches it. */
function reachable(source: (m: Module) => boolean, forbidden: (m: Module) => boolean): string[] {
  const cameFrom = new Map<Module, Module | undefined>();
  const todo = FILES.filter(source);
  for (const file of todo) cameFrom.set(file, undefined);
  const found: string[] = [];
  while (todo.length > 0) {
    const from = todo.shift()!;
    for (const to of IMPORTS.get(from) ?? []) {
      if (cameFrom.has(to)) continue;
      cameFrom.set(to, from);
      if (forbidden(to)) {
        const chain = [to];
        for (let m = cameFrom.get(to); m !== undefined; m = cameFrom.get(m)) chain.unshift(m);
        found.push(chain.join(' -> '));
      } else if (ours(to)) {
        todo.push(to);
      }
    }
  }
  return found;
}

/** Every import cycle among src/ files, each as "a -> b -> ... -> a" (Tarjan's strongly connected components, one cycle shown per component). */
function cycles(): string[] {
  const index = new Map<Module, number>();
  const low = new Map<Module, number>();
  const stack: Module[] = [];
  const onStack = new Set<Module>();
  const components: Module[][] = [];
  const visit = (m: Module): void => {
    index.set(m, index.size);
    low.set(m, index.get(m)!);
    stack.push(m);
    onStack.add(m);
    for (const to of IMPORTS.get(m)!.filter(ours)) {
      if (!index.has(to)) {
        visit(to);
        low.set(m, Math.min(low.get(m)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(m, Math.min(low.get(m)!, index.get(to)!));
      }
    }
    if (low.get(m) === index.get(m)) {
      const component: Module[] = [];
      let top: Module;
      do {
        top = stack.pop()!;
        onStack.delete(top);
        component.push(top);
      } while (top !== m);
      if (component.length > 1 || IMPORTS.get(m)!.includes(m)) components.push(component);
    }
  };
  for (const file of FILES) if (!index.has(file)) visit(file);
  return components.map((component) => {
    // A shortest way back to the first module, within its component.
    const inside = new Set(component);
    const start = component.sort()[0]!;
    const cameFrom = new Map<Module, Module>();
    const todo = [start];
    while (todo.length > 0) {
      const from = todo.shift()!;
      for (const to of IMPORTS.get(from)!) {
        if (!inside.has(to) || cameFrom.has(to)) continue;
        cameFrom.set(to, from);
        todo.push(to);
      }
    }
    const chain = [start];
    for (let m = cameFrom.get(start)!; m !== start; m = cameFrom.get(m)!) chain.unshift(m);
    return [start, ...chain].join(' -> ');
  });
}

/** The names `file` imports from the modules `from` matches, each as "file: name". */
function namesImported(file: Module, from: (m: Module) => boolean): string[] {
  const names: string[] = [];
  const source = ts.createSourceFile(file, TEXT.get(file)!, ts.ScriptTarget.Latest, true);
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!from(target(file, statement.moduleSpecifier.text))) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings !== undefined && ts.isNamedImports(bindings))
      for (const element of bindings.elements) names.push(`${file}: ${(element.propertyName ?? element.name).text}`);
  }
  return names;
}

describe('the import graph of src/', () => {
  it('resolves every relative import to a file of src/ (else the checks below would miss it)', () => {
    const unresolved = FILES.flatMap((from) =>
      IMPORTS.get(from)!
        .filter((to) => to.endsWith('.ts') && !ours(to))
        .map((to) => `${from} -> ${to}`),
    );
    expect(unresolved).toEqual([]);
    expect(FILES.length).toBeGreaterThan(50);
  });

  it('has no import cycle', () => {
    expect(cycles()).toEqual([]);
  });

  it('the pool and the child know nothing of brokers, not even through another module', () => {
    expect(reachable(under('pool/', 'child/'), knowsBrokers)).toEqual([]);
  });

  it('the protocol imports nothing of ours but the foundation', () => {
    expect(directEdges(under('protocol/'), (m) => ours(m) && !under('protocol/')(m) && !isFoundation(m))).toEqual([]);
  });

  it('Redis stays in broker/redis: nothing else imports ioredis or names a Redis command or reply', () => {
    const outside = (m: Module): boolean => !isRedis(m);
    expect([...directEdges(outside, under('ioredis')), ...FILES.filter(outside).flatMap(redisWords)]).toEqual([]);
  });

  it('the brokers know nothing of the pool, the child or what drives them', () => {
    const drivers = under('pool/', 'child/', 'consumer/', 'cluster/', 'cli/', 'demo/', 'client.ts', 'worker.ts');
    expect(directEdges(under('broker/'), (m) => drivers(m) || m === 'worker-options.ts')).toEqual([]);
  });

  it('only the factory (broker/index.ts) picks a broker implementation', () => {
    const outside = (m: Module): boolean => !isBrokerImplementation(m) && m !== 'broker/index.ts';
    expect(directEdges(outside, isBrokerImplementation)).toEqual([]);
    expect(directEdges(under('broker/memory/'), under('broker/redis/'))).toEqual([]);
    expect(directEdges(under('broker/redis/'), under('broker/memory/'))).toEqual([]);
  });

  it('outside the brokers, each part takes the broker roles it uses: only the CLI, which opens one, names the whole Broker', () => {
    const outside = (m: Module): boolean => !under('broker/', 'cli/connect.ts')(m);
    const named = FILES.filter(outside).flatMap((file) =>
      namesImported(file, under('broker/types.ts', 'broker/index.ts')),
    );
    expect(named.filter((entry) => entry.endsWith(': Broker'))).toEqual([]);
  });

  it('the foundation imports nothing of ours outside itself; util/ and job-types.ts nothing outside util/', () => {
    expect([
      ...directEdges(isFoundation, (m) => ours(m) && !isFoundation(m)),
      ...directEdges(under('util/', 'job-types.ts'), (m) => ours(m) && !under('util/')(m)),
    ]).toEqual([]);
  });
});
