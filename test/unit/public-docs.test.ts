/**
 * The public surface is documented: every symbol the package's entries export
 * has TSDoc, every member of an exported class or interface too, and every
 * optional property of an options interface (a name ending in `Options`)
 * states its default with `@defaultValue`. docs/api.md is generated from the
 * same comments (npm run docs), so what this test demands is what users read.
 * No exceptions: a new export or member without TSDoc fails here.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The package's public entries (package.json "exports"). */
const ENTRIES = ['src/index.ts', 'src/task.ts', 'src/broker/index.ts'];

const program = ts.createProgram(
  ENTRIES.map((e) => ROOT + e),
  { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true },
);
const checker = program.getTypeChecker();

function hasDoc(symbol: ts.Symbol): boolean {
  return symbol.getDocumentationComment(checker).length > 0;
}

function tagsOf(symbol: ts.Symbol): string[] {
  return symbol.getJsDocTags(checker).map((t) => t.name);
}

function isOwn(decl: ts.Declaration): boolean {
  return decl.getSourceFile().fileName.startsWith(ROOT + 'src/');
}

/** Every undocumented place on the public surface, as "entry: Name.member (why)". */
function gaps(entry: string): string[] {
  const file = program.getSourceFile(ROOT + entry);
  if (!file) return [`${entry}: not found`];
  const moduleSymbol = checker.getSymbolAtLocation(file);
  if (!moduleSymbol) return [];
  const found: string[] = [];
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const decls = (symbol.getDeclarations() ?? []).filter(isOwn);
    if (decls.length === 0) continue;
    const name = exported.getName();
    if (!hasDoc(symbol)) found.push(`${entry}: ${name} (no TSDoc)`);
    if (!(symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface))) continue;
    const isOptions = name.endsWith('Options');
    const members = symbol.flags & ts.SymbolFlags.Class ? checker.getDeclaredTypeOfSymbol(symbol).getProperties() : [];
    const own = symbol.members ? [...symbol.members.values()] : [];
    for (const member of new Set([...own, ...members])) {
      const memberDecls = (member.getDeclarations() ?? []).filter(isOwn);
      if (memberDecls.length === 0) continue;
      // Private and protected members, and constructors of error classes, are not the surface.
      if (
        memberDecls.every(
          (d) => ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected),
        )
      )
        continue;
      const memberName = member.getName();
      if (memberName.startsWith('#') || memberName === '__constructor') continue;
      if (!hasDoc(member)) found.push(`${entry}: ${name}.${memberName} (no TSDoc)`);
      const optional = (member.flags & ts.SymbolFlags.Optional) !== 0;
      if (isOptions && optional && !tagsOf(member).includes('defaultValue')) {
        found.push(`${entry}: ${name}.${memberName} (optional option without @defaultValue)`);
      }
    }
  }
  return found;
}

describe('the public surface is documented', () => {
  it('TSDoc on every export and member, @defaultValue on every optional option', () => {
    expect(ENTRIES.flatMap(gaps)).toEqual([]);
  });
});
